"""The units of work of a run and the functions that compute them, on any executor.

A unit names its files and the positions of its chunks; the worker reads the files itself and
keeps them parsed for the next unit (one process sees the same chunks and reference file for
every model and batch). So no parsed chunk ever crosses a process boundary: only the small
per-chunk results travel back.

Units:
* :class:`IndexUnit` — the run's chunk order (ids and conversations) and the long-chunk note.
* :class:`ModelUnit` — what a model's file says as a whole: problems, usage, degenerate outputs,
  repeat variance, distance from human gold.
* :class:`BatchUnit` — one model on a batch of whole conversations: layer-1 scores per chunk, the
  offline judges' verdicts, the consumers' outputs on both sides and the agreement of each
  conversation.
"""

from __future__ import annotations

import math
import os
import pickle
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chatledger.core import (
    Chunk,
    ExtractionRecord,
    InputError,
    Problem,
    RecordStatus,
    long_chunk_note,
)
from chatledger.corpus import (
    ExtractionFile,
    ExtractionStream,
    LineIndex,
    RecordMap,
    index_chunk_lines,
    index_extraction_lines,
    iter_chunks,
    read_chunks,
    read_extractions,
    read_indexed_chunks,
    read_indexed_records,
)
from chatledger.downstream import (
    ConsumerOutputs,
    build_outputs,
    compare_outputs,
    coverage_fields,
    narrow_coverage,
    reference_coverage,
)
from chatledger.judge import JUDGES, VerdictDigest
from chatledger.record import FieldCounts, GoldScores, RepeatVariance
from chatledger.runs._judging import verdict_text
from chatledger.scoring import (
    ChunkResult,
    DegenerateCounter,
    DegenerateOutputs,
    ScoringConfig,
    count_degenerate,
    score_records,
)

T = TypeVar("T")

# Line indexes (corpus.LineIndex: where each chunk's line sits, not the parsed records) kept
# per worker process, keyed by path, size and modification time: a file edited between two
# runs in a long-lived worker (a Dask cluster) is indexed again. A batch parses only its own
# chunks' lines, so no worker holds a whole parsed file (issue 34: the parsed files were the
# largest share of a run's memory, ~230 kB of the ~390 kB per chunk).
_FILES: OrderedDict[tuple[str, str, int, int], Any] = OrderedDict()
_needed_files = 0  # raised by a BatchGroup to the files it reads (chunks, reference, models)
_KEEP_FILES = 8  # at least: the chunks, the reference and two challengers (see BatchGroup)


def _cached(kind: str, path: str, load: Callable[[str], T]) -> T:
    info = _stat(path)
    key = (kind, path, info.st_size, info.st_mtime_ns)
    if key in _FILES:
        _FILES.move_to_end(key)
        value: T = _FILES[key]
        return value
    value = load(path)
    _FILES[key] = value
    while len(_FILES) > max(_KEEP_FILES, _needed_files):
        _FILES.popitem(last=False)
    return value


def _chunk_lines(path: str) -> LineIndex:
    return _cached("chunk lines", path, index_chunk_lines)


def _record_lines(path: str) -> LineIndex:
    return _cached("record lines", path, index_extraction_lines)


def _chunks(path: str) -> list[Chunk]:
    """The whole chunks file, parsed for one unit and not kept."""
    _stat(path)
    return read_chunks(path)


def _extractions(path: str) -> ExtractionFile:
    """A whole extraction file, parsed for one unit and not kept."""
    _stat(path)
    return read_extractions(path)


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", path=path) from None


@dataclass(frozen=True)
class RunSpec:
    """What every unit of a run shares."""

    chunks_path: str
    reference_path: str
    scoring: ScoringConfig
    layers: tuple[str, ...]
    offline_judges: tuple[str, ...] = ()
    consumer_weights: tuple[tuple[str, float], ...] | None = None
    reference_model: str = "reference"
    # The fields the whole reference covers (ModelFacts.covered of the reference; None: all),
    # known once the inputs are described: the batches' consumers read it from here.
    covered: tuple[str, ...] | None = None

    def weights(self) -> dict[str, float] | None:
        return dict(self.consumer_weights) if self.consumer_weights is not None else None


