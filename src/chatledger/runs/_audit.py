"""The metric audit (DESIGN.md §7): does every field's score fall as its corruption rises?

Each corruption operator is applied to the reference at rising severity and the corrupted copy
is scored against the original. For every field an operator targets we report the score curve,
whether it is monotone (never rises as severity rises), and its sensitivity: the score lost
between severity 0 and 1. The ``keywords`` operator is run under both the default and the
guarded matcher, to show the one-keyword pitfall of ``token_set_ratio``.

Beside the curves, :func:`audit_cases` scores two constructed inputs under the matching rule
before and after issue 15 (both computed, by the same functions with the old rule selected):
subjects compared whole vs on their content words, and entities paired count-first vs
credit-first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatledger.core import Chunk, Entity, ExtractionRecord, ExtractionV3, RecordStatus
from chatledger.downstream import DriftConsumer, build_conversations
from chatledger.matching import get_matcher, subject_consistency, subject_similarity
from chatledger.scoring import (
    FIELD_RULES,
    ChunkContext,
    ScoringConfig,
    ScoringContext,
    f1,
    pair_entities,
    score_chunk,
    score_records,
)
from chatledger.simulate import OPERATORS, simulate_records

DEFAULT_SEVERITIES: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
TOLERANCE = 1e-9


@dataclass(frozen=True)
class AuditCurve:
    operator: str
    matcher: str
    field: str
    severities: tuple[float, ...]
    scores: tuple[float, ...]

    @property
    def monotone(self) -> bool:
        return all(b <= a + TOLERANCE for a, b in zip(self.scores, self.scores[1:], strict=False))

    @property
    def sensitivity(self) -> float:
        return self.scores[0] - self.scores[-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "matcher": self.matcher,
            "field": self.field,
            "severities": list(self.severities),
            "scores": list(self.scores),
            "monotone": self.monotone,
            "sensitivity": self.sensitivity,
        }


def audit_metrics(
    reference: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk],
    *,
    severities: Sequence[float] = DEFAULT_SEVERITIES,
    operators: Sequence[str] | None = None,
    seed: int = 0,
    matchers: Sequence[str] = ("token_set",),
) -> list[AuditCurve]:
    """Score curves of every (operator, matcher, targeted field)."""
    curves: list[AuditCurve] = []
    names = list(operators) if operators is not None else list(OPERATORS)
    plan = [(op, m) for op in names for m in matchers]
    if "keywords" in names and "guarded" not in matchers:
        plan.append(("keywords", "guarded"))
    for operator, matcher in plan:
        config = ScoringConfig.default("v3", matcher)
        targets = OPERATORS.get(operator).targets
        by_field: dict[str, list[float]] = {f: [] for f in targets}
        for severity in severities:
            corrupted = simulate_records(
                reference, chunks, [(operator, severity)], seed=seed, label=f"audit-{operator}"
            )
            report = score_records(reference, corrupted, chunks, config)
            for fname in targets:
                by_field[fname].append(report.fields[fname].score)
        for fname, scores in by_field.items():
            curves.append(AuditCurve(operator, matcher, fname, tuple(severities), tuple(scores)))
    return curves


def pitfall_summary(curves: Sequence[AuditCurve]) -> dict[str, Any]:
    """The keyword collapse under each matcher: mean score lost at full severity."""
    out: dict[str, Any] = {}
    for curve in curves:
        if curve.operator != "keywords":
            continue
        out.setdefault(curve.matcher, []).append(curve.sensitivity)
    return {m: sum(v) / len(v) for m, v in out.items() if v}


# --------------------------------------------------------------------------------------------
# Before / after cases of issue 15 ("Matching that serves the credit", "Subject clustering")

Value = float | int | bool


@dataclass(frozen=True)
class AuditCase:
    """One constructed input measured under the rule before and after a matching change."""

    name: str
    description: str
    before_rule: str
    after_rule: str
    measures: tuple[tuple[str, Value, Value], ...]  # (measure, before, after)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.name,
            "description": self.description,
            "before_rule": self.before_rule,
            "after_rule": self.after_rule,
            "measures": {m: {"before": b, "after": a} for m, b, a in self.measures},
        }


_CASE_SPEAKER = "Ness Alderton"
_CASE_CHUNK = Chunk.model_validate(
    {
        "chunk_id": "audit-subjects",
        "conversation_id": "audit",
        "participants": [_CASE_SPEAKER, "Sam Ruiz"],
        "messages": [
            {"id": "m-1", "speaker": _CASE_SPEAKER, "text": "the car is finally fixed"},
            {"id": "m-2", "speaker": _CASE_SPEAKER, "text": "the Fig Tree was far too loud"},
        ],
    }
)


def _claims(car: str, fig_tree: str) -> ExtractionV3:
    """Two claims of one speaker about two different things, with the subjects given."""
    return ExtractionV3.model_validate(
        {
            "claims": [
                {
                    "text": "the car is finally fixed",
                    "subject": car,
                    "polarity": "pro",
                    "speaker": _CASE_SPEAKER,
                    "evidence": ["m-1"],
                },
                {
                    "text": "the Fig Tree was far too loud",
                    "subject": fig_tree,
                    "polarity": "con",
                    "speaker": _CASE_SPEAKER,
                    "evidence": ["m-2"],
                },
            ]
        }
    )


def subject_case() -> AuditCase:
    """Subjects "the car" / "the Fig Tree" (reference) vs "car" / "Fig Tree" (challenger).

    Whole subjects share "the" and score exactly 60, so before: the reference's two subjects
    are one, the challenger's are two (subject consistency 0), and drift reads the speaker's
    pro → con across the two claims as one change of mind. On content words both sides have
    two subjects: consistency 1, no drift event.
    """
    reference, challenger = _claims("the car", "the Fig Tree"), _claims("car", "Fig Tree")
    config = ScoringConfig.default("v3")
    cutoff = 100.0 * config.thresholds.subject
    ref_subjects = [c.subject for c in reference.claims]
    pred_subjects = [c.subject for c in challenger.claims]
    claims = score_chunk(reference, challenger, _CASE_CHUNK, config)["claims"]
    consistency = {
        rule: subject_consistency(ref_subjects, pred_subjects, cutoff, drop_stop_words=rule)
        for rule in (False, True)
    }
    # Every claim is matched here (matched share 1): the score with the old consistency.
    before = {**claims.components, "subject_consistency": consistency[False]}
    similarity = {
        rule: float(
            subject_similarity(ref_subjects[:1], ref_subjects[1:], drop_stop_words=rule)[0, 0]
        )
        for rule in (False, True)
    }
    measures: list[tuple[str, Value, Value]] = [
        ("similarity 'the car' ~ 'the Fig Tree'", similarity[False], similarity[True]),
        ("same subject in the reference", similarity[False] >= cutoff, similarity[True] >= cutoff),
        (
            "claims subject_consistency",
            consistency[False],
            claims.components["subject_consistency"],
        ),
        ("claims score", FIELD_RULES["claims"].combine(before), claims.score),
    ]
    conversations = {
        side: build_conversations([_CASE_CHUNK], {_CASE_CHUNK.chunk_id: _record(extraction)})
        for side, extraction in (("reference", reference), ("challenger", challenger))
    }
    drift: dict[bool, tuple[int, float]] = {}
    for rule in (False, True):
        consumer = DriftConsumer(drop_stop_words=rule)
        ref_out = consumer.build(conversations["reference"])
        chal_out = consumer.build(conversations["challenger"])
        drift[rule] = (len(ref_out.events), consumer.agreement(ref_out, chal_out).agreement)
    measures.append(("reference drift events", drift[False][0], drift[True][0]))
    measures.append(("drift agreement", drift[False][1], drift[True][1]))
    return AuditCase(
        "subject_clustering",
        "claims about 'the car' and 'the Fig Tree' (challenger: 'car', 'Fig Tree'), one speaker, "
        "pro then con",
        "token_set on whole subjects",
        "token_set on content words (stop words removed)",
        tuple(measures),
    )


def _record(extraction: ExtractionV3) -> ExtractionRecord:
    return ExtractionRecord(
        chunk_id=_CASE_CHUNK.chunk_id, model="audit", status=RecordStatus.OK, extraction=extraction
    )


def entity_case() -> AuditCase:
    """Reference "Ness Alderton", "Ness", "Alderton"; challenger "Ness Alderton", "Ness",
    "Ness Ruiz" (all persons).

    Name similarities ≥ 70 (token set; a name inside another scores 100): exact
    r1–p1, r2–p2; fuzzy-only r1–p2, r2–p1, r2–p3, r3–p1 ("Ness Alderton" ~ "Ness Ruiz" is
    61.5). The only three-match assignment is r1–p2, r2–p3, r3–p1: all fuzzy-only, credit 1.5,
    F1 = 1.5/3 = 0.5 (P = R = 0.5). Credit-first keeps the two exact pairs: credit 2, F1 = 2/3.
    """
    reference = [Entity(name=n, type="person") for n in ("Ness Alderton", "Ness", "Alderton")]
    challenger = [Entity(name=n, type="person") for n in ("Ness Alderton", "Ness", "Ness Ruiz")]
    config = ScoringConfig.default("v3")
    ctx = ScoringContext(ChunkContext.from_ids([]), config, get_matcher(config.matcher))
    rows: dict[str, dict[bool, Value]] = {"matches": {}, "exact matches": {}, "credit": {}}
    for credit_first in (False, True):
        pairing = pair_entities(reference, challenger, ctx, credit_first=credit_first)
        exact = sum(pairing.exact)
        rows["matches"][credit_first] = len(pairing.rows)
        rows["exact matches"][credit_first] = exact
        rows["credit"][credit_first] = exact + 0.5 * (len(pairing.rows) - exact)
    # After: the entities scorer itself (it pairs credit-first); before: the same F1 rule on
    # the count-first pairing's credit.
    scored = score_chunk(
        ExtractionV3(entities=reference), ExtractionV3(entities=challenger), None, config
    )
    before_f1 = f1(float(rows["credit"][False]), len(challenger), len(reference))[2]
    rows["entities F1"] = {False: before_f1, True: scored["entities"].score}
    return AuditCase(
        "entity_credit",
        "reference 'Ness Alderton', 'Ness', 'Alderton'; challenger 'Ness Alderton', 'Ness', "
        "'Ness Ruiz'",
        "count-first assignment (most matches)",
        "credit-first assignment (most credit, then matches)",
        tuple((m, v[False], v[True]) for m, v in rows.items()),
    )


def audit_cases() -> list[AuditCase]:
    """The before/after cases of issue 15, each computed under both rules."""
    return [subject_case(), entity_case()]
