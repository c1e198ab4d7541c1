"""Everything a report reads from a run directory, and the inputs the run named."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatledger.core import ChatLedgerError, Chunk, InputError
from chatledger.corpus import ExtractionFile, read_chunks, read_extractions
from chatledger.record import ConversationRun, ModelResult, read_run_record
from chatledger.runs import RUN_LEVEL, read_score_table

ScoreKey = tuple[str, str, str, str, str]  # model, chunk_id, layer, field, component


@dataclass
class RunFiles:
    """A run directory read back, plus the chunk and extraction files it points to.

    An input that cannot be read (moved, deleted, edited since) leaves its slot empty and a
    sentence in ``notes``: a report should still show what the run directory itself holds.
    """

    run_dir: Path
    run: ConversationRun
    scores: dict[ScoreKey, float] = field(default_factory=dict)
    downstream: dict[str, Any] | None = None
    judgements: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[Chunk] | None = None
    reference: ExtractionFile | None = None
    challengers: dict[str, ExtractionFile] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def model_names(self) -> list[str]:
        """Models in leaderboard order (best first)."""
        return self.run.model_names

    def model(self, name: str) -> ModelResult:
        return self.run.model(name)

    def chunk_value(self, model: str, chunk_id: str, layer: str, fname: str) -> float | None:
        return self.scores.get((model, chunk_id, layer, fname, "score"))

    def run_value(self, model: str, layer: str, fname: str, component: str) -> float | None:
        return self.scores.get((model, RUN_LEVEL, layer, fname, component))


def load_run_files(run_dir: Path) -> RunFiles:
    """Read ``run.json`` (required) and whatever else of the run can be read."""
    run = read_run_record(run_dir)
    if not isinstance(run, ConversationRun):
        raise InputError(
            "a structbench run directory: its report is build_structbench_report's", path=run_dir
        )
    files = RunFiles(run_dir=run_dir, run=run)
    scores_path = run_dir / "scores.parquet"
    if scores_path.is_file():
        for row in read_score_table(scores_path).to_pylist():
            key = (row["model"], row["chunk_id"], row["layer"], row["field"], row["component"])
            files.scores[key] = float(row["value"])
    else:
        files.notes.append("scores.parquet is missing: per-chunk distributions are not shown.")
    downstream_path = run_dir / "downstream.json"
    if downstream_path.is_file():
        files.downstream = json.loads(downstream_path.read_text(encoding="utf-8"))
    judgements_path = run_dir / "judgements.jsonl"
    if judgements_path.is_file():
        with judgements_path.open(encoding="utf-8") as handle:
            files.judgements = [json.loads(line) for line in handle if line.strip()]
    _load_inputs(files)
    return files


def _candidates(run_dir: Path, stored: str | None, configured: str | None) -> list[Path]:
    """Where an input may be: as recorded, else relative to the run's parent folder (a run
    directory moved together with its inputs keeps the config's relative layout)."""
    found: list[Path] = []
    if stored:
        found.append(Path(stored))
    if configured:
        found.append(run_dir.parent / configured)
        found.append(run_dir / configured)
    return found


def _first_file(paths: list[Path]) -> Path | None:
    return next((p for p in paths if p.is_file()), None)


def _load_inputs(files: RunFiles) -> None:
    run, run_dir = files.run, files.run_dir
    chunks_path = _first_file(_candidates(run_dir, run.chunks_file, run.chunks_configured))
    if chunks_path is None:
        files.notes.append(
            "The run's chunks file cannot be found, so the drill-down is not available."
        )
    else:
        try:
            files.chunks = read_chunks(chunks_path)
        except ChatLedgerError as exc:
            files.notes.append(f"The chunks file cannot be read ({exc}); no drill-down.")
    reference = run.reference
    ref_path = _first_file(_candidates(run_dir, reference.file, reference.configured_file))
    if ref_path is None:
        files.notes.append("The reference's extraction file cannot be found: no drill-down.")
    else:
        files.reference = read_extractions(ref_path)
    for model in run.models:
        name = model.name
        path = _first_file(_candidates(run_dir, model.file, model.configured_file))
        if path is None:
            files.notes.append(f"The extraction file of {name} cannot be found.")
            continue
        files.challengers[name] = read_extractions(path)
