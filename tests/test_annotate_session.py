"""The annotation session without a browser: the sample, the gold a state stands for, the
journal, resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate_fixture import write_fixture
from chatledger.annotate import (
    AnnotationSession,
    AnnotationStore,
    ChunkState,
    GoldLine,
    gold_line,
    stratified_sample,
)
from chatledger.annotate._state import initial_state, state_from_gold
from chatledger.core import Chunk, ExtractionRecord, ExtractionV3, InputError
from chatledger.corpus import read_extractions


def _chunks(sizes: list[int]) -> list[Chunk]:
    out = []
    for c, size in enumerate(sizes):
        for k in range(size):
            out.append(Chunk(chunk_id=f"c{c}-{k}", conversation_id=f"conv{c}"))
    return out


def test_the_sample_is_stratified_by_conversation_and_seeded() -> None:
    chunks = _chunks([6, 3, 1])
    # One each, then the 2 left by largest remainders of the spare chunks 5 : 2 : 0 —
    # exact shares 10/7 = 1.43 and 4/7 = 0.57: conv0 gets its whole 1, conv1 the remainder.
    picked = stratified_sample(chunks, 5, seed=11)
    by_conversation = [sum(c.conversation_id == f"conv{i}" for c in picked) for i in range(3)]
    assert by_conversation == [2, 2, 1]
    assert picked == sorted(picked, key=chunks.index)  # corpus order
    assert stratified_sample(chunks, 5, seed=11) == picked
    assert {tuple(c.chunk_id for c in stratified_sample(chunks, 5, s)) for s in range(20)} != {
        tuple(c.chunk_id for c in picked)
    }
    assert stratified_sample(chunks, 10, seed=0) == chunks
    two = stratified_sample(chunks, 2, seed=3)  # fewer than conversations: one chunk of each
    assert len({c.conversation_id for c in two}) == 2


def _prefill() -> ExtractionV3:
    return ExtractionV3.model_validate(
        {
            "topics": ["alpha", "beta"],
            "claims": [
                {"text": "one", "polarity": "pro"},
                {"text": "two", "polarity": "con"},
                {"text": "three", "polarity": "neutral"},
            ],
        }
    )


def test_a_state_stands_for_the_gold_line_worked_out_by_hand() -> None:
    prefill = _prefill()
    state = initial_state("c1", ["topics", "claims", "decisions"], prefill)
    claims = state.fields["claims"]
    claims.reviewed = True
    claims.items[0].accepted = True  # accepted
    claims.items[1].value = {**claims.items[1].value, "polarity": "neutral"}  # type: ignore[dict-item]
    del claims.items[2]  # deleted
    claims.deleted.append(2)
    claims.items.append(
        claims.items[0].model_copy(update={"value": {"text": "four"}, "prefill": None})
    )
    line, problems = gold_line(state, prefill, annotator="ana", prefill_model="m")
    assert problems == [] and line is not None
    assert line.covers == ["claims"]  # topics untouched, decisions never reviewed
    assert [
        (d.prefill_index, d.decision, d.item_index) for d in line.annotation.decisions["claims"]
    ] == [
        (0, "accepted", 0),
        (1, "edited", 1),
        (2, "deleted", None),
    ]
    assert line.annotation.added == {"claims": [2]}
    assert [c.text for c in line.extraction.claims] == ["one", "two", "four"]
    # An item left alone in a reviewed field is accepted: the person saw it and kept it.
    state.fields["topics"].reviewed = True
    line, _ = gold_line(state, prefill, annotator="ana", prefill_model="m")
    assert line is not None and line.covers == ["topics", "claims"]
    assert [d.decision for d in line.annotation.decisions["topics"]] == ["accepted", "accepted"]
    # The state comes back from the line alone (no journal): the same line again.
    again = state_from_gold(
        read_line(line), line.annotation, ["topics", "claims", "decisions"], prefill
    )
    assert gold_line(again, prefill, annotator="ana", prefill_model="m")[0] == line


def read_line(line: GoldLine) -> ExtractionRecord:
    from chatledger.corpus import parse_extraction_line

    record, problem = parse_extraction_line(line.model_dump_json(), path="g", line=1)
    assert problem is None and record is not None
    return record


def test_an_invalid_reviewed_field_stays_out_of_covers_and_says_why() -> None:
    state = initial_state("c1", ["claims", "topics"], _prefill())
    state.fields["claims"].reviewed = True
    state.fields["claims"].items[1].value = {"text": "two", "polarity": "maybe"}
    state.fields["topics"].reviewed = True
    line, problems = gold_line(state, _prefill(), annotator="ana", prefill_model=None)
    assert line is not None and line.covers == ["topics"]
    assert [(p.field, p.item) for p in problems] == [("claims", 1)]
    assert "polarity" in problems[0].message and "maybe" in problems[0].message


def test_the_journal_ignores_a_torn_last_line_and_names_a_broken_one(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path / "gold.jsonl")
    first = ChunkState(chunk_id="a", done=True)
    second = ChunkState(chunk_id="b")
    store.save(first, [])
    store.save(second, [])
    with store.journal.open("a", encoding="utf-8") as handle:
        handle.write('{"version": 1, "chunk_id": "a", "do')  # a kill mid-append
    assert store.read_journal() == {"a": first, "b": second}
    text = store.journal.read_text(encoding="utf-8").split("\n")
    text[1] = '{"version": 1}'
    store.journal.write_text("\n".join(text), encoding="utf-8")
    with pytest.raises(InputError, match=r"gold.jsonl.journal:2 \[chunk_id\]"):
        store.read_journal()


def test_a_session_resumes_keeps_other_lines_and_refuses_bad_changes(tmp_path: Path) -> None:
    chunks, prefill = write_fixture(tmp_path)
    gold = tmp_path / "gold.jsonl"
    other = {"chunk_id": "elsewhere-9", "model": "human:x", "covers": ["topics"],
             "extraction": {"topics": ["kept"]}}  # fmt: skip
    gold.write_text(json.dumps(other) + "\n", encoding="utf-8")
    session = AnnotationSession.open(
        chunks, gold, prefill_path=prefill, fields=["claims"], annotator="a"
    )
    assert session.done == 0 and session.prefill_model == "cheap-model"
    state = session.states["trip-2"].model_copy(deep=True)
    state.fields["claims"].reviewed = True
    result = session.save(1, state.model_dump(mode="json"))
    assert result.covers == ["claims"] and result.problems == []
    lines = gold.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == other and json.loads(lines[1])["chunk_id"] == "trip-2"
    assert read_extractions(gold).problems == []
    with pytest.raises(InputError, match="'Zed' is not a participant"):
        bad = state.model_copy(deep=True)
        bad.fields["claims"].items[0].value["speaker"] = "Zed"  # type: ignore[index, call-overload]
        session.save(1, bad.model_dump(mode="json"))
    with pytest.raises(InputError, match="not 'trip-2'"):
        session.save(0, state.model_dump(mode="json"))
    resumed = AnnotationSession.open(
        chunks, gold, prefill_path=prefill, fields=["claims"], annotator="a"
    )
    assert resumed.states["trip-2"].fields == session.states["trip-2"].fields
    with pytest.raises(InputError, match="unknown field 'claim'"):
        AnnotationSession.open(chunks, tmp_path / "g2.jsonl", fields=["claim"])


def test_a_run_reads_the_gold_and_its_report_shows_the_reference_against_the_person(
    tmp_path: Path,
) -> None:
    import chatledger as cl
    from chatledger.report import build_report

    chunks, prefill = write_fixture(tmp_path)
    gold = tmp_path / "gold.jsonl"
    session = AnnotationSession.open(
        chunks, gold, prefill_path=prefill, fields=["claims"], annotator="ness"
    )
    state = session.states["trip-1"].model_copy(deep=True)
    state.fields["claims"].reviewed = True
    del state.fields["claims"].items[1]  # the person keeps one of the model's two claims
    state.fields["claims"].deleted.append(1)
    session.save(0, state.model_dump(mode="json"))
    config = {
        "name": "gold-check",
        "chunks": "chunks.jsonl",
        "reference": {"file": "prefill.jsonl", "name": "cheap-model"},
        "challengers": [{"file": "prefill.jsonl", "name": "same"}],
        "layers": ["extraction"],
        "gold": {"file": "gold.jsonl"},
    }
    (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    record = cl.run(tmp_path / "run.yaml", out=tmp_path / "run")
    assert record.human_gold is not None
    reference = record.human_gold.reference
    # One chunk, claims only: the model's 2 claims against the person's 1 → P 1/2, R 1,
    # text F1 2/3, the pair agreeing on polarity and subject, matched share 2·1/(1+2) = 2/3:
    # 0.6·2/3 + (0.25 + 0.15)·2/3 = 0.4 + 0.2667 = 0.6667.
    assert reference.chunks == 1 and set(reference.fields) == {"claims"}
    assert reference.fields["claims"] == pytest.approx(2 / 3)
    counts = reference.field_counts["claims"]
    assert (counts.n_reference, counts.n_predicted) == (1, 2)
    page = build_report(tmp_path / "run").read_text(encoding="utf-8")
    assert record.human_gold.gold == "human:ness" and "human:ness" in page
