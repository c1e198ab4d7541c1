"""structbench's grid of models × strategies for ``stats.factor_effects`` (whether the prompting
strategy or the model moves DOC / MK / MV / WV more; the rule and its caveat are there)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chatledger.stats import StrategyVsModel, factor_effects
from chatledger.structbench.aggregate import Row
from chatledger.structbench.rundir._stats import CONFIDENCE, capped_resamples

EFFECT_METRICS = ("DOC", "MK", "MV", "WV")


def _grid(rows: Sequence[Row]) -> tuple[list[str], list[str], dict[tuple[str, str], Row]]:
    """Models that were run with ≥ 2 strategies, and the strategies all of them share (the
    rule baseline, one model with one strategy, stays out)."""
    by_model: dict[str, dict[str, Row]] = {}
    for row in rows:
        if row.strategy is not None:
            by_model.setdefault(row.model, {})[row.strategy] = row
    models = sorted(m for m, strategies in by_model.items() if len(strategies) >= 2)
    if len(models) < 2:
        return [], [], {}
    shared = set.intersection(*(set(by_model[m]) for m in models))
    strategies = sorted(shared)
    cells = {(m, s): by_model[m][s] for m in models for s in strategies}
    return models, strategies, cells


def strategy_vs_model(
    rows: Sequence[Row], *, n_resamples: int, seed: int
) -> StrategyVsModel | None:
    """The comparison, or None without a complete grid of ≥ 2 models × ≥ 2 strategies."""
    models, strategies, cells = _grid(rows)
    if len(strategies) < 2:
        return None
    n_documents = len(cells[(models[0], strategies[0])].scores)
    cubes = {
        metric: np.array(
            [
                [
                    [float(getattr(s, metric.lower())) for s in cells[(m, k)].scores]
                    for k in strategies
                ]
                for m in models
            ],
            dtype=np.float64,
        )
        for metric in EFFECT_METRICS
    }
    return factor_effects(
        cubes,
        models,
        strategies,
        n_resamples=capped_resamples(n_documents, n_resamples),
        seed=seed,
        confidence=CONFIDENCE,
    )
