"""Agreement between a run's judge and a person: Cohen's κ on "the judge flagged an issue"
against "the person removed (or changed) the item".

Units are the prefilled items of the model a person annotated (``annotation.prefill``, or the
model named) that the person decided on (``annotation.decisions``) and that the run's judge
labelled in ``judgements.jsonl`` (``item_id`` ``field#index``, ``index`` = the decision's
``prefill_index``). The judge flags an item when its label is anything but ``none``
(:data:`chatledger.judge.ISSUE_LABELS`). Two readings of the person:

- ``deleted`` (the headline): the person deleted the item — "this item should not be there",
  what ``fabricated`` or ``weak_support`` say;
- ``deleted_or_edited``: the person deleted or changed it — also counts the repairs a
  ``misattributed`` or ``partially_supported`` label asks for (and edits no judge would flag:
  a typo, one more evidence message).

κ is :func:`chatledger.downstream.cohen_kappa` (two raters who give one and the same label to
every unit have κ = 1; a constant rater against a varying one has κ = 0). Its interval is the
percentile bootstrap over chunks, each resample's κ computed by the same function.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, ValidationError

from chatledger.annotate._gold import Annotation, GoldLine
from chatledger.core import InputError, first_validation_error
from chatledger.corpus import read_json_lines
from chatledger.downstream import cohen_kappa
from chatledger.judge import JUDGED_FIELDS, Verdict
from chatledger.stats import Interval, intervals_from, resample_statistics

FloatArray = npt.NDArray[np.float64]
JUDGEMENTS_FILE = "judgements.jsonl"
Reading = Literal["deleted", "deleted_or_edited"]
READINGS: tuple[Reading, ...] = ("deleted", "deleted_or_edited")
_CHANGED: dict[Reading, frozenset[str]] = {
    "deleted": frozenset({"deleted"}),
    "deleted_or_edited": frozenset({"deleted", "edited"}),
}


class AgreementInterval(BaseModel):
    """A bootstrap interval (resampling chunks) of the figure ``estimate``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    estimate: float
    low: float
    high: float
    method: str

    @classmethod
    def of(cls, interval: Interval) -> AgreementInterval:
        return cls(
            estimate=interval.estimate,
            low=interval.low,
            high=interval.high,
            method=interval.method,
        )


