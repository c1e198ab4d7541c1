"""Execute a run as stages: extract → score (layer 1) → judge (layer 2) → downstream (layer 3)
→ stats → write.

* **extract** calls the models of ``{model: ID}`` sources in this process, through one
  provider hub (cache, budget, rate limits); see ``runs._models``.
* **score / judge / downstream** are computed by units — (model, batch of whole conversations)
  — on the run's executor (``runs._executors``); each worker reads the files itself. The
  results come back in unit order and are assembled here per model, in run chunk order, by the
  same functions whatever ran them, so every executor writes the same bytes. Each stage's
  output is kept in ``stages/`` under its content key (``runs._stages``): a rerun skips it.
* **stats** is computed once from the per-chunk values the stages produced.
* **write** builds the typed record (``chatledger.record.ConversationRun``) and writes
  ``run.json``; ``scores.parquet`` is streamed model by model as each is assembled.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import pickle
import resource
import shutil
import tempfile
import threading
import time
import uuid
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from chatledger.core import (
    InputError,
    Problem,
    RecordStatus,
    atomic_writer,
    file_sha256,
    first_validation_error,
    iter_json,
    prepare_output_dir,
)
from chatledger.corpus import (
    extraction_model,
    index_extraction_lines,
    iter_chunks,
    read_indexed_records,
)
from chatledger.judge import SCORE_NAMES, Graded, aggregate_chunk, panel_agreement
from chatledger.providers import ProviderHub
from chatledger.record import (
    CalibrationBin,
    FieldCounts,
    HumanGold,
    InputFile,
    JudgeSummary,
    RepeatVariance,
    StageRecord,
    Usage,
)
from chatledger.runs._config import LoadedRunConfig
from chatledger.runs._downstream_file import DownstreamWriter
from chatledger.runs._executors import (
    Executor,
    ExecutorSpec,
    parse_executor,
    start_executor,
    worker_count,
)
from chatledger.runs._judge_audit import PanelAudit, audit_panel
from chatledger.runs._judging import (
    JudgeLayerResult,
    chunk_lines,
    judge_run_rows,
    line_head,
    verdict_text,
)
from chatledger.runs._lifetime import interrupts_recorded, raise_if_interrupted
from chatledger.runs._models import (
    ModelCalls,
    needs_model_calls,
    plan_extractions,
    run_extractions,
)
from chatledger.runs._panel import build_judges, judge_entry
from chatledger.runs._record import build_record
from chatledger.runs._results import ModelSummary, RunResult, layer_weights_used, overall_of
from chatledger.runs._rows import chunk_rows, downstream_rows, extraction_run_rows
from chatledger.runs._series import build_series
from chatledger.runs._stages import (
    PER_CHUNK,
    ROW_GROUP_ROWS,
    ConsumerSummary,
    DownstreamSummary,
    ScoreSummary,
    StageOutput,
    StageStore,
    StageWriter,
    field_column,
    read_stage_rows,
    safe_file_name,
    stage_key,
    stat_column,
)
from chatledger.runs._stats import (
    JUDGE_COLUMNS,
    ModelSeries,
    compute_run_stats,
    conversation_rows,
    stats_rows,
)
from chatledger.runs._tables import RUN_LEVEL, Row, ScoreTableWriter, rows_table
from chatledger.runs._units import (
    AuditUnit,
    BatchGroup,
    BatchResult,
    BatchUnit,
    ChunkIndex,
    IndexUnit,
    ModelFacts,
    ModelUnit,
    RunSpec,
    run_unit,
    worker_chunks,
    worker_extractions,
)
from chatledger.scoring import (
    NO_EVENTS,
    ScoreReport,
    ScoringConfig,
    chunk_statistics,
    statistic_names,
)
from chatledger.scoring._run import FieldTotals

if TYPE_CHECKING:
    import pyarrow as pa

ProgressCallback = Callable[[str, int, int], None]
LAYER_STAGES = ("extraction", "judge", "downstream")
STAGE_OF_LAYER = {"extraction": "score", "judge": "judge", "downstream": "downstream"}
# Batches of at least this many chunks (whole conversations), about eight per worker: enough
# to keep every worker busy to the end, few enough that dispatch costs nothing; and what is
# assembled after the last unit is its batch (issue 34: eight rather than four per worker).
MIN_BATCH_CHUNKS = 25
BATCHES_PER_WORKER = 8
# And at most this many: what a unit holds while it computes grows with its batch, and past a
# few hundred chunks a larger batch saves nothing (issue 34: 2,500-chunk batches at 10k).
MAX_BATCH_CHUNKS = 200
LINES_AT_ONCE = 4096  # judgement lines written to the stage's file at once
EVENTS_LEVEL = 4  # the depth of an event in a model's part: part, consumers, one, missed


def execute_run(
    loaded: LoadedRunConfig,
    out_dir: Path,
    on_progress: ProgressCallback | None = None,
    *,
    hub: ProviderHub | None = None,
    executor: str | ExecutorSpec | None = None,
) -> RunResult:
    """Run every configured layer for every challenger and write the run directory.

    Sources that name a model are extracted first (see ``runs._models``); ``hub`` replaces the
    provider hub the run would build from its config (cache, budget, prices, concurrency).
    ``executor`` (``local``, ``processes[:N]``, ``dask[:ADDRESS]``) overrides the config's.
    ``out_dir`` is made absolute first: the files a run extracts into it are read by workers
    that may have another working folder (a Dask worker started elsewhere).
    """
    out_dir = Path(out_dir).absolute()
    if isinstance(executor, ExecutorSpec):
        spec = executor
    else:
        try:
            spec = parse_executor(executor if executor is not None else loaded.config.executor)
        except InputError as exc:
            raise InputError(exc.detail, path=loaded.path, field="executor") from None
    calls = ModelCalls.for_run(loaded, hub) if needs_model_calls(loaded.config) else None
    try:
        with interrupts_recorded(), start_executor(spec) as pool:
            pool.warm_up()  # workers start while this process audits and plans
            result = _Run(loaded, out_dir, on_progress, calls, pool).execute()
        human_gold = loaded.config.human_gold
        if human_gold is not None and human_gold.ppi and loaded.gold is not None:
            from chatledger.runs._ppi import ppi_of_run  # issue 33: ppi.json beside run.json

            ppi_of_run(
                out_dir,
                loaded.gold,
                predictor=human_gold.predictor,
                confidence=human_gold.confidence,
                plan_width=human_gold.plan_width,
            ).write(out_dir)
        return result
    finally:
        if calls is not None:
            calls.close()


@dataclass
class _ModelPlan:
    """One challenger: its file, facts, and the stages still to compute."""

    index: int
    name: str
    path: Path
    keys: dict[str, str] = field(default_factory=dict)  # layer → stage key
    reused: dict[str, StageOutput] = field(default_factory=dict)
    # What the file says as a whole (runs._units.describe_model): computed beside the batches
    # and given after them (issue 34), so a stage assembled in a thread waits for it.
    found: Future[ModelFacts] = field(default_factory=Future)

    @property
    def file_key(self) -> str:
        return safe_file_name(self.name)

    @property
    def facts(self) -> ModelFacts:
        return self.found.result()


class _Run:
    def __init__(
        self,
        loaded: LoadedRunConfig,
        out_dir: Path,
        on_progress: ProgressCallback | None,
        calls: ModelCalls | None,
        pool: Executor,
    ) -> None:
        self.loaded = loaded
        self.config = loaded.config
        self.out_dir = out_dir
        self.on_progress = on_progress
        self.calls = calls
        self.pool = pool
        self.timings: dict[str, float] = {"extraction_s": 0.0, "judge_s": 0.0, "downstream_s": 0.0}
        self.stage_records: list[StageRecord] = []
        self._hashes: dict[Path, str] = {}
        # The reference names the fields it covers (human gold): the record says so.
        self.reference_partial = False
        self.panel_audit = PanelAudit("off", [], [], {}, None)

    # ---- helpers ---------------------------------------------------------------------------

    def _sha(self, path: Path) -> str:
        if path not in self._hashes:
            self._hashes[path] = file_sha256(path)
        return self._hashes[path]

    def _key(self, stage: str, files: Sequence[Path], settings: Any) -> str:
        # Hash each file once per run, however many stages read it.
        return stage_key(stage, [], {"files": [self._sha(p) for p in files], **settings})

    def _say(self, description: str) -> None:
        """What the run is doing now (what an interruption names)."""
        if self.on_progress is not None:
            self.on_progress(description, 0, 0)

    # ---- the stages ------------------------------------------------------------------------

    def execute(self) -> RunResult:
        config, loaded = self.config, self.loaded
        started = time.perf_counter()
        judges = (
            build_judges(loaded, self.calls.hub if self.calls is not None else None)
            if "judge" in config.layers
            else []
        )
        model_judges = [j for j, s in zip(judges, config.judges, strict=True) if s.model]
        offline_judges = [j for j, s in zip(judges, config.judges, strict=True) if not s.model]
        scoring = _scoring_config(loaded)
        planned = plan_extractions(loaded, self.out_dir)
        prepare_output_dir(self.out_dir)
        if planned:  # stage: extract
            t0 = time.perf_counter()
            run_extractions(
                planned, worker_chunks(str(loaded.chunks)), self.calls, self.on_progress
            )
            self.timings["model_extraction_s"] = time.perf_counter() - t0
            self.stage_records.append(
                StageRecord(stage="extract", seconds=self.timings["model_extraction_s"])
            )
        written = {plan.where: plan.path for plan in planned}
        reference_path = Path(loaded.reference or written["reference"])
        challenger_paths = [
            Path(path or written[f"challengers.{i}"]) for i, path in enumerate(loaded.challengers)
        ]
        chunks_path = Path(loaded.chunks)
        gold_path = Path(loaded.gold) if loaded.gold is not None and config.gold else None
        # Stage: the judges' audit (docs/judges.md): under strict, the panel is who passed. A
        # panel of offline judges is audited on the executor, beside the facts below (issue
        # 34: ~3 s in series before them at 1,000 chunks); model judges call through the hub.
        audit = self._audit_unit(judges, chunks_path, reference_path)
        if audit is None:
            self.panel_audit = self._audit_panel(judges, chunks_path, reference_path)
        # When its outcome cannot change the panel (one judge, or not strict: every judge
        # stays), the audit runs beside the batches rather than before them (issue 34: the
        # longest unit of the facts stage, a worker's ~3 s while the other waited).
        beside = audit if audit is not None and _panel_is_known(audit) else None
        if beside is not None:
            audit = None
            self.panel_audit = PanelAudit(beside.mode, [], list(beside.judges), {}, None)
        spec = RunSpec(
            chunks_path=str(chunks_path),
            reference_path=str(reference_path),
            scoring=scoring,
            layers=tuple(config.layers),
            consumer_weights=(
                tuple(config.weights.consumers.items()) if config.weights.consumers else None
            ),
        )
        # What the batches need first, all at once on the executor: the chunk order and the
        # reference as a whole (its coverage, its model); the audit first (the longest unit).
        # The challengers' files as a whole are described beside the batches (issue 34: the
        # facts stage parsed every file before any batch, ~6 % of a run with a worker idle).
        units: list[Any] = [audit] if audit is not None else []
        units.append(IndexUnit(str(chunks_path)))
        units.append(ModelUnit(spec, "reference", str(reference_path), is_reference=True))
        challenger_units = [
            ModelUnit(spec, f"challengers.{i}", str(p), gold_path=_str(gold_path))
            for i, p in enumerate(challenger_paths)
        ]
        if gold_path is not None:
            units.append(
                ModelUnit(
                    spec,
                    "reference",
                    str(reference_path),
                    is_reference=True,
                    gold_path=str(gold_path),
                )
            )
        t0 = time.perf_counter()
        self._say(f"reading the inputs on the {self.pool.spec} executor")
        described = self.pool.map(run_unit, units)
        raise_if_interrupted()
        self.timings["facts_s"] = time.perf_counter() - t0
        if audit is not None:
            self._audited(described.pop(0), audit)
        offline_judges = [j for j in offline_judges if j.name in self.panel_audit.panel]
        model_judges = [j for j in model_judges if j.name in self.panel_audit.panel]
        index: ChunkIndex = described[0]
        reference_facts: ModelFacts = described[1]
        reference_gold: ModelFacts | None = described[-1] if gold_path is not None else None
        layers_scored, unscored_note = self._scored_layers(reference_facts.covered)
        weights_used, note = layer_weights_used(config.weights.layers, layers_scored)
        if unscored_note is not None:
            note = f"{unscored_note}; {note}" if note else unscored_note
        reference_name = config.reference.label or reference_facts.source_model
        spec = RunSpec(
            **{
                **spec.__dict__,
                "reference_model": reference_facts.source_model,
                "covered": reference_facts.covered,
                "offline_judges": tuple(j.name for j in offline_judges),
            }
        )
        plans = self._plan_models(challenger_paths, reference_name, spec)

        # Stages score / judge / downstream: every batch of every model still to compute.
        n_chunks = len(index.chunk_ids)
        per_run = BATCHES_PER_WORKER * worker_count(self.pool)
        target = max(MIN_BATCH_CHUNKS, math.ceil(n_chunks / per_run))
        target = min(target, MAX_BATCH_CHUNKS)
        batches = index.batches(target)
        groups: list[BatchGroup] = []
        for positions in batches:
            group = tuple(
                BatchUnit(spec, plan.name, str(plan.path), tuple(positions), layers)
                for plan in plans
                if (layers := tuple(x for x in config.layers if x not in plan.reused))
            )
            if group:
                groups.append(BatchGroup(group))
        t0 = time.perf_counter()
        self._say(f"scoring {len(groups)} batch(es) of chunks on the {self.pool.spec} executor")
        # Each model's batch results arrive pickled and go to a spool file as they come: the
        # run holds a few bytes per batch, and unpickles one batch at a time to assemble it.
        # With workers, each stage is assembled by a thread of this process while the units
        # run (they arrive in chunk order, the order a stage reads them): what is left after
        # the last unit is its batches and the statistics (issue 34: the assembly ran after
        # the units, ~10 % of a run in series). `local`, and a run with a model judge (its
        # calls go through the run's hub), assemble each model after the units.
        overlap = self.pool.spec.kind != "local" and not model_judges
        by_model = _BatchSpool(self.out_dir, live=overlap)
        store = StageStore(self.out_dir)
        by_model.expect(batches)  # every model with a stage to compute is in every group
        stages = _Assembly(self, by_model, store, index, scoring, spec, model_judges, overlap)
        try:
            for plan in plans:
                for layer in config.layers:
                    if layer not in plan.reused:
                        stages.start(plan, layer)
            # The audit and the challengers' facts start first (the longest units) and are
            # given last: the batches' results come in while they run.
            stream: Sequence[IndexUnit | ModelUnit | BatchUnit | BatchGroup | AuditUnit] = groups
            heads: list[ModelUnit | AuditUnit] = [beside] if beside is not None else []
            results = self.pool.imap(run_unit, stream, heads=[*heads, *challenger_units])
            for group_units in groups:
                pickled = next(results)
                raise_if_interrupted()  # a Ctrl-C swallowed in a gc callback (runs._lifetime)
                for unit, parts in zip(group_units.units, pickled, strict=True):
                    for layer, blob in parts.items():
                        by_model.add(unit.name, layer, unit.positions, blob)
                stages.raise_failed()
            if beside is not None:
                self._audited(next(results), beside)
            for plan in plans:
                plan.found.set_result(next(results))
            raise_if_interrupted()
        except BaseException:
            by_model.abort()  # the stages waiting for batches (or facts) end
            for plan in plans:
                if not plan.found.done():
                    plan.found.set_exception(_SpoolAborted())
            raise
        compute_s = time.perf_counter() - t0
        # Wall time of the units on the executor (the part more workers can shorten).
        self.timings["units_s"] = compute_s
        stages.units_done(compute_s, sum(len(g.units) for g in groups))
        by_model.complete()  # from here on every stage runs to its end

        models: list[ModelSummary] = []
        series: list[_SeriesFiles] = []
        variance: dict[str, RepeatVariance] = {}
        if reference_facts.variance is not None:
            variance[reference_name] = reference_facts.variance
        judgements_path = self.out_dir / "judgements.jsonl"
        with (
            ScoreTableWriter(self.out_dir / "scores.parquet") as writer,
            atomic_writer(judgements_path) as judgements,
            atomic_writer(self.out_dir / "downstream.json") as downstream_file,
        ):
            downstream = DownstreamWriter(downstream_file, reference_name)
            for done, plan in enumerate(plans, start=1):
                raise_if_interrupted()  # a Ctrl-C swallowed in a gc callback (runs._lifetime)
                # Each stage is assembled from the spool in chunk order, its rows, lines and
                # per-chunk values written to its files in stages/ as it goes; the outputs
                # below are read back from those files (issue 34).
                outputs = self._assemble(plan, stages)
                summary, overall_row, model_series = self._summarise(
                    plan, outputs, weights_used, index
                )
                if "judge" in outputs:
                    with store.lines_path(plan.file_key, "judge").open(encoding="utf-8") as lines:
                        shutil.copyfileobj(lines, judgements)
                writer.write_model(
                    [
                        *(
                            batch
                            for layer in ("extraction", "downstream", "judge")
                            if layer in outputs
                            for batch in read_stage_rows(
                                store.rows_path(plan.file_key, STAGE_OF_LAYER[layer])
                            )
                        ),
                        rows_table([overall_row]),
                    ]
                )
                models.append(summary)
                series.append(
                    _SeriesFiles(
                        model_series,
                        outputs["extraction"].field_order if "extraction" in outputs else [],
                        store.chunks_path(plan.file_key, "score")
                        if "extraction" in outputs
                        else None,
                        store.chunks_path(plan.file_key, "judge") if "judge" in outputs else None,
                    )
                )
                if "downstream" in outputs:
                    part = store.lines_path(plan.file_key, "downstream")
                    with part.open(encoding="utf-8", newline="") as text:
                        downstream.add_text(plan.name, text)
                del outputs
                if plan.facts.variance is not None:
                    variance[plan.name] = plan.facts.variance
                if self.on_progress:
                    self.on_progress(f"{plan.name}: {', '.join(config.layers)}", done, len(plans))
            by_model.close()
            raise_if_interrupted()
            t0 = time.perf_counter()
            # The per-chunk statistics of every model, read back from the stages' files into
            # the one matrix the statistics resample (each model's series are views of it):
            # summed per conversation as they are read when the conversation is the unit.
            by_conversation = config.stats.unit == "conversation"
            matrix = _load_series(
                series,
                n_chunks,
                conversation_rows(index.conversations) if by_conversation else None,
            )
            stats = compute_run_stats(
                [s.series for s in series],
                weights_used,
                scoring.weights,
                config.stats,
                config.seed,
                chunk_conversations=index.conversations,
                all_fields=scoring.fields,
                chunk_matrix=None if by_conversation else matrix,
                conversation_matrix=matrix if by_conversation else None,
            )
            del matrix
            if variance and stats is not None:
                stats.repeat_variance = variance
            self.timings["stats_s"] = time.perf_counter() - t0
            self.stage_records.append(StageRecord(stage="stats", seconds=self.timings["stats_s"]))
            gold = self._gold(reference_gold, plans)
            writer.write(stats_rows(stats, gold))
            downstream.close()
        self.timings["total_s"] = time.perf_counter() - started
        result = RunResult(
            name=config.name,
            out_dir=self.out_dir,
            layers_run=layers_scored,
            layer_weights_used=weights_used,
            renormalisation_note=note,
            notes=[n for n in (index.note,) if n is not None],
            models=models,
            reference_name=reference_name,
            timings=self.timings,
            stats=stats,
            human_gold=gold,
        )
        inputs = [InputFile(role="chunks", path=str(chunks_path), sha256=self._sha(chunks_path))]
        inputs.append(
            InputFile(role="reference", path=str(reference_path), sha256=self._sha(reference_path))
        )
        inputs += [
            InputFile(role=f"challenger:{p.name}", path=str(p.path), sha256=self._sha(p.path))
            for p in plans
        ]
        if gold_path is not None:
            inputs.append(InputFile(role="gold", path=str(gold_path), sha256=self._sha(gold_path)))
        self.stage_records.append(StageRecord(stage="write"))
        record = build_record(
            result,
            loaded,
            reference_path=reference_path,
            reference_model=config.reference.model,
            reference_problems=[str(p) for p in reference_facts.file_problems],
            reference_usage=reference_facts.usage,
            n_chunks=n_chunks,
            judges=[judge_entry(judge) for judge in judges],
            model_calls=self.calls.info() if self.calls is not None else None,
            inputs=inputs,
            executor=str(self.pool.spec),
            stages=self.stage_records,
            peak_memory_mb=_peak_memory_mb(),
            chunk_ids=list(index.chunk_ids),
            chunk_conversations=list(index.conversations),
            field_weights=dict(scoring.weights),
            scored_fields=list(scoring.fields),
            reference_is_human=self.reference_partial,
            panel_audit=self.panel_audit,
        )
        record.write(self.out_dir)
        result.record = record
        return result

    def _audited(self, found: tuple[PanelAudit, float], unit: AuditUnit) -> None:
        """The audit's result (from the executor) becomes the run's."""
        audit, seconds = found
        if self.panel_audit.panel and audit.panel != self.panel_audit.panel:
            raise RuntimeError(f"the audit changed a panel it cannot change ({unit.judges})")
        self.panel_audit = audit
        self.timings["judge_audit_s"] = seconds
        self.stage_records.append(StageRecord(stage="judge_audit", seconds=seconds))

    def _audit_unit(
        self, judges: Sequence[Any], chunks_path: Path, reference_path: Path
    ) -> AuditUnit | None:
        """The audit as a unit for the executor, when every judge is an offline one (built by
        name in the worker); None when there is nothing to audit or a model judge to call."""
        options = self.config.judge_audit
        if "judge" not in self.config.layers or options.audit == "off" or not judges:
            return None
        if any(spec.model is not None for spec in self.config.judges):
            return None
        return AuditUnit(
            chunks_path=str(chunks_path),
            reference_path=str(reference_path),
            judges=tuple(j.name for j in judges),
            mode=options.audit,
            priced=options.priced,
            max_false_alarms=options.max_false_alarms,
            max_chunks=options.max_chunks,
            seed=self.config.seed,
        )

    def _audit_panel(
        self, judges: Sequence[Any], chunks_path: Path, reference_path: Path
    ) -> PanelAudit:
        options = self.config.judge_audit
        if "judge" not in self.config.layers or options.audit == "off" or not judges:
            return PanelAudit("off", [], [j.name for j in judges], {}, None)
        self._say("auditing the judges against known truth")
        t0 = time.perf_counter()
        if options.max_chunks is None:
            chunks = worker_chunks(str(chunks_path))
            reference: Mapping[str, Any] = worker_extractions(str(reference_path)).records
        else:
            # The audit reads the first max_chunks chunks: only they are parsed, and only
            # their reference lines (not the whole files: issue 34).
            chunks = list(itertools.islice(iter_chunks(chunks_path), options.max_chunks))
            reference = read_indexed_records(
                index_extraction_lines(reference_path), [c.chunk_id for c in chunks]
            )
        found = audit_panel(
            judges,
            reference,
            chunks,
            mode=options.audit,
            priced=options.priced,
            max_false_alarms=options.max_false_alarms,
            max_chunks=options.max_chunks,
            seed=self.config.seed,
        )
        self.timings["judge_audit_s"] = time.perf_counter() - t0
        self.stage_records.append(
            StageRecord(stage="judge_audit", seconds=self.timings["judge_audit_s"])
        )
        return found

    def _scored_layers(self, covered: tuple[str, ...] | None) -> tuple[list[str], str | None]:
        """The layers that get a score, and why one that runs does not: against a reference
        covering too little for every consumer with a weight (partial gold), layer 3 runs —
        downstream.json still says which consumers were skipped and why — but has no
        composite, so it is left out of every model's overall alike."""
        layers: list[str] = list(self.config.layers)
        if "downstream" not in layers or covered is None:
            return layers, None
        from chatledger.downstream import resolve_weights, skipped_consumers

        skipped = skipped_consumers(covered, self.config.weights.consumers)
        weights = resolve_weights(self.config.weights.consumers)
        if any(w > 0 and name not in skipped for name, w in weights.items()):
            return layers, None
        shown = "; ".join(f"{name} needs {', '.join(fields)}" for name, fields in skipped.items())
        note = (
            "downstream has no score: the reference covers too little for any consumer with a "
            f"weight ({shown})"
        )
        if not any(self.config.weights.layers.get(x, 0.0) > 0 for x in layers if x != "downstream"):
            raise InputError(
                f"{note}, and no other layer with a weight above 0 ran: nothing to rank the "
                "models by",
                path=self.loaded.path,
                field="layers",
            )
        return [x for x in layers if x != "downstream"], note

    def _plan_models(
        self, paths: list[Path], reference_name: str, spec: RunSpec
    ) -> list[_ModelPlan]:
        config = self.config
        store = StageStore(self.out_dir)
        seen = {reference_name}
        plans: list[_ModelPlan] = []
        reference_path = Path(spec.reference_path)
        chunks_path = Path(spec.chunks_path)
        for i, path in enumerate(paths):
            # The model the file names (the facts' source_model), read as far as its first
            # record naming one: the facts come beside the batches, which need the name.
            name = config.challengers[i].label or extraction_model(path)
            if name in seen:
                raise InputError(
                    f"model name {name!r} is used twice; give each challenger a unique 'name'",
                    path=self.loaded.path,
                    field=f"challengers.{i}",
                )
            seen.add(name)
            plan = _ModelPlan(i, name, path)
            settings: dict[str, Any] = {"model": name, "reference": spec.reference_model}
            plan.keys["extraction"] = self._key(
                "score",
                [chunks_path, reference_path, path],
                {**settings, "scoring": spec.scoring.model_dump(mode="json")},
            )
            plan.keys["judge"] = self._key(
                "judge",
                [chunks_path, path],
                {
                    **settings,
                    "judges": [s.model_dump(mode="json") for s in config.judges],
                    "panel": self.panel_audit.panel,
                },
            )
            plan.keys["downstream"] = self._key(
                "downstream",
                [chunks_path, reference_path, path],
                {**settings, "weights": dict(spec.consumer_weights or ())},
            )
            for layer in config.layers:
                found = store.load(plan.file_key, STAGE_OF_LAYER[layer], plan.keys[layer])
                if found is not None:
                    plan.reused[layer] = found
            plans.append(plan)
        return plans

    def _assemble(self, plan: _ModelPlan, stages: _Assembly) -> dict[str, StageOutput]:
        """Each layer's stage output of one model: reused, or assembled from its batches (read
        back from the spool in chunk order, one batch at a time) into its stage files."""
        out: dict[str, StageOutput] = {}
        for layer in self.config.layers:
            stage = STAGE_OF_LAYER[layer]
            if layer in plan.reused:
                output = plan.reused[layer]
                self.stage_records.append(
                    StageRecord(stage=stage, model=plan.name, key=output.key, reused=True)
                )
                out[layer] = output
                continue
            output = stages.result(plan, layer)
            self.timings[f"{layer}_s"] += output.seconds
            self.stage_records.append(
                StageRecord(
                    stage=stage,
                    model=plan.name,
                    key=plan.keys[layer],
                    seconds=output.seconds,
                    units=output.units,
                )
            )
            out[layer] = output
        return out

    def _score_stage(
        self,
        plan: _ModelPlan,
        spool: _BatchSpool,
        index: ChunkIndex,
        scoring: ScoringConfig,
        spec: RunSpec,
        files: StageWriter,
    ) -> tuple[StageOutput, pa.Table]:
        """Layer 1 of one model, chunk by chunk in run order: the sums behind the run-level
        figures (scoring.FieldTotals, the same left-to-right sums as over a list of every
        chunk), each chunk's rows to the stage's row file, its values to arrays."""
        import pyarrow as pa

        n_chunks = len(index.chunk_ids)
        weights = scoring.weights
        totals = FieldTotals()
        excluded: list[str] = []
        id_problems: list[tuple[int, list[Problem]]] = []
        per_chunk = np.zeros(n_chunks)
        scored = np.zeros(n_chunks, dtype=bool)
        values: dict[str, npt.NDArray[np.float64]] = {}
        has_value: dict[str, npt.NDArray[np.bool_]] = {}
        field_stats: dict[str, npt.NDArray[np.float64]] = {}
        counted = [0, 0, 0]  # chunks, invalid, missing
        partial = False
        units = 0
        rows: list[Row] = []
        for i, batch, first, _ in spool.in_order(plan.name, "extraction"):
            if first:
                units += 1
                excluded += batch.excluded
                id_problems.append((min(batch.positions), batch.id_problems))
            chunk = batch.chunk_results.get(index.chunk_ids[i])
            if chunk is None:
                continue
            ok = chunk.status is RecordStatus.OK
            totals.add(chunk.status, chunk.fields, chunk.partial)
            partial |= chunk.partial
            counted[0] += 1
            counted[1] += chunk.status is RecordStatus.INVALID
            counted[2] += chunk.status is RecordStatus.MISSING
            for name, score in chunk.fields.items():
                if name not in field_stats:
                    width = len(statistic_names(name))
                    field_stats[name] = np.zeros((n_chunks, width))
                    values[name] = np.zeros(n_chunks)
                    has_value[name] = np.zeros(n_chunks, dtype=bool)
                values[name][i] = score.score
                has_value[name][i] = True
                field_stats[name][i] = chunk_statistics(name, score, ok)
            per_chunk[i] = chunk_rows(plan.name, chunk, weights, rows)
            scored[i] = True
            if len(rows) >= ROW_GROUP_ROWS:
                files.rows(rows)
                rows = []
        summaries, composite = totals.summaries(scoring)
        aggregate = totals.aggregate(scoring)
        position = {cid: i for i, cid in enumerate(index.chunk_ids)}
        id_list = [p for _, problems in sorted(id_problems, key=lambda x: x[0]) for p in problems]
        report = ScoreReport(
            schema_version=scoring.schema_version,
            matcher=scoring.matcher,
            reference_model=spec.reference_model,
            challenger_model=plan.name,
            fields=summaries,
            extraction_composite=composite,
            chunks=[],
            problems=[*plan.facts.file_problems, *plan.facts.unknown_problems, *id_list],
            excluded_chunks=sorted(excluded, key=position.__getitem__),
            unknown_chunks=plan.facts.unknown_chunks,
            unknown_message_ids=len(id_list),
            aggregate=aggregate,
            counted=(counted[0], counted[1], counted[2]),
        )
        del position
        files.rows([*rows, *extraction_run_rows(plan.name, report)])
        columns: dict[str, pa.Array] = {PER_CHUNK: pa.array(per_chunk, mask=~scored)}
        for name in field_stats:
            columns[field_column(name)] = pa.array(values[name], mask=~has_value[name])
        for name, matrix in field_stats.items():
            for j in range(matrix.shape[1]):
                columns[stat_column(name, j)] = pa.array(matrix[:, j])
        confidence = summaries.get("confidence")
        output = StageOutput(
            stage="score",
            model=plan.name,
            key=plan.keys["extraction"],
            layer_score=composite,
            aggregate=aggregate,
            field_order=list(field_stats),
            units=units,
            score=ScoreSummary(
                fields={k: s.score for k, s in summaries.items()},
                field_counts={k: FieldCounts(**s.counts()) for k, s in summaries.items()},
                partial_reference=partial,
                components={k: dict(s.components) for k, s in summaries.items()},
                calibration=[
                    CalibrationBin(**b)
                    for b in (confidence.reliability if confidence is not None else [])
                ],
                invalid=report.invalid,
                missing=report.missing,
                validity=report.validity_rate,
                problems=[str(p) for p in report.problems],
            ),
        )
        return output, pa.table(columns)

    def _judge_stage(
        self,
        plan: _ModelPlan,
        spool: _BatchSpool,
        index: ChunkIndex,
        model_judges: Sequence[Any],
        files: StageWriter,
    ) -> tuple[StageOutput, pa.Table]:
        """Layer 2 of one model, chunk by chunk in run order (what aggregate_verdicts,
        judge_rows and judgement_lines_of_texts compute over every chunk at once): each chunk's
        lines and rows go to the stage's files as it is judged."""
        import pyarrow as pa

        n_chunks = len(index.chunk_ids)
        model_verdicts: dict[str, dict[str, Graded | None]] = {}
        model_texts: dict[str, dict[str, str | None]] = {}
        if model_judges:
            # Model judges call through the run's one hub (rate limits, cache, budget), here,
            # on every usable chunk at once (as judge_many batches them).
            found: list[str] = []
            for _, batch, first, _ in spool.in_order(plan.name, "judge", keep=True):
                if first:
                    found += batch.usable
            position = {cid: i for i, cid in enumerate(index.chunk_ids)}
            found.sort(key=position.__getitem__)
            del position
            chunks = worker_chunks(str(self.loaded.chunks))
            records = worker_extractions(str(plan.path)).records
            by_id = {c.chunk_id: c for c in chunks}
            pairs = [(by_id[c], records[c].extraction) for c in found]
            for judge in model_judges:
                verdicts = judge.judge_many(pairs)
                model_verdicts[judge.name] = dict(zip(found, verdicts, strict=True))
                model_texts[judge.name] = dict(zip(found, map(verdict_text, verdicts), strict=True))
            del chunks, records, by_id, pairs
        offline: set[str] = set()  # the offline judges: every batch has their verdicts
        names: list[str] | None = None
        head = line_head(plan.name)
        per_chunk = np.zeros(n_chunks)
        scored_chunk = np.ones(n_chunks, dtype=bool)
        values = array("d")  # each chunk's composite, 0 for an unusable extraction
        usable: list[str] = []
        unscored: dict[str, int] = {}
        per_judge: dict[str, array[float]] = {}
        labels: Counter[str] = Counter()
        panel: dict[str, dict[str, Graded | None]] = {}  # every verdict: > 1 judge only
        rows: list[Row] = []
        lines: list[str] = []
        units = 0
        in_batch: dict[int, dict[str, int]] = {}
        for i, batch, first, last in spool.in_order(plan.name, "judge"):
            if first:
                units += 1
                in_batch[id(batch)] = {cid: k for k, cid in enumerate(batch.usable)}
                if names is None:
                    offline = set(batch.verdicts)
            chunk_id = index.chunk_ids[i]
            k = (in_batch.pop(id(batch)) if last else in_batch[id(batch)]).get(chunk_id)
            if names is None:
                names = self._judge_names(offline, model_verdicts)
                unscored = dict.fromkeys(names, 0)
                per_judge = {name: array("d") for name in names}
                panel = {name: {} for name in names} if len(names) > 1 else {}
            if k is None:  # nothing to judge: 0, as on layer 1
                values.append(0.0)
                rows.append((plan.name, chunk_id, "judge", "composite", "score", 0.0))
                continue
            usable.append(chunk_id)
            graded: list[Graded | None] = []
            texts: list[str | None] = []
            for name in names:
                if name in model_verdicts:
                    graded.append(model_verdicts[name][chunk_id])
                    texts.append(model_texts[name][chunk_id])
                else:
                    graded.append(batch.verdicts[name][k])
                    texts.append(batch.verdict_texts[name][k])
            chunk_lines(head, chunk_id, names, texts, lines)
            for name, verdict in zip(names, graded, strict=True):
                if verdict is None:
                    unscored[name] += 1
                else:
                    per_judge[name].append(verdict.composite)
                if panel:
                    panel[name][chunk_id] = verdict
            judged = aggregate_chunk(chunk_id, graded)
            labels.update(judged.labels.values())
            if judged.scores is None or judged.composite is None:
                scored_chunk[i] = False  # unscored: no row, so it cannot be mistaken for a 0
            else:
                values.append(judged.composite)
                per_chunk[i] = judged.composite
                for name in SCORE_NAMES:
                    rows.append((plan.name, chunk_id, "judge", name, "score", judged.scores[name]))
                rows.append((plan.name, chunk_id, "judge", "composite", "score", judged.composite))
            if len(lines) >= LINES_AT_ONCE:
                files.lines(lines)
                lines = []
            if len(rows) >= ROW_GROUP_ROWS:
                files.rows(rows)
                rows = []
        files.lines(lines)
        if names is None:  # no batch: no chunk
            names = self._judge_names(set(), model_verdicts)
            unscored = dict.fromkeys(names, 0)
            per_judge = {name: array("d") for name in names}
        result = JudgeLayerResult(
            composite=sum(values) / len(values) if values else 0.0,
            chunks=[],
            unscored=unscored,
            unusable_chunks=n_chunks - len(usable),
            per_judge={n: sum(v) / len(v) if v else 0.0 for n, v in per_judge.items()},
            label_counts=dict(sorted(labels.items())),
            agreement=panel_agreement(panel, usable) if len(names) > 1 else {},
        )
        files.rows([*rows, *judge_run_rows(plan.name, result)])
        output = StageOutput(
            stage="judge",
            model=plan.name,
            key=plan.keys["judge"],
            layer_score=result.composite,
            judge=JudgeSummary(**result.to_dict()),
            units=units,
        )
        # 0 for an unusable extraction (as on layer 1), None for a chunk no judge scored.
        return output, pa.table({PER_CHUNK: pa.array(per_chunk, mask=~scored_chunk)})

    def _judge_names(self, offline: set[str], model_verdicts: Mapping[str, object]) -> list[str]:
        """The judges with verdicts, in the panel's order (the agreement statistics name
        judges in it)."""
        return [j.name for j in self.config.judges if j.name in offline or j.name in model_verdicts]

    def _downstream_stage(
        self, plan: _ModelPlan, spool: _BatchSpool, index: ChunkIndex, files: StageWriter
    ) -> tuple[StageOutput, pa.Table]:
        import pyarrow as pa

        from chatledger.downstream import (
            AgreementMerger,
            ItemSpool,
            combine_agreements,
            get_consumer,
            skipped_consumers,
        )
        from chatledger.downstream import (
            resolve_weights as consumer_weights,
        )

        weights = self.config.weights.consumers
        agreement: dict[str, float | None] = {}
        counts: dict[str, dict[str, dict[str, float]]] = {}
        mergers: dict[str, AgreementMerger] = {}
        # The whole reference's coverage, the same in every batch: consumers reading a field it
        # does not cover were skipped in each conversation and are skipped here.
        covered: tuple[str, ...] | None = None
        units = 0
        try:
            # Each consumer's agreement merged conversation by conversation, in the order the
            # batches were made (issue 34: the outputs of every conversation were held and
            # compared at once); the events it lists go to files as they come.
            for batch in spool.each(plan.name, "downstream"):
                if units == 0:
                    covered = batch.covered
                    skipped = skipped_consumers(covered, weights)
                    mergers = {
                        name: AgreementMerger(get_consumer(name), self.out_dir, EVENTS_LEVEL)
                        for name in consumer_weights(weights)
                        if name not in skipped
                    }
                units += 1
                agreement.update(batch.conversation_agreement)
                counts.update(batch.conversation_counts)
                for conversation, ref_outputs in batch.reference_outputs.items():
                    chal_outputs = batch.challenger_outputs[conversation]
                    for name, merger in mergers.items():
                        merger.add(ref_outputs[name], chal_outputs[name])
                del batch
            if units == 0:
                skipped = skipped_consumers(covered, weights)
                mergers = {
                    name: AgreementMerger(get_consumer(name), self.out_dir, EVENTS_LEVEL)
                    for name in consumer_weights(weights)
                    if name not in skipped
                }
            agreements = {name: merger.result() for name, merger in mergers.items()}
            combined = combine_agreements(agreements, weights, covered)
            files.rows(downstream_rows(plan.name, agreements, combined))
            summary = DownstreamSummary(
                consumers={
                    name: ConsumerSummary(
                        agreement=a.agreement,
                        weight=combined.weights[name],
                        counts=dict(a.counts),
                        **{k: ([] if k == "days" else v) for k, v in a.details.items()},
                    )
                    for name, a in agreements.items()
                },
                downstream_composite=combined.composite,
                skipped={name: list(missing) for name, missing in combined.skipped.items()},
                left_out=dict(combined.left_out),
                renormalisation=combined.renormalisation,
            )
            # The model's part of downstream.json: the summary with each consumer's events
            # (and the daily report's days) copied from the texts their spools wrote as they
            # came (at EVENTS_LEVEL): each list is a marker string in the summary, a piece of
            # its own in the encoder's output, replaced by the list's text.
            part = summary.model_dump(mode="json")
            lists: dict[str, ItemSpool] = {}
            for name, a in agreements.items():
                entry = part["consumers"][name]
                found = {"missed": mergers[name].missed, "invented": mergers[name].invented}
                if "days" in a.details:
                    found["days"] = a.details["days"]
                for key, items in found.items():
                    marker = f"\x00{uuid.uuid4().hex} {len(lists)}\x00"
                    entry[key] = marker
                    lists[encode_basestring(marker)] = items
            pieces: list[str] = []
            for piece in iter_json(part):
                listed = lists.get(piece)
                if listed is None:
                    pieces.append(piece)
                    if len(pieces) < LINES_AT_ONCE:
                        continue
                else:
                    listed.write_json(pieces.append)
                files.lines(pieces)
                pieces = []
            files.lines(pieces)
            del part
        finally:
            for merger in mergers.values():
                merger.close()
        output = StageOutput(
            stage="downstream",
            model=plan.name,
            key=plan.keys["downstream"],
            layer_score=combined.composite,
            downstream=summary,
            conversation_counts={c: counts[c] for c in dict.fromkeys(index.conversations)},
            units=units,
        )
        per_chunk = pa.array([agreement[c] for c in index.conversations], type=pa.float64())
        return output, pa.table({PER_CHUNK: per_chunk})

    def _summarise(
        self,
        plan: _ModelPlan,
        outputs: dict[str, StageOutput],
        weights_used: dict[str, float],
        index: ChunkIndex,
    ) -> tuple[ModelSummary, Row, ModelSeries]:
        """The model's summary, its overall row (after its stages' rows in the score table)
        and its series for the statistics (per-chunk columns read later: _load_series)."""
        facts = plan.facts
        n = len(index.chunk_ids)
        layers: dict[str, float] = {}
        fields: dict[str, float] = {}
        field_counts: dict[str, FieldCounts] = {}
        aggregate = "macro"
        components: dict[str, dict[str, float]] = {}
        calibration: list[CalibrationBin] = []
        problems = [str(p) for p in facts.file_problems]
        invalid, missing = facts.invalid_count, facts.missing
        validity = (n - invalid - missing) / n if n else 0.0
        if "extraction" in outputs:
            output = outputs["extraction"]
            score = output.score
            if score is None or output.layer_score is None:
                raise InputError(f"stage score of {plan.name}: no summary (a damaged stage file)")
            layers["extraction"] = output.layer_score
            fields, components, calibration = score.fields, score.components, score.calibration
            invalid, missing, validity = score.invalid, score.missing, score.validity
            problems, field_counts = score.problems, score.field_counts
            self.reference_partial |= score.partial_reference
            aggregate = output.aggregate or "macro"
        consumers: dict[str, float] = {}
        reasons: dict[str, str] = {}
        consumers_left_out: dict[str, str] = {}
        downstream_note: str | None = None
        if "downstream" in outputs:
            output = outputs["downstream"]
            if output.downstream is not None:
                consumers_left_out = dict(output.downstream.left_out)
                downstream_note = output.downstream.renormalisation
            if output.layer_score is not None:
                layers["downstream"] = output.layer_score
            elif consumers_left_out:
                reasons["downstream"] = NO_EVENTS  # no consumer had an event (DESIGN.md §5)
            if output.downstream is not None:
                consumers = {k: c.agreement for k, c in output.downstream.consumers.items()}
        judge: JudgeSummary | None = None
        if "judge" in outputs:
            output = outputs["judge"]
            judge = output.judge
            layers["judge"] = output.layer_score if output.layer_score is not None else 0.0
            if self.panel_audit.layer_reason is not None:
                reasons["judge"] = self.panel_audit.layer_reason
        # Layer 1's field statistics and the judge's (sum, count) are read back from the
        # stages' per-chunk files when the statistics start (_load_series), all models at once.
        model_series = build_series(
            plan.name,
            {layer: output for layer, output in outputs.items() if layer == "downstream"},
            n_chunks=n,
            chunk_conversations=index.conversations,
            consumer_weights=self.config.weights.consumers,
        )
        if "extraction" in outputs:
            model_series.aggregate = "micro" if aggregate == "micro" else "macro"
        model_series.field_scores = dict(fields)
        model_series.layer_scores = dict(layers)
        combined = overall_of(layers, weights_used, reasons)
        overall = combined.value if combined.value is not None else 0.0
        model_series.overall = overall
        model_series.overall_weights = dict(combined.weights)
        model_series.overall_left_out = dict(combined.left_out)
        overall_row = (plan.name, RUN_LEVEL, "overall", "composite", "score", overall)
        summary_out = ModelSummary(
            name=plan.name,
            file=str(plan.path),
            layers=layers,
            overall=overall,
            layer_weights_used=dict(combined.weights) if combined.left_out else weights_used,
            fields=fields,
            consumers=consumers,
            chunks=n,
            invalid=invalid,
            missing=missing,
            validity_rate=validity,
            usage=Usage(**facts.usage),
            problems=problems,
            judge=judge,
            calibration=calibration,
            field_components=components,
            degenerate=facts.degenerate,
            field_counts=field_counts,
            aggregate=aggregate,
            left_out=dict(combined.left_out),
            renormalisation=combined.note("overall"),
            consumers_left_out=consumers_left_out,
            downstream_renormalisation=downstream_note,
        )
        return summary_out, overall_row, model_series

    def _gold(self, reference_gold: ModelFacts | None, plans: list[_ModelPlan]) -> HumanGold | None:
        if reference_gold is None or reference_gold.gold is None or self.config.gold is None:
            return None
        gold_name = (
            self.config.gold.name or reference_gold.gold_model or Path(str(self.loaded.gold)).stem
        )
        return HumanGold(
            gold=gold_name,
            reference=reference_gold.gold,
            models={p.name: p.facts.gold for p in plans if p.facts.gold is not None},
        )


