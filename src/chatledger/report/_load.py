"""Everything a report reads from a run directory, and the inputs the run named.

The report must not grow with the corpus: run-level figures come from the record (run.json);
per-chunk scores are read from scores.parquet with filters (only the columns and rows the page
uses, never one Python dict per row); and the chunk, extraction and judgement files are read
only for the chunks the drill-down shows (:mod:`chatledger.report._select`), a line being
parsed only when its chunk id is one of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from chatledger.core import Chunk, InputError, first_validation_error
from chatledger.corpus import ExtractionFile, parse_extraction_line, parse_json_line
from chatledger.record import ConversationRun, ModelResult, read_run_record
from chatledger.report import _select
from chatledger.runs import RUN_LEVEL

SCORES_FILE = "scores.parquet"
CHUNK_LAYERS = ("extraction", "judge")  # the layers whose per-chunk scores the page shows


class ChunkScores:
    """Per-chunk scores of scores.parquet (component ``score``): every chunk's composite per
    layer and model, and the field scores of the chunks loaded with :meth:`load_fields`."""

    def __init__(self, table: pa.Table | None = None) -> None:
        self._table = table
        # layer → model → chunk id → composite
        self.composites: dict[str, dict[str, dict[str, float]]] = {}
        self._fields: dict[tuple[str, str], dict[str, float]] = {}
        if table is None or table.num_rows == 0:
            return
        found = table.filter(pc.equal(table["field"], "composite"))
        columns = found.select(["layer", "model", "chunk_id", "value"]).to_pydict()
        for layer, model, chunk_id, value in zip(
            columns["layer"], columns["model"], columns["chunk_id"], columns["value"], strict=True
        ):
            self.composites.setdefault(layer, {}).setdefault(model, {})[chunk_id] = value

    @classmethod
    def read(cls, path: Path) -> ChunkScores:
        table = pq.read_table(
            path,
            columns=["model", "chunk_id", "layer", "field", "value"],
            # The text columns repeat a few values each: read as dictionaries, compared as such.
            read_dictionary=["model", "chunk_id", "layer", "field", "component"],
            filters=[
                ("component", "=", "score"),
                ("layer", "in", list(CHUNK_LAYERS)),
                ("chunk_id", "!=", RUN_LEVEL),
            ],
        )
        return cls(table)

    def composite(self, layer: str, model: str) -> dict[str, float]:
        """Chunk id → the model's composite on ``layer`` (chunks without one are absent)."""
        return self.composites.get(layer, {}).get(model, {})

    def load_fields(self, chunk_ids: set[str]) -> None:
        """Keep the layer-1 field scores of these chunks (the drill-down's), every model."""
        if self._table is None or not chunk_ids:
            return
        table = self._table
        wanted = pa.array(sorted(chunk_ids), type=pa.string())
        mask = pc.and_(
            pc.equal(table["layer"], "extraction"), pc.is_in(table["chunk_id"], value_set=wanted)
        )
        rows = table.filter(mask).select(["model", "chunk_id", "field", "value"]).to_pydict()
        for model, chunk_id, fname, value in zip(
            rows["model"], rows["chunk_id"], rows["field"], rows["value"], strict=True
        ):
            self._fields.setdefault((model, chunk_id), {})[fname] = value

    def value(self, model: str, chunk_id: str, layer: str, fname: str) -> float | None:
        if fname == "composite":
            return self.composite(layer, model).get(chunk_id)
        if layer != "extraction":
            return None
        return self._fields.get((model, chunk_id), {}).get(fname)


