"""The judge audit (DESIGN.md §4, issue 28): every judge grades extractions of known truth.

Built from the reference, on the chunks it has an extraction for:

- ``reference``: the reference itself — every item untouched: its flags are false alarms;
- the **ladder**: the demo's simulated models (every operator at the light, medium, heavy
  severity, :data:`chatledger.simulate.LADDER`): the judge composite must fall with severity;
- **probes**: one operator at a time at :data:`PROBE_SEVERITY`, with each item's fate known
  (:class:`chatledger.simulate.ChunkTruth`): the detection rate of each corruption;
- **adversarial** extractions: a *copier* (every content message, ≥ 4 words, as a claim with
  its speaker and its own id as evidence), *keywords* (every text collapsed to its longest
  word) and *empty* (no item at all): each must land below the lightest corruption.

A judge fails when the copier or the empty extraction scores at or above ``simulated:light``,
when it flags more than ``max_false_alarms`` of the untouched reference items, or when its
composite does not fall along reference ≥ light > medium > heavy; a judge that could score no
chunk of a set fails too (nothing shows it can tell).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from chatledger.core import Chunk, ExtractionRecord, ExtractionV3
from chatledger.judge import SCORE_NAMES, Judge, Verdict, judged_items
from chatledger.record._judge_audit import AuditedSet, Detection, JudgeAudit, SetKind
from chatledger.simulate import (
    LADDER,
    OPERATORS,
    ChunkTruth,
    corrupt,
    simulate_with_truth,
    simulated_name,
)

PROBE_SEVERITY = 0.5
# Operator → the probe's name; run one at a time so each item has at most one effect.
PROBE_OPERATORS: tuple[str, ...] = (
    "invent_item",
    "swap_speaker",
    "flip_polarity",
    "shift_evidence",
    "paraphrase",
    "keywords",
    "drop",
)
# The label a corruption calls for (None: any flag counts; paraphrase should not be flagged).
EXPECTED_LABEL: dict[str, str | None] = {
    "invented": "fabricated",
    "speaker_swapped": "misattributed",
    "polarity_flipped": None,
    "evidence_shifted": "weak_support",
    "keywords": "partially_supported",
    "paraphrased": None,
}
DEFAULT_MAX_FALSE_ALARMS = 0.10
COPIER_MIN_WORDS = 4
ADVERSARIAL = ("copier", "keywords", "empty")
TOLERANCE = 1e-9


@dataclass(frozen=True)
class AuditInput:
    """One extraction of known truth: per chunk the extraction (and each item's fate)."""

    name: str
    kind: SetKind
    severity: float | None
    extractions: dict[str, ExtractionV3]
    truth: dict[str, ChunkTruth] | None = None


def copier_extraction(chunk: Chunk) -> ExtractionV3:
    """Every message of ≥ 4 words as a claim: its text, its speaker, its own id as evidence."""
    claims = [
        {"text": m.text, "speaker": m.speaker, "evidence": [m.id], "polarity": "neutral"}
        for m in chunk.messages
        if len(m.text.split()) >= COPIER_MIN_WORDS
    ]
    return ExtractionV3.model_validate({"claims": claims})


def keyword_extraction(extraction: ExtractionV3, chunk: Chunk) -> ExtractionV3:
    """The reference with every item text collapsed to its longest word."""
    return corrupt(extraction, chunk, "keywords", 1.0)


def audit_inputs(
    reference: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk],
    *,
    seed: int = 0,
    probe_severity: float = PROBE_SEVERITY,
) -> list[AuditInput]:
    """The reference, the ladder, the probes and the adversarial extractions."""
    usable = [
        c
        for c in chunks
        if (r := reference.get(c.chunk_id)) is not None and r.extraction is not None
    ]
    ref = {c.chunk_id: reference[c.chunk_id].extraction for c in usable}
    ref_ok: dict[str, ExtractionV3] = {k: v for k, v in ref.items() if v is not None}
    out = [AuditInput("reference", "reference", 0.0, ref_ok)]
    operations_all = list(OPERATORS)
    for label, severity in LADDER:
        records, truth = simulate_with_truth(
            reference, usable, [(op, severity) for op in operations_all], seed=seed, label=label
        )
        out.append(
            AuditInput(simulated_name(label), "ladder", severity, _extractions(records), truth)
        )
    for operator in PROBE_OPERATORS:
        records, truth = simulate_with_truth(
            reference, usable, [(operator, probe_severity)], seed=seed, label=f"probe-{operator}"
        )
        out.append(
            AuditInput(f"probe:{operator}", "probe", probe_severity, _extractions(records), truth)
        )
    by_id = {c.chunk_id: c for c in usable}
    adversarial: dict[str, Callable[[str, ExtractionV3], ExtractionV3]] = {
        "copier": lambda cid, _e: copier_extraction(by_id[cid]),
        "keywords": lambda cid, e: keyword_extraction(e, by_id[cid]),
        "empty": lambda _cid, _e: ExtractionV3(),
    }
    for name, make in adversarial.items():
        extractions = {cid: make(cid, e) for cid, e in ref_ok.items()}
        out.append(AuditInput(f"adversarial:{name}", "adversarial", None, extractions))
    return out