class _Assembly:
    """The stages of a run's models still to compute, each assembled from the spool into its
    files in ``stages/``: in a thread each, started before the units (``threads``: the
    parallel executors), or one at a time when the run asks for its result."""

    def __init__(
        self,
        run: _Run,
        spool: _BatchSpool,
        store: StageStore,
        index: ChunkIndex,
        scoring: ScoringConfig,
        spec: RunSpec,
        model_judges: Sequence[Any],
        threads: bool,
    ) -> None:
        self.run, self.spool, self.store, self.index = run, spool, store, index
        self.scoring, self.spec, self.model_judges = scoring, spec, model_judges
        self.threads = threads
        self._running: dict[tuple[str, str], Future[StageOutput]] = {}
        self._units = threading.Event()
        self._share = 0.0  # the units' wall time per unit and layer (set by units_done)

    def start(self, plan: _ModelPlan, layer: str) -> None:
        if not self.threads:
            return
        future: Future[StageOutput] = Future()

        def assemble() -> None:
            try:
                future.set_result(self._stage(plan, layer, time.thread_time))
            except BaseException as exc:  # raised in the run when it asks for the stage
                future.set_exception(exc)

        name = f"stage {plan.name} {layer}"
        threading.Thread(target=assemble, name=name, daemon=True).start()
        self._running[(plan.name, layer)] = future

    def raise_failed(self) -> None:
        """Raise what a stage's thread raised, if one did (rather than after the units)."""
        for future in self._running.values():
            if future.done() and (exc := future.exception()) is not None:
                raise exc

    def units_done(self, compute_s: float, n_units: int) -> None:
        self._share = compute_s / max(1, n_units) / len(self.run.config.layers)
        self._units.set()

    def result(self, plan: _ModelPlan, layer: str) -> StageOutput:
        """The stage's output, its files written (its seconds: its own time — its thread's
        CPU time when it overlapped the units — plus its share of the units' wall time)."""
        future = self._running.pop((plan.name, layer), None)
        if future is not None:
            return future.result()
        return self._stage(plan, layer, time.perf_counter)

    def _stage(self, plan: _ModelPlan, layer: str, clock: Callable[[], float]) -> StageOutput:
        run, spool, index = self.run, self.spool, self.index
        t0 = clock()
        with self.store.writing(plan.file_key, STAGE_OF_LAYER[layer]) as files:
            if layer == "extraction":
                output, per_chunk = run._score_stage(
                    plan, spool, index, self.scoring, self.spec, files
                )
            elif layer == "judge":
                output, per_chunk = run._judge_stage(plan, spool, index, self.model_judges, files)
            else:
                output, per_chunk = run._downstream_stage(plan, spool, index, files)
            seconds = clock() - t0
            self._units.wait()  # set before the spool completes, which every stage waits for
            # The units computed every layer of a batch at once: their time is shared out.
            output.seconds = seconds + self._share * output.units
            files.finish(output, per_chunk)
        return output


