"""Inference with few conversations (DESIGN.md §7): the conversation is the unit.

* **Intervals** — a t interval on the figure shown: estimate ± t(k − 1) · SE, where SE is the
  larger of the cluster-bootstrap standard error (rescaled by √(k/(k − 1))) and the
  leave-one-conversation-out jackknife standard error, both recomputing exactly the figure
  shown (CV3-style jackknife variance with t(G − 1) critical values: Bell & McCaffrey 2002;
  Cameron & Miller 2015; MacKinnon, Nielsen & Webb 2023). Below :data:`MIN_UNITS`
  conversations there is no interval: "too few conversations to tell (k = 3)".
* **Paired differences** — an exact sign-flip randomisation test on the per-conversation
  differences (all 2^k patterns up to k = 16, Monte Carlo beyond and labelled so), its
  p-value never below 2/2^k (exact) or 1/(B + 1) (Monte Carlo, said so).
* **Sparse fields** — fewer than :data:`FEW_ITEMS` reference items: "few items (n = 5)", no
  interval (never [0, 0] from 0 of 5).
* **Outcomes in too few conversations** — a list field's score is a ratio of pooled counts
  (matched items over reference and predicted items). When its matched items, or its
  unmatched ones, all lie in fewer than :data:`MIN_OUTCOME_UNITS` conversations, the
  conversation-level spread of the figure is estimated from one conversation (or none): the
  "few treated clusters" case, where cluster-robust standard errors and the cluster bootstrap
  fail (MacKinnon & Webb 2017, 2018). Such a field is marked "matches in 1 conversation" and
  has no interval (docs/statistics.md measures it: the AMI pool's offline ``decisions``).
* **Power** lives in :mod:`chatledger.stats._power` (``units_needed``).

Everything here is a function of numbers; ``runs`` orchestrates, ``stats`` computes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

MIN_UNITS = 5  # fewest conversations an interval is given for (docs/decisions.md, issue 27)
FEW_ITEMS = 20  # fewer reference items than this: "few items (n = N)", no interval
MIN_OUTCOME_UNITS = 2  # fewest conversations a field's matches (and misses) must span
EXACT_UP_TO = 16  # sign-flip: all 2^k patterns up to this k, Monte Carlo beyond
MONTE_CARLO_DRAWS = 20_000
T_METHOD = "t(k-1), SE = max(cluster bootstrap, jackknife)"


def too_few_note(k: int, unit: str = "conversations") -> str:
    """What is shown instead of an interval below :data:`MIN_UNITS` units."""
    return f"too few {unit} to tell (k = {k})"


def few_items_note(n: int) -> str:
    """What a field with fewer than :data:`FEW_ITEMS` reference items is marked with."""
    return f"few items (n = {n})"


def outcome_units(
    matched: FloatArray, reference: FloatArray, predicted: FloatArray
) -> tuple[int, int]:
    """How many units (rows) hold a matched item, and how many an unmatched one, from each
    unit's matched count (or credit), reference items and predicted items: a unit holds an
    unmatched item when R + P − 2M > 0."""
    unmatched = reference + predicted - 2.0 * matched
    return int(np.sum(matched > 1e-9)), int(np.sum(unmatched > 1e-9))


def concentrated_note(
    matched_units: int, unmatched_units: int, unit: str = "conversation"
) -> str | None:
    """ "matches in 1 conversation" when a field's matched (or unmatched) items lie in fewer
    than :data:`MIN_OUTCOME_UNITS` units — the rarer of the two named — else None."""
    if min(matched_units, unmatched_units) >= MIN_OUTCOME_UNITS:
        return None
    what, n = (
        ("matches", matched_units)
        if matched_units <= unmatched_units
        else ("misses", unmatched_units)
    )
    return f"{what} in {n} {unit}{'' if n == 1 else 's'}"


# --- Student's t, from the standard library ----------------------------------------------------


def _t_two_sided_mass(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with integer ``df`` (Abramowitz & Stegun 26.7.3-4)."""
    if t <= 0:
        return 0.0
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2 == 1:
        if df == 1:
            return 2.0 * theta / math.pi
        term, total = 1.0, 1.0
        for j in range(1, (df - 1) // 2):
            term *= c2 * (2 * j) / (2 * j + 1)
            total += term
        return 2.0 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    term, total = 1.0, 1.0
    for j in range(1, df // 2):
        term *= c2 * (2 * j - 1) / (2 * j)
        total += term
    return math.sin(theta) * total


@lru_cache(maxsize=256)
def t_quantile(confidence: float, df: int) -> float:
    """The two-sided critical value q with P(|T| ≤ q) = ``confidence`` (df ≥ 1); the normal's
    beyond df = 1,000 (they differ by < 0.001 there). Kept per (confidence, df): a gate or a
    run asks for the same few dozens of times."""
    if df > 1000:
        return NormalDist().inv_cdf(0.5 + confidence / 2.0)
    low, high = 0.0, 1.0
    while _t_two_sided_mass(high, df) < confidence:
        high *= 2.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        if _t_two_sided_mass(mid, df) < confidence:
            low = mid
        else:
            high = mid
        if high - low < 1e-12:
            break
    return 0.5 * (low + high)


# --- intervals -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TInterval:
    estimate: float
    low: float
    high: float
    se: float


def t_interval(
    estimate: float,
    boot: FloatArray,
    jackknife: FloatArray,
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = (0.0, 1.0),
) -> TInterval | None:
    """estimate ± t(k − 1)·SE (see the module doc); k = len(jackknife) units; None below two
    units. NaN resamples and leave-one-out values (the figure has no value there) are
    dropped. Bounded by ``bounds`` (every figure ChatLedger shows lies in [0, 1])."""
    boot = boot[~np.isnan(boot)]
    jack = jackknife[~np.isnan(jackknife)]
    k = jack.size
    if k < 2:
        return None
    centred = jack - jack.mean()
    se_jack = math.sqrt((k - 1) / k * float(np.sum(centred**2)))
    se_boot = float(np.std(boot, ddof=1)) * math.sqrt(k / (k - 1)) if boot.size > 1 else 0.0
    se = max(se_jack, se_boot)
    half = t_quantile(confidence, k - 1) * se
    low, high = estimate - half, estimate + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return TInterval(estimate, min(low, estimate), max(high, estimate), se)


# --- paired differences ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SignFlip:
    """A sign-flip randomisation test of "no difference" on per-unit differences."""

    p_value: float
    exact: bool
    n_patterns: int  # 2^k when exact, the Monte Carlo draws otherwise
    k: int

    @property
    def label(self) -> str:
        if self.exact:
            return f"exact sign-flip, all 2^{self.k} = {self.n_patterns:,} patterns"
        return (
            f"Monte Carlo sign-flip, {self.n_patterns:,} random patterns of 2^{self.k} "
            f"(p ≥ 1/{self.n_patterns + 1:,})"
        )

    def to_dict(self) -> dict[str, float | int | bool | str]:
        return {
            "p_value": self.p_value,
            "exact": self.exact,
            "n_patterns": self.n_patterns,
            "k": self.k,
            "test": self.label,
        }


def sign_flip_test(
    differences: Sequence[float] | FloatArray,
    *,
    exact_up_to: int = EXACT_UP_TO,
    n_draws: int = MONTE_CARLO_DRAWS,
    seed: int = 0,
) -> SignFlip:
    """Two-sided p-value of mean difference 0: the share of sign patterns (each unit's
    difference kept or negated) whose |mean| reaches the observed |mean|. Exact over all 2^k
    patterns up to ``exact_up_to`` units (6 differences all of one sign: 2/64); beyond, the
    observed pattern and ``n_draws`` random ones ((hits + 1)/(n_draws + 1)). NaN differences
    (a unit where a figure has no value) are dropped; no unit left gives p = 1."""
    d = np.asarray(differences, dtype=np.float64)
    d = d[~np.isnan(d)]
    k = int(d.size)
    if k == 0:
        return SignFlip(1.0, True, 1, 0)
    observed = abs(float(d.sum()))
    tolerance = 1e-12 * max(1.0, float(np.abs(d).sum()))
    if k <= exact_up_to:
        patterns = 1 << k
        signs = 1.0 - 2.0 * ((np.arange(patterns)[:, None] >> np.arange(k)[None, :]) & 1)
        sums = np.abs(signs @ d)
        hits = int(np.sum(sums >= observed - tolerance))
        return SignFlip(hits / patterns, True, patterns, k)
    hits = 0
    for signs in _sign_patterns(k, n_draws, seed):
        hits += int(np.sum(np.abs(signs @ d) >= observed - tolerance))
    return SignFlip((hits + 1) / (n_draws + 1), False, n_draws, k)


_SIGN_BLOCK = 4096
# At most this many values in a block (8 MB of float64, as many again for the indices
# ``choice`` draws them from): 4,096 rows of 10,000 conversations were 328 MB, twice over —
# the peak of a 100,000-chunk run (issue 34). The patterns are drawn in the same order,
# whatever the block's rows, so they are the same numbers.
_SIGN_BLOCK_VALUES = 1 << 20
# The last Monte Carlo patterns drawn, kept while they fit in this many values (32 MB): a gate
# or a run tests every figure over the same conversations with the same seed, so the same
# patterns, and drawing them was most of each test's time (22 rules at k = 100: 0.25 s → 0.01).
_KEPT_SIGN_VALUES = 4_000_000
_kept_signs: tuple[tuple[int, int, int], list[FloatArray]] | None = None


def _sign_patterns(k: int, n_draws: int, seed: int) -> Iterable[FloatArray]:
    """The ``n_draws`` random sign patterns of ``k`` units from ``seed``, in blocks of 4,096
    rows (fewer above 256 units: at most ``_SIGN_BLOCK_VALUES`` values): the same numbers,
    drawn the same way, on every call (one block at a time when they are too many to keep)."""
    global _kept_signs
    key = (k, n_draws, seed)
    if _kept_signs is not None and _kept_signs[0] == key:
        return _kept_signs[1]
    blocks = _draw_signs(k, n_draws, seed)
    if k * n_draws > _KEPT_SIGN_VALUES:
        return blocks
    kept = list(blocks)
    for block in kept:
        block.flags.writeable = False
    _kept_signs = key, kept
    return kept


def _draw_signs(k: int, n_draws: int, seed: int) -> Iterator[FloatArray]:
    rng = np.random.default_rng(seed)
    rows = max(1, min(_SIGN_BLOCK, _SIGN_BLOCK_VALUES // max(k, 1)))
    for start in range(0, n_draws, rows):
        yield rng.choice(np.array([-1.0, 1.0]), size=(min(rows, n_draws - start), k))


@dataclass(frozen=True)
class PairedComparison:
    """a − b over the same conversations: the difference of the means of the per-conversation
    values, its t interval (None with too few conversations), and the sign-flip test."""

    difference: float
    low: float | None
    high: float | None
    p_value: float
    test: str
    k: int
    note: str | None = None  # "too few conversations to tell (k = 3)"

    def to_dict(self) -> dict[str, float | int | str | None]:
        return {
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
            "test": self.test,
            "n_units": self.k,
            "note": self.note,
        }


def paired_comparison(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    *,
    confidence: float = 0.95,
    min_units: int = MIN_UNITS,
    seed: int = 0,
) -> PairedComparison:
    """Compare two per-conversation series of the same conversations (one value per
    conversation each, in the same order): mean(a − b), a t(k − 1) interval on the
    differences (below ``min_units`` conversations none, with the note "too few
    conversations to tell (k = N)"), and the sign-flip p-value (exact up to k = 16)."""
    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    if a_arr.shape != b_arr.shape or a_arr.ndim != 1:
        raise ValueError("a and b must be per-conversation series of the same length")
    d = a_arr - b_arr
    d = d[~np.isnan(d)]
    k = int(d.size)
    if k == 0:
        raise ValueError("no conversation has a value on both sides")
    diff = float(d.mean())
    flip = sign_flip_test(d, seed=seed)
    if k < min_units:
        return PairedComparison(diff, None, None, flip.p_value, flip.label, k, too_few_note(k))
    se = float(np.std(d, ddof=1)) / math.sqrt(k)
    half = t_quantile(confidence, k - 1) * se
    return PairedComparison(diff, diff - half, diff + half, flip.p_value, flip.label, k)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion (an empirical coverage)."""
    if n <= 0:
        raise ValueError("no trials")
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)
