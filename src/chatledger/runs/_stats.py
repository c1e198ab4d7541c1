"""Statistics of a run (DESIGN.md §7): intervals, paired differences, ranks, weight sensitivity.

Every statistic resamples *chunks*. Per-chunk values: layer-1 fields and composite as scored;
the judge composite of the chunk (an unscored chunk takes the model's mean, so it neither helps
nor hurts); downstream agreement of the chunk's conversation (the consumers work across the
chunks of a conversation, so a chunk carries its conversation's agreement). The overall value of
a chunk is the layer-weighted sum of those. Intervals are for the mean of the per-chunk values;
for downstream this mean weights conversations by their chunk count, which can differ a little
from the run-level agreement computed over all conversations at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from chatledger.runs._tables import RUN_LEVEL, Row
from chatledger.stats import (
    bootstrap_intervals,
    dirichlet_sensitivity,
    paired_difference,
    rank_probabilities,
    simplex_grid,
)

FloatArray = npt.NDArray[np.float64]


class StatsOptions(BaseModel):
    """The ``stats:`` block of a run config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bootstrap_resamples: int = Field(default=2000, ge=100)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    dirichlet_concentration: float = Field(default=50.0, gt=0.0)
    dirichlet_draws: int = Field(default=2000, ge=100)
    simplex_step: float = Field(default=0.05, gt=0.0, le=0.5)


@dataclass
class ModelSeries:
    """Per-chunk values of one model, in run chunk order (NaN = not available)."""

    name: str
    layers: dict[str, FloatArray] = field(default_factory=dict)
    fields: dict[str, FloatArray] = field(default_factory=dict)
    field_scores: dict[str, float] = field(default_factory=dict)
    layer_scores: dict[str, float] = field(default_factory=dict)


def _fill(values: FloatArray) -> FloatArray:
    """Unscored (NaN) chunks take the mean of the scored ones."""
    if np.all(np.isnan(values)):
        return np.zeros_like(values)
    mean = float(np.nanmean(values))
    return np.where(np.isnan(values), mean, values)


def compute_run_stats(
    series: Sequence[ModelSeries],
    layer_weights: Mapping[str, float],
    field_weights: Mapping[str, float],
    options: StatsOptions,
    seed: int,
) -> dict[str, Any]:
    """All run statistics, JSON-ready."""
    names = [s.name for s in series]
    layers = [name for name in layer_weights if all(name in s.layers for s in series)]
    # Chunks that every model has a value for (the reference could be unusable on some).
    stacked = {layer: np.vstack([s.layers[layer] for s in series]) for layer in layers}
    usable = np.ones(next(iter(stacked.values())).shape[1], dtype=bool) if stacked else None
    if usable is None:
        return {}
    for layer in layers:
        if layer != "judge":
            usable &= ~np.any(np.isnan(stacked[layer]), axis=0)
    for layer in layers:
        stacked[layer] = np.vstack([_fill(row[usable]) for row in stacked[layer]])
    overall = sum(layer_weights[layer] * stacked[layer] for layer in layers)
    assert isinstance(overall, np.ndarray)
    out: dict[str, Any] = {
        "n_chunks": int(usable.sum()),
        "bootstrap_resamples": options.bootstrap_resamples,
        "confidence": options.confidence,
        "seed": seed,
    }
    # Intervals: overall, each layer, each layer-1 field, for every model — one vectorised call.
    labels: list[tuple[str, str, str]] = []
    rows: list[FloatArray] = []
    for m, model in enumerate(names):
        labels.append((model, "overall", "composite"))
        rows.append(overall[m])
        for layer in layers:
            labels.append((model, layer, "composite"))
            rows.append(stacked[layer][m])
        for fname, values in series[m].fields.items():
            labels.append((model, "extraction", fname))
            rows.append(_fill(values[usable]))
    intervals = bootstrap_intervals(
        np.vstack(rows),
        n_resamples=options.bootstrap_resamples,
        confidence=options.confidence,
        seed=seed,
    )
    by_model: dict[str, dict[str, Any]] = {model: {} for model in names}
    for (model, layer, fname), interval in zip(labels, intervals, strict=True):
        key = layer if fname == "composite" else f"{layer}.{fname}"
        by_model[model][key] = interval.to_dict()
    out["intervals"] = by_model
    out["paired_differences"] = {
        f"{names[i]}|{names[j]}": paired_difference(
            overall[i], overall[j], n_resamples=options.bootstrap_resamples, seed=seed
        ).to_dict()
        for i, j in itertools.combinations(range(len(names)), 2)
    }
    probs = rank_probabilities(overall, n_resamples=options.bootstrap_resamples, seed=seed)
    out["rank_probabilities"] = {
        model: [float(p) for p in probs[m]] for m, model in enumerate(names)
    }
    out["weight_sensitivity"] = _sensitivity(
        series, layers, layer_weights, field_weights, options, seed
    )
    return out