_Place = tuple[tuple[int, ...], int, int]  # a batch's sorted positions, offset and size


class _SpoolAborted(Exception):
    """The run stopped while a stage waited for batches (its thread ends with this)."""


class _BatchSpool:
    """The units' pickled batch results, by model, in an unnamed file of the run folder (it
    disappears when closed, or with the process): what the run holds is where each one is.

    ``live``: the batches are read while they arrive — the stages of the parallel executors
    are assembled in threads while the units run (issue 34) — so a reader waits for the next
    one until :meth:`complete`. They arrive in the order of their first chunk (the order the
    batches were made), which is what the readers need. Otherwise every batch is added
    before any is read, in any order."""

    def __init__(self, out_dir: Path, *, live: bool = False) -> None:
        self._file = tempfile.TemporaryFile(dir=out_dir)  # noqa: SIM115 - closed by close()
        self._fd = self._file.fileno()  # read and written at offsets: no shared position
        self._where: dict[tuple[str, str], list[_Place]] = {}
        self._end = 0
        self._live = live
        self._changed = threading.Condition()
        self._complete = not live
        self._aborted = False
        self._expected: list[int] = []  # live: the first chunk of each batch (expect)

    def add(self, name: str, layer: str, positions: Sequence[int], blob: bytes) -> None:
        """(One thread adds.)"""
        view = memoryview(blob)
        at = self._end
        while view:
            written = os.pwrite(self._fd, view, at)
            view, at = view[written:], at + written
        place = (tuple(sorted(positions)), self._end, len(blob))
        with self._changed:
            places = self._where.setdefault((name, layer), [])
            if self._live and (
                len(places) >= len(self._expected)
                or not place[0]
                or place[0][0] != self._expected[len(places)]
            ):
                raise RuntimeError("a live batch that was not expected, or out of order")
            places.append(place)
            self._end += len(blob)
            self._changed.notify_all()

    def expect(self, batches: Sequence[Sequence[int]]) -> None:
        """The batches every model's stages will read, in the order they will arrive: a
        live reader then gives a batch's chunks as soon as it comes (it knows where the next
        one starts without waiting for it)."""
        self._expected = [min(positions) if positions else -1 for positions in batches]

    def _firsts(self, name: str, layer: str) -> list[int]:
        """The first chunk of each of this model's batches for this layer, in order."""
        if self._live:
            return self._expected
        places = self._where.get((name, layer), [])
        return sorted(p[0][0] if p[0] else -1 for p in places)

    def complete(self) -> None:
        """Every batch is in: readers stop waiting for more."""
        with self._changed:
            self._complete = True
            self._changed.notify_all()

    def abort(self) -> None:
        """The run stopped: a reader waiting for a batch raises :class:`_SpoolAborted`."""
        with self._changed:
            self._aborted = True
            self._changed.notify_all()

    def _read(self, offset: int, size: int) -> BatchResult:
        parts = []
        while size > 0:
            part = os.pread(self._fd, size, offset)
            if not part:
                raise OSError(f"the batch spool ends before {size} more bytes at {offset}")
            parts.append(part)
            size, offset = size - len(part), offset + len(part)
        result: BatchResult = pickle.loads(b"".join(parts))
        return result

    def _batches(self, name: str, layer: str, *, keep: bool, by_chunk: bool) -> Iterator[_Place]:
        """One model's batches for one layer: as they arrive while the spool is live, then
        (or all at once) the rest in the order they were added — by their first chunk with
        ``by_chunk``. Forgotten here once all are given, unless ``keep``."""
        key = (name, layer)
        given = 0
        while True:
            if self._live and given == len(self._expected):  # all in: no need to wait for more
                if not keep:
                    with self._changed:
                        self._where.pop(key, None)
                return
            with self._changed:
                while not self._complete and given >= len(self._where.get(key, ())):
                    if self._aborted:
                        raise _SpoolAborted
                    self._changed.wait()
                if self._aborted:
                    raise _SpoolAborted
                places = self._where.get(key, [])
                if self._complete:
                    rest = places[given:]
                    if not keep:
                        self._where.pop(key, None)
                    break
                place = places[given]
            given += 1
            yield place
        if by_chunk:
            rest = sorted(rest, key=lambda p: p[0][0] if p[0] else -1)
        yield from rest

    def each(self, name: str, layer: str) -> Iterator[BatchResult]:
        """One model's batch results for one layer in the order they were added, one
        unpickled at a time; forgotten here."""
        for _, offset, size in self._batches(name, layer, keep=False, by_chunk=False):
            yield self._read(offset, size)

    def in_order(
        self, name: str, layer: str, *, keep: bool = False
    ) -> Iterator[tuple[int, BatchResult, bool, bool]]:
        """(chunk position, its batch's result, first and last position of that batch?) for
        every chunk of one model's batches for one layer, in run order. A batch is unpickled
        when its first chunk comes and dropped after its last: batches of whole conversations
        in their order of appearance hold consecutive chunks, so one is held at a time (more
        only while conversations interleave; a chunk is given once the next batch's first
        chunk is known to come after it). Forgotten here unless ``keep``."""
        batches = self._batches(name, layer, keep=keep, by_chunk=True)
        firsts = self._firsts(name, layer)
        waiting: list[tuple[int, int, int]] = []  # (position, batch, index in its positions)
        held: dict[int, tuple[tuple[int, ...], BatchResult]] = {}
        started = 0
        while waiting or started < len(firsts):
            if started < len(firsts) and (not waiting or firsts[started] < waiting[0][0]):
                positions, offset, size = next(batches)  # (waits for it while live)
                if positions:
                    held[started] = (positions, self._read(offset, size))
                    heapq.heappush(waiting, (positions[0], started, 0))
                started += 1
                continue
            position, b, k = heapq.heappop(waiting)
            positions, result = held[b]
            last = k + 1 == len(positions)
            yield position, result, k == 0, last
            if not last:
                heapq.heappush(waiting, (positions[k + 1], b, k + 1))
            else:
                del held[b]

    def close(self) -> None:
        self._file.close()


