"""Readers for the chunk and extraction JSON Lines formats (DESIGN.md §2).

Chunks are the user's own input, so any bad line stops the read with an :class:`InputError`
naming file, line and field. Extraction files are model output: a bad line is *recorded* as an
invalid extraction of its chunk (and counted), never dropped and never a crash.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Callable, Container, Iterator, Sequence
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
    read_json_lines_at,
    read_json_lines_located,
    reread_json_line,
)

_CHUNK_ID = re.compile(r'"chunk_id"\s*:\s*"((?:[^"\\]|\\.)*)"')
_SAMPLE = re.compile(r'"sample"\s*:\s*([0-9]{1,9})(?![0-9])')


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a file is read into objects that all stay alive:
    each full collection would walk every object read so far (two thirds of the reading time
    of a 1,000-chunk file). Reading makes no reference cycles; the collector resumes after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def iter_chunks(path: str | Path) -> Iterator[Chunk]:
    """The chunks of ``chunks.jsonl`` one by one, with :func:`read_chunks`'s checks: the
    first bad line (or a duplicate id, or a file with no chunk) raises an :class:`InputError`
    when the reader gets there."""
    path = Path(path)
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
        yield chunk
    if not first_line:
        raise InputError("no chunks in file", path=path)


def read_chunks(path: str | Path) -> list[Chunk]:
    """Read ``chunks.jsonl``; the first bad line raises an :class:`InputError`."""
    with _collector_paused():
        return list(iter_chunks(path))


@dataclass(frozen=True, slots=True)
class ChunkOutline:
    """What layer-1 scoring needs of a chunk: its id, its speakers (:meth:`Chunk.speakers`)
    and its message ids in order; a few hundred bytes instead of the whole conversation."""

    chunk_id: str
    speakers: tuple[str, ...]
    message_ids: tuple[str, ...]


def read_chunk_outlines(path: str | Path) -> tuple[list[ChunkOutline], list[Chunk]]:
    """Every chunk of ``chunks.jsonl`` as a :class:`ChunkOutline`, checked and failing like
    :func:`read_chunks`; plus the long chunks whole (:attr:`Chunk.is_long`), for the note
    that names them."""
    outlines: list[ChunkOutline] = []
    long: list[Chunk] = []
    names: dict[str, str] = {}  # one string per distinct speaker, not one per chunk
    for chunk in iter_chunks(path):
        speakers = tuple(names.setdefault(name, name) for name in chunk.speakers())
        ids = tuple(m.id for m in chunk.messages)
        outlines.append(ChunkOutline(chunk.chunk_id, speakers, ids))
        if chunk.is_long:
            long.append(chunk)
    return outlines, long


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
            if chunk_id is not None and "\ufffd" in chunk_id:
                # Bytes of the id itself are not UTF-8 (replaced): no chunk has that id, so
                # naming it would report the line a second time, as an unknown chunk.
                chunk_id = None
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
    usage_error: ValidationError | None = None
    try:  # validated once: kept on an invalid line, checked after the extraction
        line_usage = Usage.model_validate(data.get("usage") or {})
    except ValidationError as exc:
        usage_error = exc
    if "extraction" not in data:
        if isinstance(data.get("messages"), list):
            # A chunk, not a model's answer: the chunks file given where extractions go. Every
            # line would be an empty extraction, and the scores a silent 0.
            raise InputError(
                "a chunk line (messages, no extraction) where an extraction line is expected "
                '({"chunk_id", "model", "extraction", "usage"}): is this the chunks file?',
                path=path,
                line=line,
            )
        return invalid(chunk_id, model, "extraction", "missing")
    raw = data["extraction"]
    if raw is None and isinstance(data.get("error"), str):
        return invalid(chunk_id, model, "extraction", f"no valid extraction: {data['error']}")
    if not isinstance(raw, dict):
        return invalid(chunk_id, model, "extraction", "expected a JSON object")
    try:
        # Strict: the types schema v3 publishes (`chatledger schema v3`); lax validation took
        # "confidence": "0.9" and true (read as 1.0) as valid, which its JSON Schema refuses.
        extraction = ExtractionV3.model_validate(raw, context=context, strict=True)
    except ValidationError as exc:
        where, msg = first_validation_error(exc, "extraction")
        return invalid(chunk_id, model, where, msg)
    if usage_error is not None:
        where, msg = first_validation_error(usage_error, "usage")
        return invalid(chunk_id, model, where, msg)
    usage = line_usage
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
    vocab = _scoring_vocabulary(vocabulary)
    with _collector_paused():
        return _read_extractions(path, vocab)


def _read_extractions(path: Path, vocab: Vocabulary | None) -> ExtractionFile:
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


def _scoring_vocabulary(vocabulary: Vocabulary | None) -> Vocabulary | None:
    return (
        vocabulary
        if vocabulary is not None and vocabulary.values is not DEFAULT_VOCABULARY
        else None
    )


class ExtractionStream:
    """An extraction file read once, front to back, as a scorer asks for its chunks.

    It keeps what :func:`read_extractions` would (sample-0 records by chunk id, the first line
    of a chunk winning; problems in file order; the model named by the first record that names
    one) without holding the file: :meth:`take` reads on until it meets the chunk asked for.
    Records met on the way wait in a small buffer, and past its size only as a byte offset,
    read again when asked for; a file in the chunks' order (what ``extract`` writes) is read
    exactly once and holds one record at a time.

    Opening reads the first line, so a missing file fails here, as :func:`read_extractions`
    fails when called.
    """

    BUFFERED = 256

    def __init__(
        self,
        path: str | Path,
        *,
        vocabulary: Vocabulary | None = None,
        known_chunks: Container[str] | None = None,
        observe: Callable[[ExtractionRecord], None] | None = None,
    ) -> None:
        self.path = str(Path(path))
        self.model = ""
        self.problems: list[Problem] = []
        self.lines_read = 0
        # Sample-0 records kept, and the first few valid ones (to say why nothing could be
        # scored); records of chunks not in ``known_chunks`` as (chunk id, line).
        self.kept = 0
        self.valid = 0
        self.valid_head: list[str] = []
        self.unknown: list[tuple[str, int]] = []
        # The highest sample index of a line kept (1 + it: ExtractionFile.sample_count).
        self.max_sample = 0
        # Called with every kept sample-0 record, in file order, as it is read.
        self._observe = observe
        self._vocab = _scoring_vocabulary(vocabulary)
        self._known = known_chunks
        self._lines = read_json_lines_at(path)
        self._first_line: dict[tuple[str, int], int] = {}
        self._pending: dict[str, ExtractionRecord] = {}
        self._parked: dict[str, tuple[int, int, int]] = {}
        self._again: Any = None
        self._ahead = next(self._lines, None)
        self._done = self._ahead is None

    def take(self, chunk_id: str) -> ExtractionRecord | None:
        """The record of ``chunk_id`` (None: the file has none); each chunk is asked once."""
        record = self._pending.pop(chunk_id, None)
        if record is not None:
            return record
        where = self._parked.pop(chunk_id, None)
        if where is not None:
            return self._reread(*where)
        while True:
            found = self._next_kept()
            if found is None:
                return None
            record, where = found
            if record.chunk_id == chunk_id:
                return record
            if len(self._pending) < self.BUFFERED:
                self._pending[record.chunk_id] = record
            else:
                self._parked[record.chunk_id] = where

    def records(self) -> Iterator[ExtractionRecord]:
        """The records not read yet, in file order (the chunk order when there is no chunks
        file)."""
        while True:
            found = self._next_kept()
            if found is None:
                return
            yield found[0]

    def drain(self) -> None:
        """Read the rest of the file (its problems, its unknown chunks); drop what waits."""
        while self._next_kept() is not None:
            pass
        self._pending.clear()
        self._parked.clear()
        if self._again is not None:
            self._again.close()
            self._again = None
        if not self.model:
            self.model = Path(self.path).stem

    def close(self) -> None:
        """Stop reading: the file is closed (what was not read stays unread)."""
        self._lines.close()
        self._done = True
        if self._again is not None:
            self._again.close()
            self._again = None

    def _next_kept(self) -> tuple[ExtractionRecord, tuple[int, int, int]] | None:
        """The next line's record when it is kept (sample 0, first for its chunk)."""
        while not self._done:
            item = self._ahead
            assert item is not None
            self._ahead = next(self._lines, None)
            self._done = self._ahead is None
            json_line, offset, size = item
            number = json_line.number
            self.lines_read += 1
            record, problem, sample = _parse_line(json_line, path=self.path, vocabulary=self._vocab)
            if problem is not None:
                self.problems.append(problem)
            if record is None:
                continue
            if not self.model and record.model:
                self.model = record.model
            key = (record.chunk_id, sample)
            first = self._first_line.get(key)
            if first is not None:
                which = f" sample {sample}" if sample else ""
                self.problems.append(
                    Problem(
                        path=self.path,
                        line=number,
                        field="chunk_id",
                        message=(
                            f"duplicate chunk_id {record.chunk_id!r}{which} ignored "
                            f"(first on line {first})"
                        ),
                    )
                )
                continue
            self._first_line[key] = number
            if sample != 0:
                self.max_sample = max(self.max_sample, sample)
                continue
            self.kept += 1
            if record.extraction is not None:
                self.valid += 1
                if len(self.valid_head) < 3:
                    self.valid_head.append(record.chunk_id)
            if self._known is not None and record.chunk_id not in self._known:
                self.unknown.append((record.chunk_id, number))
            if self._observe is not None:
                self._observe(record)
            return record, (number, offset, size)
        return None

    def _reread(self, number: int, offset: int, size: int) -> ExtractionRecord:
        if self._again is None:
            self._again = Path(self.path).open("rb")  # noqa: SIM115 - closed by drain()
        json_line = reread_json_line(self._again, number, offset, size)
        record, _problem, _sample = _parse_line(json_line, path=self.path, vocabulary=self._vocab)
        assert record is not None
        return record


