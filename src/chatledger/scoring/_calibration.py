"""Expected calibration error (Guo et al. 2017), DESIGN.md §3 field 10."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

N_BINS = 10


def bin_indices(conf: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """The bin of each confidence: ((m−1)/n_bins, m/n_bins] is bin m−1; 0 goes to the first.
    Rounded to 9 decimals first so that 0.3 lands in (0.2, 0.3], not (0.3, 0.4]."""
    return np.clip(np.ceil(np.round(conf * n_bins, 9)).astype(np.int64) - 1, 0, n_bins - 1)


def bin_index(confidence: float, n_bins: int = N_BINS) -> int:
    """:func:`bin_indices` of one confidence (the same rounding and bounds)."""
    if n_bins != N_BINS:
        return _bin_index(confidence, n_bins)
    # Models state few distinct confidences (0.8, 0.95 …): each is binned once, up to a bound.
    known = _BINS.get(confidence)
    if known is None:
        known = _bin_index(confidence, N_BINS)
        if len(_BINS) < _BINS_KEPT:
            _BINS[confidence] = known
    return known


def _bin_index(confidence: float, n_bins: int) -> int:
    return min(max(math.ceil(round(confidence * n_bins, 9)) - 1, 0), n_bins - 1)


_BINS: dict[float, int] = {}
_BINS_KEPT = 4096


def _arrays(pairs: Sequence[tuple[float, bool]]) -> tuple[np.ndarray, np.ndarray]:
    conf = np.fromiter((c for c, _ in pairs), dtype=np.float64, count=len(pairs))
    correct = np.fromiter((k for _, k in pairs), dtype=np.float64, count=len(pairs))
    return conf, correct


def reliability_bins(
    pairs: Sequence[tuple[float, bool]], n_bins: int = N_BINS
) -> list[dict[str, float]]:
    """Per non-empty bin: its bounds, item count, mean confidence and accuracy."""
    return reliability_bins_of(*_arrays(pairs), n_bins)


def reliability_bins_of(
    conf: np.ndarray, correct: np.ndarray, n_bins: int = N_BINS
) -> list[dict[str, float]]:
    """:func:`reliability_bins` of pairs given as two arrays (confidence; 1.0/0.0 correct)."""
    bins = bin_indices(conf, n_bins)
    out = []
    for b in range(n_bins):
        mask = bins == b
        if mask.any():
            out.append(
                {
                    "low": b / n_bins,
                    "high": (b + 1) / n_bins,
                    "n": float(mask.sum()),
                    "confidence": float(conf[mask].mean()),
                    "accuracy": float(correct[mask].mean()),
                }
            )
    return out


SMALL = 64  # below this many items plain Python beats numpy's per-call overhead


def _ece_small(pairs: Sequence[tuple[float, bool]], n_bins: int) -> float:
    """The same sums as the numpy path, bin by bin in input order, for a chunk's few items."""
    counts = [0] * n_bins
    conf_sum = [0.0] * n_bins
    hit_sum = [0.0] * n_bins
    for confidence, correct in pairs:
        if not 0.0 <= confidence <= 1.0 or not math.isfinite(confidence):
            raise ValueError("confidences must lie in [0, 1]")
        b = bin_index(confidence, n_bins)
        counts[b] += 1
        conf_sum[b] += confidence
        hit_sum[b] += float(correct)
    gap = sum(abs(hit_sum[b] - conf_sum[b]) for b in range(n_bins) if counts[b])
    return gap / len(pairs)


def expected_calibration_error(pairs: Sequence[tuple[float, bool]], n_bins: int = N_BINS) -> float:
    """Σ_bins |B|/n · |accuracy(B) − mean confidence(B)| over bins ((m−1)/n_bins, m/n_bins].

    A confidence of exactly 0 falls in the first bin; empty bins are skipped. Confidences are
    rounded to 9 decimals before binning so that 0.3 lands in (0.2, 0.3], not (0.3, 0.4].
    """
    if not pairs:
        raise ValueError("ECE of no items is undefined")
    if len(pairs) <= SMALL:
        return _ece_small(pairs, n_bins)
    return expected_calibration_error_of(*_arrays(pairs), n_bins)


def expected_calibration_error_of(
    conf: np.ndarray, correct: np.ndarray, n_bins: int = N_BINS
) -> float:
    """:func:`expected_calibration_error` of more than :data:`SMALL` pairs given as two arrays
    (confidence; 1.0/0.0 correct): the same numpy sums, without building the pairs."""
    if np.any((conf < 0) | (conf > 1)) or not np.all(np.isfinite(conf)):
        raise ValueError("confidences must lie in [0, 1]")
    bins = bin_indices(conf, n_bins)
    counts = np.bincount(bins, minlength=n_bins).astype(np.float64)
    conf_sum = np.bincount(bins, weights=conf, minlength=n_bins)
    hit_sum = np.bincount(bins, weights=correct, minlength=n_bins)
    filled = counts > 0
    gap = np.abs(hit_sum[filled] - conf_sum[filled])  # = |B|·|acc(B) − conf(B)|
    return float(gap.sum() / len(conf))
