"""The outputs of a run's stages, kept in ``<run dir>/stages/`` so that a rerun skips them.

Each stage of each model (``score``, ``judge``, ``downstream``) is a typed output keyed by the
content hash of everything it was computed from: the bytes of the files it read, the part of
the config it used and the ChatLedger version. A rerun into the same directory reads back every
stage whose key matches instead of computing it; an edited file, weight or threshold changes
the key and the stage runs again. Rows go to Parquet (float64, exact), the per-chunk values to
a second Parquet file (one row per chunk), a judge stage's ``judgements.jsonl`` lines to a
JSONL file and the summaries to JSON (Python floats print their shortest round-trip form), so
a reused stage gives the same bytes in every output as a computed one. Each file is written as
the stage is assembled, chunk by chunk (issue 34: a stage held every row, line and per-chunk
value of a model in memory), and the JSON naming the key last.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from chatledger.core import atomic_path, atomic_write_bytes, file_sha256
from chatledger.record import CalibrationBin, FieldCounts, JudgeSummary
from chatledger.runs._tables import Row, rows_table, score_schema

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

STAGES_DIR = "stages"
# The layout of a stored StageOutput. A stage stored in another layout is recomputed, not
# reused (version 2: the downstream stage keeps each conversation's consumer counts;
# version 3: pair terms count by the matched share, issue 27; version 4: typed summaries;
# version 6: per-chunk values and judgement lines in files of their own, issue 34;
# version 7: the downstream stage's part of downstream.json in a file of its own, issue 34).
STAGE_VERSION = 7
# The stages with a text file besides their JSON: the judge's judgements.jsonl lines, the
# downstream stage's part of downstream.json (its missed and invented events, its days).
TEXT_STAGES = {"judge": "jsonl", "downstream": "part.json"}
# Columns of a stage's per-chunk file: the stage's value, layer 1's field scores and its
# additive statistics (field, column i of score.statistic_names).
PER_CHUNK = "per_chunk"
ROW_GROUP_ROWS = 65_536  # rows of a stage's row file written at once


def stage_key(stage: str, files: Sequence[Path | str], settings: JsonValue) -> str:
    """SHA-256 over the stage name, the files' content hashes and the settings (as JSON)."""
    from chatledger._version import __version__

    digest = hashlib.sha256()
    digest.update(f"{stage}\0{__version__}\0".encode())
    for path in files:
        digest.update(file_sha256(Path(path)).encode() + b"\0")
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return digest.hexdigest()


class StageFigures(BaseModel):
    """The per-unit statistics of a stage's output: what the run's statistics and the gate
    resample. Read alone (:meth:`StageStore.load_output`), the rest of the file — summaries,
    judgement lines, megabytes at 1,000 chunks — is skipped, not validated."""

    model_config = ConfigDict(extra="ignore")

    version: int = STAGE_VERSION
    stage: str
    model: str
    key: str
    layer_score: float | None = None
    # Per-chunk values in run order (None: not available, e.g. an unscored chunk).
    per_chunk: list[float | None] = Field(default_factory=list)
    # Layer 1's additive per-chunk statistics (score.statistic_names), field → chunk rows in
    # run order (zeros where the field was not scored): what the bootstrap resamples.
    field_stats: dict[str, list[list[float]]] = Field(default_factory=dict)
    aggregate: str | None = None  # the aggregate layer 1's composite used
    # Layer 1's fields in the order the chunks first scored them (the per-chunk file's order).
    field_order: list[str] = Field(default_factory=list)
    # Downstream stage: conversation id (run order) → consumer that ran → its additive counts.
    conversation_counts: dict[str, dict[str, dict[str, float]]] = Field(default_factory=dict)


class ScoreSummary(BaseModel):
    """Layer 1 of one model in the shapes ``run.json`` keeps (``record.ModelResult``)."""

    model_config = ConfigDict(extra="forbid")

    fields: dict[str, float]
    field_counts: dict[str, FieldCounts]
    partial_reference: bool = False  # the reference covers only some fields (human gold)
    components: dict[str, dict[str, float]]
    calibration: list[CalibrationBin]
    invalid: int
    missing: int
    validity: float
    problems: list[str]


