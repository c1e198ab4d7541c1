"""The matching kernel (DESIGN.md §3 "Matching rules"): optimal, count-first, cutoff-respecting."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from chatledger.core import InputError
from chatledger.matching import (
    KERNEL_CLOCK,
    FloatMatrix,
    assign,
    get_matcher,
    preprocess,
    token_set_matrix,
)


def greedy(scores: FloatMatrix, cutoff: float) -> list[tuple[int, int]]:
    """The greedy baseline DESIGN.md warns about: take the best remaining pair, repeat."""
    taken_rows: set[int] = set()
    taken_cols: set[int] = set()
    pairs = []
    order = np.dstack(np.unravel_index(np.argsort(-scores, axis=None), scores.shape))[0]
    for i, j in order:
        if scores[i, j] < cutoff or i in taken_rows or j in taken_cols:
            continue
        pairs.append((int(i), int(j)))
        taken_rows.add(int(i))
        taken_cols.add(int(j))
    return pairs


def pairs_of(scores: FloatMatrix, cutoff: float) -> set[tuple[int, int]]:
    rows, cols = assign(scores, cutoff)
    return {(int(i), int(j)) for i, j in zip(rows, cols, strict=True)}


def test_optimal_beats_greedy_2x2() -> None:
    scores = np.array([[90.0, 80.0], [85.0, 0.0]])
    # Greedy takes (0,0)=90 first; row 1 is then left with 0 < 60: one match.
    assert greedy(scores, 60) == [(0, 0)]
    # Optimal gives up the 90 to match both rows: (0,1)=80, (1,0)=85.
    assert pairs_of(scores, 60) == {(0, 1), (1, 0)}


def test_optimal_beats_greedy_3x3() -> None:
    scores = np.array(
        [
            [95.0, 90.0, 0.0],
            [90.0, 0.0, 0.0],
            [0.0, 0.0, 70.0],
        ]
    )
    # Greedy: (0,0)=95, then row 1 only has column 0 (taken) -> (2,2) only: 2 matches.
    assert len(greedy(scores, 60)) == 2
    # Optimal: (0,1)=90, (1,0)=90, (2,2)=70: 3 matches.
    assert pairs_of(scores, 60) == {(0, 1), (1, 0), (2, 2)}


def test_highest_pair_sacrificed_for_two_matches() -> None:
    scores = np.array([[100.0, 70.0], [70.0, 0.0]])
    # C = 100·(2+1) = 300: {(0,0)} weighs 400; {(0,1),(1,0)} weighs 2·370 = 740.
    assert pairs_of(scores, 60) == {(0, 1), (1, 0)}


def test_count_first_beats_similarity_sum() -> None:
    scores = np.array(
        [
            [100.0, 60.0, 0.0],
            [0.0, 100.0, 60.0],
            [60.0, 0.0, 0.0],
        ]
    )
    # Maximising raw similarity picks the diagonal: 100 + 100 = 200 with 2 matches, beating
    # the 3-match assignment (0,1),(1,2),(2,0) = 180. With C = 100·(3+1) = 400 the weights are
    # 2·400 + 200 = 1000 vs 3·400 + 180 = 1380: three matches win.
    assert pairs_of(scores, 60) == {(0, 1), (1, 2), (2, 0)}


def test_similarity_breaks_ties_between_equal_counts() -> None:
    scores = np.array([[70.0, 95.0], [90.0, 65.0]])
    # Both perfect matchings have 2 pairs; 95 + 90 > 70 + 65.
    assert pairs_of(scores, 60) == {(0, 1), (1, 0)}


def test_pairs_below_cutoff_never_returned() -> None:
    scores = np.array([[59.9, 10.0], [0.0, 60.0]])
    # (0,0) is below 60 even though linear_sum_assignment pairs row 0 with some column.
    assert pairs_of(scores, 60) == {(1, 1)}
    assert pairs_of(np.full((3, 2), 59.0), 60) == set()
    assert pairs_of(np.zeros((0, 4)), 60) == set()


def _max_count_brute_force(eligible: np.ndarray) -> int:
    m, n = eligible.shape
    if m > n:
        eligible = eligible.T
        m, n = n, m
    best = 0
    for cols in itertools.permutations(range(n), m):
        best = max(best, sum(bool(eligible[i, c]) for i, c in enumerate(cols)))
    return best


@settings(max_examples=80, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 5), st.integers(1, 5)),
        elements=st.sampled_from([0.0, 30.0, 59.0, 60.0, 61.0, 75.0, 99.0, 100.0]),
    )
)
def test_assign_is_count_first_and_respects_cutoff(scores: FloatMatrix) -> None:
    rows, cols = assign(scores, 60.0)
    # one-to-one
    assert len(set(rows.tolist())) == len(rows) == len(set(cols.tolist()))
    # never below the cutoff
    assert np.all(scores[rows, cols] >= 60.0)
    # the largest possible number of matches
    assert len(rows) == _max_count_brute_force(scores >= 60.0)


def test_guarded_matcher_defeats_one_keyword_pitfall() -> None:
    short, claim = "ballad", "The ballad kills the energy of the setlist"
    # token_set: {ballad} ⊂ claim tokens -> 100.
    assert get_matcher("token_set").pair(short, claim) == 100.0
    # guarded: 100 · min(1, 2·1/8) = 25 (8 tokens in the claim).
    assert get_matcher("guarded").pair(short, claim) == pytest.approx(25.0)
    # A paraphrase with at least half the tokens keeps its full score.
    half = "the ballad kills the energy"
    assert get_matcher("guarded").pair(half, claim) == get_matcher("token_set").pair(half, claim)


def test_token_set_matrix_empty_texts_equal() -> None:
    # Two texts that preprocess to nothing are equal (so self-comparison scores 1.0).
    scores = token_set_matrix(preprocess(["!!!", "ballad"]), preprocess(["?", "ballad"]))
    assert scores[0, 0] == 100.0
    assert scores[1, 1] == 100.0
    assert scores[0, 1] == 0.0


def test_kernel_clock_counts_calls() -> None:
    KERNEL_CLOCK.reset()
    KERNEL_CLOCK.enabled = True
    try:
        scores = token_set_matrix(["a b"], ["a c"])
        # Two eligible pairs in one row: a real assignment (one eligible pair per row and
        # column is every pair, without the solver).
        assign(np.hstack([scores, scores]), 0.0)
    finally:
        KERNEL_CLOCK.enabled = False
    assert KERNEL_CLOCK.cdist_calls == 1
    assert KERNEL_CLOCK.assign_calls == 1
    assert KERNEL_CLOCK.total_s >= 0.0
    KERNEL_CLOCK.reset()


def test_unknown_matcher_names_known_ones() -> None:
    # An InputError (a ChatLedgerError: one line, exit 2), not a KeyError, whose str() would
    # print the message in quotes.
    with pytest.raises(InputError) as caught:
        get_matcher("cosine")
    assert str(caught.value) == "unknown matcher 'cosine' (known: guarded, token_set)"


@pytest.mark.parametrize("name", ["token_set", "guarded"])
def test_pairs_are_the_matrix_diagonal(name: str) -> None:
    # "the deal" / "deal": token set 100; "" / "": both empty, equal (100); "red car" /
    # "blue boat": no shared token. The guarded matcher scales the first (2 words vs 1: ×1).
    matcher = get_matcher(name)
    a = preprocess(["the deal", "", "red car", "we ship on friday"])
    b = preprocess(["deal", "", "blue boat", "friday"])
    pairs = matcher.pairs(a, b)
    assert pairs.tolist() == np.diag(matcher.matrix(a, b)).tolist()
    assert pairs[:2].tolist() == [100.0, 100.0]
    # guarded: "friday" covers 1 of the 4 words: 100 × min(1, 2·1/4) = 50.
    assert pairs[3] == (100.0 if name == "token_set" else 50.0)
    with pytest.raises(ValueError, match="pairs need the same number"):
        matcher.pairs(a, b[:1])


def test_one_eligible_pair_per_row_and_column_is_the_assignment() -> None:
    # No solver needed: every eligible pair is in the optimum, listed by row.
    scores = np.array([[0.0, 90.0, 10.0], [0.0, 0.0, 0.0], [75.0, 20.0, 0.0], [0.0, 0.0, 61.0]])
    rows, cols = assign(scores, 60.0)
    assert (rows.tolist(), cols.tolist()) == ([0, 2, 3], [1, 0, 2])
    assert rows.dtype == cols.dtype == np.intp