# ---- the chunk index ---------------------------------------------------------------------


@dataclass(frozen=True)
class IndexUnit:
    chunks_path: str


@dataclass(frozen=True)
class ChunkIndex:
    chunk_ids: list[str]
    conversations: list[str]  # conversation id of each chunk, in run order
    note: str | None

    def batches(self, target: int) -> list[list[int]]:
        """Chunk positions grouped into batches of whole conversations, about ``target``
        chunks each, conversations in order of first appearance (what the consumers use)."""
        by_conversation: dict[str, list[int]] = {}
        for position, conversation in enumerate(self.conversations):
            by_conversation.setdefault(conversation, []).append(position)
        batches: list[list[int]] = []
        current: list[int] = []
        for positions in by_conversation.values():
            current.extend(positions)
            if len(current) >= target:
                batches.append(current)
                current = []
        if current:
            batches.append(current)
        return batches


def index_chunks(unit: IndexUnit) -> ChunkIndex:
    _stat(unit.chunks_path)
    ids: list[str] = []
    conversations: list[str] = []
    long: list[Chunk] = []  # only the long chunks are kept whole, for the note naming them
    for chunk in iter_chunks(unit.chunks_path):
        ids.append(chunk.chunk_id)
        conversations.append(chunk.conversation_id)
        if chunk.is_long:
            long.append(chunk)
    return ChunkIndex(ids, conversations, long_chunk_note(long))


# ---- a model's file as a whole -------------------------------------------------------------


@dataclass(frozen=True)
class ModelUnit:
    run: RunSpec
    name: str
    path: str
    is_reference: bool = False
    gold_path: str | None = None
    gold_name: str = "gold"


@dataclass
class ModelFacts:
    """What is known of one model's file without scoring it chunk by chunk."""

    source_model: str
    file_problems: list[Problem]
    # Lines of either file whose chunk id the chunks file does not hold (not scored).
    unknown_problems: list[Problem]
    unknown_chunks: list[str]
    invalid: int  # chunks of the run whose line is not a valid extraction
    invalid_count: int  # invalid lines of the file (what a run without layer 1 reports)
    missing: int
    usage: dict[str, float]
    sample_count: int
    degenerate: DegenerateOutputs | None = None
    variance: RepeatVariance | None = None
    gold: GoldScores | None = None
    gold_model: str | None = None
    usable_reference: bool = True
    # The reference's covered fields (downstream.reference_coverage; None: every field).
    covered: tuple[str, ...] | None = None


def usage_totals(
    source: ExtractionFile, n_chunks: int, known: set[str] | None = None
) -> dict[str, float]:
    """Tokens, dollars and latency of the scored extractions (sample 0), invalid ones included;
    with ``known``, only the lines of those chunks (a file holding more chunks than the run —
    ``chatledger decide``'s batches — is not charged for the others).

    A line replayed from the call cache (``usage.cached``) took no model time: latency per chunk
    is the mean over the lines that were really called, and they are counted apart.
    """
    totals = _UsageTotals(known)
    for record in source.records.values():
        totals.add(record)
    extra = [
        r
        for sample in source.samples.values()
        for chunk_id, r in sample.items()
        if known is None or chunk_id in known
    ]
    return totals.result(n_chunks, extra)