@dataclass
class RunFiles:
    """A run directory read back, plus what the report shows of the files it points to.

    An input that cannot be read (moved, deleted, edited since) leaves its slot empty and a
    sentence in ``notes``: a report should still show what the run directory itself holds.
    ``chunk_ids`` are every chunk of the chunks file in order; ``chunks``, ``reference``,
    ``challengers`` and ``judgements`` hold only the chunks chosen by :meth:`load_chunks`.
    """

    run_dir: Path
    run: ConversationRun
    scores: ChunkScores = field(default_factory=ChunkScores)
    downstream: DownstreamFigures | None = None
    judgements: list[dict[str, Any]] = field(default_factory=list)
    chunk_ids: list[str] | None = None
    chunks: list[Chunk] | None = None
    reference: ExtractionFile | None = None
    challengers: dict[str, ExtractionFile] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)  # chunks, reference, model:<name>

    @property
    def model_names(self) -> list[str]:
        """Models in leaderboard order (best first)."""
        return self.run.model_names

    def model(self, name: str) -> ModelResult:
        return self.run.model(name)

    def chunk_value(self, model: str, chunk_id: str, layer: str, fname: str) -> float | None:
        return self.scores.value(model, chunk_id, layer, fname)

    def load_chunks(self, wanted: list[str]) -> None:
        """Read the chunks ``wanted`` (in that order), their extractions in every file and their
        judgements; nothing else of those files is parsed."""
        want = set(wanted)
        self.scores.load_fields(want)
        chunks_path = self.paths.get("chunks")
        if chunks_path is not None:
            try:
                by_id = _read_chunks(chunks_path, want)
            except InputError as exc:
                self.notes.append(f"The chunks file cannot be read ({exc}); no drill-down.")
                self.chunks = None
            else:
                self.chunks = [by_id[c] for c in wanted if c in by_id]
        ref_path = self.paths.get("reference")
        if ref_path is not None:
            self.reference = _read_extractions(ref_path, want)
        for model in self.run.models:
            path = self.paths.get(f"model:{model.name}")
            if path is not None:
                self.challengers[model.name] = _read_extractions(path, want)
        judgements_path = self.run_dir / "judgements.jsonl"
        if judgements_path.is_file():
            self.judgements = list(_judgements(judgements_path, want))


def load_run_files(run_dir: Path) -> RunFiles:
    """Read ``run.json`` (required) and the run-level parts of the rest; the chunk-level inputs
    are read by :meth:`RunFiles.load_chunks` once the drill-down's chunks are chosen."""
    run = read_run_record(run_dir)
    if not isinstance(run, ConversationRun):
        raise InputError(
            "a structbench run directory (run.json task): build_structbench_report reports it",
            path=run_dir,
        )
    files = RunFiles(run_dir=run_dir, run=run)
    scores_path = run_dir / SCORES_FILE
    if scores_path.is_file():
        try:
            files.scores = ChunkScores.read(scores_path)
        except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError) as exc:  # cut short, not parquet
            raise InputError(f"not a readable score table ({exc})", path=scores_path) from None
    else:
        files.notes.append("scores.parquet is missing: per-chunk distributions are not shown.")
    downstream_path = run_dir / "downstream.json"
    if downstream_path.is_file():
        try:
            files.downstream = read_downstream(downstream_path)
        except msgspec.DecodeError as exc:  # cut short, or not the shape run writes
            raise InputError(
                f"not a readable downstream file ({exc})", path=downstream_path
            ) from None
        except ValidationError as exc:
            raise InputError(
                f"not a readable downstream file ({first_validation_error(exc)})",
                path=downstream_path,
            ) from None
    _find_inputs(files)
    return files


_Raw = dict[str, msgspec.Raw]
EVENT_KINDS = ("missed", "invented")
Event = dict[str, JsonValue]  # a consumer's event as downstream.json holds it (its own keys)


class ConsumerFigures(BaseModel):
    """One consumer's result for one model as the page reads it: its agreement, the first
    ``cap`` events of each kind and how many there are; the consumer's own figures
    (precision, recall, Cohen's κ, counts …) are kept as extra fields (:attr:`model_extra`)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    agreement: float | None = None
    missed: list[Event] = Field(default_factory=list)
    invented: list[Event] = Field(default_factory=list)
    n_missed: int = 0
    n_invented: int = 0

    @property
    def figures(self) -> dict[str, JsonValue]:
        """The consumer's own figures, by name."""
        return dict(self.model_extra or {})