@dataclass
class _SeriesFiles:
    """A model's series for the statistics and where its per-chunk columns are."""

    series: ModelSeries
    fields: list[str]  # layer 1's fields, in the per-chunk file's order
    score_chunks: Path | None
    judge_chunks: Path | None


def _load_series(
    models: Sequence[_SeriesFiles], n_chunks: int, rows: npt.NDArray[np.intp] | None = None
) -> npt.NDArray[np.float64]:
    """Every model's layer-1 field statistics and judge (sum, count), read back from the
    stages' per-chunk files column by column into one matrix (in the order
    ``compute_run_stats`` lays the columns out); each model's series get views of it, so the
    values exist once (issue 34: every model's series were held, then copied side by side).

    Without ``rows`` the matrix is chunks × columns. With ``rows`` (each chunk's row: its
    conversation's place in order of first appearance) each column is summed per conversation
    as it is read — chunk by chunk in run order, as ``compute_run_stats`` sums them — and the
    matrix is conversations × columns, all the statistics read when the conversation is the
    unit: the chunk matrix (~4.4 kB a chunk for 3 models) never exists, one column of chunks
    at a time does."""
    import pyarrow.parquet as pq

    widths = []
    for model in models:
        widths += [len(statistic_names(f)) for f in model.fields if model.score_chunks]
        widths += [len(JUDGE_COLUMNS)] if model.judge_chunks is not None else []
    if rows is None:
        matrix = np.empty((n_chunks, sum(widths)))
    else:
        n_rows = int(rows.max()) + 1 if rows.size else 0
        matrix = np.zeros((n_rows, sum(widths)))

    def put(column: int, values: npt.NDArray[np.float64]) -> None:
        if rows is None:
            matrix[:, column] = values
        else:
            np.add.at(matrix[:, column], rows, values)

    at = 0
    for model in models:
        series = model.series
        if model.score_chunks is not None:
            with pq.ParquetFile(model.score_chunks) as stored:
                for name in model.fields:
                    width = len(statistic_names(name))
                    names = [stat_column(name, j) for j in range(width)]
                    table = stored.read(columns=names)
                    for j in range(width):
                        put(at + j, table.column(j).to_numpy())
                    del table
                    series.field_stats[name] = matrix[:, at : at + width]
                    at += width
        if model.judge_chunks is not None:
            column = pq.read_table(model.judge_chunks, columns=[PER_CHUNK]).column(0)
            scored = column.is_valid().to_numpy(zero_copy_only=False)
            values = column.fill_null(0.0).to_numpy()
            put(at, np.where(scored, values, 0.0))
            put(at + 1, scored.astype(np.float64))
            series.judge = matrix[:, at : at + 2]
            at += 2
    return matrix


def _panel_is_known(audit: AuditUnit) -> bool:
    """Whether the panel is every judge whatever the audit finds: only ``strict`` drops a
    judge, and only when another passed (none passing keeps them all; see audit_panel)."""
    return audit.mode != "strict" or len(audit.judges) == 1


def _str(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def _peak_memory_mb() -> float:
    """Peak RSS of this process, or of the largest worker process if that is higher."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0


def _scoring_config(loaded: LoadedRunConfig) -> ScoringConfig:
    config = loaded.config
    data: dict[str, Any] = {"matcher": config.matcher}
    if config.weights.fields is not None:
        data["weights"] = config.weights.fields
    if config.thresholds:
        data["thresholds"] = config.thresholds
    if config.weights.aggregate is not None:
        data["aggregate"] = config.weights.aggregate
    try:
        return ScoringConfig.from_mapping(data, schema_version=config.schema_version)
    except ValidationError as exc:
        where, msg = first_validation_error(exc)
        raise InputError(msg, path=loaded.path, field=where or "weights.fields") from None
    except ValueError as exc:
        raise InputError(str(exc), path=loaded.path, field="weights.fields") from None
