"""Degenerate outputs (score/_degenerate.py), counted by hand on small records."""

from __future__ import annotations

from chatledger.core import ExtractionRecord, RecordStatus, Usage
from chatledger.scoring import DegenerateOutputs, count_degenerate, duplicated_items
from conftest import ext, make_chunk, ok_record, texts


def _cut_invalid(chunk_id: str) -> ExtractionRecord:
    usage = Usage.model_validate({"output_tokens": 2048, "finish_reason": "length"})
    return ExtractionRecord(chunk_id=chunk_id, model="m", status=RecordStatus.INVALID, usage=usage)


def test_counts_worked_by_hand() -> None:
    chunks = [make_chunk(chunk_id=c) for c in ("c-1", "c-2", "c-3")]
    reference = {
        "c-1": ok_record(
            "c-1", ext(claims=texts("a", "b"), topics=["budget"], summary="They agree.")
        ),
        "c-2": ok_record("c-2", ext(topics=["x"], action_items=texts("call Sam"))),
        "c-3": ok_record("c-3", ext(topics=["y"])),
    }
    challenger = {
        # "Same" three times with case and spacing changed: 3 duplicated items; "t" only twice.
        "c-1": ok_record(
            "c-1",
            ext(claims=texts("Same", "same ", " SAME", "other"), topics=["t", "t"], summary=""),
        ),
        # Ran into max_tokens and is not valid JSON: counted cut and invalid, nothing else.
        "c-2": _cut_invalid("c-2"),
        # c-3 missing: counts as nothing.
    }
    counts = count_degenerate(reference, challenger, chunks)
    assert counts == DegenerateOutputs(
        chunks=3,
        valid=1,
        duplicated_items=3,
        chunks_with_duplicates=1,
        cut_by_max_tokens=1,
        cut_and_invalid=1,
        # c-1's reference fills claims, topics, summary; the challenger emptied summary.
        empty_fields=1,
        reference_filled=3,
        empty_by_field={"summary": 1},
    )
    assert counts.empty_share == 1 / 3


def test_partial_gold_counts_only_the_fields_it_covers() -> None:
    chunks = [make_chunk(chunk_id="c-1")]
    gold = ok_record("c-1", ext(claims=texts("a"), topics=["budget"], summary="s"))
    gold = ExtractionRecord(
        chunk_id="c-1",
        model="gold",
        status=RecordStatus.OK,
        extraction=gold.extraction,
        covers=("claims", "summary"),
    )
    challenger = {"c-1": ok_record("c-1", ext())}
    counts = count_degenerate({"c-1": gold}, challenger, chunks)
    assert (counts.empty_fields, counts.reference_filled) == (2, 2)
    assert counts.empty_by_field == {"claims": 1, "summary": 1}


def test_a_valid_reply_cut_by_anthropic_max_tokens_is_cut_not_invalid() -> None:
    chunks = [make_chunk(chunk_id="c-1")]
    usage = Usage.model_validate({"finish_reason": "max_tokens"})
    record = ExtractionRecord(
        chunk_id="c-1", model="m", status=RecordStatus.OK, extraction=ext(), usage=usage
    )
    counts = count_degenerate({}, {"c-1": record}, chunks)
    assert (counts.cut_by_max_tokens, counts.cut_and_invalid, counts.valid) == (1, 0, 1)


def test_items_without_text_repeat_as_whole_items() -> None:
    tone = {"speaker": "Sam Ruiz", "emotion": "joy", "intensity": 0.5, "evidence": []}
    extraction = ext(
        emotional_tone=[tone, tone, tone, {**tone, "emotion": "anger"}],
        entities=[{"name": "Fig Tree", "type": "location"}] * 3,
    )
    assert duplicated_items(extraction) == 6


def test_a_clean_self_comparison_has_no_degenerate_output() -> None:
    from conftest import example_chunk, example_reference

    chunk = example_chunk()
    record = ok_record(chunk.chunk_id, example_reference())
    counts = count_degenerate({chunk.chunk_id: record}, {chunk.chunk_id: record}, [chunk])
    assert (counts.duplicated_items, counts.cut_by_max_tokens, counts.empty_fields) == (0, 0, 0)
    # Every field of the bundled example but confidence (derived) and warnings (it has none).
    assert counts.reference_filled == 15


def test_foreign_message_ids_counted_over_every_place_an_id_is_cited() -> None:
    """A chunk of messages m-1 … m-10. Cited: 2 claim evidence ids (m-1, ex1-m01), 2 salient
    ids (m-2, m-99), one turning point (ex1-m11) and a phase's two bounds (m-1, m-10): 7 ids,
    3 of them foreign (ex1-m01, m-99, ex1-m11) → a share of 3/7. An invalid line cites
    nothing."""
    chunks = [make_chunk(chunk_id="c-1"), make_chunk(chunk_id="c-2")]
    extraction = ext(
        claims=[{"text": "a", "evidence": ["m-1", "ex1-m01"]}],
        evidence_message_ids=["m-2", "m-99"],
        emotional_arc={
            "opening_mood": "joy",
            "closing_mood": "joy",
            "trajectory": "stable",
            "turning_points": [{"message_id": "ex1-m11"}],
        },
        conversation_phases=[
            {"phase": "opening", "start_message_id": "m-1", "end_message_id": "m-10"}
        ],
    )
    challenger = {"c-1": ok_record("c-1", extraction), "c-2": _cut_invalid("c-2")}
    counts = count_degenerate({}, challenger, chunks)
    assert (counts.cited_message_ids, counts.foreign_message_ids) == (7, 3)
    assert counts.foreign_share == 3 / 7
    assert DegenerateOutputs(chunks=0, valid=0, duplicated_items=0, chunks_with_duplicates=0,
                             cut_by_max_tokens=0, cut_and_invalid=0, empty_fields=0,
                             reference_filled=0).foreign_share == 0.0  # fmt: skip