class ModelDownstream(BaseModel):
    """One model in downstream.json: its consumers, those skipped against partial gold (with
    the fields each missed) and its downstream composite (None: no consumer ran)."""

    model_config = ConfigDict(frozen=True)

    consumers: dict[str, ConsumerFigures] = Field(default_factory=dict)
    skipped: dict[str, list[str]] = Field(default_factory=dict)
    downstream_composite: float | None = None


class DownstreamFigures(BaseModel):
    """downstream.json as the page uses it (:func:`read_downstream`)."""

    model_config = ConfigDict(frozen=True)

    models: dict[str, ModelDownstream] = Field(default_factory=dict)


def read_downstream(path: Path, cap: int | None = None) -> DownstreamFigures:
    """downstream.json as the page uses it: per model and consumer its figures, the first
    ``cap`` (default ``EVENT_CAP``) events of each kind and how many there are (``n_missed``,
    ``n_invented``); per model its ``downstream_composite`` (None: no consumer ran) and the
    consumers ``skipped`` against partial gold with the fields each missed. The event lists of
    a large run are most of the file: they are sliced before being decoded."""
    cap = _select.EVENT_CAP if cap is None else cap
    decode = msgspec.json.decode
    top = decode(path.read_bytes(), type=_Raw)
    models: dict[str, ModelDownstream] = {}
    for name, raw_model in decode(top.get("models", b"{}"), type=_Raw).items():
        parts = decode(raw_model, type=_Raw)
        consumers: dict[str, ConsumerFigures] = {}
        for consumer, raw_result in decode(parts.get("consumers", b"{}"), type=_Raw).items():
            fields = decode(raw_result, type=_Raw)
            result: dict[str, object] = {
                k: decode(v) for k, v in fields.items() if k not in EVENT_KINDS
            }
            for kind in EVENT_KINDS:
                events = decode(fields.get(kind, b"[]"), type=list[msgspec.Raw])
                result[kind] = [decode(e) for e in events[:cap]]
                result[f"n_{kind}"] = len(events)
            consumers[consumer] = ConsumerFigures.model_validate(result)
        composite = (
            decode(parts["downstream_composite"]) if "downstream_composite" in parts else None
        )
        models[name] = ModelDownstream(
            consumers=consumers, skipped=_skipped(parts), downstream_composite=composite
        )
    return DownstreamFigures(models=models)


def _skipped(parts: _Raw) -> dict[str, list[str]]:
    """Consumer → the fields the reference does not cover (``skipped``; older files wrote a
    list of names without the fields, newer a mapping)."""
    found = msgspec.json.decode(parts.get("skipped", b"{}"))
    if isinstance(found, dict):
        return {
            str(k): [str(f) for f in v] if isinstance(v, list) else [] for k, v in found.items()
        }
    if isinstance(found, list):
        return {str(k): [] for k in found}
    return {}


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


def _find_inputs(files: RunFiles) -> None:
    """Where the chunk and extraction files are, and every chunk id in the chunks file."""
    run, run_dir = files.run, files.run_dir
    chunks_path = _first_file(_candidates(run_dir, run.chunks_file, run.chunks_configured))
    if chunks_path is None:
        files.notes.append(
            "The run's chunks file cannot be found, so the drill-down is not available."
        )
    else:
        try:
            files.chunk_ids = _chunk_ids(chunks_path)
            files.paths["chunks"] = chunks_path
        except InputError as exc:
            files.notes.append(f"The chunks file cannot be read ({exc}); no drill-down.")
    reference = run.reference
    ref_path = _first_file(_candidates(run_dir, reference.file, reference.configured_file))
    if ref_path is None:
        files.notes.append("The reference's extraction file cannot be found: no drill-down.")
    else:
        files.paths["reference"] = ref_path
        files.reference = ExtractionFile(path=str(ref_path), model=reference.name)
    for model in run.models:
        name = model.name
        path = _first_file(_candidates(run_dir, model.file, model.configured_file))
        if path is None:
            files.notes.append(f"The extraction file of {name} cannot be found.")
            continue
        files.paths[f"model:{name}"] = path
        files.challengers[name] = ExtractionFile(path=str(path), model=name)


