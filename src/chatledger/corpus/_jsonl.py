"""Readers for the chunk and extraction JSON Lines formats (DESIGN.md §2).

Chunks are the user's own input, so any bad line stops the read with an :class:`InputError`
naming file, line and field. Extraction files are model output: a bad line is *recorded* as an
invalid extraction of its chunk (and counted), never dropped and never a crash.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chatledger.core import (
    DEFAULT_VOCABULARY,
    FIELDS_V3,
    Chunk,
    ExtractionRecord,
    ExtractionV3,
    InputError,
    Problem,
    RecordStatus,
    Usage,
    Vocabulary,
    first_validation_error,
)
from chatledger.corpus._lines import (
    JsonLine,
    JsonTextError,
    loads_strict,
    parse_json_line,
    read_json_lines,
)

_CHUNK_ID = re.compile(r'"chunk_id"\s*:\s*"((?:[^"\\]|\\.)*)"')
_SAMPLE = re.compile(r'"sample"\s*:\s*([0-9]{1,9})(?![0-9])')


def read_chunks(path: str | Path) -> list[Chunk]:
    """Read ``chunks.jsonl``; the first bad line raises an :class:`InputError`."""
    path = Path(path)
    chunks: list[Chunk] = []
    first_line: dict[str, int] = {}
    for line in read_json_lines(path):
        number = line.number
        if not line.ok:
            assert line.error is not None
            raise InputError(line.error, path=path, line=number, field=line.field or None)
        try:
            chunk = Chunk.model_validate(line.value)
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            raise InputError(msg, path=path, line=number, field=where) from None
        if chunk.chunk_id in first_line:
            raise InputError(
                f"duplicate chunk_id {chunk.chunk_id!r} "
                f"(first on line {first_line[chunk.chunk_id]})",
                path=path,
                line=number,
                field="chunk_id",
            )
        first_line[chunk.chunk_id] = number
        chunks.append(chunk)
    if not chunks:
        raise InputError("no chunks in file", path=path)
    return chunks


class RecordMap(dict[str, ExtractionRecord]):
    """Chunk id → record, remembering the file the records were read from and its problems,
    so that whoever scores them can say which file had nothing usable, and why."""

    def __init__(self, path: str = "", problems: list[Problem] | None = None) -> None:
        super().__init__()
        self.path = path
        self.problems: list[Problem] = problems if problems is not None else []


@dataclass
class ExtractionFile:
    """All records of one extraction file, keyed by chunk id, plus what could not be attributed.

    ``records`` are sample 0 (a line without ``"sample"`` is sample 0): what is scored.
    ``samples`` holds the repeats of a repeat-variance run, ``{sample: {chunk_id: record}}``.
    """

    path: str
    model: str
    records: dict[str, ExtractionRecord] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    samples: dict[int, dict[str, ExtractionRecord]] = field(default_factory=dict)
    # Non-blank lines read: each is a kept record, a duplicate (a problem) or a line that
    # names no chunk (a problem), so lines_read = records kept + problems not on a record.
    lines_read: int = 0

    def sample_records(self, sample: int) -> dict[str, ExtractionRecord]:
        """The records of one sample (0: :attr:`records`)."""
        return self.records if sample == 0 else self.samples.get(sample, {})

    @property
    def sample_count(self) -> int:
        """1 + the highest sample index in the file."""
        return 1 + max(self.samples, default=0)

    def get(self, chunk_id: str) -> ExtractionRecord:
        record = self.records.get(chunk_id)
        return record if record is not None else ExtractionRecord.missing(chunk_id, self.model)

    @property
    def invalid_count(self) -> int:
        return sum(1 for r in self.records.values() if r.status is RecordStatus.INVALID)


def parse_extraction_line(
    text: str, *, path: str, line: int, vocabulary: Vocabulary | None = None
) -> tuple[ExtractionRecord | None, Problem | None]:
    """Parse one line into (record, problem); the record is None when no chunk id is known."""
    record, problem, _sample = _parse_line(
        parse_json_line(text, line), path=path, vocabulary=vocabulary
    )
    return record, problem


def _recover_chunk_id(text: str) -> str | None:
    """The chunk id a line that is not JSON meant, read from its raw text (None: none found).
    An escape JSON does not know (``"c\\q"``) leaves the id as written."""
    match = _CHUNK_ID.search(text)
    if match is None:
        return None
    raw = match.group(1)
    try:
        value = loads_strict(f'"{raw}"')
    except JsonTextError:
        return raw or None
    return value if isinstance(value, str) and value else None


def _sample_of(data: Any, text: str) -> int:
    raw = data.get("sample", 0) if isinstance(data, dict) else None
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    match = _SAMPLE.search(text) if data is None else None
    return int(match.group(1)) if match else 0


def _parse_line(
    json_line: JsonLine, *, path: str, vocabulary: Vocabulary | None = None
) -> tuple[ExtractionRecord | None, Problem | None, int]:
    """(record, problem, sample index) of one line."""
    line = json_line.number
    context = {"vocabulary": vocabulary} if vocabulary is not None else None
    # An invalid line keeps what it cost, so a model's failures are not free in the totals.
    line_usage = Usage()
    sample = 0

    def invalid(
        chunk_id: str | None, model: str, where: str, msg: str
    ) -> tuple[ExtractionRecord | None, Problem, int]:
        problem = Problem(path=path, line=line, field=where, message=msg)
        if chunk_id is None:
            return None, problem, sample
        record = ExtractionRecord(
            chunk_id=chunk_id,
            model=model,
            status=RecordStatus.INVALID,
            usage=line_usage,
            problems=(problem,),
            path=path,
            line=line,
        )
        return record, problem, sample

    data: Any = json_line.value
    if not json_line.ok:
        assert json_line.error is not None
        if data is None:  # not JSON at all: the chunk id can only come from the raw text
            sample = _sample_of(None, json_line.text)
            chunk_id = _recover_chunk_id(json_line.text)
            return invalid(chunk_id, "", json_line.field, json_line.error)
        if not isinstance(data, dict):  # a list or a scalar: no chunk to attribute it to
            return invalid(None, "", json_line.field, json_line.error)
        # An object holding a value JSON does not allow (NaN): the line names its chunk.
        known = data.get("chunk_id")
        model_name = data.get("model") if isinstance(data.get("model"), str) else ""
        assert isinstance(model_name, str)
        sample = _sample_of(data, json_line.text)
        chunk = known if isinstance(known, str) and known else None
        return invalid(chunk, model_name, json_line.field, json_line.error)
    chunk_id = data.get("chunk_id")
    if not isinstance(chunk_id, str) or not chunk_id:
        return invalid(None, "", "chunk_id", "missing or not a string")
    model = data.get("model") if isinstance(data.get("model"), str) else ""
    assert isinstance(model, str)
    raw_sample = data.get("sample", 0)
    if isinstance(raw_sample, bool) or not isinstance(raw_sample, int) or raw_sample < 0:
        return invalid(None, model, "sample", "must be an integer >= 0")
    sample = raw_sample
    with contextlib.suppress(ValidationError):
        line_usage = Usage.model_validate(data.get("usage") or {})
    if "extraction" not in data:
        return invalid(chunk_id, model, "extraction", "missing")
    raw = data["extraction"]
    if raw is None and isinstance(data.get("error"), str):
        return invalid(chunk_id, model, "extraction", f"no valid extraction: {data['error']}")
    if not isinstance(raw, dict):
        return invalid(chunk_id, model, "extraction", "expected a JSON object")
    try:
        extraction = ExtractionV3.model_validate(raw, context=context)
    except ValidationError as exc:
        where, msg = first_validation_error(exc, "extraction")
        return invalid(chunk_id, model, where, msg)
    try:
        usage = Usage.model_validate(data.get("usage") or {})
    except ValidationError as exc:
        where, msg = first_validation_error(exc, "usage")
        return invalid(chunk_id, model, where, msg)
    covers = data.get("covers")
    if covers is not None and (
        not isinstance(covers, list)
        or not all(isinstance(c, str) and c in FIELDS_V3 for c in covers)
    ):
        return invalid(chunk_id, model, "covers", "must be a list of v3 field names")
    record = ExtractionRecord(
        chunk_id=chunk_id,
        model=model,
        status=RecordStatus.OK,
        extraction=extraction,
        usage=usage,
        covers=tuple(covers) if covers is not None else None,
        path=path,
        line=line,
    )
    return record, None, sample


def read_extractions(path: str | Path, *, vocabulary: Vocabulary | None = None) -> ExtractionFile:
    """Read a model's extraction file; bad lines become invalid records, never exceptions."""
    path = Path(path)
    vocab = (
        vocabulary
        if vocabulary is not None and vocabulary.values is not DEFAULT_VOCABULARY
        else None
    )
    result = ExtractionFile(path=str(path), model="")
    result.records = RecordMap(str(path), result.problems)
    first_line: dict[tuple[str, int], int] = {}
    for json_line in read_json_lines(path):
        number = json_line.number
        result.lines_read += 1
        record, problem, sample = _parse_line(json_line, path=str(path), vocabulary=vocab)
        if problem is not None:
            result.problems.append(problem)
        if record is None:
            continue
        if not result.model and record.model:
            result.model = record.model
        key = (record.chunk_id, sample)
        if key in first_line:
            which = f" sample {sample}" if sample else ""
            result.problems.append(
                Problem(
                    path=str(path),
                    line=number,
                    field="chunk_id",
                    message=(
                        f"duplicate chunk_id {record.chunk_id!r}{which} ignored "
                        f"(first on line {first_line[key]})"
                    ),
                )
            )
            continue
        first_line[key] = number
        if sample == 0:
            result.records[record.chunk_id] = record
        else:
            result.samples.setdefault(sample, {})[record.chunk_id] = record
    if not result.model:
        result.model = path.stem
    return result
