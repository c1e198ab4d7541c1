"""Conversation-level inference (issue 27), worked by hand: the cluster bootstrap over whole
conversations, the exact sign-flip test, "too few conversations", "few items", "matches in 1
conversation"."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from chatledger.record import RunStats
from chatledger.runs._stats import ModelSeries, StatsOptions, compute_run_stats
from chatledger.scoring import statistic_names
from chatledger.stats import (
    MIN_UNITS,
    T_METHOD,
    concentrated_note,
    outcome_units,
    paired_comparison,
    resample_statistics,
    sign_flip_test,
    t_interval_of,
    t_quantile,
)


def _pooled(sums: np.ndarray) -> np.ndarray:
    out: np.ndarray = (sums[:, 0] / sums[:, 1])[None, :]
    return out


def test_cluster_bootstrap_on_three_conversations_of_unequal_size() -> None:
    # A: two chunks scoring 1, 1; B: one chunk scoring 0; C: three chunks scoring 1, 0, 0.
    # Per conversation (sum, chunks): A (2, 2), B (0, 1), C (1, 3); pooled 3/6 = 0.5.
    units = np.array([[2.0, 2.0], [0.0, 1.0], [1.0, 3.0]])
    got = resample_statistics(units, _pooled, n_resamples=20_000, seed=3)
    assert got.estimates[0] == 0.5
    # Leave one conversation out: without A 1/4, without B 3/5, without C 2/3.
    assert got.jackknife[0] == pytest.approx([0.25, 0.6, 2 / 3])
    # Every resample draws three whole conversations: its figure is (2a + c)/(2a + b + 3c)
    # for the multiplicities (a, b, c); the 27 equally likely draws give the exact spread.
    exact = []
    for draw in itertools.product(range(3), repeat=3):
        a, b, c = (draw.count(i) for i in range(3))
        exact.append((2 * a + c) / (2 * a + b + 3 * c))
    assert set(np.round(got.values[0], 12)) <= set(np.round(exact, 12))
    assert got.values[0].mean() == pytest.approx(np.mean(exact), abs=0.01)
    # Jackknife SE: θ̄ = 0.50556, Σ(θᵢ − θ̄)² = 0.100185, × 2/3 → SE 0.25844; the bootstrap's
    # exact SE over the 27 draws × √(3/2) is 0.22297·1.22474 = 0.27307 (the larger one is used).
    se_jack = math.sqrt(2 / 3 * float(np.sum((got.jackknife[0] - got.jackknife[0].mean()) ** 2)))
    assert se_jack == pytest.approx(0.25844, abs=1e-5)
    se_boot = float(np.std(exact)) * math.sqrt(3 / 2)
    assert se_boot == pytest.approx(0.27307, abs=1e-5)
    interval = t_interval_of(got, 0, bounds=None)
    assert interval is not None and interval.method == T_METHOD
    half = t_quantile(0.95, 2) * se_boot  # t(2) = 4.303
    assert interval.high - 0.5 == pytest.approx(half, rel=0.02)
    # Bounded to [0, 1] as every figure shown is.
    bounded = t_interval_of(got, 0)
    assert bounded is not None and (bounded.low, bounded.high) == (0.0, 1.0)


def test_t_quantiles_match_the_tables() -> None:
    # Student's t, two-sided 95 %: 12.706 (1 df), 4.303 (2), 2.571 (5), 2.042 (30).
    for df, table in ((1, 12.7062), (2, 4.3027), (5, 2.5706), (30, 2.0423)):
        assert t_quantile(0.95, df) == pytest.approx(table, abs=1e-4)


def test_exact_sign_flip() -> None:
    # Six differences of one sign: only "all +" and "all −" reach |Σ| → 2/64.
    flip = sign_flip_test([0.1, 0.2, 0.05, 0.3, 0.1, 0.02])
    assert flip.exact and flip.n_patterns == 64 and flip.p_value == 2 / 64
    assert flip.label == "exact sign-flip, all 2^6 = 64 patterns"
    # Five +1 and one −1: Σ = 4; |Σ| ≥ 4 for the 2 patterns of one sign and the 12 with
    # exactly one sign against the rest → 14/64.
    assert sign_flip_test([1, 1, 1, 1, 1, -1]).p_value == 14 / 64
    # Beyond 16 conversations: Monte Carlo, labelled, never below 1/(B + 1).
    mc = sign_flip_test(np.full(20, 0.1), n_draws=999)
    assert not mc.exact and mc.p_value >= 1 / 1000
    assert mc.label.startswith("Monte Carlo sign-flip, 999 random patterns of 2^20")


def test_paired_comparison_of_per_conversation_series() -> None:
    a = [0.6, 0.7, 0.8, 0.6, 0.7, 0.8]
    b = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    got = paired_comparison(a, b)
    # Differences 0.1, 0.2, 0.3, 0.1, 0.2, 0.3: mean 0.2, sd √0.008 = 0.08944, SE 0.03651,
    # t(5) = 2.5706 → ± 0.09387.
    assert got.difference == pytest.approx(0.2)
    assert got.low == pytest.approx(0.10613, abs=1e-5)
    assert got.high == pytest.approx(0.29387, abs=1e-5)
    assert got.p_value == 2 / 64 and got.k == 6 and got.note is None
    few = paired_comparison(a[:3], b[:3])
    assert few.low is None and few.high is None
    assert few.note == "too few conversations to tell (k = 3)"
    assert few.p_value == 2 / 8  # the exact test still says what three can say


def _judge_series(per_conversation: list[int]) -> tuple[ModelSeries, list[str]]:
    """A judge-only model: chunk c of conversation i scores (i + c) % 3 / 2."""
    rows, convs = [], []
    for i, n in enumerate(per_conversation):
        for c in range(n):
            rows.append([((i + c) % 3) / 2, 1.0])
            convs.append(f"conv{i}")
    judge = np.array(rows)
    value = float(judge[:, 0].sum() / judge[:, 1].sum())
    series = ModelSeries(name="m", judge=judge, layer_scores={"judge": value}, overall=value)
    return series, convs


def test_too_few_conversations_give_no_interval() -> None:
    series, convs = _judge_series([2, 1, 3])
    stats = compute_run_stats(
        [series], {"judge": 1.0}, {}, StatsOptions(), 0, chunk_conversations=convs
    )
    assert stats is not None
    assert stats.unit == "conversation" and stats.n_units == 3
    assert stats.too_few == "too few conversations to tell (k = 3)"
    assert stats.intervals == {"m": {}}
    record = stats
    assert record.why_no_interval("m", "overall") == "too few conversations to tell (k = 3)"
    assert record.unit_label() == "conversations (k = 3)"
    series, convs = _judge_series([2, 1, 3, 2, 2, 1])
    stats = compute_run_stats(
        [series], {"judge": 1.0}, {}, StatsOptions(), 0, chunk_conversations=convs
    )
    assert stats is not None
    assert stats.too_few is None and stats.n_units == 6 >= MIN_UNITS
    interval = stats.intervals["m"]["overall"]
    assert interval.method == T_METHOD
    assert interval.low <= series.overall <= interval.high


def test_zero_of_five_matched_is_few_items_not_a_point() -> None:
    """Six one-chunk conversations; five hold one reference action item each, none matched
    (F1 0): the field is "few items (n = 5)" with no interval — never [0, 0]."""
    names = statistic_names("action_items")
    matrix = np.zeros((6, len(names)))
    col = {n: i for i, n in enumerate(names)}
    matrix[:, col["covered"]] = 1.0
    matrix[:, col["usable"]] = 1.0
    matrix[:5, col["has_items"]] = 1.0
    matrix[:5, col["n_reference"]] = 1.0
    matrix[:5, col["n_predicted"]] = 1.0
    matrix[5, col["both_empty"]] = 1.0
    matrix[5, col["score"]] = 1.0
    series = ModelSeries(
        name="m",
        aggregate="micro",
        field_stats={"action_items": matrix},
        field_scores={"action_items": 0.0},
        layer_scores={"extraction": 0.0},
        overall=0.0,
    )
    stats = compute_run_stats(
        [series],
        {"extraction": 1.0},
        {"action_items": 1.0},
        StatsOptions(),
        0,
        chunk_conversations=[f"c{i}" for i in range(6)],
        all_fields=["action_items"],
    )
    assert stats is not None
    assert stats.few_items == {"m": {"action_items": 5}}
    assert "extraction.action_items" not in stats.intervals["m"]
    assert stats.why_no_interval("m", "extraction.action_items") == "few items (n = 5)"


def test_chunk_unit_on_request_says_so() -> None:
    series, convs = _judge_series([2, 1, 3, 2, 2, 1])
    stats = compute_run_stats(
        [series],
        {"judge": 1.0},
        {},
        StatsOptions(unit="chunk"),
        0,
        chunk_conversations=convs,
    )
    assert stats is not None
    assert stats.unit == "chunk" and stats.n_units == 11
    assert stats.resampling["judge"] == "chunks"
    assert stats.resampling["overall"] == "conversations"
    assert stats.unit_label().startswith("chunks (n = 11")


def _decisions_series(matched: list[float]) -> ModelSeries:
    """One-chunk conversations, each with 4 reference and 4 predicted decisions, ``matched``
    of them matched (evidence Jaccard 0.5 on each match)."""
    names = statistic_names("decisions")
    col = {n: i for i, n in enumerate(names)}
    matrix = np.zeros((len(matched), len(names)))
    for row, m in enumerate(matched):
        matrix[row, col["covered"]] = matrix[row, col["usable"]] = 1.0
        matrix[row, col["has_items"]] = 1.0
        matrix[row, col["n_reference"]] = matrix[row, col["n_predicted"]] = 4.0
        matrix[row, col["matched"]] = m
        matrix[row, col["evidence_jaccard:sum"]] = 0.5 * m
        matrix[row, col["evidence_jaccard:n"]] = m
    # micro: F1 = 2ΣM/(ΣR+ΣP); score = 0.75·F1 + 0.25·(mean Jaccard 0.5)·(matched share = F1)
    f1 = 2 * sum(matched) / (8 * len(matched))
    score = 0.75 * f1 + 0.25 * 0.5 * f1
    return ModelSeries(
        name="m",
        aggregate="micro",
        field_stats={"decisions": matrix},
        field_scores={"decisions": score},
        layer_scores={"extraction": score},
        overall=score,
    )


def test_matches_in_one_conversation_give_no_interval() -> None:
    """Six conversations, 24 reference decisions (not "few items"); every match is in one
    conversation: the spread over conversations rests on that one, so no interval — "matches
    in 1 conversation". Matches in two conversations get one."""
    assert outcome_units(np.array([4.0, 0, 0]), np.full(3, 4.0), np.full(3, 4.0)) == (1, 2)
    assert concentrated_note(1, 5) == "matches in 1 conversation"
    assert concentrated_note(0, 5) == "matches in 0 conversations"
    assert concentrated_note(6, 1, unit="chunk") == "misses in 1 chunk"
    assert concentrated_note(2, 4) is None

    def run(matched: list[float]) -> RunStats:
        stats = compute_run_stats(
            [_decisions_series(matched)],
            {"extraction": 1.0},
            {"decisions": 1.0},
            StatsOptions(bootstrap_resamples=200),
            0,
            chunk_conversations=[f"c{i}" for i in range(len(matched))],
            all_fields=["decisions"],
        )
        assert stats is not None
        return stats

    stats = run([4.0, 0, 0, 0, 0, 0])
    assert stats.few_items == {}
    assert stats.concentrated == {"m": {"decisions": "matches in 1 conversation"}}
    intervals = stats.intervals
    assert "extraction.decisions" not in intervals["m"]
    assert "extraction" in intervals["m"]  # the composite keeps its interval
    assert (
        stats.why_no_interval("m", "extraction.decisions")
        == "matches in 1 conversation: too few to tell"
    )
    # Every item matched but in one conversation: the misses are the concentrated side.
    stats = run([4.0, 4.0, 4.0, 4.0, 4.0, 1.0])
    assert stats.concentrated == {"m": {"decisions": "misses in 1 conversation"}}
    stats = run([2.0, 0, 0, 1.0, 0, 0])
    assert stats.concentrated == {}
    interval = stats.intervals["m"]["extraction.decisions"]
    # 3 of 24 matched: F1 = 6/48 = 0.125, score 0.125·(0.75 + 0.125) = 0.109375
    assert interval.estimate == pytest.approx(0.109375)
    assert interval.low <= 0.109375 <= interval.high


