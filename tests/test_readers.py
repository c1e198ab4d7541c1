"""JSON Lines readers (DESIGN.md §2): chunk errors stop with file:line [field]; extraction-file
errors are recorded as invalid extractions, never raised."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import InputError, RecordStatus
from chatledger.corpus import extraction_model, read_chunks, read_extractions
from conftest import EXAMPLES, write_jsonl


def _chunk(chunk_id: str = "c-1", *message_ids: str) -> dict[str, Any]:
    ids = message_ids or ("m-1", "m-2")
    return {
        "chunk_id": chunk_id,
        "participants": ["Ness Alderton"],
        "messages": [{"id": m, "speaker": "Ness Alderton", "text": "hi"} for m in ids],
    }


def _line(chunk_id: str, extraction: Any) -> dict[str, Any]:
    return {"chunk_id": chunk_id, "model": "test:model", "extraction": extraction}


# --------------------------------------------------------------------------------------------
# read_chunks


def test_read_chunks_bundled_example() -> None:
    chunks = read_chunks(EXAMPLES / "chunks.jsonl")
    assert [c.chunk_id for c in chunks] == ["ex-1"]
    assert chunks[0].participants == ["Jordan Pike", "Mei Chen"]
    assert len(chunks[0].messages) == 5


def test_read_chunks_skips_blank_lines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "k.jsonl", [_chunk("a"), "", "   ", _chunk("b")])
    assert [c.chunk_id for c in read_chunks(path)] == ["a", "b"]


def _chunk_error(path: Path) -> InputError:
    with pytest.raises(InputError) as info:
        read_chunks(path)
    return info.value


def test_read_chunks_bad_json_names_file_and_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "k.jsonl", [_chunk("a"), '{"chunk_id": "b", '])
    err = _chunk_error(path)
    assert (err.path, err.line) == (str(path), 2)
    assert str(err).startswith(f"{path}:2: ")
    assert "not valid JSON" in str(err)


def test_read_chunks_missing_field_names_field_path(tmp_path: Path) -> None:
    broken = _chunk("b")
    del broken["messages"][1]["text"]
    path = write_jsonl(tmp_path / "k.jsonl", [_chunk("a"), broken])
    err = _chunk_error(path)
    assert (err.line, err.field) == (2, "messages.1.text")
    assert str(err).startswith(f"{path}:2 [messages.1.text]: ")


def test_read_chunks_missing_chunk_id(tmp_path: Path) -> None:
    broken = _chunk("x")
    del broken["chunk_id"]
    err = _chunk_error(write_jsonl(tmp_path / "k.jsonl", [broken]))
    assert (err.line, err.field) == (1, "chunk_id")


def test_read_chunks_duplicate_chunk_id(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "k.jsonl", [_chunk("a"), _chunk("b"), _chunk("a")])
    err = _chunk_error(path)
    assert (err.line, err.field) == (3, "chunk_id")
    assert "duplicate chunk_id 'a'" in str(err)
    assert "first on line 1" in str(err)


def test_read_chunks_duplicate_message_id(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "k.jsonl", [_chunk("a", "m-1", "m-2", "m-1")])
    err = _chunk_error(path)
    assert (err.path, err.line, err.field) == (str(path), 1, "messages")
    assert "duplicate message id 'm-1'" in str(err)


def test_read_chunks_not_an_object_and_empty_file(tmp_path: Path) -> None:
    err = _chunk_error(write_jsonl(tmp_path / "k.jsonl", ["[1, 2]"]))
    assert err.line == 1
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    assert "no chunks" in str(_chunk_error(empty))


def test_read_chunks_file_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    err = _chunk_error(missing)
    assert err.path == str(missing)
    assert str(err) == f"{missing}: file not found"


# --------------------------------------------------------------------------------------------
# read_extractions


def test_read_extractions_bundled_example() -> None:
    result = read_extractions(EXAMPLES / "reference.jsonl")
    assert result.model == "hand-written"
    assert result.problems == []
    record = result.records["ex-1"]
    assert record.status is RecordStatus.OK
    assert record.extraction is not None
    assert len(record.extraction.claims) == 2


def test_read_extractions_bad_json_recovers_chunk_id(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "x.jsonl",
        [_line("c-1", {}), '{"chunk_id": "c-2", "model": "m", "extraction": {"topics": ['],
    )
    result = read_extractions(path)
    assert result.records["c-1"].status is RecordStatus.OK
    bad = result.records["c-2"]
    assert bad.status is RecordStatus.INVALID
    assert bad.extraction is None
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert (problem.path, problem.line) == (str(path), 2)
    assert "not valid JSON" in problem.message
    assert bad.problems == (problem,)
    assert result.invalid_count == 1


@pytest.mark.parametrize(
    ("extraction", "field"),
    [
        (
            {"claims": [{"text": "the ballad drags", "polarity": "maybe"}]},
            "extraction.claims.0.polarity",
        ),
        (
            {"topics": ["setlist"], "claims": [{"text": "a"}, {"text": "b", "confidence": 1.5}]},
            "extraction.claims.1.confidence",
        ),
        ({"entities": [{"name": "Theo", "type": "alien"}]}, "extraction.entities.0.type"),
        ({"topics": ["setlist"], "colour": "blue"}, "extraction.colour"),
        ({"decisions": [{"evidence": ["m-1"]}]}, "extraction.decisions.0.text"),
    ],
)
def test_read_extractions_schema_invalid_is_recorded(
    tmp_path: Path, extraction: dict[str, Any], field: str
) -> None:
    path = write_jsonl(tmp_path / "x.jsonl", [_line("c-9", extraction)])
    result = read_extractions(path)
    record = result.records["c-9"]
    assert record.status is RecordStatus.INVALID
    assert [p.field for p in result.problems] == [field]
    assert str(result.problems[0]).startswith(f"{path}:1 [{field}]: ")


def test_read_extractions_duplicate_chunk_id_keeps_first(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "x.jsonl",
        [_line("c-1", {"topics": ["first"]}), _line("c-1", {"topics": ["second"]})],
    )
    result = read_extractions(path)
    extraction = result.records["c-1"].extraction
    assert extraction is not None
    assert extraction.topics == ["first"]
    assert [(p.line, p.field) for p in result.problems] == [(2, "chunk_id")]
    assert "duplicate chunk_id 'c-1'" in result.problems[0].message


def test_read_extractions_never_raises_on_model_output(tmp_path: Path) -> None:
    rows: list[dict[str, Any] | str] = [
        "not json at all",  # no chunk id to recover: a problem, no record
        "[1, 2, 3]",
        '"just a string"',
        json.dumps({"model": "m", "extraction": {}}),  # no chunk_id
        json.dumps({"chunk_id": "c-1", "model": "m"}),  # no extraction
        json.dumps({"chunk_id": "c-2", "extraction": "a string"}),
        json.dumps({"chunk_id": "c-3", "extraction": {}, "usage": {"input_tokens": -5}}),
        json.dumps({"chunk_id": "c-4", "extraction": None}),
        _line("c-5", {"summary": "fine"}),
    ]
    path = write_jsonl(tmp_path / "x.jsonl", rows)
    result = read_extractions(path)
    assert [p.line for p in result.problems] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert {cid: r.status for cid, r in result.records.items()} == {
        "c-1": RecordStatus.INVALID,
        "c-2": RecordStatus.INVALID,
        "c-3": RecordStatus.INVALID,
        "c-4": RecordStatus.INVALID,
        "c-5": RecordStatus.OK,
    }
    assert result.problems[6].field == "usage.input_tokens"
    assert result.model == "m"  # the first model name seen
    # A chunk the file never mentions is reported as missing.
    assert result.get("c-404").status is RecordStatus.MISSING


def test_read_extractions_model_defaults_to_file_stem(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "cheap-model.jsonl", [{"chunk_id": "c-1", "extraction": {}}])
    assert read_extractions(path).model == "cheap-model"
    assert extraction_model(path) == "cheap-model"


def test_extraction_model_is_the_files_model_read_only_that_far(tmp_path: Path) -> None:
    # Issue 34: a run names a challenger before its facts are read (they come beside the
    # batches): the name is read_extractions' — the first record naming a model, whatever
    # its status — read only as far as that record.
    rows: list[dict[str, Any] | str] = [
        "not json at all",
        json.dumps({"chunk_id": "c-1", "extraction": {}}),  # no model
        json.dumps({"chunk_id": "c-1", "model": "dup", "extraction": {}}),  # a duplicate
        _line("c-2", {}),
        "[not json either",
    ]
    path = write_jsonl(tmp_path / "x.jsonl", rows)
    assert read_extractions(path).model == "dup"
    assert extraction_model(path) == "dup"
    with pytest.raises(InputError, match="file not found"):
        extraction_model(tmp_path / "nope.jsonl")


def test_read_extractions_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_extractions(tmp_path / "nope.jsonl")
