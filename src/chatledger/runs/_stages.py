"""The outputs of a run's stages, kept in ``<run dir>/stages/`` so that a rerun skips them.

Each stage of each model (``score``, ``judge``, ``downstream``) is a typed output keyed by the
content hash of everything it was computed from: the bytes of the files it read, the part of
the config it used and the ChatLedger version. A rerun into the same directory reads back every
stage whose key matches instead of computing it; an edited file, weight or threshold changes
the key and the stage runs again. Rows go to Parquet (float64, exact), the rest to JSON
(Python floats print their shortest round-trip form), so a reused stage gives the same bytes
in ``scores.parquet`` as a computed one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from chatledger.core import atomic_path, atomic_write_bytes, file_sha256
from chatledger.record import CalibrationBin, FieldCounts, JudgeSummary
from chatledger.runs._tables import Row, rows_table, score_schema

STAGES_DIR = "stages"
# The layout of a stored StageOutput. A stage stored in another layout is recomputed, not
# reused (version 2: the downstream stage keeps each conversation's consumer counts;
# version 3: pair terms count by the matched share, issue 27; version 4: typed summaries).
STAGE_VERSION = 5


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

    fields_per_chunk: dict[str, list[float | None]] = Field(default_factory=dict)
    score: ScoreSummary | None = None
    judge: JudgeSummary | None = None
    downstream: DownstreamSummary | None = None
    lines: list[str] = Field(default_factory=list)  # judgements.jsonl lines (judge stage)
    seconds: float = 0.0
    units: int = 0


class StageStore:
    """``stages/<model>/<stage>.json`` + ``.parquet`` under a run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.root = run_dir / STAGES_DIR

    def _paths(self, model_file: str, stage: str) -> tuple[Path, Path]:
        folder = self.root / model_file
        return folder / f"{stage}.json", folder / f"{stage}.parquet"

    def load(self, model_file: str, stage: str, key: str) -> tuple[StageOutput, list[Row]] | None:
        """The stored output with this key, or None (absent, stale, of another stage version
        or unreadable: recompute)."""
        import pyarrow as pa  # the stage's rows only: readers of the statistics skip them
        import pyarrow.parquet as pq

        meta_path, rows_path = self._paths(model_file, stage)
        if not meta_path.is_file() or not rows_path.is_file():
            return None
        try:
            output = StageOutput.model_validate_json(meta_path.read_bytes())
            if output.key != key or output.version != STAGE_VERSION:
                return None
            table = pq.read_table(rows_path)
        except (OSError, ValidationError, pa.ArrowException):
            return None
        if table.schema != score_schema():
            return None
        columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
        rows: list[Row] = list(zip(*columns, strict=True)) if columns else []
        return output, rows

    def load_output(self, model_file: str, stage: str, key: str) -> StageFigures | None:
        """The stored output's per-unit statistics, for this key, without its score rows,
        summary or lines (what a reader of the statistics needs); None as for :meth:`load`.
        The JSON is written after the rows, so a JSON with the key means a finished stage."""
        meta_path, rows_path = self._paths(model_file, stage)
        if not meta_path.is_file() or not rows_path.is_file():
            return None
        try:
            output = StageFigures.model_validate_json(meta_path.read_bytes())
        except (OSError, ValidationError):
            return None
        return output if output.key == key and output.version == STAGE_VERSION else None

    def save(self, model_file: str, output: StageOutput, rows: list[Row]) -> None:
        import pyarrow.parquet as pq

        meta_path, rows_path = self._paths(model_file, output.stage)
        meta_path.parent.mkdir(parents=True, exist_ok=True)
        table = rows_table(rows)
        # Rows first, then the JSON that names the key: a stage is finished only when both are.
        with atomic_path(rows_path) as temporary:
            pq.write_table(table, temporary, compression="zstd")
        # The JSON bytes as pydantic makes them (model_dump_json's, undecoded): a judge stage
        # holds every judgement line, tens of MB at 10k chunks, and each copy counts.
        atomic_write_bytes(meta_path, output.__pydantic_serializer__.to_json(output))


def safe_file_name(name: str) -> str:
    """A file name for a model name: unsafe characters become ``_``, plus a short hash of the
    name when anything was replaced, so two names never share a file."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"
    if safe != name:
        safe = f"{safe[:80]}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"
    return safe