@dataclass(frozen=True)
class LineIndex:
    """Where the lines of one JSONL file sit, so that a reader can parse only the few it needs.

    For an extraction file ``lines`` maps each chunk id to the line :func:`read_extractions`
    keeps for it (sample 0, the first line naming the chunk); for a chunks file ``lines`` is
    keyed by position (0, 1, …: the n-th chunk). Each place is (line number, byte offset,
    byte length); ``first_line`` is the file's first non-blank line (the one a whole-document
    message is given on). A few dozen bytes per line instead of the parsed records.
    """

    path: str
    first_line: int
    lines: dict[Any, tuple[int, int, int]]


def _line_identity(json_line: JsonLine, path: str) -> tuple[str | None, int]:
    """(chunk id, sample) of a line, as :func:`_parse_line` decides them (chunk id None: a
    line no chunk is attributed to), without validating what the line holds when it is a
    JSON object: the ids decide which line a chunk keeps, its contents do not."""
    if json_line.ok:
        data = json_line.value
        chunk_id = data.get("chunk_id")
        if not isinstance(chunk_id, str) or not chunk_id:
            return None, 0
        sample = data.get("sample", 0)
        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
            return None, 0
        return chunk_id, sample
    record, _problem, sample = _parse_line(json_line, path=path)
    return (record.chunk_id if record is not None else None), sample


