"""Corruption operators lower the score of the fields they target, monotonically in severity."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from chatledger.corpus import read_chunks, read_extractions
from chatledger.scoring import ScoringConfig, score_chunk
from chatledger.simulate import LIST_FIELDS, OPERATORS, TEXT_FIELDS, corrupt, simulate_records

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


# --- known truth: what each operator did to each item (issue 28) ---------------------------


def test_truth_records_every_item_fate_one_operator_at_a_time(example) -> None:
    from chatledger.simulate import simulate_with_truth

    chunk, ref = example
    reference = {chunk.chunk_id: _record(chunk.chunk_id, ref)}
    n_claims = len(ref.claims)
    assert n_claims == 2
    # Full severity flips both claims' polarity: both claims are polarity_flipped, the rest
    # of the items untouched and in place.
    records, truth = simulate_with_truth(reference, [chunk], [("flip_polarity", 1.0)], seed=3)
    items = truth[chunk.chunk_id].items
    flipped = [t for t in items if t.effects == ["polarity_flipped"]]
    assert [(t.field, t.index, t.source_index) for t in flipped] == [
        ("claims", 0, 0),
        ("claims", 1, 1),
    ]
    assert all(
        t.fate == "untouched" and t.index == t.source_index for t in items if t not in flipped
    )
    out = records[chunk.chunk_id].extraction
    assert out is not None and [c.polarity for c in out.claims] != [c.polarity for c in ref.claims]
    # Dropping everything: every reference item is listed as dropped, none present.
    _, truth = simulate_with_truth(reference, [chunk], [("drop", 1.0)], seed=3)
    items = truth[chunk.chunk_id].items
    n_items = sum(len(getattr(ref, f)) for f in LIST_FIELDS)
    assert len(items) == n_items
    assert all(t.index is None and t.effects == ["dropped"] for t in items)


def test_truth_follows_items_through_a_chain(example) -> None:
    """Invent then drop then swap: each item's index, source and effects are tracked."""
    from chatledger.simulate import simulate_with_truth

    chunk, ref = example
    reference = {chunk.chunk_id: _record(chunk.chunk_id, ref)}
    ops = [("invent_item", 0.5), ("drop", 0.5), ("swap_speaker", 0.5), ("paraphrase", 0.3)]
    records, truth = simulate_with_truth(reference, [chunk], ops, seed=5)
    out = records[chunk.chunk_id].extraction
    assert out is not None
    t = truth[chunk.chunk_id]
    present = t.present()
    for field in LIST_FIELDS:
        values = getattr(out, field)
        # Every item of the simulated extraction has exactly one truth line…
        assert sorted(i for f, i in present if f == field) == list(range(len(values)))
        for index, item in enumerate(values):
            fate = present[(field, index)]
            if fate.source_index is None:
                assert fate.effects[0] == "invented"
                continue
            original = getattr(ref, field)[fate.source_index]
            # …an untouched one is the reference's item unchanged, a changed one is not.
            assert (item == original) == (fate.effects == []), (field, index, fate)
    dropped = t.dropped()
    assert dropped and all(d.effects[-1] == "dropped" for d in dropped)
    # Every reference item is accounted for exactly once (kept or dropped).
    sources = sorted((d.field, d.source_index) for d in t.items if d.source_index is not None)
    assert sources == sorted((f, i) for f in LIST_FIELDS for i in range(len(getattr(ref, f))))


def test_truth_file_round_trip_and_bad_line(example, tmp_path: Path) -> None:
    from chatledger.core import InputError
    from chatledger.simulate import read_truth, simulate_with_truth, truth_path, write_truth

    chunk, ref = example
    reference = {chunk.chunk_id: _record(chunk.chunk_id, ref)}
    _, truth = simulate_with_truth(reference, [chunk], [("invent_item", 1.0)], seed=1)
    path = truth_path(tmp_path / "simulated-light.jsonl")
    assert path.name == "simulated-light.truth.jsonl"
    write_truth(truth.values(), path)
    assert read_truth(path) == truth
    invented = [i for i in truth[chunk.chunk_id].items if i.effects == ["invented"]]
    # Severity 1 fills every slot: max(2, n) per text field (7 text fields).
    expected = sum(max(2, len(getattr(ref, f))) for f in TEXT_FIELDS)
    assert len(invented) == expected
    path.write_text(
        '{"version": 1, "chunk_id": "c", "model": "m", '
        '"items": [{"field": "claims", "effects": ["eaten"]}]}\n'
    )
    with pytest.raises(InputError, match=r"truth.jsonl:1 \[items.0.effects.0\]"):
        read_truth(path)


def test_shift_evidence_probe_moves_citations(example) -> None:
    from chatledger.simulate import corrupt_traced

    chunk, ref = example
    out, trace = corrupt_traced(ref, chunk, "shift_evidence", 1.0)
    for field in ("claims", "decisions", "action_items"):
        for old, new in zip(getattr(ref, field), getattr(out, field), strict=True):
            if old.evidence:
                assert not set(old.evidence) & set(new.evidence), (field, old, new)
        assert all(changed for _, changed in trace[field] if getattr(ref, field))
    assert "shift_evidence" not in OPERATORS  # not part of the demo's models or metric audit


def _record(chunk_id, extraction):
    from chatledger.core import ExtractionRecord, RecordStatus

    return ExtractionRecord(
        chunk_id=chunk_id, model="ref", status=RecordStatus.OK, extraction=extraction
    )
