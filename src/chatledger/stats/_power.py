"""Power: how many independent units (conversations, emails) a paired comparison needs.

For a paired design the test is on the per-unit differences. With their standard deviation
``sd`` (from a pilot: the run at hand) and a true mean difference ``detect``, a two-sided
one-sample t-test at level 1 − confidence rejects with probability

    P(|T| > t_crit),  T ~ noncentral t(df = n − 1, nc = detect · √n / sd),

and the units needed are the smallest n whose probability reaches ``power``. The noncentral t
is exact for normal differences; for the bounded scores ChatLedger compares it is the standard
planning approximation (a pilot's sd is itself uncertain, so the answer is a guide: "≈ N").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

DEFAULT_POWER = 0.8
MAX_UNITS = 1_000_000  # beyond this, "more than a million" is the honest answer


def paired_power(n: int, sd: float, detect: float, *, confidence: float = 0.95) -> float:
    """The probability that ``n`` units show a true mean difference ``detect`` at the level."""
    if n < 2:
        return 0.0
    if sd <= 0.0:
        return 1.0 if detect != 0.0 else 0.0
    from scipy import stats  # scipy.stats is slow to import; only planning needs it

    df = n - 1
    critical = float(stats.t.ppf(1.0 - (1.0 - confidence) / 2.0, df))
    shift = abs(detect) * math.sqrt(n) / sd
    upper = float(stats.nct.sf(critical, df, shift))
    lower = float(stats.nct.cdf(-critical, df, shift))
    return upper + lower


def units_needed(
    sd: float,
    detect: float,
    *,
    confidence: float = 0.95,
    power: float = DEFAULT_POWER,
) -> int | None:
    """The fewest units for a paired test to show a true difference ``detect`` with
    ``power``; None when ``detect`` is 0 (no sample size tells nothing from nothing) or more
    than :data:`MAX_UNITS` would be needed."""
    if not 0.0 < power < 1.0:
        raise ValueError("power must be in (0, 1)")
    if detect == 0.0 or not math.isfinite(sd) or not math.isfinite(detect):
        return None
    if sd <= 0.0:
        return 2
    # The normal approximation as a start, then up (the t needs a little more) one at a time.
    from scipy import stats

    z = float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0) + stats.norm.ppf(power))
    n = max(2, math.ceil((z * sd / abs(detect)) ** 2))
    if n > MAX_UNITS:
        return None
    while paired_power(n, sd, detect, confidence=confidence) < power:
        n += 1
        if n > MAX_UNITS:
            return None
    return n


def units_needed_for(
    differences: Sequence[float] | np.ndarray,
    detect: float | None = None,
    *,
    confidence: float = 0.95,
    power: float = DEFAULT_POWER,
) -> int | None:
    """:func:`units_needed` from a pilot's per-unit differences; ``detect`` defaults to the
    observed mean difference (how many units would show *this* difference, were it real)."""
    values = np.asarray(differences, dtype=np.float64)
    if values.ndim != 1 or values.size < 2:
        raise ValueError("a pilot needs at least two per-unit differences")
    effect = float(values.mean()) if detect is None else detect
    return units_needed(float(values.std(ddof=1)), effect, confidence=confidence, power=power)