def test_conversation_sums_give_the_chunk_matrix_statistics() -> None:
    """A run reads layer 1's per-chunk columns back summed per conversation (issue 34: the
    chunk matrix is never held): the same statistics as from the chunk matrix. Twelve chunks
    in five conversations of 1-4 chunks, interleaved (c2's chunks are not consecutive)."""
    matched = [1.0, 3.0, 0.0, 2.0, 4.0, 1.0, 0.0, 2.0, 3.0, 1.0, 4.0, 0.0]
    convs = ["c0", "c0", "c1", "c2", "c1", "c2", "c3", "c3", "c3", "c4", "c2", "c3"]
    series = _decisions_series(matched)
    chunks = series.field_stats["decisions"]
    # Summed by hand in order of first appearance: c0 chunks 0-1, c1 2 and 4, c2 3, 5 and 10,
    # c3 6-8 and 11, c4 9.
    groups = [[0, 1], [2, 4], [3, 5, 10], [6, 7, 8, 11], [9]]
    sums = np.vstack([chunks[rows].sum(0) for rows in groups])
    assert sums[:, statistic_names("decisions").index("matched")].tolist() == [4, 4, 7, 5, 1]
    options = StatsOptions(bootstrap_resamples=200)
    args = ([series], {"extraction": 1.0}, {"decisions": 1.0}, options, 7)
    whole = compute_run_stats(*args, chunk_conversations=convs, all_fields=["decisions"])
    summed = compute_run_stats(
        *args, chunk_conversations=convs, all_fields=["decisions"], conversation_matrix=sums
    )
    assert whole is not None and summed is not None
    assert summed.n_chunks == 12 and summed.n_conversations == 5
    assert "extraction.decisions" in summed.intervals["m"]
    assert summed.model_dump_json() == whole.model_dump_json()
    with pytest.raises(ValueError, match="needs the chunk matrix"):
        compute_run_stats(
            [series],
            {"extraction": 1.0},
            {"decisions": 1.0},
            StatsOptions(unit="chunk"),
            7,
            chunk_conversations=convs,
            conversation_matrix=sums,
        )


