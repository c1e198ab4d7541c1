"""Two factors, one score: does the prompting strategy move it more than the model does?
(LLMStructBench's headline: strategy matters more than model size.)

On a complete grid — every model of the comparison run with every strategy of it, each row
scored on the same documents — for each metric M and score ``S[model, strategy, document]``:

- **strategy effect** = the range (max − min) over strategies of M averaged over models and
  documents: how far the choice of prompt alone moves the score;
- **model effect** = the range over models of M averaged over strategies and documents: how far
  the choice of model (here: of size) alone moves it;
- **difference** = strategy effect − model effect.

Intervals are paired percentile bootstraps over documents (every resample recomputes the three
figures from the same resampled documents, exactly as the estimate is computed). The verdict is
``strategy`` when the difference's interval lies above 0, ``model`` when it lies below, else
``unclear``. A range over more levels is larger by chance alone, so with 5 strategies and 2
models the comparison leans towards strategy; the report says so beside the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from chatledger.stats._bootstrap import resample_indices


class EffectInterval(BaseModel):
    model_config = ConfigDict(extra="forbid")

    estimate: float
    low: float | None
    high: float | None


class MetricEffects(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str
    strategy: EffectInterval
    model: EffectInterval
    difference: EffectInterval
    verdict: str  # "strategy" | "model" | "unclear"
    best_strategy: str
    worst_strategy: str
    best_model: str
    worst_model: str


class StrategyVsModel(BaseModel):
    """``run.json``'s ``strategy_vs_model`` block (version 1)."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    models: list[str]
    strategies: list[str]
    documents: int
    resamples: int
    confidence: float
    metrics: list[MetricEffects]


def _effects(cube: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For cube[..., model, strategy, document]: (strategy effect, model effect, per-strategy
    means, per-model means) over the last axes."""
    per_strategy = cube.mean(axis=(-3, -1))  # average over models and documents
    per_model = cube.mean(axis=(-2, -1))  # average over strategies and documents
    strategy = per_strategy.max(axis=-1) - per_strategy.min(axis=-1)
    model = per_model.max(axis=-1) - per_model.min(axis=-1)
    return strategy, model, per_strategy, per_model


def _interval(estimate: float, boot: np.ndarray | None, confidence: float) -> EffectInterval:
    if boot is None:
        return EffectInterval(estimate=estimate, low=None, high=None)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return EffectInterval(estimate=estimate, low=float(low), high=float(high))


def factor_effects(
    cubes: Mapping[str, np.ndarray],
    models: Sequence[str],
    strategies: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> StrategyVsModel:
    """``cubes[metric][model, strategy, document]`` → the effects of both factors per metric,
    bootstrapped over documents (``n_resamples`` 0: no intervals)."""
    n_documents = next(iter(cubes.values())).shape[-1] if cubes else 0
    idx = resample_indices(n_documents, n_resamples, seed) if n_resamples and n_documents else None
    out: list[MetricEffects] = []
    for metric, cube in cubes.items():
        strategy, model, per_strategy, per_model = _effects(cube)
        boot_strategy = boot_model = boot_difference = None
        if idx is not None:
            resampled = np.moveaxis(cube[:, :, idx], 2, 0)  # resamples × models × strategies × docs
            boot_strategy, boot_model, _, _ = _effects(resampled)
            boot_difference = boot_strategy - boot_model
        difference = _interval(float(strategy - model), boot_difference, confidence)
        verdict = "unclear"
        if difference.low is not None and difference.high is not None:
            if difference.low > 0:
                verdict = "strategy"
            elif difference.high < 0:
                verdict = "model"
        out.append(
            MetricEffects(
                metric=metric,
                strategy=_interval(float(strategy), boot_strategy, confidence),
                model=_interval(float(model), boot_model, confidence),
                difference=difference,
                verdict=verdict,
                best_strategy=strategies[int(np.argmax(per_strategy))],
                worst_strategy=strategies[int(np.argmin(per_strategy))],
                best_model=models[int(np.argmax(per_model))],
                worst_model=models[int(np.argmin(per_model))],
            )
        )
    return StrategyVsModel(
        models=list(models),
        strategies=list(strategies),
        documents=n_documents,
        resamples=n_resamples if idx is not None else 0,
        confidence=confidence,
        metrics=out,
    )
