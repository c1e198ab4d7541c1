"""What changed between two run directories, per model, layer and field."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from chatledger.core import InputError
from chatledger.record import (
    METRICS,
    ConversationRun,
    ModelResult,
    StructbenchRow,
    StructbenchRun,
    read_run_record,
)

GROUPS = ("layers", "metrics", "fields", "consumers")
Scores = tuple[float | None, dict[str, dict[str, float]]]  # overall, group → name → score


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScoreDelta(_Frozen):
    """One score in both runs; None where a run lacks it."""

    before: float | None
    after: float | None
    delta: float | None

    @classmethod
    def of(cls, before: float | None, after: float | None) -> ScoreDelta:
        delta = None if before is None or after is None else after - before
        return cls(before=before, after=after, delta=delta)


class ModelComparison(_Frozen):
    """A model's overall score and its groups' scores (name → delta), before and after."""

    overall: ScoreDelta
    layers: dict[str, ScoreDelta]
    metrics: dict[str, ScoreDelta]
    fields: dict[str, ScoreDelta]
    consumers: dict[str, ScoreDelta]

    def group(self, name: str) -> dict[str, ScoreDelta]:
        groups = {
            "layers": self.layers,
            "metrics": self.metrics,
            "fields": self.fields,
            "consumers": self.consumers,
        }
        return groups[name]


class ChunkOverlap(_Frozen):
    """Whether two conversation runs scored the same chunks, with the counts."""

    same: bool
    before: int
    after: int
    only_before: int
    only_after: int


class RunComparison(_Frozen):
    """What ``chatledger compare`` prints (``--format json``: this model's dump)."""

    before: str
    after: str
    chunks: ChunkOverlap | None
    only_before: list[str]
    only_after: list[str]
    models: dict[str, ModelComparison]


def _conversation(model: ModelResult) -> Scores:
    groups = {
        "layers": model.layers,
        "metrics": {},
        "fields": model.fields,
        "consumers": model.consumers,
    }
    return model.overall, groups


def _structbench(row: StructbenchRow) -> Scores:
    """A structbench row compared like a conversation model: overall = WV, metrics as a group."""
    metrics = {k: row.metric(k) for k in METRICS}
    return row.WV, {"layers": {}, "metrics": metrics, "fields": {}, "consumers": {}}


def _chunks(
    before: ConversationRun | StructbenchRun, after: ConversationRun | StructbenchRun
) -> ChunkOverlap | None:
    """Whether the two conversation runs scored the same chunks (``same``), with the counts;
    None when either run does not list them (a structbench run, or one written before
    run.json version 4). On other chunks a difference mixes the change with the data's."""
    if not isinstance(before, ConversationRun) or not isinstance(after, ConversationRun):
        return None
    if not before.chunk_ids or not after.chunk_ids:
        return None
    a, b = set(before.chunk_ids), set(after.chunk_ids)
    return ChunkOverlap(
        same=a == b,
        before=len(a),
        after=len(b),
        only_before=len(a - b),
        only_after=len(b - a),
    )


def _scores(run: ConversationRun | StructbenchRun) -> dict[str, Scores]:
    if isinstance(run, StructbenchRun):
        return {row.name: _structbench(row) for row in run.models}
    return {model.name: _conversation(model) for model in run.models}


def compare_runs(before_dir: str | Path, after_dir: str | Path) -> RunComparison:
    """Per model present in either run: overall, layer, field and consumer scores before/after
    (for structbench runs: DOC, MK, MV, WV and micro F1, with WV as the overall score)."""
    runs = read_run_record(before_dir), read_run_record(after_dir)
    if runs[0].task != runs[1].task:
        raise InputError(
            f"cannot compare a {runs[0].task} run ({before_dir}) with a {runs[1].task} run: "
            "their scores measure different things",
            path=after_dir,
        )
    before, after = _scores(runs[0]), _scores(runs[1])
    absent: Scores = (None, {})
    models: dict[str, ModelComparison] = {}
    for name in [*before, *(n for n in after if n not in before)]:
        (overall_a, a), (overall_b, b) = before.get(name, absent), after.get(name, absent)
        groups: dict[str, dict[str, ScoreDelta]] = {}
        for group in GROUPS:
            ga, gb = a.get(group, {}), b.get(group, {})
            keys = [*ga, *(k for k in gb if k not in ga)]
            groups[group] = {k: ScoreDelta.of(ga.get(k), gb.get(k)) for k in keys}
        models[name] = ModelComparison(overall=ScoreDelta.of(overall_a, overall_b), **groups)
    return RunComparison(
        before=str(before_dir),
        after=str(after_dir),
        chunks=_chunks(*runs),
        only_before=[n for n in before if n not in after],
        only_after=[n for n in after if n not in before],
        models=models,
    )