def test_sign_patterns_in_smaller_blocks_are_the_same_draws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above 256 units the Monte Carlo sign patterns come in blocks of fewer than 4,096 rows
    (issue 34: 4,096 × 10,000 conversations was 328 MB): the same patterns as one draw of
    them all, so the same p-value. 300 units: default blocks of 1,048,576 // 300 = 3,495
    rows; made 1,000 here."""
    from chatledger.stats import _inference

    k, n_draws = 300, 5000
    whole = np.random.default_rng(4).choice(np.array([-1.0, 1.0]), size=(n_draws, k))
    blocks = list(_inference._draw_signs(k, n_draws, 4))
    assert [b.shape[0] for b in blocks] == [3495, 1505]
    monkeypatch.setattr(_inference, "_SIGN_BLOCK_VALUES", 300_000)
    small = list(_inference._draw_signs(k, n_draws, 4))
    assert [b.shape[0] for b in small] == [1000] * 5
    assert np.array_equal(np.vstack(blocks), whole) and np.array_equal(np.vstack(small), whole)
    # Differences of mean 0.1 around noise: one p-value whatever the blocks.
    d = 0.1 + np.random.default_rng(5).normal(0.0, 1.0, k)
    monkeypatch.setattr(_inference, "_SIGN_BLOCK_VALUES", 1 << 20)
    got = sign_flip_test(d, n_draws=n_draws, seed=4)
    monkeypatch.setattr(_inference, "_SIGN_BLOCK_VALUES", 300_000)
    monkeypatch.setattr(_inference, "_kept_signs", None)  # drawn again, not the kept ones
    assert sign_flip_test(d, n_draws=n_draws, seed=4) == got
    assert not got.exact and got.n_patterns == n_draws
