"""Anytime-valid confidence sequences for bounded means, and the decisions read off them.

A *confidence sequence* is a sequence of intervals that all contain the true mean at once with
probability ≥ 1 − α, however many times it is looked at and whenever one stops (Darling &
Robbins 1967; Howard et al. 2021). That is what lets a comparison stop as soon as its answer is
clear: a decision taken at any data-dependent time keeps its error ≤ α.

The sequence here is the *hedged capital* confidence sequence of Waudby-Smith & Ramdas (2024,
"Estimating means of bounded random variables by betting", JRSS-B 86(1), §4, Theorem 3 and
eq. (26)–(27)), written after the authors' reference implementation (``confseq.betting.
hedged_cs``, v0.0.11) and checked against its numbers (tests/test_sequential.py):

* for every candidate mean m on a grid of [0, 1], two gamblers bet against m with the
  predictable plug-in empirical-Bernstein bets λ_t = √(2 log(2/α) / (σ̂²_{t−1} t log(t+1)))
  (σ̂² a regularised running variance, prior 1/4 with one fake observation), truncated at
  ½/m (for) and ½/(1 − m) (against);
* the hedged capital K_t(m) = max(½ K⁺_t(m), ½ K⁻_t(m)) is a nonnegative martingale when the
  mean is m, so by Ville's inequality P(∃t: K_t(m) ≥ 1/α) ≤ α;
* the sequence is {m : K_t(m) < 1/α}, widened by one grid step, intersected over time.

Conversations are drawn *without replacement* from the finite set available, so the version
for sampling without replacement is used (ibid. §6, with the population size N): the mean it
covers is the mean over all N conversations — what the full run would show — and the sequence
closes in on it as the sample exhausts the population (the "logical" bounds, ibid. eq. (40)).

Everything is vectorised over the grid, and over repetitions for simulation
(:func:`simulate_sequential`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Decision = Literal["pass", "fail", "undecided"]

DEFAULT_GRID = 1000
_TRUNCATION = 0.5
_PRIOR_MEAN = 0.5
_PRIOR_VARIANCE = 0.25
# Bounds within this of the threshold are on it: once every conversation is seen the sequence
# is the exact mean, and a mean equal to the threshold must not be decided by rounding.
_TIE = 1e-9


@dataclass(frozen=True)
class ConfidenceSequence:
    """The sequence after each observation: ``n`` observed, running mean, bounds."""

    n: npt.NDArray[np.int64]
    estimate: FloatArray
    lower: FloatArray
    upper: FloatArray
    alpha: float
    population: int | None

    def at(self, n: int) -> tuple[float, float, float]:
        """(estimate, lower, upper) after ``n`` observations."""
        i = n - 1
        return float(self.estimate[i]), float(self.lower[i]), float(self.upper[i])


def _bets(x: FloatArray, alpha: float) -> FloatArray:
    """Predictable plug-in empirical-Bernstein bets (``lambda_predmix_eb``), along the last axis."""
    t = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    mean_t = np.minimum((_PRIOR_MEAN + np.cumsum(x, axis=-1)) / (t + 1.0), 1.0)
    var_t = (_PRIOR_VARIANCE + np.cumsum((x - mean_t) ** 2, axis=-1)) / (t + 1.0)
    var_before = np.concatenate(
        [np.full((*x.shape[:-1], 1), _PRIOR_VARIANCE), var_t[..., :-1]], axis=-1
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        bets = np.sqrt(2.0 * math.log(1.0 / alpha) / (t * np.log1p(t) * var_before))
    bets[np.isnan(bets)] = 0.0
    out: FloatArray = bets
    return out


def _capital(x: FloatArray, grid: FloatArray, alpha: float, population: int | None) -> FloatArray:
    """Hedged capital K_t(m): x (..., T), grid (G,) → (..., G, T)."""
    bets = _bets(x, alpha / 2.0)[..., None, :]  # θ = ½: each side bets at level α/2
    xs = x[..., None, :]
    m = grid[:, None]
    if population is None:
        mu = np.broadcast_to(m, (*xs.shape[:-2], grid.size, x.shape[-1]))
    else:
        t = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
        before = np.concatenate(
            [np.zeros((*x.shape[:-1], 1)), np.cumsum(x, axis=-1)[..., :-1]], axis=-1
        )[..., None, :]
        mu = (population * m - before) / (population - (t - 1.0))
    # The bets are finite (the running variance is at least its prior's share), so the
    # truncated bets are too: no ∞ · 0 to settle, as the reference implementation must.
    with np.errstate(divide="ignore", invalid="ignore"):
        for_m = np.maximum(np.minimum(bets, _TRUNCATION / mu), -_TRUNCATION / (1.0 - mu))
        against = np.maximum(np.minimum(bets, _TRUNCATION / (1.0 - mu)), -_TRUNCATION / mu)
        gap = xs - mu
        up = 1.0 + for_m * gap
        down = 1.0 - against * gap
    with np.errstate(invalid="ignore", over="ignore"):
        k_up = np.cumprod(up, axis=-1)
        k_down = np.cumprod(down, axis=-1)
    k_up[np.isnan(k_up)] = 0.0
    k_down[np.isnan(k_down)] = 0.0
    capital: FloatArray = np.maximum(0.5 * k_up, 0.5 * k_down)
    capital[(mu < 0.0) | (mu > 1.0)] = np.inf  # such an m is impossible given what was seen
    return capital


def betting_bounds(
    x: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    population: int | None = None,
    grid: int = DEFAULT_GRID,
) -> tuple[FloatArray, FloatArray]:
    """Lower and upper bounds of the hedged-capital sequence for observations in [0, 1]
    along the last axis (any leading axes are independent sequences)."""
    values = np.asarray(x, dtype=np.float64)
    if values.size and (values.min() < 0.0 or values.max() > 1.0):
        raise ValueError("observations must lie in [0, 1]")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    if population is not None and population < values.shape[-1]:
        raise ValueError("more observations than the population holds")
    points = np.arange(0, grid + 1, dtype=np.float64) / grid
    inside = _capital(values, points, alpha, population) <= 1.0 / alpha  # (..., G, T)
    anywhere = inside.any(axis=-2)
    first = np.argmax(inside, axis=-2)
    last = grid - np.argmax(inside[..., ::-1, :], axis=-2)
    lower = np.where(anywhere, points[first], 0.0)
    upper = np.where(anywhere, points[last], 1.0)
    lower = np.maximum(0.0, lower - 1.0 / grid)
    upper = np.minimum(1.0, upper + 1.0 / grid)
    if population is not None:
        t = np.arange(1, values.shape[-1] + 1, dtype=np.float64)
        total = np.cumsum(values, axis=-1)
        lower = np.maximum(lower, total / population)
        upper = np.minimum(upper, 1.0 - (t - total) / population)
    return np.maximum.accumulate(lower, axis=-1), np.minimum.accumulate(upper, axis=-1)


def confidence_sequence(
    values: npt.ArrayLike,
    *,
    low: float = 0.0,
    high: float = 1.0,
    alpha: float = 0.05,
    population: int | None = None,
    grid: int = DEFAULT_GRID,
) -> ConfidenceSequence:
    """The sequence for the mean of ``values`` bounded in [low, high] (a paired difference of
    two scores in [0, 1] lies in [−1, 1]), in the order given."""
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1 or data.size == 0:
        raise ValueError("a confidence sequence needs a non-empty 1-D series")
    if not high > low:
        raise ValueError("high must exceed low")
    width = high - low
    scaled = np.clip((data - low) / width, 0.0, 1.0)
    if np.any(np.abs(scaled * width + low - data) > 1e-9):
        raise ValueError(f"values must lie in [{low:g}, {high:g}]")
    lo, hi = betting_bounds(scaled, alpha=alpha, population=population, grid=grid)
    n = np.arange(1, data.size + 1, dtype=np.int64)
    return ConfidenceSequence(
        n=n,
        estimate=np.cumsum(data) / n,
        lower=lo * width + low,
        upper=hi * width + low,
        alpha=alpha,
        population=population,
    )


def decide(lower: float, upper: float, threshold: float) -> Decision:
    """``pass`` when the sequence lies wholly above ``threshold``, ``fail`` when wholly below,
    else ``undecided``. With a sequence of level α the decision is wrong with probability at
    most α, whenever it is read."""
    if lower > threshold + _TIE:
        return "pass"
    if upper < threshold - _TIE:
        return "fail"
    return "undecided"


def first_decision(
    lower: FloatArray, upper: FloatArray, threshold: float, looks: npt.ArrayLike
) -> tuple[Decision, int | None]:
    """The decision at the first look (number of observations) where one is reached, and that
    look; ``("undecided", None)`` when none is. Bounds are those of :func:`betting_bounds`."""
    for n in np.asarray(looks, dtype=np.int64):
        verdict = decide(float(lower[n - 1]), float(upper[n - 1]), threshold)
        if verdict != "undecided":
            return verdict, int(n)
    return "undecided", None


@dataclass(frozen=True)
class SimulatedEffect:
    """How the sequential decision behaved for one true difference over many repetitions."""

    effect: float
    repetitions: int
    correct: Decision
    passed: int
    failed: int
    undecided: int
    wrong_share: float
    median_stop: int  # conversations used (the whole pool when undecided)
    median_stop_share: float


def simulate_sequential(
    effects: list[float],
    *,
    pool: int = 200,
    repetitions: int = 200,
    batch: int = 5,
    sd: float = 0.15,
    threshold: float = 0.0,
    alpha: float = 0.05,
    seed: int = 0,
    grid: int = 400,
) -> list[SimulatedEffect]:
    """Simulated challengers with known true differences: each repetition draws a pool of
    per-conversation paired differences whose mean is *exactly* ``effect`` (normal noise of
    ``sd`` around it, recentred, inside [−1, 1]), visits it in a random order in batches, and
    stops at the first batch after which the sequence lies on one side of ``threshold``.
    A decision is wrong when it is on the wrong side of the truth; at ``effect == threshold``
    every decision is wrong ("undecided" is the right answer)."""
    rng = np.random.default_rng(seed)
    looks = np.arange(batch, pool + batch, batch).clip(max=pool)
    out: list[SimulatedEffect] = []
    for effect in effects:
        noise = rng.normal(0.0, sd, (repetitions, pool))
        diffs = effect + noise - noise.mean(axis=1, keepdims=True)
        if np.abs(diffs).max() > 1.0:
            raise ValueError("sd too large: a simulated difference left [-1, 1]")
        x = (diffs + 1.0) / 2.0
        lower = np.empty_like(x)
        upper = np.empty_like(x)
        step = max(1, int(4e6 // (pool * (grid + 1))))  # bound the (reps, grid, pool) block
        for start in range(0, repetitions, step):
            part = slice(start, start + step)
            lo, hi = betting_bounds(x[part], alpha=alpha, population=pool, grid=grid)
            lower[part], upper[part] = 2.0 * lo - 1.0, 2.0 * hi - 1.0
        counts = {"pass": 0, "fail": 0, "undecided": 0}
        stops: list[int] = []
        for r in range(repetitions):
            verdict, at = first_decision(lower[r], upper[r], threshold, looks)
            counts[verdict] += 1
            stops.append(pool if at is None else at)
        correct: Decision = (
            "pass" if effect > threshold else "fail" if effect < threshold else "undecided"
        )
        wrong = (
            repetitions - counts[correct] - (counts["undecided"] if correct != "undecided" else 0)
        )
        median = int(np.median(stops))
        out.append(
            SimulatedEffect(
                effect=effect,
                repetitions=repetitions,
                correct=correct,
                passed=counts["pass"],
                failed=counts["fail"],
                undecided=counts["undecided"],
                wrong_share=wrong / repetitions,
                median_stop=median,
                median_stop_share=median / pool,
            )
        )
    return out


@dataclass(frozen=True)
class StopPlan:
    """Conversations a sequential run is expected to need (over simulated runs)."""

    effect: float
    median: int | None  # None: under half the simulated runs decide within the population
    p90: int | None
    decided_share: float
    population: int


def expected_conversations(
    pilot: npt.ArrayLike,
    *,
    effect: float | None = None,
    threshold: float = 0.0,
    population: int,
    low: float = -1.0,
    high: float = 1.0,
    batch: int = 5,
    alpha: float = 0.05,
    repetitions: int = 200,
    seed: int = 0,
    grid: int = 200,
) -> StopPlan:
    """Planning from a pilot: the conversations a sequential run over ``population`` of them is
    expected to use to decide, were the true mean ``effect`` (default: the pilot's). Each
    simulated run draws ``population`` per-conversation values from the pilot's, shifted to
    mean ``effect`` and kept inside [low, high], visits them in a random order in batches and
    stops at the first decision, exactly as ``chatledger decide`` does."""
    values = np.asarray(pilot, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size < 2:
        raise ValueError("a pilot needs at least two per-conversation values")
    target = float(values.mean()) if effect is None else effect
    rng = np.random.default_rng(seed)
    draws = values[rng.integers(0, values.size, (repetitions, population))]
    # each simulated population's mean is the effect (as in simulate_sequential)
    draws = np.clip(draws - draws.mean(axis=1, keepdims=True) + target, low, high)
    x = (draws - low) / (high - low)
    looks = np.arange(batch, population + batch, batch).clip(max=population)
    m0 = (threshold - low) / (high - low)
    stops: list[int] = []
    step = max(1, int(4e6 // (population * (grid + 1))))
    for start in range(0, repetitions, step):
        lo, hi = betting_bounds(
            x[start : start + step], alpha=alpha, population=population, grid=grid
        )
        for r in range(lo.shape[0]):
            _, at = first_decision(lo[r], hi[r], m0, looks)
            stops.append(population + 1 if at is None else at)
    ordered = np.sort(np.asarray(stops))
    decided = float(np.mean(ordered <= population))
    median = int(np.median(ordered))
    p90 = int(np.quantile(ordered, 0.9, method="higher"))
    return StopPlan(
        effect=target,
        median=median if median <= population else None,
        p90=p90 if p90 <= population else None,
        decided_share=decided,
        population=population,
    )