def _extractions(records: Mapping[str, ExtractionRecord]) -> dict[str, ExtractionV3]:
    return {k: r.extraction for k, r in records.items() if r.extraction is not None}


def grade_inputs(
    judge: Judge, inputs: Sequence[AuditInput], chunks: Sequence[Chunk]
) -> dict[str, dict[str, Verdict | None]]:
    """``{set name: {chunk_id: verdict}}``: one ``judge_many`` call over every pair."""
    by_id = {c.chunk_id: c for c in chunks}
    pairs: list[tuple[Chunk, ExtractionV3]] = []
    keys: list[tuple[str, str]] = []
    for audit_input in inputs:
        for chunk_id, extraction in audit_input.extractions.items():
            pairs.append((by_id[chunk_id], extraction))
            keys.append((audit_input.name, chunk_id))
    verdicts = judge.judge_many(pairs)
    out: dict[str, dict[str, Verdict | None]] = {i.name: {} for i in inputs}
    for (name, chunk_id), verdict in zip(keys, verdicts, strict=True):
        out[name][chunk_id] = verdict
    return out


def audit_judge(
    judge: Judge,
    reference: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk],
    *,
    seed: int = 0,
    max_false_alarms: float = DEFAULT_MAX_FALSE_ALARMS,
    inputs: Sequence[AuditInput] | None = None,
) -> JudgeAudit:
    """Grade the known-truth extractions with ``judge`` and read its audit off the verdicts."""
    inputs = list(inputs) if inputs is not None else audit_inputs(reference, chunks, seed=seed)
    verdicts = grade_inputs(judge, inputs, chunks)
    return summarise(
        judge.name,
        judge.family,
        inputs,
        verdicts,
        seed=seed,
        max_false_alarms=max_false_alarms,
    )


def summarise(
    judge: str,
    family: str,
    inputs: Sequence[AuditInput],
    verdicts: Mapping[str, Mapping[str, Verdict | None]],
    *,
    seed: int = 0,
    max_false_alarms: float = DEFAULT_MAX_FALSE_ALARMS,
) -> JudgeAudit:
    sets = [_audited_set(i, verdicts[i.name]) for i in inputs]
    reference = inputs[0]
    false_labels = Counter(
        label
        for verdict in verdicts[reference.name].values()
        if verdict is not None
        for label in (item.label for item in verdict.items)
    )
    n_ref_items = sum(false_labels.values())
    false_alarms = (
        (n_ref_items - false_labels.get("none", 0)) / n_ref_items if n_ref_items else None
    )
    detection = _detection(inputs, verdicts)
    audit = JudgeAudit(
        judge=judge,
        family=family,
        chunks=len(reference.extractions),
        seed=seed,
        sets=sets,
        detection=detection,
        false_alarms=false_alarms,
        false_alarm_items=n_ref_items,
        false_alarm_labels={k: v for k, v in sorted(false_labels.items()) if k != "none"},
        max_false_alarms=max_false_alarms,
    )
    return _verdict_of_audit(audit)


def _audited_set(audit_input: AuditInput, verdicts: Mapping[str, Verdict | None]) -> AuditedSet:
    scored = [v for v in verdicts.values() if v is not None]
    labels = Counter(item.label for v in scored for item in v.items)
    scores = (
        {name: sum(getattr(v, name) for v in scored) / len(scored) for name in SCORE_NAMES}
        if scored
        else {}
    )
    return AuditedSet(
        name=audit_input.name,
        kind=audit_input.kind,
        severity=audit_input.severity,
        composite=sum(v.composite for v in scored) / len(scored) if scored else None,
        scores=scores,
        chunks=len(verdicts),
        unscored=sum(v is None for v in verdicts.values()),
        items=sum(labels.values()),
        label_counts=dict(sorted(labels.items())),
    )


