"""Weight sensitivity (DESIGN.md §7): would other reasonable weights change the ranking?

Weights are re-drawn from a Dirichlet centred on the configured ones (parameters
``concentration × weights``: the larger the concentration, the closer the draws stay). For each
draw the models are re-ranked; we report Kendall's τ against the configured ranking, the
probability that each pair of models swaps, and, for layer weights, a grid over the simplex
marking where the configured ranking holds.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
_FLOOR = 1e-3  # a zero weight still gets a little mass, so the draw can explore it


def ranking(scores: FloatArray) -> list[int]:
    """Model indices from best to worst (ties by index)."""
    return [int(i) for i in np.argsort(-scores, kind="stable")]


def _tau(a: FloatArray, b: FloatArray) -> float:
    if np.all(a == a[0]) or np.all(b == b[0]):
        return (
            1.0
            if np.array_equal(np.argsort(-a, kind="stable"), np.argsort(-b, kind="stable"))
            else 0.0
        )
    from scipy import stats  # ~1 s to import: only when a τ is asked for

    return float(stats.kendalltau(a, b).statistic)


def _taus(base: FloatArray, rows: FloatArray) -> FloatArray:
    """:func:`_tau` of ``base`` against every row, vectorised over the rows.

    Kendall's τ-b from the pair signs, with scipy's arithmetic in scipy's order
    ((C − D) / √(pairs − ties in a) / √(pairs − ties in b), clipped to [−1, 1]), so every value
    is the float :func:`_tau` gives; rows where one side is constant take :func:`_tau` itself.
    """
    n = base.size
    i, j = np.triu_indices(n, k=1)
    total = n * (n - 1) // 2
    sign_a = np.sign(base[i] - base[j])
    sign_b = np.sign(rows[:, i] - rows[:, j])
    ties_a = int(np.count_nonzero(sign_a == 0))
    ties_b = np.count_nonzero(sign_b == 0, axis=1)
    if ties_a == total:
        return np.array([_tau(base, row) for row in rows])
    concordance = (sign_b * sign_a).sum(axis=1).astype(np.int64)  # C − D, exact
    constant = ties_b == total
    safe = np.where(constant, 0, ties_b)
    taus = concordance / np.sqrt(total - ties_a) / np.sqrt(total - safe)
    taus = np.minimum(1.0, np.maximum(-1.0, taus))
    for k in np.flatnonzero(constant):
        taus[k] = _tau(base, rows[k])
    return np.asarray(taus, dtype=np.float64)


@dataclass(frozen=True)
class Sensitivity:
    """How a ranking responds to re-drawn weights."""

    models: list[str]
    configured_ranking: list[str]
    tau_mean: float
    tau_quantiles: dict[str, float]
    p_same_ranking: float
    swap_probability: dict[str, float]
    n_draws: int
    concentration: float


def dirichlet_sensitivity(
    component_scores: FloatArray | Sequence[Sequence[float]],
    weights: Sequence[float],
    models: Sequence[str],
    *,
    concentration: float = 50.0,
    n_draws: int = 2000,
    seed: int = 0,
) -> Sensitivity:
    """``component_scores`` is models × components (fields or layers); ``weights`` sums to 1."""
    scores = np.asarray(component_scores, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if scores.ndim != 2 or scores.shape != (len(models), w.size):
        raise ValueError("component_scores must be models × components, matching the weights")
    if concentration <= 0:
        raise ValueError("concentration must be positive")
    base = scores @ (w / w.sum())
    rng = np.random.default_rng(seed)
    alpha = concentration * np.maximum(w / w.sum(), _FLOOR)
    draws = rng.dirichlet(alpha, size=n_draws)  # n_draws × components
    totals = draws @ scores.T  # n_draws × models
    taus = _taus(base, totals)
    base_rank = ranking(base)
    same = np.mean([ranking(row) == base_rank for row in totals])
    swaps: dict[str, float] = {}
    for i, j in itertools.combinations(range(len(models)), 2):
        before = base[i] >= base[j]
        after = totals[:, i] >= totals[:, j]
        swaps[f"{models[i]}|{models[j]}"] = float(np.mean(after != before))
    quantiles = np.quantile(taus, [0.05, 0.5, 0.95])
    return Sensitivity(
        models=list(models),
        configured_ranking=[models[i] for i in base_rank],
        tau_mean=float(taus.mean()),
        tau_quantiles={
            "q05": float(quantiles[0]),
            "q50": float(quantiles[1]),
            "q95": float(quantiles[2]),
        },
        p_same_ranking=float(same),
        swap_probability=swaps,
        n_draws=n_draws,
        concentration=concentration,
    )


class GridPoint(TypedDict):
    """One weight vector of :func:`simplex_grid`: its ranking (model indices) and whether it
    is the configured one."""

    weights: dict[str, float]
    ranking: list[int]
    holds: bool


class SimplexGrid(TypedDict):
    """What :func:`simplex_grid` gives (``record.LayerSimplex`` keeps it, with model names)."""

    layers: list[str]
    step: float
    configured_ranking: list[int]
    points: list[GridPoint]
    share_holding: float


def simplex_grid(
    layer_scores: FloatArray | Sequence[Sequence[float]],
    layers: Sequence[str],
    configured: Sequence[float],
    *,
    step: float = 0.05,
) -> SimplexGrid:
    """Every weight vector on a grid over the simplex of ``layers``, with its ranking and
    whether it equals the configured ranking (the region where the ranking holds)."""
    scores = np.asarray(layer_scores, dtype=np.float64)
    k = len(layers)
    n = round(1.0 / step)
    base_rank = ranking(scores @ np.asarray(configured, dtype=np.float64))
    points: list[GridPoint] = []
    for combo in itertools.product(range(n + 1), repeat=k - 1):
        if sum(combo) > n:
            continue
        parts = [*combo, n - sum(combo)]
        w = np.array(parts, dtype=np.float64) / n
        order = ranking(scores @ w)
        points.append(
            {
                "weights": dict(zip(layers, (round(float(x), 6) for x in w), strict=True)),
                "ranking": order,
                "holds": order == base_rank,
            }
        )
    held = sum(p["holds"] for p in points)
    return {
        "layers": list(layers),
        "step": step,
        "configured_ranking": base_rank,
        "points": points,
        "share_holding": held / len(points) if points else 1.0,
    }