class KappaTable(BaseModel):
    """The 2×2 table: judge (flagged an issue / said none) × person (changed / kept)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    flagged_changed: int
    flagged_kept: int
    clean_changed: int
    clean_kept: int


class KappaReading(BaseModel):
    """κ for one reading of what the person did (see the module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reading: Reading
    kappa: float
    interval: AgreementInterval
    table: KappaTable


class JudgeAgreement(BaseModel):
    """How far a run's judge agrees with a person's decisions on one model's items."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    gold: str
    run_dir: str
    annotator: str
    model: str  # the prefilled model whose items both looked at
    judge: str
    chunks: int  # chunks with at least one item compared
    items: int  # items compared
    by_field: dict[str, int]
    decisions: dict[str, int]  # accepted / edited / deleted among the items compared
    labels: dict[str, int]  # the judge's labels among the items compared
    deleted: KappaReading  # the headline reading
    deleted_or_edited: KappaReading
    # Decided items the judge gave no label (unjudged field, unscored verdict, no line).
    not_judged: int
    # "chunk_id field" where the judge labels an index the prefill does not have: the run's
    # extraction of the model is not the one that was prefilled; those items are left out.
    mismatched: list[str]
    n_resamples: int
    confidence: float
    seed: int


def judge_agreement(
    gold: Path,
    run_dir: Path,
    *,
    model: str | None = None,
    judge: str | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> JudgeAgreement:
    """Cohen's κ between ``run_dir``'s judge and the decisions in ``gold`` (see the module doc).

    ``model``: the model whose items are compared (default: the gold's ``annotation.prefill``,
    which must name one model); ``judge``: the judge (default: the only one in the run).
    User mistakes (no annotation blocks, a model or judge the run does not have, no item both
    decided and judged, a bad line) raise :class:`InputError` naming the file.
    """
    gold = Path(gold)
    annotations = read_annotations(gold)
    if not annotations:
        raise InputError(
            "no line has an annotation block: judge agreement needs the decisions the "
            "annotation page records (chatledger annotate … --prefill MODEL.jsonl)",
            path=gold,
        )
    chosen = model if model is not None else _prefill_model(annotations, gold)
    path = Path(run_dir) / JUDGEMENTS_FILE
    labels_by_judge = read_judgements(path, chosen)
    name = _choose_judge(labels_by_judge, judge, chosen, path)
    labels = labels_by_judge[name]
    annotator = next(iter(annotations.values())).annotator

    rows: list[list[float]] = []
    by_field: Counter[str] = Counter()
    decisions: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    not_judged = 0
    mismatched: list[str] = []
    for chunk_id, annotation in annotations.items():
        chunk_labels = labels.get(chunk_id, {})
        row = [0.0] * (4 * len(READINGS))
        compared = 0
        for field, field_decisions in annotation.decisions.items():
            field_labels = {
                int(index): label
                for item_id, label in chunk_labels.items()
                for f, _, index in [item_id.partition("#")]
                if f == field and index.isdigit()
            }
            if any(index >= len(field_decisions) for index in field_labels):
                mismatched.append(f"{chunk_id} {field}")
                continue
            for decision in field_decisions:
                label = field_labels.get(decision.prefill_index)
                if label is None or field not in JUDGED_FIELDS:
                    not_judged += 1
                    continue
                compared += 1
                by_field[field] += 1
                decisions[decision.decision] += 1
                judged[label] += 1
                flagged = label != "none"
                for r, reading in enumerate(READINGS):
                    changed = decision.decision in _CHANGED[reading]
                    cell = (0 if changed else 1) if flagged else (2 if changed else 3)
                    row[4 * r + cell] += 1.0
        if compared:
            rows.append(row)
    if not rows:
        raise InputError(
            f"no item of model {chosen!r} is both decided in the gold file and labelled by "
            f"judge {name!r} in {path}",
            path=gold,
        )
    units = np.array(rows, dtype=np.float64)
    readings = _kappa_readings(units, n_resamples, confidence, seed)
    return JudgeAgreement(
        gold=str(gold),
        run_dir=str(run_dir),
        annotator=annotator,
        model=chosen,
        judge=name,
        chunks=len(rows),
        items=int(units[:, :4].sum()),
        by_field=dict(by_field),
        decisions={d: decisions[d] for d in ("accepted", "edited", "deleted")},
        labels=dict(sorted(judged.items())),
        deleted=readings[0],
        deleted_or_edited=readings[1],
        not_judged=not_judged,
        mismatched=mismatched,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def kappa_of_table(table: Sequence[float] | FloatArray) -> float:
    """Cohen's κ of a 2×2 table (flagged_changed, flagged_kept, clean_changed, clean_kept),
    by :func:`chatledger.downstream.cohen_kappa` on the items the table counts."""
    fc, fk, cc, ck = (round(x) for x in table)
    judge = [True] * (fc + fk) + [False] * (cc + ck)
    person = [True] * fc + [False] * fk + [True] * cc + [False] * ck
    return cohen_kappa(judge, person)


def _kappa_statistic(sums: FloatArray) -> FloatArray:
    """κ of both readings for each resample's summed tables (resamples × 8 → 2 × resamples)."""
    out = np.empty((len(READINGS), sums.shape[0]), dtype=np.float64)
    for b in range(sums.shape[0]):
        for r in range(len(READINGS)):
            out[r, b] = kappa_of_table(sums[b, 4 * r : 4 * r + 4])
    return out


def _kappa_readings(
    units: FloatArray, n_resamples: int, confidence: float, seed: int
) -> list[KappaReading]:
    total = units.sum(axis=0)
    estimates = [kappa_of_table(total[4 * r : 4 * r + 4]) for r in range(len(READINGS))]
    resamples = resample_statistics(
        units, _kappa_statistic, n_resamples=n_resamples, seed=seed, estimates=estimates
    )
    intervals = intervals_from(resamples, confidence=confidence, method="percentile")
    out = []
    for r, reading in enumerate(READINGS):
        fc, fk, cc, ck = (round(x) for x in total[4 * r : 4 * r + 4])
        out.append(
            KappaReading(
                reading=reading,
                kappa=estimates[r],
                interval=AgreementInterval.of(intervals[r]),
                table=KappaTable(
                    flagged_changed=fc, flagged_kept=fk, clean_changed=cc, clean_kept=ck
                ),
            )
        )
    return out


def read_annotations(path: Path) -> dict[str, Annotation]:
    """The annotation block of every gold line that has one, by chunk id (file order).

    A line that is not JSON, or whose annotation block (or the line around it) does not
    validate as a :class:`GoldLine`, is an :class:`InputError` naming file, line and field.
    """
    out: dict[str, Annotation] = {}
    for line in read_json_lines(path):
        if not line.ok:
            raise InputError(line.error or "bad line", path=path, line=line.number)
        data = line.value
        if not isinstance(data, dict) or "annotation" not in data:
            continue
        try:
            gold_line = GoldLine.model_validate(data)
        except ValidationError as exc:
            where, message = first_validation_error(exc)
            raise InputError(message, path=path, line=line.number, field=where) from None
        out.setdefault(gold_line.chunk_id, gold_line.annotation)
    return out


def _prefill_model(annotations: Mapping[str, Annotation], gold: Path) -> str:
    models = list(dict.fromkeys(a.prefill for a in annotations.values() if a.prefill))
    if not models:
        raise InputError(
            "the annotations record no prefilled model: name it (--model)",
            path=gold,
            field="annotation.prefill",
        )
    if len(models) > 1:
        raise InputError(
            f"the annotations were prefilled from several models ({', '.join(models)}): "
            "choose one (--model)",
            path=gold,
            field="annotation.prefill",
        )
    return models[0]


def read_judgements(path: Path, model: str) -> dict[str, dict[str, dict[str, str]]]:
    """``{judge: {chunk_id: {item_id: label}}}`` of ``model``'s scored verdicts in a run's
    ``judgements.jsonl`` (the first line of a (chunk, judge) wins)."""
    if not path.is_file():
        raise InputError(
            "the run has no judgements (was the judge layer run?)",
            path=path,
        )
    out: dict[str, dict[str, dict[str, str]]] = {}
    models: list[str] = []
    for line in read_json_lines(path):
        if not line.ok or not isinstance(line.value, dict):
            raise InputError(line.error or "expected a JSON object", path=path, line=line.number)
        data: dict[str, Any] = line.value
        for key in ("model", "chunk_id", "judge"):
            if not isinstance(data.get(key), str):
                raise InputError("missing or not a string", path=path, line=line.number, field=key)
        if data["model"] not in models:
            models.append(data["model"])
        if data["model"] != model or not data.get("scored") or data.get("verdict") is None:
            continue
        try:
            verdict = Verdict.model_validate(data["verdict"])
        except ValidationError as exc:
            where, message = first_validation_error(exc, "verdict")
            raise InputError(message, path=path, line=line.number, field=where) from None
        per_judge = out.setdefault(data["judge"], {})
        per_judge.setdefault(data["chunk_id"], {i.item_id: i.label for i in verdict.items})
    if not out:
        shown = ", ".join(models) if models else "none"
        raise InputError(
            f"no scored judgement of model {model!r} (models judged: {shown})", path=path
        )
    return out


def _choose_judge(labels: Mapping[str, object], judge: str | None, model: str, path: Path) -> str:
    names = list(labels)
    if judge is not None:
        if judge not in labels:
            raise InputError(
                f"judge {judge!r} has no scored judgement of model {model!r} "
                f"(judges: {', '.join(names)})",
                path=path,
            )
        return judge
    if len(names) > 1:
        raise InputError(
            f"model {model!r} was judged by {', '.join(names)}: choose one (--judge)",
            path=path,
        )
    return names[0]