def _detection(
    inputs: Sequence[AuditInput], verdicts: Mapping[str, Mapping[str, Verdict | None]]
) -> list[Detection]:
    """Per effect (items that underwent it alone, in the probes), overall and per field."""
    found: dict[tuple[str, str], Counter[str]] = {}
    for audit_input in inputs:
        if audit_input.kind != "probe" or audit_input.truth is None:
            continue
        for chunk_id, truth in audit_input.truth.items():
            verdict = verdicts[audit_input.name].get(chunk_id)
            if verdict is None:
                continue
            labels = {item.item_id: item.label for item in verdict.items}
            present = truth.present()
            extraction = audit_input.extractions[chunk_id]
            for item in judged_items(extraction):
                field, _, index = item.item_id.partition("#")
                fate = present.get((field, int(index)))
                if fate is None or len(fate.effects) != 1:
                    continue
                label = labels.get(item.item_id)
                if label is None:
                    continue
                found.setdefault((fate.effects[0], field), Counter())[label] += 1
    out: list[Detection] = []
    for effect in dict.fromkeys(e for e, _ in sorted(found)):
        fields = sorted(f for e, f in found if e == effect)
        total: Counter[str] = Counter()
        for field in fields:
            total.update(found[(effect, field)])
        out.append(_rate(effect, None, total))
        out.extend(_rate(effect, field, found[(effect, field)]) for field in fields)
    return out


def _rate(effect: str, field: str | None, labels: Counter[str]) -> Detection:
    n = sum(labels.values())
    expected = EXPECTED_LABEL.get(effect)
    return Detection(
        effect=effect,
        field=field,
        items=n,
        flagged=(n - labels.get("none", 0)) / n if n else 0.0,
        expected_label=expected,
        as_expected=labels.get(expected, 0) / n if expected is not None and n else None,
        labels=dict(sorted(labels.items())),
    )


def _verdict_of_audit(audit: JudgeAudit) -> JudgeAudit:
    failures: list[str] = []
    composite = {s.name: s.composite for s in audit.sets}
    for s in audit.sets:
        if s.composite is None and s.chunks:
            failures.append(f"could not score any chunk of {s.name}")
    ladder = ["reference", *(simulated_name(label) for label, _ in LADDER)]
    values = [composite.get(name) for name in ladder]
    monotone: bool | None = None
    if all(v is not None for v in values):
        vals = [float(v) for v in values if v is not None]
        monotone = vals[1] <= vals[0] + TOLERANCE and all(
            b < a - TOLERANCE for a, b in itertools.pairwise(vals[1:])
        )
        if not monotone:
            shown = " → ".join(f"{v:.3f}" for v in vals)
            failures.append(f"not monotone over the ladder (reference → heavy: {shown})")
    ranks: dict[str, str] = {}
    lightest = composite.get(ladder[1])
    for name in ADVERSARIAL:
        value = composite.get(f"adversarial:{name}")
        if value is None:
            continue
        ranks[name] = _placement(value, [(n, composite.get(n)) for n in ladder])
        if name in ("copier", "empty") and lightest is not None and value >= lightest - TOLERANCE:
            failures.append(
                f"the {name} extraction ({value:.3f}) is not below {ladder[1]} ({lightest:.3f})"
            )
    if audit.false_alarms is not None and audit.false_alarms > audit.max_false_alarms:
        failures.append(
            f"flags {audit.false_alarms:.1%} of untouched reference items "
            f"(more than {audit.max_false_alarms:.0%})"
        )
    return audit.model_copy(
        update={
            "monotone": monotone,
            "adversarial_rank": ranks,
            "passed": not failures,
            "failures": failures,
        }
    )


def _placement(value: float, ladder: Sequence[tuple[str, float | None]]) -> str:
    """Where ``value`` lands among the ladder's composites (highest first)."""
    steps = [(n, v) for n, v in ladder if v is not None]
    if not steps:
        return "no ladder"
    if value >= steps[0][1]:
        return f"at or above {steps[0][0]}"
    for (upper, _), (lower, low) in itertools.pairwise(steps):
        if value >= low:
            return f"between {upper} and {lower}"
    return f"below {steps[-1][0]}"


