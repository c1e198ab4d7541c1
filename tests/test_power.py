"""Power of a paired comparison: the units needed, checked against the textbook table.

Cohen's (1988) sample sizes for a two-sided paired t-test at α = 0.05 and power 0.80, as
G*Power computes them from the noncentral t: effect size d = 0.8 → 15 pairs, 0.5 → 34,
0.2 → 199. The normal approximation alone gives ((1.960 + 0.842)/d)² = 12.3, 31.4, 196.2,
too few at every size (the t's heavier tails need the extra units).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from chatledger.stats import paired_power, units_needed, units_needed_for


@pytest.mark.parametrize(("effect", "expected"), [(0.8, 15), (0.5, 34), (0.2, 199)])
def test_units_needed_matches_the_paired_t_table(effect: float, expected: int) -> None:
    assert units_needed(1.0, effect) == expected
    # Only the ratio matters: a 0.02 drop with per-unit sd 0.04 is d = 0.5.
    assert units_needed(0.04, -0.02) == 34
    normal = math.ceil(((1.959964 + 0.841621) / effect) ** 2)
    assert normal < expected


def test_the_answer_is_the_fewest_units_that_reach_the_power() -> None:
    assert paired_power(34, 1.0, 0.5) >= 0.80 > paired_power(33, 1.0, 0.5)
    # More power or a stricter level needs more units.
    assert units_needed(1.0, 0.5, power=0.9) > 34
    assert units_needed(1.0, 0.5, confidence=0.99) > 34


def test_nothing_to_detect_or_no_spread() -> None:
    assert units_needed(1.0, 0.0) is None
    assert units_needed(0.0, 0.1) == 2
    assert units_needed(1.0, 1e-6) is None  # more than a million units
    with pytest.raises(ValueError, match="power"):
        units_needed(1.0, 0.5, power=1.0)


def test_from_a_pilots_differences() -> None:
    # Mean 0.05; squared deviations 0.01, 0.01, 0.005, 0.005 → sample sd √(0.03/3) = 0.1.
    pilot = np.array([-0.05, 0.15, 0.05 - 0.1 * math.sqrt(0.5), 0.05 + 0.1 * math.sqrt(0.5)])
    assert pilot.mean() == pytest.approx(0.05) and pilot.std(ddof=1) == pytest.approx(0.1)
    assert units_needed_for(pilot) == 34  # d = 0.5, as the table
    sd = float(pilot.std(ddof=1))
    assert units_needed_for(pilot) == units_needed(sd, 0.05)
    assert units_needed_for(pilot, detect=0.02) == units_needed(sd, 0.02)
    with pytest.raises(ValueError, match="two"):
        units_needed_for([0.1])