def _sensitivity(
    series: Sequence[ModelSeries],
    layers: list[str],
    layer_weights: Mapping[str, float],
    field_weights: Mapping[str, float],
    options: StatsOptions,
    seed: int,
) -> dict[str, Any]:
    names = [s.name for s in series]
    result: dict[str, Any] = {}
    if len(names) < 2:
        return result
    fields = [f for f in field_weights if all(f in s.field_scores for s in series)]
    if fields and all("extraction" in s.layer_scores for s in series):
        scores = np.array([[s.field_scores[f] for f in fields] for s in series])
        result["fields"] = dirichlet_sensitivity(
            scores,
            [field_weights[f] for f in fields],
            names,
            concentration=options.dirichlet_concentration,
            n_draws=options.dirichlet_draws,
            seed=seed,
        ).to_dict()
    if len(layers) >= 2:
        scores = np.array([[s.layer_scores[layer] for layer in layers] for s in series])
        weights = [layer_weights[layer] for layer in layers]
        result["layers"] = dirichlet_sensitivity(
            scores,
            weights,
            names,
            concentration=options.dirichlet_concentration,
            n_draws=options.dirichlet_draws,
            seed=seed,
        ).to_dict()
        grid = simplex_grid(scores, layers, weights, step=options.simplex_step)
        grid["configured_ranking"] = [names[i] for i in grid["configured_ranking"]]
        for point in grid["points"]:
            point["ranking"] = [names[i] for i in point["ranking"]]
        result["layer_simplex"] = grid
    return result


PAIR_SEPARATOR = "|"  # a row about two models names them "a|b" in the model column


def stats_rows(stats: Mapping[str, Any], human_gold: Mapping[str, Any] | None = None) -> list[Row]:
    """Every statistic of the run as run-level rows of the score table, so the table alone
    answers what run.json does: interval bounds (ci_low / ci_high), rank probabilities, paired
    differences and swap probabilities (model column "a|b"), Kendall's τ and P(same ranking)
    of the weight sensitivity (model column "*"), repeat variance and human-gold scores."""
    rows: list[Row] = []
    for model, entries in stats.get("intervals", {}).items():
        for key, interval in sorted(entries.items()):
            layer, _, fname = key.partition(".")
            fname = fname or "composite"
            rows.append((model, RUN_LEVEL, layer, fname, "ci_low", float(interval["low"])))
            rows.append((model, RUN_LEVEL, layer, fname, "ci_high", float(interval["high"])))
    for model, probs in stats.get("rank_probabilities", {}).items():
        for rank, p in enumerate(probs, start=1):
            rows.append((model, RUN_LEVEL, "overall", "rank_probability", f"rank_{rank}", p))
    for pair, diff in stats.get("paired_differences", {}).items():
        for component in ("difference", "low", "high", "p_value"):
            value = float(diff[component])
            rows.append((pair, RUN_LEVEL, "overall", "paired_difference", component, value))
    for kind, result in stats.get("weight_sensitivity", {}).items():
        if kind == "layer_simplex":
            rows.append(("*", RUN_LEVEL, "weights", kind, "share_holding", result["share_holding"]))
            continue
        rows.append(
            ("*", RUN_LEVEL, "weights", kind, "kendall_tau_mean", result["kendall_tau_mean"])
        )
        rows.append(("*", RUN_LEVEL, "weights", kind, "p_same_ranking", result["p_same_ranking"]))
        for pair, p in result["swap_probability"].items():
            rows.append((pair, RUN_LEVEL, "weights", kind, "swap_probability", float(p)))
    for model, variance in stats.get("repeat_variance", {}).items():
        for component in ("mean", "chunk_sd_mean", "sampling_share"):
            if isinstance(variance.get(component), int | float):
                value = float(variance[component])
                rows.append((model, RUN_LEVEL, "extraction", "repeat_variance", component, value))
    if human_gold:
        sides = {"__reference__": human_gold["reference"], **human_gold["models"]}
        for model, result in sides.items():
            rows.append((model, RUN_LEVEL, "human_gold", "composite", "score", result["composite"]))
            for fname, value in result["fields"].items():
                rows.append((model, RUN_LEVEL, "human_gold", fname, "score", float(value)))
    return rows
