"""Bootstrap of statistics that are functions of sums over units (chunks or conversations).

Every run-level figure ChatLedger shows is a function of column sums of a per-unit matrix
(``score._aggregate``; downstream counts per conversation). A resample is then a vector of
multiplicities (how often each unit was drawn), and the statistic of a resample is the same
function applied to ``counts @ units`` — the figure shown, recomputed, with nothing
approximated. Units are chunks for chunk-level figures and conversations for figures that
span a conversation (a cluster bootstrap: a conversation's chunks travel together).

Intervals are BCa (Efron 1987), as ``scipy.stats.bootstrap`` computes them, with one
difference in how: scipy evaluates the statistic on n leave-one-out samples of n − 1 units
each (O(n²) work), while for a statistic of sums the leave-one-out sums are ``total − unit``
(O(n)). Resamples are drawn exactly as scipy draws them (``rng.integers(0, n, (B, n))`` in
batches), so on a plain mean the two agree (tested). Where BCa is undefined (every resample
on one side of the estimate) the percentile interval is used; a bias-dominated statistic whose
interval still misses its estimate is widened to it and says so in ``method``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from chatledger.stats._bootstrap import Interval
from chatledger.stats._inference import (
    MIN_UNITS,
    T_METHOD,
    PairedComparison,
    sign_flip_test,
    t_interval,
    too_few_note,
)

FloatArray = npt.NDArray[np.float64]
# sums (resamples × columns) → statistics (statistics × resamples)
SumStatistic = Callable[[FloatArray], FloatArray]
_BATCH_BYTES = 32e6  # one batch of multiplicities stays near 32 MB
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Resamples:
    """Bootstrap distribution of a set of statistics over the same resamples of units."""

    estimates: FloatArray  # statistics (the figures shown)
    values: FloatArray  # statistics × resamples
    jackknife: FloatArray  # statistics × units (leave-one-out values)


def resample_counts(n: int, n_resamples: int, seed: int) -> Iterator[FloatArray]:
    """Multiplicities of each unit in each resample, in batches (resamples × units), drawn
    as ``scipy.stats.bootstrap`` draws its indices. One batch (~32 MB) exists at a time: a
    list of all of them is ``n_resamples`` × units × 8 bytes (1.6 GB for 2,000 resamples of
    100,000 units)."""
    rng = np.random.default_rng(seed)
    batch = max(1, min(n_resamples, int(_BATCH_BYTES // (8 * max(n, 1)))))
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        idx = rng.integers(0, n, (size, n))
        flat = (idx + n * np.arange(size)[:, None]).ravel()
        del idx
        yield np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)


def resample_statistics(
    units: FloatArray,
    statistic: SumStatistic,
    *,
    n_resamples: int,
    seed: int,
    estimates: Sequence[float] | FloatArray | None = None,
) -> Resamples:
    """The statistics of every resample of the rows of ``units`` (units × columns).

    ``estimates`` are the figures shown (computed by the caller with the same function from
    sums it added itself); by default the statistic of the column sums.
    """
    units = np.asarray(units, dtype=np.float64)
    total = units.sum(axis=0, keepdims=True)
    shown = statistic(total)[:, 0] if estimates is None else np.asarray(estimates, dtype=np.float64)
    n = units.shape[0]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        boot = np.hstack(
            [statistic(counts @ units) for counts in resample_counts(n, n_resamples, seed)]
        )
        jack = statistic(total - units) if n > 1 else np.zeros((len(shown), 0))
    return Resamples(shown, boot, jack)


def intervals_from(
    resamples: Resamples, *, confidence: float = 0.95, method: str = "BCa"
) -> list[Interval]:
    """One interval per statistic, each containing its estimate (see the module doc)."""
    alpha = (1.0 - confidence) / 2.0
    out: list[Interval] = []
    for row in range(len(resamples.estimates)):
        estimate = float(resamples.estimates[row])
        boot = resamples.values[row]
        boot = boot[~np.isnan(boot)]  # resamples where the figure has no value (no events)
        jackknife = resamples.jackknife[row]
        jackknife = jackknife[~np.isnan(jackknife)]
        if boot.size == 0 or jackknife.size < 1:
            out.append(Interval(estimate, estimate, estimate, "single"))
            continue
        # Constant up to rounding (sums of resampled values differ in their last bits).
        if float(np.max(np.abs(boot - estimate))) <= _TOLERANCE:
            out.append(Interval(estimate, estimate, estimate, "constant"))
            continue
        used = method
        levels = _bca_levels(estimate, boot, jackknife, alpha) if method == "BCa" else None
        if levels is None:
            used = "percentile"
            levels = (alpha, 1.0 - alpha)
        low, high = (float(v) for v in np.percentile(boot, [100 * levels[0], 100 * levels[1]]))
        if not (low - _TOLERANCE <= estimate <= high + _TOLERANCE):
            used += ", widened to the estimate"
        out.append(Interval(estimate, min(low, estimate), max(high, estimate), used))
    return out


# The standard normal's CDF and its inverse, from the standard library: scipy.special's ndtr
# and ndtri agree to 1e-13 relative (1e-15 where levels are), and importing scipy.special
# costs a gate 0.12 s of CPU.
# erfc keeps the lower tail's precision (0.5·(1 + erf) rounds to 0 below about −8).
_NORMAL = NormalDist()
_ndtri = _NORMAL.inv_cdf


def _ndtr(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _bca_levels(
    estimate: float, boot: FloatArray, jackknife: FloatArray, alpha: float
) -> tuple[float, float] | None:
    """BCa's adjusted percentile levels, or None where they are undefined."""
    below = float(np.mean(boot < estimate))
    if below <= 0.0 or below >= 1.0:
        return None
    z0 = _ndtri(below)
    centred = jackknife.mean() - jackknife
    spread = float(np.sum(centred**2))
    accel = float(np.sum(centred**3)) / (6.0 * spread**1.5) if spread > 0 else 0.0
    levels = []
    for z_alpha in (_ndtri(alpha), _ndtri(1.0 - alpha)):
        shifted = z0 + z_alpha
        denominator = 1.0 - accel * shifted
        if denominator <= 0:
            return None
        levels.append(_ndtr(z0 + shifted / denominator))
    if not all(math.isfinite(v) for v in levels):
        return None
    return levels[0], levels[1]