class _UsageTotals:
    """:func:`usage_totals` one sample-0 record at a time, in file order (a streamed file)."""

    def __init__(self, known: set[str] | None) -> None:
        self.known = known
        self.totals = {"input_tokens": 0.0, "output_tokens": 0.0, "cost_usd": 0.0, "latency_s": 0.0}
        self.live = self.cached = 0

    def add(self, record: ExtractionRecord) -> None:
        if self.known is not None and record.chunk_id not in self.known:
            return
        totals = self.totals
        totals["input_tokens"] += record.usage.input_tokens
        totals["output_tokens"] += record.usage.output_tokens
        totals["cost_usd"] += record.usage.cost_usd
        if not math.isfinite(totals["cost_usd"]):
            # Each cost is finite (a line's JSON cannot say 1e999), but 1e308 twice is inf:
            # "$/chunk inf" in the leaderboard and a run.json no reader accepts.
            raise InputError(
                f"the file's costs add up to more than a number can hold at this line "
                f"(cost_usd {record.usage.cost_usd:g}): a line's cost is in USD",
                path=record.path,
                line=record.line,
                field="usage.cost_usd",
            )
        if (record.usage.model_extra or {}).get("cached") is True:
            self.cached += 1
        else:
            self.live += 1
            totals["latency_s"] += record.usage.latency_s

    def result(self, n_chunks: int, extra: Sequence[ExtractionRecord] = ()) -> dict[str, float]:
        totals = dict(self.totals)
        totals["cost_per_chunk_usd"] = totals["cost_usd"] / n_chunks if n_chunks else 0.0
        totals["latency_per_chunk_s"] = totals["latency_s"] / self.live if self.live else 0.0
        totals["cached_chunks"] = float(self.cached)
        if extra:
            totals["repeat_samples_cost_usd"] = sum(r.usage.cost_usd for r in extra)
            totals["repeat_samples_tokens"] = float(
                sum(r.usage.input_tokens + r.usage.output_tokens for r in extra)
            )
        return totals


def _unknown(
    records: Mapping[str, ExtractionRecord],
    label: str,
    known: set[str],
    seen: list[str],
) -> list[Problem]:
    """As ``score_records`` reports them: one problem per line, each chunk id listed once."""
    problems = []
    for cid, rec in records.items():
        if cid in known:
            continue
        if cid not in seen:
            seen.append(cid)
        problems.append(
            Problem(
                path=rec.path or str(getattr(records, "path", "") or label),
                line=rec.line,
                field="chunk_id",
                message=f"chunk {cid!r} is not in the chunks file; not scored",
            )
        )
    return problems


def describe_model(unit: ModelUnit) -> ModelFacts:
    """What a model's file says as a whole, read as a stream: the chunks file, the model's
    file and (for a challenger) the reference, front to back, one record of each at a time.

    A file with repeats (variance), a gold comparison and a reference with nothing usable
    (its one error message) are read whole by :func:`_describe_whole`, which says the same.
    """
    run = unit.run
    if unit.gold_path is not None:
        return _describe_whole(unit)
    for path in (run.chunks_path, run.reference_path, unit.path):
        _stat(path)  # a worker that cannot see a file says so as the batches do
    known = {c.chunk_id for c in iter_chunks(run.chunks_path)}
    usage = _UsageTotals(known)
    invalid_lines = 0

    def observe(record: ExtractionRecord) -> None:
        nonlocal invalid_lines
        usage.add(record)
        invalid_lines += record.status is RecordStatus.INVALID

    source = ExtractionStream(unit.path, known_chunks=known, observe=observe)
    reference = (
        source if unit.is_reference else ExtractionStream(run.reference_path, known_chunks=known)
    )
    degenerate = None if unit.is_reference else DegenerateCounter()
    covered: set[str] | None = None
    invalid = missing = n_chunks = 0
    usable = False
    for chunk in iter_chunks(run.chunks_path):
        n_chunks += 1
        record = source.take(chunk.chunk_id)
        ref = record if unit.is_reference else reference.take(chunk.chunk_id)
        if record is None:
            missing += 1
        elif record.status is not RecordStatus.OK:
            invalid += 1
        usable = usable or (ref is not None and ref.extraction is not None)
        if degenerate is not None:
            degenerate.add(chunk, ref, record)
        else:
            covered = narrow_coverage(covered, ref)
    source.drain()
    reference.drain()
    if source.max_sample > 0 or (not usable and "extraction" in run.layers):
        return _describe_whole(unit)
    unknown_chunks: list[str] = []
    unknown_problems: list[Problem] = []
    if "extraction" in run.layers and not unit.is_reference:
        for stream in (reference, source):
            for cid, line in stream.unknown:
                if cid not in unknown_chunks:
                    unknown_chunks.append(cid)
                unknown_problems.append(
                    Problem(
                        path=stream.path,
                        line=line,
                        field="chunk_id",
                        message=f"chunk {cid!r} is not in the chunks file; not scored",
                    )
                )
    return ModelFacts(
        source_model=source.model,
        file_problems=list(source.problems),
        unknown_problems=unknown_problems,
        unknown_chunks=unknown_chunks,
        invalid=invalid,
        invalid_count=invalid_lines,
        missing=missing,
        usage=usage.result(n_chunks),
        sample_count=1,
        usable_reference=usable,
        covered=coverage_fields(covered) if unit.is_reference else None,
        degenerate=degenerate.result(n_chunks) if degenerate is not None else None,
    )


