"""structbench's grid of models × strategies for ``stats.factor_effects`` (whether the prompting
strategy or the model moves DOC / MK / MV / WV more; the rule and its caveat are there)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from chatledger.record import GridPair, GridPairs
from chatledger.stats import (
    DEFAULT_POWER,
    StrategyVsModel,
    factor_effects,
    paired_difference,
    units_needed_for,
)
from chatledger.structbench.aggregate import Row
from chatledger.structbench.rundir._stats import CONFIDENCE, RANKING_METRIC, capped_resamples

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


def _pair(
    kind: str, within: str, a: Row, b: Row, labels: tuple[str, str], *, n_resamples: int, seed: int
) -> GridPair:
    metric = RANKING_METRIC.lower()
    first = np.array([float(getattr(s, metric)) for s in a.scores], dtype=np.float64)
    second = np.array([float(getattr(s, metric)) for s in b.scores], dtype=np.float64)
    differences = first - second
    entry: dict[str, object] = {"kind": kind, "within": within, "a": labels[0], "b": labels[1]}
    if n_resamples:
        result = paired_difference(
            first, second, n_resamples=n_resamples, confidence=CONFIDENCE, seed=seed
        )
        entry |= result.to_dict()
        entry["decided"] = result.low > 0.0 or result.high < 0.0
    else:
        entry["difference"] = float(differences.mean())
    if differences.size >= 2:
        entry["documents_needed"] = units_needed_for(
            differences, confidence=CONFIDENCE, power=DEFAULT_POWER
        )
    return GridPair.model_validate(entry)


def grid_pairs(rows: Sequence[Row], *, n_resamples: int, seed: int) -> GridPairs | None:
    """Every pair of strategies within each model, and every pair of models under each
    strategy, on the ranking metric over the same documents: the difference, its paired
    interval, whether the interval decides it, and how many documents would decide it with 80 %
    power were the difference real. None without a grid of ≥ 2 models × ≥ 2 strategies."""
    models, strategies, cells = _grid(rows)
    if len(strategies) < 2:
        return None
    n_documents = len(cells[(models[0], strategies[0])].scores)
    resamples = capped_resamples(n_documents, n_resamples)
    # (kind, within, a's cell, b's cell): strategies within each model, then models under
    # each strategy.
    cells_compared = [
        ("strategy", model, (model, x), (model, y))
        for model in models
        for x, y in itertools.combinations(strategies, 2)
    ] + [
        ("model", strategy, (x, strategy), (y, strategy))
        for strategy in strategies
        for x, y in itertools.combinations(models, 2)
    ]
    pairs = [
        _pair(
            kind,
            within,
            cells[a],
            cells[b],
            (a[1], b[1]) if kind == "strategy" else (a[0], b[0]),
            n_resamples=resamples,
            seed=seed,
        )
        for kind, within, a, b in cells_compared
    ]
    return GridPairs(
        metric=RANKING_METRIC,
        documents=n_documents,
        confidence=CONFIDENCE,
        power=DEFAULT_POWER,
        pairs=pairs,
    )
