"""The layer-1 field rules in one table (DESIGN.md §3): what each field's score is made of.

Every reader of a rule reads it here: the field scorers (:mod:`chatledger.scoring._fields`)
combine their components with :meth:`FieldRule.combine`, the pooled (micro) figures of a run
(:mod:`chatledger.scoring._aggregate`) combine the pooled components with the same terms, the
report labels the components with :data:`COMPONENT_LABELS`, and ``docs/scoring.md`` shows the
table as :func:`rules_markdown` writes it (tests/test_field_rules.py checks the page and
DESIGN.md's numbers against it).

A field's score is ``Σ weight · part``, where a term over matched pairs (owner accuracy,
evidence Jaccard …) is multiplied by the matched share 2M/(R+P) so that one match out of five
cannot add the whole term. A term of weight 0 is pooled and shown but not scored (entities'
exact share).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Kind = Literal["list", "set", "item", "confidence"]
V = TypeVar("V", float, "npt.NDArray[np.float64]")
F1 = "f1"  # the part name of a plain list or set field's F1 (not among its components)


@dataclass(frozen=True)
class Term:
    """One weighted part of a field's score."""

    part: str  # a component of the field, or F1 for a plain F1 field
    weight: float
    over_pairs: bool = False  # a mean over matched pairs: multiplied by the matched share


@dataclass(frozen=True)
class FieldRule:
    """How one field is scored.

    ``kind``: ``list`` (items matched one to one, precision / recall / F1 of the matches),
    ``set`` (F1 over distinct keys), ``item`` (at most one item a chunk: summary, arc) or
    ``confidence`` (1 − ECE over the items of fields 3–6). ``matched_by`` says what pairs or
    keys the items (docs, with ``{threshold}`` fields of the scoring config's thresholds);
    ``counted_as`` what a set field's counts count.
    """

    name: str
    kind: Kind
    components: tuple[str, ...]
    terms: tuple[Term, ...]
    matched_by: str
    counted_as: str | None = None

    def combine(self, parts: Mapping[str, V], share: V | float = 1.0) -> V:
        """``Σ weight · part`` (× ``share`` for a term over matched pairs), left to right; on
        one chunk's floats or on arrays of pooled figures alike."""
        values = [
            term.weight * parts[term.part] * share
            if term.over_pairs
            else term.weight * parts[term.part]
            for term in self.terms
        ]
        total = values[0]
        for value in values[1:]:
            total = total + value
        return total

    @property
    def f1_term(self) -> Term | None:
        """The F1 term of a list or set field (None for summary, arc, confidence)."""
        if self.kind not in ("list", "set"):
            return None
        return self.terms[0]

    @cached_property
    def pair_terms(self) -> tuple[Term, ...]:
        """The terms over matched pairs, pooled over chunks as (Σ value, Σ pairs)."""
        return tuple(t for t in self.terms if t.over_pairs)

    def formula(self) -> str:
        """The score in words, as DESIGN.md §3 writes it."""
        if self.kind == "confidence":
            return "1 − ECE"
        shown = [t for t in self.terms if t.weight]
        if len(shown) == 1 and shown[0].weight == 1.0:
            return label(shown[0].part)
        if len({t.weight for t in shown}) == 1 and not any(t.over_pairs for t in shown):
            parts = " + ".join(label(t.part) for t in shown)
            return f"({parts}) / {len(shown)}"
        plain = " + ".join(f"{t.weight:.2f}·{label(t.part)}" for t in shown if not t.over_pairs)
        pairs = " + ".join(f"{t.weight:.2f}·{label(t.part)}" for t in shown if t.over_pairs)
        return f"{plain} + ({pairs}) × matched share" if pairs else plain


COMPONENT_LABELS: Mapping[str, str] = MappingProxyType(
    {
        F1: "F1",
        "text_f1": "text F1",
        "question_f1": "question F1",
        "phase_f1": "phase F1",
        "exact_share": "exact share",
        "evidence_jaccard": "evidence Jaccard",
        "owner_accuracy": "owner accuracy",
        "polarity_accuracy": "polarity",
        "subject_consistency": "subject consistency",
        "answer_agreement": "answer agreement",
        "mean_iou": "mean range IoU",
        "turning_points_f1": "turning points F1",
        "ece": "ECE",
        "n_items": "items",
    }
)