def _describe_whole(unit: ModelUnit) -> ModelFacts:
    """:func:`describe_model` from the whole files, parsed for this unit and dropped after."""
    from chatledger.runs._variance import sample_variance  # only for files with repeats

    run = unit.run
    chunks = _chunks(run.chunks_path)
    reference = _extractions(run.reference_path)
    source = reference if unit.is_reference else _extractions(unit.path)
    known = {c.chunk_id for c in chunks}
    unknown_chunks: list[str] = []
    unknown_problems: list[Problem] = []
    if "extraction" in run.layers and not unit.is_reference:
        unknown_problems = _unknown(
            reference.records, run.reference_model, known, unknown_chunks
        ) + _unknown(source.records, unit.name, known, unknown_chunks)
    usable = any(
        (r := reference.records.get(c.chunk_id)) is not None and r.extraction is not None
        for c in chunks
    )
    if not usable and "extraction" in run.layers:
        # The one message for "nothing to score against", as `chatledger score` gives it.
        score_records(reference.records, {}, chunks, run.scoring)
    facts = ModelFacts(
        source_model=source.model,
        file_problems=list(source.problems),
        unknown_problems=unknown_problems,
        unknown_chunks=unknown_chunks,
        invalid=sum(
            1
            for c in chunks
            if (r := source.records.get(c.chunk_id)) is not None and r.status is not RecordStatus.OK
        ),
        invalid_count=source.invalid_count,
        missing=sum(1 for c in chunks if c.chunk_id not in source.records),
        usage=usage_totals(source, len(chunks), known),
        sample_count=source.sample_count,
        usable_reference=usable,
        covered=reference_coverage(reference.records, chunks) if unit.is_reference else None,
    )
    if not unit.is_reference:
        facts.degenerate = count_degenerate(reference.records, source.records, chunks)
    if source.sample_count > 1:
        facts.variance = sample_variance(
            source,
            source.records if unit.is_reference else reference.records,
            chunks,
            run.scoring,
            samples=range(1, source.sample_count)
            if unit.is_reference
            else range(source.sample_count),
            against_label="its own sample 0" if unit.is_reference else "the reference",
        )
    if unit.gold_path is not None:
        gold = _extractions(unit.gold_path)
        facts.gold_model = gold.model
        report = score_records(
            gold.records,
            source.records,
            chunks,
            run.scoring,
            reference_model=unit.gold_name,
            challenger_model=unit.name,
        )
        facts.gold = GoldScores(
            composite=report.extraction_composite,
            fields={k: s.score for k, s in report.fields.items()},
            chunks=len(report.chunks),
            aggregate=report.aggregate,
            field_counts={k: FieldCounts(**s.counts()) for k, s in report.fields.items()},
        )
    return facts


# ---- one model on a batch of conversations -----------------------------------------------


@dataclass(frozen=True)
class BatchUnit:
    run: RunSpec
    name: str
    path: str
    positions: tuple[int, ...]  # chunk positions in run order, whole conversations
    layers: tuple[str, ...]  # the layers still to compute (a reused stage is not recomputed)


