"""Loaders under hostile input (issue 11, row 6): every JSONL loader reads lines through one
decoder, so a byte-order mark, invalid UTF-8, an invalid escape, a 5,000-digit number, deep
nesting, NaN or a lone surrogate is a named bad line — an invalid record in model output, one
``file:line`` error in user input — never a crash. Plus what ``score`` makes of a reference that
is not JSON Lines, of chunks the chunks file lacks, and of message ids the chunk lacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatledger.cli._app import main
from chatledger.core import InputError, RecordStatus, Usage
from chatledger.corpus import (
    JsonTextError,
    loads_strict,
    read_chunks,
    read_extractions,
    read_json_lines,
)
from chatledger.scoring import score_records
from chatledger.structbench import read_dataset, read_predictions
from conftest import EXAMPLES, make_chunk

DEEP = b"[" * 100_000 + b"]" * 100_000
HUGE = b"9" * 5000
GOOD = b'{"chunk_id": "c-1", "model": "m", "extraction": {"topics": ["setlist"]}}'

# (line bytes, the error fragment, the field it names)
BAD_LINES: list[tuple[bytes, str, str]] = [
    (b'{"chunk_id": "c\\q", "extraction": {}}', "Invalid \\escape at column 16", ""),
    (b'{"chunk_id": "c-2", "usage": {"input_tokens": ' + HUGE + b"}}", "more than 4300 digits", ""),
    (b'{"chunk_id": "c-2", "extraction": ' + DEEP + b"}", "nested too deeply", ""),
    (b'{"chunk_id": "c-2", "model": "\xff\xfe"}', "not UTF-8 (byte 0xff at byte 31)", ""),
    (b'{"chunk_id": "c-2", "usage": {"cost_usd": NaN}}', "not a finite number", "usage.cost_usd"),
    (b'{"chunk_id": "c-2", "usage": {"cost_usd": 1e999}}', "not a finite number", "usage.cost_usd"),
    (b'{"chunk_id": "c-2", "model": "\\ud800"}', "lone surrogate", "model"),
    (b"\xef\xbb\xbf" + GOOD, "Unexpected UTF-8 BOM", ""),  # a BOM is only dropped on line 1
    (b"\x1c", "not valid JSON", ""),  # not JSON whitespace, so not a blank line
    (b"[1, 2]", "expected a JSON object, got a JSON array", ""),
]


def _write(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


# --------------------------------------------------------------------------------------------
# The decoder


@pytest.mark.parametrize(("raw", "fragment", "field"), BAD_LINES)
def test_the_decoder_names_each_bad_line(
    tmp_path: Path, raw: bytes, fragment: str, field: str
) -> None:
    path = _write(tmp_path / "x.jsonl", GOOD, raw)
    lines = list(read_json_lines(path))
    assert [line.number for line in lines] == [1, 2]
    assert lines[0].ok
    assert not lines[1].ok
    assert lines[1].error is not None and fragment in lines[1].error
    assert lines[1].field == field


def test_a_bom_at_the_start_is_dropped_and_blank_lines_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.jsonl", b"\xef\xbb\xbf" + GOOD, b"", b" \t\r", GOOD)
    lines = list(read_json_lines(path))
    assert [(line.number, line.ok) for line in lines] == [(1, True), (4, True)]


def test_loads_strict_raises_only_its_own_error() -> None:
    for text in ("[" * 5000, "1" * 5000, "NaN", "-Infinity", '"\\udc00"', "{", "1e400"):
        with pytest.raises(JsonTextError):
            loads_strict(text)
    # A surrogate *pair* is one character and fine; an escaped backslash before "ud800" too.
    assert loads_strict('"\\ud83d\\ude00"') == "\U0001f600"
    assert loads_strict('"\\\\ud800"') == "\\ud800"


def test_usage_refuses_non_finite_numbers() -> None:
    with pytest.raises(ValueError, match="finite"):
        Usage.model_validate({"cost_usd": float("inf")})


# --------------------------------------------------------------------------------------------
# Extractions: every bad line is an invalid record (or a problem of the file), never a crash


def test_extractions_record_every_bad_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.jsonl", GOOD, *(raw for raw, _, _ in BAD_LINES))
    result = read_extractions(path)
    assert result.lines_read == 1 + len(BAD_LINES)
    assert result.records["c-1"].status is RecordStatus.OK
    # Lines 2–8 name a chunk (read from the object, or from the raw text when it is not JSON):
    # c\q (invalid escape: kept as written), then c-2 six times — the first is kept as
    # invalid, five are duplicates. Line 9 (BOM) is c-1 again: a duplicate. Lines 10 and 11
    # name no chunk.
    assert set(result.records) == {"c-1", "c\\q", "c-2"}
    assert result.records["c\\q"].status is RecordStatus.INVALID
    assert result.records["c-2"].status is RecordStatus.INVALID
    assert result.records["c-2"].line == 3
    assert "more than 4300 digits" in result.records["c-2"].problems[0].message
    # 10 line problems + 6 duplicates (5 of c-2, 1 of c-1).
    assert len(result.problems) == 16
    duplicates = [p for p in result.problems if p.message.startswith("duplicate")]
    assert [p.line for p in duplicates] == [4, 5, 6, 7, 8, 9]
    # Every line is accounted for: a kept record or a problem on that line.
    accounted = {r.line for r in result.records.values()} | {p.line for p in result.problems}
    assert accounted == set(range(1, 12))
    nan_line = [str(p) for p in result.problems if p.line == 6]
    assert nan_line == [
        f"{path}:6 [usage.cost_usd]: not a finite number (NaN and infinity are not allowed)",
        f"{path}:6 [chunk_id]: duplicate chunk_id 'c-2' ignored (first on line 3)",
    ]


def test_extraction_sample_index_of_a_broken_line_is_bounded(tmp_path: Path) -> None:
    # A 5,000-digit "sample" in a line that is not JSON must not crash the recovery.
    path = _write(tmp_path / "x.jsonl", b'{"chunk_id": "c-1", "sample": ' + HUGE + b", ")
    result = read_extractions(path)
    assert result.records["c-1"].status is RecordStatus.INVALID
    assert result.samples == {}


# --------------------------------------------------------------------------------------------
# Chunks: user input, so the first bad line is one InputError naming file and line


@pytest.mark.parametrize(("raw", "fragment", "field"), BAD_LINES)
def test_chunks_stop_at_the_bad_line(tmp_path: Path, raw: bytes, fragment: str, field: str) -> None:
    chunk = json.dumps(make_chunk(chunk_id="c-1").model_dump(mode="json")).encode()
    path = _write(tmp_path / "chunks.jsonl", chunk, raw)
    with pytest.raises(InputError) as info:
        read_chunks(path)
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert fragment in info.value.detail
    assert info.value.field == (field or None)


def test_chunks_with_a_bom_read_like_without(tmp_path: Path) -> None:
    chunk = json.dumps(make_chunk(chunk_id="c-1").model_dump(mode="json")).encode()
    path = _write(tmp_path / "chunks.jsonl", b"\xef\xbb\xbf" + chunk)
    assert [c.chunk_id for c in read_chunks(path)] == ["c-1"]


def test_a_json_array_of_chunks_is_named_as_such(tmp_path: Path) -> None:
    chunk = make_chunk(chunk_id="c-1").model_dump(mode="json")
    path = tmp_path / "chunks.jsonl"
    path.write_text(json.dumps([chunk], indent=2), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_chunks(path)
    assert info.value.line == 1
    assert "the file is a JSON array spread over" in info.value.detail
    assert "expected JSON Lines: one object per line" in info.value.detail


# --------------------------------------------------------------------------------------------
# structbench: predictions are model output (problems), datasets user input (errors)


def test_predictions_record_every_bad_line(tmp_path: Path) -> None:
    good = b'{"id": "d-1", "output": "{}"}'
    bad = [raw.replace(b'"chunk_id"', b'"id"') for raw, _, _ in BAD_LINES]
    path = _write(tmp_path / "p.jsonl", good, *bad)
    predictions = read_predictions(path)
    assert [(p.id, p.line) for p in predictions] == [("d-1", 1)]
    assert predictions.lines_read == 1 + len(BAD_LINES)
    assert [p.line for p in predictions.problems] == list(range(2, 12))
    # The id is named where it can be read: raw text for the escape, the object for NaN.
    assert str(predictions.problems[0]).endswith("(document 'c\\\\q')")
    assert str(predictions.problems[4]).startswith(f"{path}:6 [usage.cost_usd]: not a finite")
    assert str(predictions.problems[4]).endswith("(document 'c-2')")


def test_dataset_stops_at_a_bad_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.jsonl", b'{"id": "d-1", "input": "hi", "x": ' + DEEP + b"}")
    with pytest.raises(InputError, match=r"d\.jsonl:1: not valid JSON \(nested too deeply\)"):
        read_dataset(path)


# --------------------------------------------------------------------------------------------
# score: what happens to the faults above, end to end


def _score(capsys: pytest.CaptureFixture[str], reference: Path, challenger: Path) -> Any:
    code = main(
        [
            "score",
            "--reference",
            str(reference),
            "--challenger",
            str(challenger),
            "--chunks",
            str(EXAMPLES / "chunks.jsonl"),
            "--format",
            "json",
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _example_line(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return data


def test_score_goes_on_past_bad_challenger_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = (EXAMPLES / "challenger.jsonl").read_bytes().rstrip(b"\n")
    challenger = _write(tmp_path / "chal.jsonl", good, *(raw for raw, _, _ in BAD_LINES[:4]))
    code, out, err = _score(capsys, EXAMPLES / "reference.jsonl", challenger)
    assert (code, err) == (0, "")
    data = json.loads(out)
    baseline_code, baseline, _ = _score(
        capsys, EXAMPLES / "reference.jsonl", EXAMPLES / "challenger.jsonl"
    )
    assert baseline_code == 0
    # ex-1 is scored as before; c\q and c-2 are not in the chunks file (not scored, named).
    assert data["extraction_composite"] == json.loads(baseline)["extraction_composite"]
    assert data["unknown_chunks"] == ["c\\q", "c-2"]
    # 4 bad lines + 2 duplicates of c-2 (lines 4 and 5) + 2 chunks not in the chunks file.
    assert data["problem_count"] == 4 + 2 + 2
    assert (
        f"{challenger}:3 [chunk_id]: chunk 'c-2' is not in the chunks file; not scored"
        in (data["problems"])
    )


def test_a_reference_with_a_bom_scores_like_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = _write(
        tmp_path / "ref.jsonl",
        b"\xef\xbb\xbf" + (EXAMPLES / "reference.jsonl").read_bytes().rstrip(b"\n"),
    )
    code, out, _ = _score(capsys, reference, EXAMPLES / "challenger.jsonl")
    _, baseline, _ = _score(capsys, EXAMPLES / "reference.jsonl", EXAMPLES / "challenger.jsonl")
    assert code == 0
    assert json.loads(out)["extraction_composite"] == json.loads(baseline)["extraction_composite"]
    assert json.loads(out)["problems"] == []


@pytest.mark.parametrize(
    ("indent", "cause"),
    [
        (None, "line 1: the file is a JSON array, expected JSON Lines: one object per line"),
        (2, "line 1: the file is a JSON array spread over"),
    ],
)
def test_a_reference_that_is_a_json_array_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], indent: int | None, cause: str
) -> None:
    reference = tmp_path / "ref.json"
    reference.write_text(json.dumps([_example_line("reference.jsonl")], indent=indent))
    code, out, err = _score(capsys, reference, EXAMPLES / "challenger.jsonl")
    assert (code, out) == (2, "")
    assert err.startswith(
        f"error: {reference}: the reference has no valid extraction for any chunk of the run; "
    )
    assert cause in err
    assert err.count("\n") == 1


def test_a_pretty_printed_reference_object_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = tmp_path / "ref.jsonl"
    text = json.dumps(_example_line("reference.jsonl"), indent=2)
    reference.write_text(text + "\n", encoding="utf-8")
    lines = len(text.splitlines())
    code, _, err = _score(capsys, reference, EXAMPLES / "challenger.jsonl")
    assert code == 2
    # Line 1 says what the file is; each of the other lines is a problem too.
    assert (
        f"line 1: the file is one JSON object spread over {lines} lines (pretty-printed), "
        f"expected JSON Lines: one object per line (and {lines - 1} more problems)"
    ) in err


def test_reference_chunks_not_in_the_chunks_file_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _example_line("reference.jsonl")
    ghost = {**line, "chunk_id": "ghost"}
    reference = tmp_path / "ref.jsonl"
    reference.write_text(json.dumps(line) + "\n" + json.dumps(ghost) + "\n", encoding="utf-8")
    code, out, _ = _score(capsys, reference, EXAMPLES / "challenger.jsonl")
    assert code == 0
    data = json.loads(out)
    assert data["chunks"] == 1  # only ex-1 is scored
    assert data["unknown_chunks"] == ["ghost"]
    assert data["problems"] == [
        f"{reference}:2 [chunk_id]: chunk 'ghost' is not in the chunks file; not scored"
    ]


def test_a_reference_whose_chunks_are_all_unknown_says_so(tmp_path: Path) -> None:
    chunks = [make_chunk(chunk_id="c-1")]
    line = _example_line("reference.jsonl")
    path = tmp_path / "ref.jsonl"
    path.write_text(json.dumps({**line, "chunk_id": "zz"}) + "\n", encoding="utf-8")
    reference = read_extractions(path)
    with pytest.raises(InputError) as info:
        score_records(reference.records, {}, chunks)
    assert str(info.value) == (
        f"{path}: the reference has no valid extraction for any chunk of the run: "
        "its 1 valid chunk(s) ('zz') are not in the chunks file"
    )


def test_message_ids_not_in_the_chunk_are_problems_of_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _example_line("challenger.jsonl")
    extraction = line["extraction"]
    extraction["evidence_message_ids"] = ["ex1-m1", "m-99"]
    extraction["claims"][0]["evidence"] = ["ex1-m2", "ex1-m77"]
    extraction["emotional_arc"]["turning_points"] = [{"message_id": "zz", "description": "x"}]
    extraction["conversation_phases"][0]["end_message_id"] = "yy"
    challenger = tmp_path / "chal.jsonl"
    challenger.write_text(json.dumps(line) + "\n", encoding="utf-8")
    code, out, _ = _score(capsys, EXAMPLES / "reference.jsonl", challenger)
    assert code == 0
    data = json.loads(out)
    assert data["invalid"] == 0  # still scored
    assert data["unknown_message_ids"] == 4
    assert data["problem_count"] == 4
    assert data["problems"] == [
        f"{challenger}:1 [extraction.claims.0.evidence.1]: message id 'ex1-m77' is not in "
        "chunk ex-1",
        f"{challenger}:1 [extraction.evidence_message_ids.1]: message id 'm-99' is not in "
        "chunk ex-1",
        f"{challenger}:1 [extraction.emotional_arc.turning_points.0.message_id]: message id "
        "'zz' is not in chunk ex-1",
        f"{challenger}:1 [extraction.conversation_phases.0.end_message_id]: message id 'yy' "
        "is not in chunk ex-1",
    ]


# --------------------------------------------------------------------------------------------
# Line indexes (issue 34): a run's batches parse only their own chunks' lines


def test_records_read_by_their_lines_alone_are_the_whole_files(tmp_path: Path) -> None:
    from chatledger.corpus import index_extraction_lines, read_indexed_records

    lines = [
        b"\xef\xbb\xbf" + GOOD,  # a BOM on line 1: dropped
        *(raw for raw, _, _ in BAD_LINES),  # c\q and c-2 kept invalid, the rest duplicates
        b'{"chunk_id": "c-3", "sample": 1, "extraction": {"topics": ["a"]}}',
        b"",
        b'{"chunk_id": "c-3", "extraction": {"topics": ["b"]}}',  # sample 0 after sample 1
        b'{"chunk_id": "c-4", "model": "\xff"}',  # not UTF-8, first line of c-4: kept invalid
        b'{"chunk_id": "c-5", "sample": -1, "extraction": {}}',  # a bad sample: no chunk
        b'{"chunk_id": "c-3", "extraction": {"topics": ["c"]}}',  # a duplicate of c-3
    ]
    path = _write(tmp_path / "x.jsonl", *lines)
    whole = read_extractions(path).records
    index = index_extraction_lines(path)
    assert list(index.lines) == list(whole) == ["c-1", "c\\q", "c-2", "c-3", "c-4"]
    # Any order, any subset; a chunk without a line is left out.
    wanted = ["c-4", "c-3", "none", "c-1", "c-2", "c\\q"]
    alone = read_indexed_records(index, wanted)
    assert list(alone) == [c for c in wanted if c in whole]
    assert alone.path == whole.path == str(path)
    for chunk_id, record in alone.items():
        assert record == whole[chunk_id]
    assert alone["c-3"].extraction is not None
    assert alone["c-3"].extraction.topics == ["b"]


def test_chunks_read_by_their_lines_alone_are_the_whole_files(tmp_path: Path) -> None:
    from chatledger.corpus import index_chunk_lines, read_indexed_chunks

    chunks = [make_chunk(chunk_id=f"c-{i}") for i in range(4)]
    raw = [json.dumps(c.model_dump(mode="json")).encode() for c in chunks]
    path = _write(tmp_path / "chunks.jsonl", b"\xef\xbb\xbf" + raw[0], b"  ", *raw[1:])
    index = index_chunk_lines(path)
    assert read_indexed_chunks(index, [3, 0, 2]) == [read_chunks(path)[i] for i in (3, 0, 2)]
    path.write_bytes(b"\n" * 10_000)  # changed since it was indexed: one line naming it
    with pytest.raises(InputError, match="changed while the run read it"):
        read_indexed_chunks(index, [1])