# The detection figures the grounding judge's tests hold (issue 28, "Must show").
DETECTION_SHOWN: tuple[str, ...] = (
    "invented",
    "speaker_swapped",
    "polarity_flipped",
    "evidence_shifted",
    "keywords",
    "paraphrased",
)


def audit_markdown(audit: JudgeAudit) -> str:
    """A judge's audit as two Markdown tables (composites; detection) and its verdict."""
    rows = ["| extraction | composite | accuracy | completeness | hallucination |"]
    rows.append("|---|---|---|---|---|")
    for s in audit.sets:
        scores = " | ".join(f"{s.scores[k]:.1f}" if k in s.scores else "—" for k in SCORE_NAMES)
        composite = f"{s.composite:.3f}" if s.composite is not None else "unscored"
        rows.append(f"| {s.name} | {composite} | {scores} |")
    rows += ["", "| corruption | field | items | flagged | as expected |", "|---|---|---|---|---|"]
    for d in audit.detection:
        if d.effect not in DETECTION_SHOWN or (d.field and d.effect != "speaker_swapped"):
            continue  # per field: only the swaps (their field is what the must-show names)
        expected = f"{d.as_expected:.2f} ({d.expected_label})" if d.as_expected is not None else "—"
        rows.append(
            f"| {d.effect} | {d.field or 'all'} | {d.items} | {d.flagged:.2f} | {expected} |"
        )
    false_alarms = f"{audit.false_alarms:.3f}" if audit.false_alarms is not None else "—"
    rows += [
        "",
        f"False alarms on the untouched reference: {false_alarms} of {audit.false_alarm_items} "
        f"items. Monotone over the ladder: {'yes' if audit.monotone else 'no'}. "
        + " ".join(f"The {k} extraction lands {v}." for k, v in audit.adversarial_rank.items())
        + f" Audit: {'passed' if audit.passed else 'failed — ' + '; '.join(audit.failures)}.",
    ]
    return "\n".join(rows)


# --------------------------------------------------------------------------------------------
# In a run: audit the panel before it counts (``judges: {audit: strict|warn|off}``)

FAILED_AUDIT = "judge failed its audit"


@dataclass
class PanelAudit:
    """What the audit decided for a run's panel."""

    mode: str
    audits: list[JudgeAudit]
    panel: list[str]  # the judges whose verdicts count, in the config's order
    judges_left_out: dict[str, str]  # judge → why it is not in the panel
    layer_reason: str | None  # set when the judge layer leaves ``overall`` (strict, none pass)


def is_free_judge(judge: Judge) -> bool:
    """Offline judges and ``local:`` models cost nothing to audit; other model ids may."""
    model = getattr(judge, "model", None)
    return model is None or str(model).startswith("local:")


def audit_panel(
    judges: Sequence[Judge],
    reference: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk],
    *,
    mode: str = "strict",
    priced: bool = False,
    max_false_alarms: float = DEFAULT_MAX_FALSE_ALARMS,
    max_chunks: int | None = None,
    seed: int = 0,
) -> PanelAudit:
    """Audit every judge (free ones, and priced ones when ``priced``) and choose the panel.

    ``strict``: the panel is the judges that passed or were not audited; when none is left,
    every judge stays (the layer is still shown) and the judge layer leaves ``overall``.
    ``warn``: every judge stays; failures are only marked. ``off``: nothing is audited."""
    names = [j.name for j in judges]
    if mode == "off" or not judges:
        return PanelAudit(mode, [], names, {}, None)
    chosen = list(chunks)[:max_chunks] if max_chunks is not None else list(chunks)
    inputs = audit_inputs(reference, chosen, seed=seed)
    audits: list[JudgeAudit] = []
    for judge in judges:
        if not is_free_judge(judge) and not priced:
            audits.append(
                JudgeAudit(
                    judge=judge.name,
                    family=judge.family,
                    skipped="a priced judge: audited only with judges: {priced: true}",
                )
            )
            continue
        audits.append(
            audit_judge(
                judge,
                reference,
                chosen,
                seed=seed,
                max_false_alarms=max_false_alarms,
                inputs=inputs,
            )
        )
    failed = {a.judge: "; ".join(a.failures) for a in audits if a.skipped is None and not a.passed}
    if mode != "strict" or not failed:
        return PanelAudit(mode, audits, names, {}, None)
    panel = [n for n in names if n not in failed]
    if panel:
        return PanelAudit(mode, audits, panel, failed, None)
    return PanelAudit(mode, audits, names, {}, FAILED_AUDIT)
