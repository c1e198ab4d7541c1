"""Anytime-valid confidence sequences (stats._sequential): the reference implementation's
numbers, and the decisions' error by simulation (issue 33)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chatledger.stats import (
    betting_bounds,
    confidence_sequence,
    decide,
    first_decision,
    simulate_sequential,
)
from generated_docs import check_block

# Ten observations in [0, 1]; bounds printed by confseq 0.0.11 (Waudby-Smith & Ramdas' own
# package), ``confseq.betting.hedged_cs(x, alpha=0.05, breaks=1000)`` and with ``N=20``.
X = [0.2, 0.9, 0.6, 0.7, 0.55, 0.8, 0.65, 0.75, 0.9, 0.6]
CONFSEQ_LOWER = [0.0, 0.0, 0.0, 0.129, 0.172, 0.217, 0.25, 0.284, 0.321, 0.339]
CONFSEQ_UPPER = [1.0, 1.0, 1.0, 0.983, 0.911, 0.898, 0.873, 0.86, 0.86, 0.847]
CONFSEQ_WOR_LOWER = [0.01, 0.055, 0.085, 0.141, 0.208, 0.269, 0.31, 0.351, 0.392, 0.42]
CONFSEQ_WOR_UPPER = [0.96, 0.955, 0.935, 0.92, 0.887, 0.865, 0.835, 0.819, 0.816, 0.798]


def test_hedged_capital_matches_the_reference_implementation() -> None:
    lower, upper = betting_bounds(X, alpha=0.05)
    assert lower.tolist() == pytest.approx(CONFSEQ_LOWER, abs=1e-12)
    assert upper.tolist() == pytest.approx(CONFSEQ_UPPER, abs=1e-12)
    lower, upper = betting_bounds(X, alpha=0.05, population=20)
    assert lower.tolist() == pytest.approx(CONFSEQ_WOR_LOWER, abs=1e-12)
    assert upper.tolist() == pytest.approx(CONFSEQ_WOR_UPPER, abs=1e-12)


def test_first_bet_is_the_plug_in_empirical_bernstein_bet() -> None:
    # t = 1: λ = √(2 log(2/α) / (σ²₀ · 1 · log 2)) with σ²₀ = 1/4 → 6.525, truncated at ½/m.
    # One observation x = 1 against m = 0.9: λ⁺ = min(6.52, 0.556) = 0.556 and
    # K⁺ = 1 + 0.556 · 0.1 = 1.0556; against it: λ⁻ = min(6.52, 5) = 5, K⁻ = 1 − 5 · 0.1 = 0.5;
    # hedged K = max(½ · 1.0556, ½ · 0.5) = 0.528 < 1/α = 20: 0.9 is inside after one look.
    bet = math.sqrt(2 * math.log(40) / (0.25 * math.log(2)))
    assert bet == pytest.approx(6.5250, abs=1e-4)
    from chatledger.stats._sequential import _capital

    k = _capital(np.array([1.0]), np.array([0.9]), 0.05, None)
    assert float(k[0, 0]) == pytest.approx(max(0.5 * (1 + 0.5 / 0.9 * 0.1), 0.5 * 0.5))


def test_without_replacement_closes_on_the_exact_mean() -> None:
    diffs = np.array([0.1, -0.2, 0.4, 0.0, 0.3, -0.1, 0.2, 0.1])
    seq = confidence_sequence(diffs, low=-1.0, high=1.0, population=diffs.size)
    assert seq.at(8)[0] == pytest.approx(0.1)
    assert seq.lower[-1] == pytest.approx(0.1) and seq.upper[-1] == pytest.approx(0.1)
    # the running intersection: bounds never widen
    assert np.all(np.diff(seq.lower) >= 0) and np.all(np.diff(seq.upper) <= 0)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        confidence_sequence([1.5], low=-1.0, high=1.0)


def test_decisions_read_the_side_of_the_threshold() -> None:
    assert decide(0.01, 0.2, 0.0) == "pass"
    assert decide(-0.3, -0.01, 0.0) == "fail"
    assert decide(-0.01, 0.2, 0.0) == "undecided"
    # a bound on the threshold (the exact mean once all is seen) decides nothing
    assert decide(1e-12, 0.5, 0.0) == "undecided"
    lower = np.array([-0.5, -0.2, 0.05, 0.1])
    upper = np.array([0.5, 0.4, 0.3, 0.2])
    assert first_decision(lower, upper, 0.0, [2, 4]) == ("pass", 4)
    assert first_decision(lower, upper, 0.0, [1, 2, 3]) == ("pass", 3)
    assert first_decision(lower, upper, 0.5, [4]) == ("fail", 4)


def test_wrong_decisions_at_most_alpha_and_large_effects_stop_early() -> None:
    """200 seeded repetitions over a pool of 100 simulated conversations, batches of 5: no
    effect (undecided is right), a small one (+0.05), a large one (±0.3; sd 0.15)."""
    results = simulate_sequential(
        [0.0, 0.05, 0.3, -0.3], pool=100, repetitions=200, batch=5, grid=200, seed=7
    )
    by_effect = {r.effect: r for r in results}
    rows = [
        "| true difference | pass | fail | undecided | wrong share | median stop |",
        "|---|---|---|---|---|---|",
    ]
    rows += [
        f"| {r.effect:+.2f} | {r.passed} | {r.failed} | {r.undecided} | {r.wrong_share:.3f} | "
        f"{r.median_stop} of 100 |"
        for r in results
    ]
    check_block("docs/sequential.md", "sequential-validity", "\n".join(rows))
    for r in results:
        assert r.wrong_share <= 0.05, r
    assert by_effect[0.0].undecided >= 190
    assert by_effect[0.3].passed == 200 and by_effect[-0.3].failed == 200
    assert by_effect[0.3].median_stop_share <= 0.30
    assert by_effect[-0.3].median_stop_share <= 0.30
    # the small effect is real, and the whole pool decides it: no wrong verdict
    assert by_effect[0.05].failed == 0


def test_expected_conversations_from_a_pilot() -> None:
    from chatledger.stats import expected_conversations

    rng = np.random.default_rng(0)
    pilot = np.clip(rng.normal(-0.3, 0.15, 20), -1.0, 1.0)
    large = expected_conversations(pilot, effect=-0.3, population=100, seed=1)
    small = expected_conversations(pilot, effect=-0.1, population=100, seed=1)
    none = expected_conversations(pilot, effect=0.0, population=100, seed=1)
    # the same pool and batches as the validity simulation: a large effect in about a quarter
    assert large.median is not None and large.median <= 30
    assert small.median is not None and large.median < small.median <= 100
    assert large.decided_share == 1.0
    # at the threshold nothing is decided: no number of conversations to plan for
    assert none.median is None and none.decided_share == 0.0
