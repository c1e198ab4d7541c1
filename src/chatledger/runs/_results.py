"""What a run produces, per model and as a whole, and how layers combine into the overall."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatledger.core import InputError
from chatledger.record import (
    CalibrationBin,
    ConversationRun,
    FieldCounts,
    HumanGold,
    JudgeSummary,
    RunStats,
    Usage,
)
from chatledger.scoring import Combined, DegenerateOutputs, combine


@dataclass
class ModelSummary:
    """What the leaderboard and ``run.json`` keep of one challenger."""

    name: str
    file: str
    layers: dict[str, float]
    overall: float
    layer_weights_used: dict[str, float]
    fields: dict[str, float]
    consumers: dict[str, float]
    chunks: int
    invalid: int
    missing: int
    validity_rate: float
    usage: Usage
    problems: list[str] = field(default_factory=list)
    judge: JudgeSummary | None = None
    calibration: list[CalibrationBin] = field(default_factory=list)
    field_components: dict[str, dict[str, float]] = field(default_factory=dict)
    # Repeated items, replies cut by max_tokens, fields left empty (score.DegenerateOutputs).
    degenerate: DegenerateOutputs | None = None
    # Per field: matched / reference / predicted items, both-empty chunks, macro and micro.
    field_counts: dict[str, FieldCounts] = field(default_factory=dict)
    aggregate: str = "macro"  # the per-field figure the extraction composite used
    # Layers left out of this model's overall with the reason, and the line saying so
    # (scoring.combine); consumers left out of its downstream layer likewise.
    left_out: dict[str, str] = field(default_factory=dict)
    renormalisation: str | None = None
    consumers_left_out: dict[str, str] = field(default_factory=dict)
    downstream_renormalisation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "file": self.file,
            "overall": self.overall,
            "layers": self.layers,
            "layer_weights_used": self.layer_weights_used,
            "fields": self.fields,
            "consumers": self.consumers,
            "chunks": self.chunks,
            "invalid": self.invalid,
            "missing": self.missing,
            "validity_rate": self.validity_rate,
            "usage": self.usage.model_dump(mode="json", exclude_none=True),
            "judge": self.judge.model_dump(mode="json") if self.judge is not None else {},
            "calibration": [b.model_dump(mode="json") for b in self.calibration],
            "field_components": self.field_components,
            "degenerate": (
                self.degenerate.model_dump(mode="json") if self.degenerate is not None else {}
            ),
            "field_counts": {k: c.model_dump(mode="json") for k, c in self.field_counts.items()},
            "aggregate": self.aggregate,
            "problems": self.problems,
            "left_out": self.left_out,
            "renormalisation": self.renormalisation,
            "consumers_left_out": self.consumers_left_out,
            "downstream_renormalisation": self.downstream_renormalisation,
        }


@dataclass
class RunResult:
    name: str
    out_dir: Path
    layers_run: list[str]
    layer_weights_used: dict[str, float]
    renormalisation_note: str | None
    models: list[ModelSummary]
    reference_name: str
    timings: dict[str, float]
    stats: RunStats | None = None
    human_gold: HumanGold | None = None
    # Things about the input the reader should know (chunks too long to score quickly).
    notes: list[str] = field(default_factory=list)
    # The typed record written as run.json (set when the run directory is written).
    record: ConversationRun | None = None

    def leaderboard(self) -> list[ModelSummary]:
        return sorted(self.models, key=lambda m: (-m.overall, m.name))


def layer_weights_used(
    configured: dict[str, float], layers_run: list[str]
) -> tuple[dict[str, float], str | None]:
    """Weights of the layers that ran, renormalised to sum to 1, and a note when that happened."""
    present = {name: configured.get(name, 0.0) for name in layers_run}
    total = sum(present.values())
    if total <= 0:
        raise InputError(f"the layers that ran ({', '.join(layers_run)}) all have weight 0")
    used = {name: w / total for name, w in present.items()}
    left_out = [name for name in configured if name not in layers_run and configured[name] > 0]
    note = None
    if left_out:
        shown = ", ".join(f"{k} {v:.3f}" for k, v in used.items())
        note = f"layer(s) not run: {', '.join(left_out)}; remaining weights renormalised to {shown}"
    return used, note


def overall_composite(
    layers: dict[str, float], weights: dict[str, float], reasons: dict[str, str] | None = None
) -> float:
    """The overall of one model (:func:`overall_of`'s value, 0.0 when no layer is left)."""
    value = overall_of(layers, weights, reasons).value
    return value if value is not None else 0.0


def overall_of(
    layers: dict[str, float], weights: dict[str, float], reasons: dict[str, str] | None = None
) -> Combined:
    """The overall of one model: the layers' composite under ``weights`` (those of the layers
    that ran), a layer without a score or named in ``reasons`` left out and the rest
    renormalised (:func:`chatledger.scoring.combine`; value None when nothing is left)."""
    return combine(layers, weights, reasons)
