"""Means of per-unit series (DESIGN.md §7): intervals, paired differences, rank probabilities.

Thin conveniences over the one resampling engine (:mod:`chatledger.stats._resample`): the same
draws (``rng.integers(0, n, (B, n))``, as scipy draws them), the same BCa. A constant series has
a zero-width interval; a series where BCa is undefined falls back to the percentile method
(and says so).
"""

from __future__ import annotations

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
    """One interval for the mean of each row (rows = score series, columns = units), from the
    one resampling engine (:mod:`chatledger.stats._resample`: a mean is a statistic of sums;
    BCa as scipy computes it, percentile where BCa is undefined)."""
    from chatledger.stats._resample import intervals_from, resample_statistics

    data = _as_matrix(values)
    constant = np.all(data == data[:, :1], axis=1)
    # A constant series' mean is its value exactly (summing would add rounding error).
    means = np.where(constant, data[:, 0], data.mean(axis=1))
    n = data.shape[1]
    if n < 2:
        return [
            Interval(float(m), float(m), float(m), "constant" if c else "single")
            for m, c in zip(means, constant, strict=True)
        ]

    def mean_of(sums: FloatArray) -> FloatArray:
        out: FloatArray = (sums / n).T
        return out

    resamples = resample_statistics(
        data.T, mean_of, n_resamples=n_resamples, seed=seed, estimates=means
    )
    return intervals_from(resamples, confidence=confidence, method=method)


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
    """Paired bootstrap of the mean difference over the same units; two-sided p-value of 'no
    difference' (:func:`chatledger.stats.paired_from`: the share of resampled differences,
    re-centred on zero, whose magnitude reaches the observed one, +1 smoothing). For few
    conversations prefer :func:`chatledger.stats.paired_comparison` (exact sign-flip)."""
    from chatledger.stats._resample import paired_from, resample_statistics

    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    if a_arr.ndim != 1 or a_arr.size == 0 or a_arr.shape != b_arr.shape:
        raise ValueError("a and b must be equal-length non-empty series")
    n = a_arr.size
    diff = a_arr - b_arr
    observed = float(diff.mean())
    if np.all(diff == diff[0]):
        return PairedDifference(observed, observed, observed, 1.0 if observed == 0 else 0.0)

    def means(sums: FloatArray) -> FloatArray:
        out: FloatArray = (sums / n).T
        return out

    resamples = resample_statistics(
        np.column_stack([diff, np.zeros(n)]),
        means,
        n_resamples=n_resamples,
        seed=seed,
        estimates=[observed, 0.0],
    )
    difference, low, high, p_value = paired_from(resamples, 0, 1, confidence=confidence)
    return PairedDifference(difference, low, high, p_value)


def rank_probabilities(
    values: FloatArray | Sequence[Sequence[float]],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> FloatArray:
    """P(model i holds rank r) (rank 0 = best) over paired bootstrap resamples of units
    (:func:`chatledger.stats.rank_probabilities_from` on the one engine's resamples).

    Ties share ranks by order of the model index (stable), so each resample gives a permutation.
    """
    from chatledger.stats._resample import rank_probabilities_from, resample_statistics

    data = _as_matrix(values)
    n = data.shape[1]

    def means(sums: FloatArray) -> FloatArray:
        out: FloatArray = (sums / n).T
        return out

    resamples = resample_statistics(
        data.T, means, n_resamples=n_resamples, seed=seed, estimates=data.mean(axis=1)
    )
    return rank_probabilities_from(resamples, range(data.shape[0]))
