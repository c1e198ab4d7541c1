"""Statistics across the rows of a structbench run (DESIGN §7 applied to §8).

Every statistic resamples *documents*, and every row is scored on every dataset document in the
same order, so resamples are paired: the same resampled documents for every row.

- The paper's micro F1 is a pooled ratio (sums over documents), not a mean of per-document
  values, so its interval re-pools each resample (percentile method) instead of calling
  ``bootstrap_intervals``, which is for means.
- Paired differences and rank probabilities use WV, the run's ranking metric.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from chatledger.stats import paired_difference, rank_probabilities, resample_indices
from chatledger.structbench.aggregate import MAX_BOOTSTRAP_CELLS, MIN_RESAMPLES, micro_f1
from chatledger.structbench.score import KEY_F1_SHARE, DocumentScore

RANKING_METRIC = "WV"
CONFIDENCE = 0.95


def capped_resamples(n_documents: int, n_resamples: int) -> int:
    """The resamples actually used: as ``structbench score`` caps them (memory ≈ documents ×
    resamples numbers per series)."""
    if n_documents == 0 or n_resamples <= 0:
        return 0
    return max(MIN_RESAMPLES, min(n_resamples, MAX_BOOTSTRAP_CELLS // n_documents))


def micro_f1_interval(
    scores: Sequence[DocumentScore], *, n_resamples: int, seed: int
) -> dict[str, float | str] | None:
    """Percentile interval of the pooled 0.25·F1_keys + 0.75·F1_values over resampled
    documents; None when intervals are off."""
    resamples = capped_resamples(len(scores), n_resamples)
    if resamples == 0:
        return None
    counts = np.array(
        [[s.truth_leaves + s.predicted_leaves, s.matched_keys, s.matched_values] for s in scores],
        dtype=np.float64,
    )

    def blend(total: np.ndarray, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
        safe = np.where(total > 0, total, 1.0)
        f1 = (KEY_F1_SHARE * 2.0 * keys + (1.0 - KEY_F1_SHARE) * 2.0 * values) / safe
        return np.where(total > 0, f1, 0.0)

    estimate = micro_f1(scores)["micro_f1"]  # exactly the figure the row reports
    idx = resample_indices(len(scores), resamples, seed)
    pooled = counts[idx].sum(axis=1)  # resamples × 3
    boot = blend(pooled[:, 0], pooled[:, 1], pooled[:, 2])
    alpha = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return {"estimate": estimate, "low": float(low), "high": float(high), "method": "percentile"}


def metric_matrix(rows: Sequence[Sequence[DocumentScore]], metric: str) -> np.ndarray:
    attribute = metric.lower()
    return np.array([[getattr(s, attribute) for s in row] for row in rows], dtype=np.float64)


def paired_differences(
    names: Sequence[str],
    rows: Sequence[Sequence[DocumentScore]],
    *,
    n_resamples: int,
    seed: int,
) -> list[dict[str, object]]:
    """Every pair in leaderboard order (``a`` ranked above ``b``): mean WV(a) − WV(b) over the
    same documents, with a paired bootstrap interval and two-sided p-value."""
    matrix = metric_matrix(rows, RANKING_METRIC)
    resamples = capped_resamples(matrix.shape[1], n_resamples)
    out: list[dict[str, object]] = []
    for i, j in itertools.combinations(range(len(names)), 2):
        entry: dict[str, object] = {"a": names[i], "b": names[j]}
        if resamples:
            result = paired_difference(
                matrix[i], matrix[j], n_resamples=resamples, confidence=CONFIDENCE, seed=seed
            )
            entry.update(result.to_dict())
        else:
            difference = float((matrix[i] - matrix[j]).mean())
            entry.update({"difference": difference, "low": None, "high": None, "p_value": None})
        out.append(entry)
    return out


def rank_table(
    names: Sequence[str],
    rows: Sequence[Sequence[DocumentScore]],
    *,
    n_resamples: int,
    seed: int,
) -> dict[str, list[float]]:
    """``{row: [P(rank 1), P(rank 2), …]}`` on WV; empty when intervals are off."""
    matrix = metric_matrix(rows, RANKING_METRIC)
    resamples = capped_resamples(matrix.shape[1], n_resamples)
    if resamples == 0 or not names:
        return {}
    probabilities = rank_probabilities(matrix, n_resamples=resamples, seed=seed)
    return {name: [float(p) for p in probabilities[k]] for k, name in enumerate(names)}