def label(part: str) -> str:
    """A component's name in words."""
    return COMPONENT_LABELS.get(part, part.replace("_", " "))


# Entities: the credit of a matched pair (DESIGN.md §3).
EXACT_CREDIT = 1.0  # the same normalised name
FUZZY_CREDIT = 0.5  # a fuzzy-only match

PR = ("precision", "recall")
_F1 = (Term(F1, 1.0),)


_TEXT = "text similarity ≥ {text}"


def _text(name: str) -> FieldRule:
    return FieldRule(name, "list", PR, _F1, _TEXT)


def _set(name: str, key: str) -> FieldRule:
    return FieldRule(name, "set", PR, _F1, f"equal {key}", counted_as=f"distinct {key}")


def _paired(name: str, f1_name: str, f1_weight: float, *pairs: tuple[str, float]) -> FieldRule:
    terms = (Term(f1_name, f1_weight), *(Term(c, w, over_pairs=True) for c, w in pairs))
    return FieldRule(name, "list", (f1_name, *(c for c, _ in pairs)), terms, _TEXT)


_RULES = (
    _text("topics"),
    FieldRule(
        "entities",
        "list",
        (*PR, "exact_share"),
        (Term(F1, 1.0), Term("exact_share", 0.0, over_pairs=True)),
        "name similarity ≥ {entity} and the same type; credit 1 for the same normalised name, "
        "0.5 for a fuzzy-only match",
    ),
    _paired("decisions", "text_f1", 0.75, ("evidence_jaccard", 0.25)),
    _paired("action_items", "text_f1", 0.70, ("owner_accuracy", 0.30)),
    _text("open_questions"),
    _paired("claims", "text_f1", 0.60, ("polarity_accuracy", 0.25), ("subject_consistency", 0.15)),
    _set("links", "normalised URLs"),
    _text("warnings"),
    _set("evidence_message_ids", "message ids"),
    FieldRule(
        "confidence",
        "confidence",
        ("ece", "n_items", "accuracy"),
        (),
        "an item is correct when it matched a reference item",
    ),
    FieldRule(
        "summary", "item", ("similarity",), (Term("similarity", 1.0),), "token-set similarity / 100"
    ),
    FieldRule(
        "qa_pairs",
        "list",
        ("question_f1", "answer_agreement"),
        (Term("question_f1", 0.60), Term("answer_agreement", 0.40, over_pairs=True)),
        "question similarity ≥ {text}; answers agree at similarity ≥ {answer}",
    ),
    _set("emotional_tone", "(speaker, emotion) pairs"),
    FieldRule(
        "emotional_arc",
        "item",
        ("opening", "closing", "trajectory", "turning_points_f1"),
        tuple(Term(p, 0.25) for p in ("opening", "closing", "trajectory", "turning_points_f1")),
        "moods and trajectory exact; turning points the same message ± {turning_point_window}",
    ),
    FieldRule(
        "conversation_phases",
        "list",
        ("phase_f1", "mean_iou"),
        (Term("phase_f1", 0.5), Term("mean_iou", 0.5, over_pairs=True)),
        "the same phase label; IoU of their message ranges",
    ),
    _text("implicit_assumptions"),
    _set("negotiation_patterns", "(pattern, actor) pairs"),
)
FIELD_RULES: Mapping[str, FieldRule] = MappingProxyType({r.name: r for r in _RULES})


def rules_markdown(weights: Mapping[str, float], thresholds: Mapping[str, float | int]) -> str:
    """The table of field rules for docs/scoring.md: each field's score, what matches its items
    (at ``thresholds``) and its weight in the composite (``weights``)."""
    shown = {k: f"{v:.2f}" if isinstance(v, float) else str(v) for k, v in thresholds.items()}
    lines = [
        "| field | score | items match when | weight |",
        "|---|---|---|---|",
    ]
    for rule in _RULES:
        if rule.name not in weights:
            continue
        lines.append(
            f"| `{rule.name}` | {rule.formula()} | {rule.matched_by.format_map(shown)} "
            f"| {weights[rule.name]:.3f} |"
        )
    return "\n".join(lines) + "\n"