# A line's chunk id, read from its raw bytes so that a line of a chunk the page does not show is
# neither decoded nor parsed. Inside a JSON string every quote is escaped, so this matches only a
# real key; a line may match more than once (a nested key), so each match is a candidate and the
# line is parsed when any candidate is wanted (then its own chunk_id decides).
_CHUNK_ID = re.compile(rb'"chunk_id"\s*:\s*"((?:[^"\\]|\\.)*)"')
_BOM = b"\xef\xbb\xbf"


def _ids_in(raw: bytes) -> list[str]:
    out = []
    for found in _CHUNK_ID.findall(raw):
        if found.isascii() and b"\\" not in found:
            out.append(found.decode("ascii"))
            continue
        try:
            out.append(json.loads(b'"' + found + b'"'))
        except ValueError:
            out.append(found.decode("utf-8", errors="replace"))
    return out


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) of every non-blank line."""
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                if raw.strip():
                    yield number, raw
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(f"cannot be read ({reason})", path=path) from None


def _wanted_lines(path: Path, wanted: set[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of the lines that may hold a chunk of ``wanted``; undecodable bytes
    are replaced (such a line is then invalid where it would have been)."""
    for number, raw in _lines(path):
        if wanted.intersection(_ids_in(raw)):
            yield number, raw.decode("utf-8", errors="replace")


def _chunk_ids(path: Path) -> list[str]:
    """Every chunk id of a chunks file, in order (the first ``chunk_id`` key of each line)."""
    ids: list[str] = []
    for number, raw in _lines(path):
        found = _ids_in(raw)
        if not found:
            raise InputError("a line without a chunk_id", path=path, line=number)
        ids.append(found[0])
    if not ids:
        raise InputError("no chunks in file", path=path)
    return ids


def _read_chunks(path: Path, wanted: set[str]) -> dict[str, Chunk]:
    """The chunks of ``wanted`` (the first line of each id), validated as ``read_chunks`` does."""
    out: dict[str, Chunk] = {}
    for number, text in _wanted_lines(path, wanted):
        line = parse_json_line(text, number)
        if not line.ok:
            raise InputError(line.error or "not JSON", path=path, line=number)
        try:
            chunk = Chunk.model_validate(line.value)
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            raise InputError(msg, path=path, line=number, field=where or None) from None
        if chunk.chunk_id in wanted:
            out.setdefault(chunk.chunk_id, chunk)
    return out


def _sample(text: str) -> int:
    """The ``sample`` of an extraction line (0 when it has none or is not a JSON object)."""
    try:
        data = json.loads(text)
    except ValueError:
        return 0
    raw = data.get("sample", 0) if isinstance(data, dict) else 0
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else 0


def _read_extractions(path: Path, wanted: set[str]) -> ExtractionFile:
    """The sample-0 records of ``wanted`` in an extraction file (the first line of each chunk,
    as ``read_extractions`` keeps); a bad line is an invalid record, as there."""
    result = ExtractionFile(path=str(path), model="")
    try:
        for number, text in _wanted_lines(path, wanted):
            if _sample(text) != 0:
                continue
            record, _problem = parse_extraction_line(text, path=str(path), line=number)
            if record is None or record.chunk_id not in wanted:
                continue
            result.records.setdefault(record.chunk_id, record)
            result.model = result.model or record.model
    except InputError:
        pass  # unreadable since the run: its chunks show as missing
    result.model = result.model or path.stem
    return result


def _judgements(path: Path, wanted: set[str]) -> Iterator[dict[str, Any]]:
    for _number, text in _wanted_lines(path, wanted):
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("chunk_id") in wanted:
            yield line