class ConsumerSummary(BaseModel):
    """One consumer's agreement as ``downstream.json`` keeps it; the consumer's own details
    (precision, recall, matched events …) are kept beside, as it names them."""

    model_config = ConfigDict(extra="allow")

    agreement: float
    weight: float
    counts: dict[str, float] = Field(default_factory=dict)
    missed: list[JsonValue] = Field(default_factory=list)
    invented: list[JsonValue] = Field(default_factory=list)


class DownstreamSummary(BaseModel):
    """Layer 3 of one model: the consumers that ran, those skipped and why (the fields the
    reference lacks), and the composite (None when no weighed consumer ran)."""

    model_config = ConfigDict(extra="forbid")

    consumers: dict[str, ConsumerSummary]
    downstream_composite: float | None
    skipped: dict[str, list[str]] = Field(default_factory=dict)
    # Consumers that ran but have no event on either side ("no events", DESIGN.md §5): left
    # out of the composite, and the line saying how it renormalised.
    left_out: dict[str, str] = Field(default_factory=dict)
    renormalisation: str | None = None


class StageOutput(StageFigures):
    """What a stage of one model produced, besides its score rows: the summary of its stage
    (``score``, ``judge`` or ``downstream``)."""

    model_config = ConfigDict(extra="forbid")

    score: ScoreSummary | None = None
    judge: JudgeSummary | None = None
    downstream: DownstreamSummary | None = None
    seconds: float = 0.0
    units: int = 0
    # The size of a judge stage's lines file or a downstream stage's part of downstream.json
    # (a cut file is recomputed).
    lines_bytes: int = 0


def field_column(name: str) -> str:
    return f"field:{name}"


def stat_column(name: str, i: int) -> str:
    return f"stat:{name}:{i}"


class StageStore:
    """``stages/<model>/<stage>.json`` + ``.parquet`` (rows) + ``.chunks.parquet`` (per-chunk
    values) + ``.jsonl`` (a judge stage's lines) under a run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.root = run_dir / STAGES_DIR

    def _paths(self, model_file: str, stage: str) -> tuple[Path, Path]:
        folder = self.root / model_file
        return folder / f"{stage}.json", folder / f"{stage}.parquet"

    def chunks_path(self, model_file: str, stage: str) -> Path:
        return self.root / model_file / f"{stage}.chunks.parquet"

    def rows_path(self, model_file: str, stage: str) -> Path:
        return self._paths(model_file, stage)[1]

    def lines_path(self, model_file: str, stage: str) -> Path:
        """A stage's text file (:data:`TEXT_STAGES`)."""
        return self.root / model_file / f"{stage}.{TEXT_STAGES.get(stage, 'jsonl')}"

    def load(self, model_file: str, stage: str, key: str) -> StageOutput | None:
        """The stored output with this key (its rows, per-chunk values and lines stay in their
        files), or None (absent, stale, of another stage version or unreadable: recompute)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        meta_path, rows_path = self._paths(model_file, stage)
        needed = [rows_path, self.chunks_path(model_file, stage)]
        if stage in TEXT_STAGES:
            needed.append(self.lines_path(model_file, stage))
        if not meta_path.is_file() or not all(p.is_file() for p in needed):
            return None
        try:
            output = StageOutput.model_validate_json(meta_path.read_bytes())
            if output.key != key or output.version != STAGE_VERSION:
                return None
            schema = pq.read_schema(rows_path)
            pq.read_schema(needed[1])
            if stage in TEXT_STAGES and needed[2].stat().st_size != output.lines_bytes:
                return None
        except (OSError, ValidationError, pa.ArrowException):
            return None
        return output if schema == score_schema() else None

    def load_output(self, model_file: str, stage: str, key: str) -> StageFigures | None:
        """The stored output's per-unit statistics, for this key, without its score rows,
        summary or lines (what a reader of the statistics needs); None as for :meth:`load`.
        The JSON is written after the other files, so a JSON with the key means a finished
        stage."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        meta_path, rows_path = self._paths(model_file, stage)
        chunks_path = self.chunks_path(model_file, stage)
        if not meta_path.is_file() or not rows_path.is_file() or not chunks_path.is_file():
            return None
        try:
            output = StageFigures.model_validate_json(meta_path.read_bytes())
            if output.key != key or output.version != STAGE_VERSION:
                return None
            with pq.ParquetFile(chunks_path) as chunks:  # not read_table: no pyarrow.dataset
                table = chunks.read()
        except (OSError, ValidationError, pa.ArrowException):
            return None
        output.per_chunk = table.column(PER_CHUNK).to_pylist()
        for name in output.field_order:
            width = sum(1 for c in table.column_names if c.startswith(f"stat:{name}:"))
            columns = [table.column(stat_column(name, i)).to_pylist() for i in range(width)]
            output.field_stats[name] = [list(row) for row in zip(*columns, strict=True)]
        return output

    @contextlib.contextmanager
    def writing(self, model_file: str, stage: str) -> Iterator[StageWriter]:
        """``with store.writing(model, stage) as out:`` — rows, lines and the per-chunk table
        as the stage is assembled, then :meth:`StageWriter.finish` with its output (the JSON
        naming the key, written last). Nothing is kept when the block raises."""
        meta_path, rows_path = self._paths(model_file, stage)
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.ExitStack() as stack:
            rows_temp = stack.enter_context(atomic_path(rows_path))
            chunks_temp = stack.enter_context(atomic_path(self.chunks_path(model_file, stage)))
            lines = None
            if stage in TEXT_STAGES:
                lines_temp = stack.enter_context(atomic_path(self.lines_path(model_file, stage)))
                lines = stack.enter_context(lines_temp.open("w", encoding="utf-8", newline=""))
            writer = StageWriter(rows_temp, chunks_temp, lines)
            try:
                yield writer
            finally:
                writer.close_rows()
            if writer.output is None:
                raise RuntimeError(f"stage {stage} of {model_file} written without its output")
            output = writer.output
            if lines is not None:
                lines.close()
                output.lines_bytes = lines_temp.stat().st_size
            # The files above are put in place when the stack closes, before the JSON.
        # The JSON bytes as pydantic makes them (model_dump_json's, undecoded).
        atomic_write_bytes(meta_path, output.__pydantic_serializer__.to_json(output))


