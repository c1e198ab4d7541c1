"""Phase 2 (tournament of schemas × styles with successive-halving pruning) and Phase 3
(validation of the winner against the runner-up) on a construction with a known winner."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from chatledger.select import tournament, validate

SCHEMAS = {f"s{i}": [f"field{i}"] for i in range(8)}
STYLES = ["plain", "field-guide", "example", "strict", "terse"]
CHUNKS = [f"c{i}" for i in range(8)]
# Schema s5 is best by construction, field-guide the best style; every chunk adds a small
# fixed wobble (< 0.02) so means are not tied.
QUALITY = {f"s{i}": 0.30 + 0.05 * i for i in range(8)} | {"s5": 0.90}
STYLE_BONUS = dict.fromkeys(STYLES, 0.0) | {"field-guide": 0.04}


def _evaluate(calls: list[tuple[str, str, str]]):  # type: ignore[no-untyped-def]
    def evaluate(schema: str, style: str, chunk_id: str) -> float:
        calls.append((schema, style, chunk_id))
        wobble = 0.01 * np.sin(zlib.crc32(f"{schema}|{style}|{chunk_id}".encode()) % 1000)
        return QUALITY[schema] + STYLE_BONUS[style] + float(wobble)

    return evaluate


def test_the_tournament_picks_the_constructed_winner_and_prunes_most_others() -> None:
    calls: list[tuple[str, str, str]] = []
    result = tournament(SCHEMAS, STYLES, CHUNKS, _evaluate(calls), seed=3)
    assert len(result.entries) == 40  # every (schema, style) is in the table
    assert (result.winner.schema, result.winner.style) == ("s5", "field-guide")
    assert result.winner.chunks == 8
    assert result.pruned_share >= 0.5
    pruned_early = [e for e in result.entries if e.pruned and e.chunks <= 4]
    assert len(pruned_early) >= 20
    # Pruning is where the calls are saved: far fewer than 40 × 8.
    assert result.calls == len(calls) < 40 * 8 * 0.6
    board = result.leaderboard()
    assert board[0] is result.winner and not board[0].pruned


def test_a_call_budget_stops_the_tournament() -> None:
    calls: list[tuple[str, str, str]] = []
    result = tournament(SCHEMAS, STYLES, CHUNKS, _evaluate(calls), max_calls=30, seed=3)
    assert result.budget_stopped and result.calls == 30 == len(calls)


def test_validation_intervals_and_the_paired_difference() -> None:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.4, 0.8, 30)
    winner = base + 0.05  # better on every chunk by 0.05
    check = validate(winner, base, n_resamples=500)
    assert check.difference[0] == pytest.approx(0.05)
    assert check.winner_better
    assert check.winner.low <= check.winner.estimate <= check.winner.high
    tie = validate(base, base, n_resamples=500)
    assert tie.difference[:3] == (0.0, 0.0, 0.0) and not tie.winner_better