@dataclass
class BatchResult:
    positions: tuple[int, ...]
    chunk_results: dict[str, ChunkResult] = field(default_factory=dict)
    excluded: list[str] = field(default_factory=list)
    id_problems: list[Problem] = field(default_factory=list)
    usable: list[str] = field(default_factory=list)  # chunk ids with an extraction to judge
    verdicts: dict[str, list[VerdictDigest | None]] = field(default_factory=dict)  # → usable
    verdict_texts: dict[str, list[str | None]] = field(default_factory=dict)  # judge → usable
    reference_outputs: dict[str, ConsumerOutputs] = field(default_factory=dict)
    challenger_outputs: dict[str, ConsumerOutputs] = field(default_factory=dict)
    # Downstream composite of each conversation (None: no weighted consumer ran).
    conversation_agreement: dict[str, float | None] = field(default_factory=dict)
    # conversation id → consumer that ran → its additive counts (sum them over conversations).
    conversation_counts: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    # The fields the whole reference covers (None: all), the same in every batch of a run.
    covered: tuple[str, ...] | None = None


@dataclass(frozen=True)
class BatchGroup:
    """The batches of every model still to compute for the same chunks, computed in one task:
    the reference side (its records, its consumers' outputs) is built once for all of them."""

    units: tuple[BatchUnit, ...]


# The fields of a BatchResult each layer's stage reads (positions: all of them).
LAYER_FIELDS = {
    "extraction": ("chunk_results", "excluded", "id_problems"),
    "judge": ("usable", "verdicts", "verdict_texts"),
    "downstream": (
        "reference_outputs",
        "challenger_outputs",
        "conversation_agreement",
        "conversation_counts",
        "covered",
    ),
}


