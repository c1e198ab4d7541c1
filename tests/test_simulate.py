"""Corruption operators lower the score of the fields they target, monotonically in severity."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from chatledger.corpus import read_chunks, read_extractions
from chatledger.scoring import ScoringConfig, score_chunk
from chatledger.simulate import OPERATORS, corrupt, simulate_records

EXAMPLES = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "examples"
SEVERITIES = (0.0, 0.25, 0.5, 0.75, 1.0)


@pytest.fixture(scope="module")
def example():
    chunk = read_chunks(EXAMPLES / "chunks.jsonl")[0]
    ref = read_extractions(EXAMPLES / "reference.jsonl").records[chunk.chunk_id].extraction
    assert ref is not None
    return chunk, ref


def _scores(chunk, ref, operator, matcher="token_set", seed=3):
    config = ScoringConfig.default("v3", matcher)
    out = []
    for severity in SEVERITIES:
        pred = corrupt(ref, chunk, operator, severity, seed)
        out.append(score_chunk(ref, pred, chunk, config))
    return out


@pytest.mark.parametrize("operator", sorted(OPERATORS))
def test_operator_is_monotone_and_bites(example, operator: str) -> None:
    chunk, ref = example
    # The keyword collapse only bites under the guarded matcher: that is the pitfall.
    matcher = "guarded" if operator == "keywords" else "token_set"
    results = _scores(chunk, ref, operator, matcher)
    target_fields = [f for f in OPERATORS.get(operator).targets if results[0][f].n_reference > 0]
    assert target_fields, operator
    for field in target_fields:
        curve = [r[field].score for r in results]
        assert curve[0] == 1.0, (operator, field, curve)
        assert all(b <= a + 1e-12 for a, b in itertools.pairwise(curve)), (
            operator,
            field,
            curve,
        )
    # At full severity the operator lowers the targeted fields on the whole.
    before = sum(results[0][f].score for f in target_fields)
    after = sum(results[-1][f].score for f in target_fields)
    assert after < before, (operator, before, after)


def test_severity_zero_is_identity(example) -> None:
    chunk, ref = example
    for operator in OPERATORS:
        assert corrupt(ref, chunk, operator, 0.0, seed=11) == ref


def test_flip_polarity_full_severity_hand_computed(example) -> None:
    chunk, ref = example
    pred = corrupt(ref, chunk, "flip_polarity", 1.0)
    claims = score_chunk(ref, pred, chunk)["claims"]
    # Both claims keep text and subject, both polarities flip: 0.60 + 0.25*0 + 0.15 = 0.75.
    assert claims.score == pytest.approx(0.75)


def test_keyword_pitfall_default_vs_guarded(example) -> None:
    chunk, ref = example
    pred = corrupt(ref, chunk, "keywords", 1.0)
    default = score_chunk(ref, pred, chunk, ScoringConfig.default("v3", "token_set"))
    guarded = score_chunk(ref, pred, chunk, ScoringConfig.default("v3", "guarded"))
    # One-word texts still score 100 against the claim that contains the word…
    assert default["claims"].components["text_f1"] == 1.0
    # …while the guarded matcher refuses them.
    assert guarded["claims"].components["text_f1"] == 0.0


def test_deterministic_and_labelled(example) -> None:
    chunk, ref = example
    a = corrupt(ref, chunk, "paraphrase", 0.6, seed=5)
    b = corrupt(ref, chunk, "paraphrase", 0.6, seed=5)
    c = corrupt(ref, chunk, "paraphrase", 0.6, seed=6)
    assert a == b and a != c
    records = read_extractions(EXAMPLES / "reference.jsonl").records
    sim = simulate_records(records, [chunk], [("drop", 0.5)], label="mild")
    assert all(r.model == "simulated:mild" for r in sim.values())


def test_bad_severity() -> None:
    with pytest.raises(ValueError, match="severity"):
        chunk = read_chunks(EXAMPLES / "chunks.jsonl")[0]
        ref = read_extractions(EXAMPLES / "reference.jsonl").records[chunk.chunk_id].extraction
        assert ref is not None
        corrupt(ref, chunk, "drop", 1.5)