class StageWriter:
    """One stage's files while it is assembled (see :meth:`StageStore.writing`)."""

    def __init__(self, rows_path: Path, chunks_path: Path, lines: IO[str] | None) -> None:
        self._rows_path = rows_path
        self._chunks_path = chunks_path
        self._lines = lines
        self._writer: pq.ParquetWriter | None = None
        self._pending: list[Row] = []
        self._closed = False
        self.output: StageOutput | None = None

    def rows(self, rows: Sequence[Row]) -> None:
        if self._closed:
            raise RuntimeError("rows after the stage's rows were closed")
        self._pending.extend(rows)
        if len(self._pending) >= ROW_GROUP_ROWS:
            self._flush()

    def lines(self, lines: Sequence[str]) -> None:
        if self._lines is None:
            raise RuntimeError("only a judge or downstream stage has a text file")
        self._lines.writelines(lines)

    def _flush(self) -> None:
        import pyarrow.parquet as pq

        if self._writer is None:
            self._writer = pq.ParquetWriter(self._rows_path, score_schema(), compression="zstd")
        if self._pending:
            self._writer.write_table(rows_table(self._pending))
        self._pending = []

    def close_rows(self) -> None:
        if self._closed:
            return
        self._flush()
        if self._writer is not None:
            self._writer.close()
        self._closed = True

    def finish(self, output: StageOutput, per_chunk: pa.Table) -> None:
        """The per-chunk table (:data:`PER_CHUNK` and, for layer 1, the field columns) and the
        output the JSON holds."""
        import pyarrow.parquet as pq

        self.close_rows()
        pq.write_table(per_chunk, self._chunks_path, compression="zstd")
        self.output = output


def read_stage_rows(path: Path, batch_rows: int = ROW_GROUP_ROWS) -> Iterator[pa.RecordBatch]:
    """A stage's rows, a record batch at a time."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as rows:
        yield from rows.iter_batches(batch_size=batch_rows)


def stage_rows(path: Path) -> list[Row]:
    """A stage's rows as tuples (tests, small stages)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return list(zip(*columns, strict=True)) if columns else []


def safe_file_name(name: str) -> str:
    """A file name for a model name: unsafe characters become ``_``, plus a short hash of the
    name when anything was replaced, so two names never share a file."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"
    if safe != name:
        safe = f"{safe[:80]}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"
    return safe