def score_group(group: BatchGroup) -> list[dict[str, bytes]]:
    """Each model's :class:`BatchResult`, one pickled part per layer: the run spools them to
    disk as they arrive and unpickles one model's layer at a time (pickled, a result is ~8x
    smaller than live)."""
    global _needed_files
    _needed_files = max(_needed_files, 2 + len(group.units))
    shared = GroupInputs()
    parts = []
    for unit in group.units:
        result = score_batch(unit, shared)
        parts.append(
            {
                layer: pickle.dumps(
                    BatchResult(
                        result.positions,
                        **{name: getattr(result, name) for name in LAYER_FIELDS[layer]},
                    ),
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
                for layer in unit.layers
            }
        )
    return parts


@dataclass
class GroupInputs:
    """What the models of a :class:`BatchGroup` share (the same chunks, the same reference):
    the batch's chunks, the reference's records and its downstream outputs, made by the
    group's first model."""

    chunks: list[Chunk] | None = None
    reference: RecordMap | None = None
    reference_outputs: dict[str, ConsumerOutputs] | None = None  # built by the first model


def score_batch(unit: BatchUnit, shared: GroupInputs | None = None) -> BatchResult:
    """One model on one batch; ``shared`` carries the reference side between the models of a
    :class:`BatchGroup`."""
    shared = GroupInputs() if shared is None else shared
    run = unit.run
    if shared.chunks is None or shared.reference is None:
        # The same chunks for every model of a group: parsed once, with the reference's lines.
        shared.chunks = read_indexed_chunks(_chunk_lines(run.chunks_path), unit.positions)
        shared.reference = read_indexed_records(
            _record_lines(run.reference_path), [c.chunk_id for c in shared.chunks]
        )
    chunks = shared.chunks
    ids = [c.chunk_id for c in chunks]
    ref = shared.reference
    chal = read_indexed_records(_record_lines(unit.path), ids)
    result = BatchResult(unit.positions)
    if "extraction" in unit.layers:
        if any(r.extraction is not None for r in ref.values()):
            report = score_records(
                ref,
                chal,
                chunks,
                run.scoring,
                reference_model=run.reference_model,
                challenger_model=unit.name,
            )
            result.chunk_results = {r.chunk_id: r for r in report.chunks}
            result.excluded = list(report.excluded_chunks)
            # score_records lists the unknown chunk ids first; a batch has none (all its
            # records are of its own chunks), so what remains are the unknown message ids.
            result.id_problems = list(report.problems)
        else:
            result.excluded = ids
    if "judge" in unit.layers:
        usable = [
            (c, r.extraction)
            for c in chunks
            if (r := chal.get(c.chunk_id)) is not None and r.extraction is not None
        ]
        result.usable = [c.chunk_id for c, _ in usable]
        for name in run.offline_judges:
            found = JUDGES.get(name)().judge_many(usable)
            # The whole verdicts leave as the text judgements.jsonl holds; the run aggregates
            # their digests (scores and labels: a tenth of a verdict's size).
            result.verdict_texts[name] = [verdict_text(v) for v in found]
            result.verdicts[name] = [VerdictDigest.of(v) if v is not None else None for v in found]
    if "downstream" in unit.layers:
        weights = run.weights()
        if shared.reference_outputs is None:
            # Coverage is the whole reference's (every batch runs the same consumers).
            shared.reference_outputs = build_outputs(chunks, ref, run.covered, weights)
        result.covered = run.covered
        result.reference_outputs = shared.reference_outputs
        result.challenger_outputs = build_outputs(chunks, chal, result.covered, weights)
        for conv, ref_outputs in result.reference_outputs.items():
            compared = compare_outputs(
                ref_outputs, result.challenger_outputs[conv], weights, result.covered
            )
            result.conversation_agreement[conv] = compared.downstream_composite
            result.conversation_counts[conv] = compared.counts
    return result


def worker_chunks(path: str) -> list[Chunk]:
    """The chunks of ``path``, parsed once per process."""
    return _chunks(path)


def worker_extractions(path: str) -> ExtractionFile:
    """The extraction file at ``path``, parsed once per process."""
    return _extractions(path)


@dataclass(frozen=True)
class AuditUnit:
    """The judges' audit (runs._judge_audit) of a panel of offline judges, by name: computed on
    the executor beside the facts of the files, not before them in the run's process."""

    chunks_path: str
    reference_path: str
    judges: tuple[str, ...]
    mode: str
    priced: bool
    max_false_alarms: float
    max_chunks: int | None
    seed: int


def audit_judges(unit: AuditUnit) -> tuple[Any, float]:
    """The :class:`runs._judge_audit.PanelAudit` of the unit's judges, each built by name, and
    the seconds it took."""
    import itertools

    from chatledger.runs._judge_audit import audit_panel

    chunks: Sequence[Chunk]
    if unit.max_chunks is None:
        chunks = _chunks(unit.chunks_path)
        reference: Mapping[str, ExtractionRecord] = _extractions(unit.reference_path).records
    else:
        # The audit reads the first max_chunks chunks: only they are parsed, and only their
        # reference lines (not the whole files: issue 34).
        _stat(unit.chunks_path)
        chunks = list(itertools.islice(iter_chunks(unit.chunks_path), unit.max_chunks))
        reference = read_indexed_records(
            index_extraction_lines(unit.reference_path), [c.chunk_id for c in chunks]
        )
    started = time.perf_counter()
    audit = audit_panel(
        [JUDGES.get(name)() for name in unit.judges],
        reference,
        chunks,
        mode=unit.mode,
        priced=unit.priced,
        max_false_alarms=unit.max_false_alarms,
        max_chunks=unit.max_chunks,
        seed=unit.seed,
    )
    return audit, time.perf_counter() - started


def run_unit(unit: IndexUnit | ModelUnit | BatchUnit | BatchGroup | AuditUnit) -> Any:
    """The one entry point executors call: the function for the unit's kind."""
    if isinstance(unit, AuditUnit):
        return audit_judges(unit)
    if isinstance(unit, BatchGroup):
        return score_group(unit)
    if isinstance(unit, BatchUnit):
        return score_batch(unit)
    if isinstance(unit, ModelUnit):
        return describe_model(unit)
    return index_chunks(unit)
