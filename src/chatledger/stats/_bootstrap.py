"""Bootstrap over chunks (DESIGN.md §7): intervals, paired differences, rank probabilities.

Intervals use ``scipy.stats.bootstrap`` (BCa, seeded) on all score series at once (vectorised).
A constant series has a zero-width interval; a series where BCa is undefined falls back to the
percentile method (and says so).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    method: str

    def to_dict(self) -> dict[str, float | str]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "method": self.method,
        }


def _as_matrix(values: FloatArray | Sequence[Sequence[float]]) -> FloatArray:
    data = np.asarray(values, dtype=np.float64)
    if data.ndim == 1:
        data = data[None, :]
    if data.ndim != 2 or data.shape[1] == 0:
        raise ValueError("expected series × observations with at least one observation")
    if not np.all(np.isfinite(data)):
        raise ValueError("scores must be finite")
    return data


def bootstrap_intervals(
    values: FloatArray | Sequence[Sequence[float]],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    method: str = "BCa",
) -> list[Interval]:
    """One interval for the mean of each row (rows = score series, columns = chunks)."""
    data = _as_matrix(values)
    constant = np.all(data == data[:, :1], axis=1)
    # A constant series' mean is its value exactly (summing would add rounding error).
    means = np.where(constant, data[:, 0], data.mean(axis=1))
    out: list[Interval | None] = [
        Interval(float(m), float(m), float(m), "constant") if c else None
        for m, c in zip(means, constant, strict=True)
    ]
    todo = np.flatnonzero(~constant)
    if todo.size and data.shape[1] >= 2:
        low, high, used = _scipy_interval(data[todo], n_resamples, confidence, seed, method)
        for k, row in enumerate(todo):
            out[row] = Interval(float(means[row]), float(low[k]), float(high[k]), used[k])
    return [
        iv if iv is not None else Interval(float(m), float(m), float(m), "single")
        for iv, m in zip(out, means, strict=True)
    ]


def _scipy_interval(
    data: FloatArray, n_resamples: int, confidence: float, seed: int, method: str
) -> tuple[FloatArray, FloatArray, list[str]]:
    # Resamples per batch, so that one batch of resampled data stays near 32 MB whatever the
    # number of series and chunks (scipy otherwise materialises all resamples at once).
    rows, n = data.shape
    batch = max(1, min(n_resamples, int(32e6 // (8 * rows * n))))

    # scipy.stats costs ~1 s to import; only the callers of this engine need it (not gate,
    # stats, report, which read runs).
    from scipy import stats

    def run(kind: str) -> tuple[FloatArray, FloatArray]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.bootstrap(
                (data,),
                np.mean,
                axis=-1,
                vectorized=True,
                n_resamples=n_resamples,
                confidence_level=confidence,
                method=kind,
                batch=batch,
                rng=np.random.default_rng(seed),
            )
        ci = res.confidence_interval
        return np.asarray(ci.low, dtype=np.float64), np.asarray(ci.high, dtype=np.float64)

    low, high = run(method)
    used = [method] * data.shape[0]
    bad = ~(np.isfinite(low) & np.isfinite(high))
    if bad.any():
        p_low, p_high = run("percentile")
        low = np.where(bad, p_low, low)
        high = np.where(bad, p_high, high)
        used = ["percentile" if b else method for b in bad]
    return low, high, used


def resample_indices(n: int, n_resamples: int, seed: int) -> npt.NDArray[np.intp]:
    """Chunk indices of each bootstrap resample, shared by every model (paired resampling)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(n_resamples, n), dtype=np.intp)


@dataclass(frozen=True)
class PairedDifference:
    """mean(a) − mean(b) over the same chunks, with a paired bootstrap interval and p-value."""

    difference: float
    low: float
    high: float
    p_value: float

    def to_dict(self) -> dict[str, float]:
        return {
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
        }


def paired_difference(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    *,
    n_resamples: int = 5000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Paired bootstrap of the mean difference; two-sided p-value of 'no difference'.

    The p-value is the share of resampled differences, re-centred on zero (the null), whose
    magnitude reaches the observed difference (+1 smoothing so it is never exactly 0).
    """
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if diff.ndim != 1 or diff.size == 0:
        raise ValueError("a and b must be equal-length non-empty series")
    observed = float(diff.mean())
    if np.all(diff == diff[0]):
        return PairedDifference(observed, observed, observed, 1.0 if observed == 0 else 0.0)
    idx = resample_indices(diff.size, n_resamples, seed)
    boot = diff[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    centred = boot - observed
    extreme = int(np.sum(np.abs(centred) >= abs(observed) - 1e-15))
    p_value = (extreme + 1) / (n_resamples + 1)
    return PairedDifference(observed, float(low), float(high), float(min(1.0, p_value)))


def rank_probabilities(
    values: FloatArray | Sequence[Sequence[float]],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> FloatArray:
    """P(model i holds rank r) (rank 0 = best) over paired bootstrap resamples of chunks.

    Ties share ranks by order of the model index (stable), so each resample gives a permutation.
    """
    data = _as_matrix(values)
    idx = resample_indices(data.shape[1], n_resamples, seed)
    means = data[:, idx].mean(axis=2)  # models × resamples
    order = np.argsort(-means, axis=0, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(data.shape[0])[:, None]
    ranks[order, np.arange(n_resamples)[None, :]] = rows
    probs = np.zeros((data.shape[0], data.shape[0]), dtype=np.float64)
    for model in range(data.shape[0]):
        probs[model] = np.bincount(ranks[model], minlength=data.shape[0]) / n_resamples
    return probs