def bootstrap_sums(
    units: FloatArray,
    statistic: SumStatistic,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    estimates: Sequence[float] | FloatArray | None = None,
) -> list[Interval]:
    """Intervals of statistics of column sums (see :func:`resample_statistics`)."""
    resamples = resample_statistics(
        units, statistic, n_resamples=n_resamples, seed=seed, estimates=estimates
    )
    return intervals_from(resamples, confidence=confidence)


def paired_from(
    resamples: Resamples, i: int, j: int, *, confidence: float = 0.95
) -> tuple[float, float, float, float]:
    """(difference, low, high, p-value) of statistic i − statistic j over the same resamples.

    The interval is the percentile interval of the resampled differences, widened to the
    observed difference if needed; the p-value (two-sided, "no difference") is the share of
    resampled differences, re-centred on zero, at least as far from zero as the observed one
    (+1 smoothing so that it is never exactly 0).
    """
    observed = float(resamples.estimates[i] - resamples.estimates[j])
    diff = resamples.values[i] - resamples.values[j]
    if diff.size == 0 or np.all(diff == diff[0]):
        return observed, observed, observed, 1.0 if observed == 0 else 0.0
    alpha = (1.0 - confidence) / 2.0
    low, high = (float(v) for v in np.quantile(diff, [alpha, 1.0 - alpha]))
    centred = diff - observed
    extreme = int(np.sum(np.abs(centred) >= abs(observed) - 1e-15))
    p_value = min(1.0, (extreme + 1) / (diff.size + 1))
    return observed, min(low, observed), max(high, observed), p_value


def rank_probabilities_from(resamples: Resamples, rows: Sequence[int]) -> FloatArray:
    """P(statistic ``rows[i]`` holds rank r) (rank 0 = highest) over the resamples; ties
    share ranks by order of ``rows`` (stable)."""
    values = resamples.values[list(rows)]
    k, b = values.shape
    order = np.argsort(-values, axis=0, kind="stable")
    ranks = np.empty_like(order)
    ranks[order, np.arange(b)[None, :]] = np.arange(k)[:, None]
    probs = np.zeros((k, k), dtype=np.float64)
    for m in range(k):
        probs[m] = np.bincount(ranks[m], minlength=k) / b
    return probs


def t_interval_of(
    resamples: Resamples,
    row: int,
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = (0.0, 1.0),
) -> Interval | None:
    """The t interval (:func:`chatledger.stats.t_interval`) of statistic ``row``: its units
    are the resampled units (k = the jackknife's width); None below two units."""
    estimate = float(resamples.estimates[row])
    got = t_interval(
        estimate,
        resamples.values[row],
        resamples.jackknife[row],
        confidence=confidence,
        bounds=bounds,
    )
    if got is None:
        return None
    method = "constant" if got.se <= _TOLERANCE else T_METHOD
    return Interval(estimate, got.low, got.high, method)


def paired_of(
    resamples: Resamples,
    i: int,
    j: int,
    per_unit: Sequence[float] | FloatArray,
    *,
    confidence: float = 0.95,
    min_units: int = MIN_UNITS,
    seed: int = 0,
) -> PairedComparison:
    """Statistic i − statistic j over the same resamples of units: the difference of the
    figures shown, a t interval from the resamples' and the jackknife's spread of the
    difference (none below ``min_units`` units: "too few conversations to tell (k = N)"),
    and the sign-flip test on ``per_unit`` (each unit's own i − j)."""
    observed = float(resamples.estimates[i] - resamples.estimates[j])
    flip = sign_flip_test(per_unit, seed=seed)
    k = resamples.jackknife.shape[1]
    if k < min_units:
        return PairedComparison(observed, None, None, flip.p_value, flip.label, k, too_few_note(k))
    got = t_interval(
        observed,
        resamples.values[i] - resamples.values[j],
        resamples.jackknife[i] - resamples.jackknife[j],
        confidence=confidence,
        bounds=(-1.0, 1.0),
    )
    low, high = (got.low, got.high) if got is not None else (None, None)
    return PairedComparison(observed, low, high, flip.p_value, flip.label, k)
