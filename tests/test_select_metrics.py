"""Phase 1 screening metrics (DESIGN.md §9, issue 16) on tiny cases worked out by hand.

Words used as items never match each other (token-set similarity of any two of "budget",
"parking", "weather", "music", "venue" is below the 60 cutoff; checked below).
"""

from __future__ import annotations

import itertools
import math

import pytest
from rapidfuzz import fuzz, utils

from chatledger.select import (
    Screening,
    consistency,
    discrimination,
    information_gain,
    redundancy,
    text_set_f1,
)

WORDS = ("budget", "parking", "weather", "music", "venue")


def test_the_words_never_match_each_other() -> None:
    for a, b in itertools.combinations(WORDS, 2):
        assert fuzz.token_set_ratio(a, b, processor=utils.default_process) < 60


def test_consistency_of_three_runs_on_two_chunks_is_five_ninths() -> None:
    # In each chunk runs A and B agree exactly (F1 1); run C shares one of A's two items and
    # adds three: F1(A, C) = 2·1 / (2 + 4) = 1/3, and so F1(B, C). Per chunk
    # (1 + 1/3 + 1/3) / 3 = 5/9; both chunks alike, so 5/9.
    a = ["budget", "parking"]
    c = ["budget", "weather", "music", "venue"]
    assert text_set_f1(a, c) == pytest.approx(1 / 3)
    samples = [[a, list(a), c], [a, list(a), c]]
    assert consistency(samples) == pytest.approx(5 / 9)


def test_consistency_edge_rules() -> None:
    assert consistency([[[], []]]) == 1.0  # two runs that both find nothing agree
    assert consistency([[["budget"], []]]) == 0.0
    assert consistency([[["budget"]]]) == 0.0  # one run: no pair, nothing measured


def test_information_gain_is_the_share_of_items_no_proven_text_covers() -> None:
    # Chunk 1: "budget review" ⊂ a proven text (token set 100), "parking permits" is not
    # covered (26.3). Chunk 2: "venue booking" is a proven text, "weather risk" is not (32).
    # Two of four items are new: 0.5.
    samples = [[["budget review"], ["parking permits"]], [["venue booking"], ["weather risk"]]]
    proven = [["budget review for march"], ["venue booking"]]
    assert information_gain(samples, proven) == 0.5
    assert information_gain([[["budget"]]], [[]]) == 1.0  # nothing proven: all new
    assert information_gain([[[]]], [["budget"]]) == 0.0  # no items: no gain


def test_discrimination_is_between_over_total_variance() -> None:
    # Chunk 1: 0, 0, 0; chunk 2: 1, 2, 3. Grand mean 1. Total SS = 3·1² + (0² + 1² + 2²) = 8;
    # between SS = 3·(0 − 1)² + 3·(2 − 1)² = 6; 6 / 8 = 0.75.
    assert discrimination([[0, 0, 0], [1, 2, 3]]) == 0.75
    assert discrimination([[1, 2], [1, 2]]) == 0.0  # all variation is sampling
    assert discrimination([[2, 2], [2, 2]]) == 0.0  # no variation at all


def test_discrimination_against_human_ratings_is_spearman_clipped_at_zero() -> None:
    # Chunk means 1, 2, 3 (ranks 1, 2, 3); ratings 10, 30, 20 (ranks 1, 3, 2): d = 0, −1, 1,
    # ρ = 1 − 6·2 / (3·8) = 0.5. Reversed ratings: ρ = −1 → 0.
    values = [[1, 1], [2, 2], [3, 3]]
    assert discrimination(values, ratings=[10, 30, 20]) == pytest.approx(0.5)
    assert discrimination(values, ratings=[30, 20, 10]) == 0.0


def test_redundancy_is_one_minus_the_tfidf_cosine_with_the_closest_proven_field() -> None:
    # Two documents, scikit-learn defaults (smooth idf = ln((1 + n)/(1 + df)) + 1, L2 rows):
    # "budget", "review" are in both (idf 1), "parking", "permit" only in the proven one
    # (idf u = 1 + ln 1.5). Field (1, 1, 0, 0)/√2, proven (1, 1, u, u)/√(2 + 2u²):
    # cos = 1/√(1 + u²) = 0.579739…, redundancy 0.420261…
    u = 1 + math.log(1.5)
    expected = 1 - 1 / math.sqrt(1 + u * u)
    got = redundancy(["budget review"], {"topics": ["budget review parking permit"]})
    assert got == pytest.approx(expected, abs=1e-12)
    assert got == pytest.approx(0.420261, abs=1e-6)
    # The closest proven field decides: an identical one makes the field wholly redundant.
    both = {"topics": ["budget review parking permit"], "summary": ["budget review"]}
    assert redundancy(["budget review"], both) == pytest.approx(0.0)
    assert redundancy(["music venue"], {"topics": ["budget review"]}) == 1.0
    assert redundancy([], {"topics": ["budget"]}) == 0.0  # no content adds nothing


def test_composite_and_pass_mark() -> None:
    u = 1 + math.log(1.5)
    screening = Screening(
        "requests",
        consistency=5 / 9,
        information_gain=0.5,
        discrimination=0.75,
        redundancy=1 - 1 / math.sqrt(1 + u * u),
    )
    # 0.30·5/9 + 0.25·0.5 + 0.25·0.75 + 0.20·0.420261 = 0.166667 + 0.125 + 0.1875 + 0.084052
    assert screening.composite == pytest.approx(0.563219, abs=1e-6)
    assert screening.passed
    weak = Screening("humour", 0.22, 0.5, 0.3, 0.5)  # 0.066 + 0.125 + 0.075 + 0.1 = 0.366
    assert weak.composite == pytest.approx(0.366) and not weak.passed
    assert Screening("x", 0.5, 0.5, 0.5, 0.25).composite == pytest.approx(0.45)
    assert Screening("x", 0.5, 0.5, 0.5, 0.25).passed  # the mark itself passes