def extraction_model(path: str | Path) -> str:
    """The model an extraction file names (``read_extractions(path).model``): that of its first
    record naming one — read only as far as that record — or else the file's stem."""
    stream = ExtractionStream(path)
    try:
        for _ in stream.records():
            if stream.model:
                return stream.model
        stream.drain()
        return stream.model
    finally:
        stream.close()


def index_extraction_lines(path: str | Path) -> LineIndex:
    """The :class:`LineIndex` of an extraction file: chunk id → its kept sample-0 line."""
    text_path = str(Path(path))
    first_line = 0
    seen: set[tuple[str, int]] = set()
    lines: dict[Any, tuple[int, int, int]] = {}
    for json_line, offset, size in read_json_lines_at(path):
        first_line = first_line or json_line.number
        chunk_id, sample = _line_identity(json_line, text_path)
        if chunk_id is None or (chunk_id, sample) in seen:
            continue
        seen.add((chunk_id, sample))
        if sample == 0:
            lines[chunk_id] = (json_line.number, offset, size)
    return LineIndex(text_path, first_line, lines)


def index_chunk_lines(path: str | Path) -> LineIndex:
    """The :class:`LineIndex` of a chunks file: position → line. The lines are not checked
    here: whoever reads them whole (:func:`read_chunks`) does that."""
    first_line = 0
    lines: dict[Any, tuple[int, int, int]] = {}
    for json_line, offset, size in read_json_lines_at(path):
        first_line = first_line or json_line.number
        lines[len(lines)] = (json_line.number, offset, size)
    return LineIndex(str(Path(path)), first_line, lines)


def read_indexed_records(index: LineIndex, chunk_ids: Sequence[str]) -> RecordMap:
    """The records :func:`read_extractions` keeps for ``chunk_ids`` (in that order; a chunk
    the file has no line for is left out), parsed from their lines alone."""
    records = RecordMap(index.path)
    found = [(cid, index.lines[cid]) for cid in chunk_ids if cid in index.lines]
    read = read_json_lines_located(index.path, [place for _, place in found], index.first_line)
    for (cid, _), json_line in zip(found, read, strict=True):
        record, _problem, _sample = _parse_line(json_line, path=index.path)
        assert record is not None and record.chunk_id == cid
        records[cid] = record
    return records


def read_indexed_chunks(index: LineIndex, positions: Sequence[int]) -> list[Chunk]:
    """The chunks at ``positions`` of a chunks file :func:`read_chunks` has already checked."""
    places = [index.lines[p] for p in positions]
    chunks: list[Chunk] = []
    for json_line in read_json_lines_located(index.path, places, index.first_line):
        try:
            chunks.append(Chunk.model_validate(json_line.value))
        except ValidationError as exc:  # only when the file changed since it was checked
            where, msg = first_validation_error(exc)
            raise InputError(msg, path=index.path, line=json_line.number, field=where) from None
    return chunks
