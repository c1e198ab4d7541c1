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

import itertools
import math
import pickle
import resource
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chatledger.core import (
    InputError,
    Problem,
    RecordStatus,
    atomic_writer,
    file_sha256,
    first_validation_error,
    prepare_output_dir,
)
from chatledger.corpus import index_extraction_lines, iter_chunks, read_indexed_records
from chatledger.judge import Graded
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
    aggregate_verdicts,
    judge_rows,
    judgement_lines_of_texts,
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
from chatledger.runs._rows import downstream_rows, extraction_rows
from chatledger.runs._series import build_series
from chatledger.runs._stages import (
    ConsumerSummary,
    DownstreamSummary,
    ScoreSummary,
    StageOutput,
    StageStore,
    safe_file_name,
    stage_key,
)
from chatledger.runs._stats import ModelSeries, compute_run_stats, stats_rows
from chatledger.runs._tables import RUN_LEVEL, Row, ScoreTableWriter
from chatledger.runs._units import (
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
    aggregate_of,
    chunk_statistics,
    statistic_names,
    summarise_chunks,
)

ProgressCallback = Callable[[str, int, int], None]
LAYER_STAGES = ("extraction", "judge", "downstream")
STAGE_OF_LAYER = {"extraction": "score", "judge": "judge", "downstream": "downstream"}
# Batches of at least this many chunks (whole conversations), about four per worker: enough
# to keep every worker busy to the end, few enough that dispatch costs nothing.
MIN_BATCH_CHUNKS = 25
# And at most this many: what a unit holds while it computes grows with its batch, and past a
# few hundred chunks a larger batch saves nothing (issue 34: 2,500-chunk batches at 10k).
MAX_BATCH_CHUNKS = 200


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
    facts: ModelFacts
    keys: dict[str, str] = field(default_factory=dict)  # layer → stage key
    reused: dict[str, tuple[StageOutput, list[Row]]] = field(default_factory=dict)

    @property
    def file_key(self) -> str:
        return safe_file_name(self.name)


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
        # Stage: the judges' audit (docs/judges.md): under strict, the panel is who passed.
        self.panel_audit = self._audit_panel(judges, chunks_path, reference_path)
        offline_judges = [j for j in offline_judges if j.name in self.panel_audit.panel]
        model_judges = [j for j in model_judges if j.name in self.panel_audit.panel]
        spec = RunSpec(
            chunks_path=str(chunks_path),
            reference_path=str(reference_path),
            scoring=scoring,
            layers=tuple(config.layers),
            offline_judges=tuple(j.name for j in offline_judges),
            consumer_weights=(
                tuple(config.weights.consumers.items()) if config.weights.consumers else None
            ),
        )
        # What each file holds as a whole (and the chunk order), all at once on the executor.
        units: list[Any] = [IndexUnit(str(chunks_path))]
        units.append(ModelUnit(spec, "reference", str(reference_path), is_reference=True))
        units += [
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
        index: ChunkIndex = described[0]
        reference_facts: ModelFacts = described[1]
        challenger_facts: list[ModelFacts] = described[2 : 2 + len(challenger_paths)]
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
            }
        )
        plans = self._plan_models(challenger_paths, challenger_facts, reference_name, spec)

        # Stages score / judge / downstream: every batch of every model still to compute.
        n_chunks = len(index.chunk_ids)
        target = max(MIN_BATCH_CHUNKS, math.ceil(n_chunks / (4 * worker_count(self.pool))))
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
        # run holds a few bytes per batch, and unpickles one model's at a time to assemble it.
        by_model = _BatchSpool(self.out_dir)
        for group_units, pickled in zip(groups, self.pool.imap(run_unit, groups), strict=True):
            raise_if_interrupted()  # a Ctrl-C swallowed in a gc callback (runs._lifetime)
            for unit, parts in zip(group_units.units, pickled, strict=True):
                for layer, blob in parts.items():
                    by_model.add(unit.name, layer, blob)
        raise_if_interrupted()
        compute_s = time.perf_counter() - t0
        # Wall time of the units on the executor (the part more workers can shorten).
        self.timings["units_s"] = compute_s
        n_units = sum(len(g.units) for g in groups)

        store = StageStore(self.out_dir)
        models: list[ModelSummary] = []
        series: list[ModelSeries] = []
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
                outputs = self._assemble(
                    plan,
                    by_model,
                    index,
                    scoring,
                    spec,
                    model_judges,
                    n_units,
                    compute_s,
                )
                for layer in LAYER_STAGES:
                    if layer in outputs and layer not in plan.reused:
                        store.save(plan.file_key, *outputs[layer])
                summary, rows, model_series = self._summarise(plan, outputs, weights_used, index)
                for line in outputs["judge"][0].lines if "judge" in outputs else []:
                    judgements.write(line)
                writer.write(rows)
                models.append(summary)
                series.append(model_series)
                if "downstream" in outputs:
                    down = outputs["downstream"][0].downstream
                    if down is not None:
                        downstream.add(plan.name, down.model_dump(mode="json"))
                if plan.facts.variance is not None:
                    variance[plan.name] = plan.facts.variance
                if self.on_progress:
                    self.on_progress(f"{plan.name}: {', '.join(config.layers)}", done, len(plans))
            by_model.close()
            t0 = time.perf_counter()
            stats = compute_run_stats(
                series,
                weights_used,
                scoring.weights,
                config.stats,
                config.seed,
                chunk_conversations=index.conversations,
                all_fields=scoring.fields,
            )
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
        self,
        paths: list[Path],
        facts: list[ModelFacts],
        reference_name: str,
        spec: RunSpec,
    ) -> list[_ModelPlan]:
        config = self.config
        store = StageStore(self.out_dir)
        seen = {reference_name}
        plans: list[_ModelPlan] = []
        reference_path = Path(spec.reference_path)
        chunks_path = Path(spec.chunks_path)
        for i, (path, fact) in enumerate(zip(paths, facts, strict=True)):
            name = config.challengers[i].label or fact.source_model or path.stem
            if name in seen:
                raise InputError(
                    f"model name {name!r} is used twice; give each challenger a unique 'name'",
                    path=self.loaded.path,
                    field=f"challengers.{i}",
                )
            seen.add(name)
            plan = _ModelPlan(i, name, path, fact)
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

    def _assemble(
        self,
        plan: _ModelPlan,
        spool: _BatchSpool,
        index: ChunkIndex,
        scoring: ScoringConfig,
        spec: RunSpec,
        model_judges: Sequence[Any],
        n_units: int,
        compute_s: float,
    ) -> dict[str, tuple[StageOutput, list[Row]]]:
        """Each layer's stage output of one model: reused, or assembled from its batches (read
        back from the spool one layer at a time)."""
        out: dict[str, tuple[StageOutput, list[Row]]] = {}
        position = {cid: i for i, cid in enumerate(index.chunk_ids)}
        for layer in self.config.layers:
            stage = STAGE_OF_LAYER[layer]
            if layer in plan.reused:
                output, rows = plan.reused[layer]
                self.stage_records.append(
                    StageRecord(stage=stage, model=plan.name, key=output.key, reused=True)
                )
                out[layer] = (output, rows)
                continue
            t0 = time.perf_counter()
            results = spool.take(plan.name, layer)
            if layer == "extraction":
                out[layer] = self._score_stage(plan, results, index, position, scoring, spec)
            elif layer == "judge":
                out[layer] = self._judge_stage(plan, results, index, position, model_judges)
            else:
                out[layer] = self._downstream_stage(plan, results, index)
            seconds = time.perf_counter() - t0
            # The units computed every layer of a batch at once: their time is shared out.
            share = compute_s / max(1, n_units) * len(results) / len(self.config.layers)
            out[layer][0].seconds = seconds + share
            out[layer][0].units = len(results)
            self.timings[f"{layer}_s"] += seconds + share
            self.stage_records.append(
                StageRecord(
                    stage=stage,
                    model=plan.name,
                    key=plan.keys[layer],
                    seconds=seconds + share,
                    units=len(results),
                )
            )
        return out

    def _score_stage(
        self,
        plan: _ModelPlan,
        results: list[BatchResult],
        index: ChunkIndex,
        position: dict[str, int],
        scoring: ScoringConfig,
        spec: RunSpec,
    ) -> tuple[StageOutput, list[Row]]:
        chunk_results = {}
        excluded: list[str] = []
        id_problems: list[tuple[int, list[Problem]]] = []
        for batch in results:
            chunk_results.update(batch.chunk_results)
            excluded += batch.excluded
            id_problems.append((min(batch.positions), batch.id_problems))
        ordered = [chunk_results[c] for c in index.chunk_ids if c in chunk_results]
        summaries, composite = summarise_chunks(ordered, scoring)
        aggregate = aggregate_of(ordered, scoring)
        id_list = [p for _, problems in sorted(id_problems, key=lambda x: x[0]) for p in problems]
        report = ScoreReport(
            schema_version=scoring.schema_version,
            matcher=scoring.matcher,
            reference_model=spec.reference_model,
            challenger_model=plan.name,
            fields=summaries,
            extraction_composite=composite,
            chunks=ordered,
            problems=[*plan.facts.file_problems, *plan.facts.unknown_problems, *id_list],
            excluded_chunks=sorted(excluded, key=position.__getitem__),
            unknown_chunks=plan.facts.unknown_chunks,
            unknown_message_ids=len(id_list),
            aggregate=aggregate,
        )
        rows = extraction_rows(plan.name, report)
        weights = {name: s.weight for name, s in summaries.items()}
        n_chunks = len(index.chunk_ids)
        per_chunk: list[float | None] = [None] * n_chunks
        fields: dict[str, list[float | None]] = {}
        field_stats: dict[str, list[list[float]]] = {}
        for chunk in ordered:
            i = position[chunk.chunk_id]
            total = 0.0
            ok = chunk.status is RecordStatus.OK
            for name, score in chunk.fields.items():
                fields.setdefault(name, [None] * n_chunks)[i] = score.score
                if name not in field_stats:
                    width = len(statistic_names(name))
                    field_stats[name] = [[0.0] * width for _ in range(n_chunks)]
                field_stats[name][i] = chunk_statistics(name, score, ok)
                total += weights[name] * score.score
            per_chunk[i] = total
        confidence = summaries.get("confidence")
        output = StageOutput(
            stage="score",
            model=plan.name,
            key=plan.keys["extraction"],
            layer_score=composite,
            per_chunk=per_chunk,
            fields_per_chunk=fields,
            field_stats=field_stats,
            aggregate=aggregate,
            score=ScoreSummary(
                fields={k: s.score for k, s in summaries.items()},
                field_counts={k: FieldCounts(**s.counts()) for k, s in summaries.items()},
                partial_reference=any(r.partial for r in ordered),
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
        return output, rows

    def _judge_stage(
        self,
        plan: _ModelPlan,
        results: list[BatchResult],
        index: ChunkIndex,
        position: dict[str, int],
        model_judges: Sequence[Any],
    ) -> tuple[StageOutput, list[Row]]:
        usable: list[str] = []
        verdicts: dict[str, dict[str, Graded | None]] = {}
        texts: dict[str, dict[str, str | None]] = {}
        for batch in results:
            usable += batch.usable
            for name, found in batch.verdicts.items():
                verdicts.setdefault(name, {}).update(zip(batch.usable, found, strict=True))
            for name, written in batch.verdict_texts.items():
                texts.setdefault(name, {}).update(zip(batch.usable, written, strict=True))
        usable.sort(key=position.__getitem__)
        if model_judges:
            # Model judges call through the run's one hub (rate limits, cache, budget), here.
            chunks = worker_chunks(str(self.loaded.chunks))
            records = worker_extractions(str(plan.path)).records
            by_id = {c.chunk_id: c for c in chunks}
            pairs = [(by_id[c], records[c].extraction) for c in usable]
            for judge in model_judges:
                graded = judge.judge_many(pairs)
                verdicts[judge.name] = dict(zip(usable, graded, strict=True))
                texts[judge.name] = dict(zip(usable, map(verdict_text, graded), strict=True))
        names = [j.name for j in self.config.judges]
        names = [n for n in names if n in verdicts]
        # In the panel's order (the agreement statistics name judges in it), usable chunks only.
        verdicts = {name: {c: verdicts[name][c] for c in usable} for name in names}
        judged = aggregate_verdicts(names, index.chunk_ids, usable, verdicts)
        rows = judge_rows(plan.name, index.chunk_ids, judged)
        composites = {j.chunk_id: j.composite for j in judged.chunks}
        # 0 for an unusable extraction (as on layer 1), None for a chunk no judge scored.
        per_chunk = [composites.get(c, 0.0) for c in index.chunk_ids]
        output = StageOutput(
            stage="judge",
            model=plan.name,
            key=plan.keys["judge"],
            layer_score=judged.composite,
            per_chunk=per_chunk,
            judge=JudgeSummary(**judged.to_dict()),
            lines=judgement_lines_of_texts(plan.name, names, usable, texts),
        )
        return output, rows

    def _downstream_stage(
        self, plan: _ModelPlan, results: list[BatchResult], index: ChunkIndex
    ) -> tuple[StageOutput, list[Row]]:
        from chatledger.downstream import compare_outputs, merge_outputs

        reference: dict[str, Any] = {}
        challenger: dict[str, Any] = {}
        agreement: dict[str, float | None] = {}
        counts: dict[str, dict[str, dict[str, float]]] = {}
        for batch in results:
            reference.update(batch.reference_outputs)
            challenger.update(batch.challenger_outputs)
            agreement.update(batch.conversation_agreement)
            counts.update(batch.conversation_counts)
        # The whole reference's coverage, the same in every batch: consumers reading a field it
        # does not cover were skipped in each conversation and are skipped here.
        covered = results[0].covered if results else None
        report = compare_outputs(
            merge_outputs(reference),
            merge_outputs(challenger),
            self.config.weights.consumers,
            covered,
        )
        rows = downstream_rows(plan.name, report)  # no composite row when there is none
        summary = DownstreamSummary(
            consumers={
                name: ConsumerSummary(**c.to_dict()) for name, c in report.consumers.items()
            },
            downstream_composite=report.downstream_composite,
            skipped={name: list(missing) for name, missing in report.skipped.items()},
            left_out=dict(report.left_out),
            renormalisation=report.renormalisation,
        )
        output = StageOutput(
            stage="downstream",
            model=plan.name,
            key=plan.keys["downstream"],
            layer_score=report.downstream_composite,
            per_chunk=[agreement[c] for c in index.conversations],
            downstream=summary,
            conversation_counts={c: counts[c] for c in dict.fromkeys(index.conversations)},
        )
        return output, rows

    def _summarise(
        self,
        plan: _ModelPlan,
        outputs: dict[str, tuple[StageOutput, list[Row]]],
        weights_used: dict[str, float],
        index: ChunkIndex,
    ) -> tuple[ModelSummary, list[Row], ModelSeries]:
        facts = plan.facts
        n = len(index.chunk_ids)
        layers: dict[str, float] = {}
        rows: list[Row] = []
        fields: dict[str, float] = {}
        field_counts: dict[str, FieldCounts] = {}
        aggregate = "macro"
        components: dict[str, dict[str, float]] = {}
        calibration: list[CalibrationBin] = []
        problems = [str(p) for p in facts.file_problems]
        invalid, missing = facts.invalid_count, facts.missing
        validity = (n - invalid - missing) / n if n else 0.0
        if "extraction" in outputs:
            output, extraction = outputs["extraction"]
            rows += extraction
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
            output, down = outputs["downstream"]
            rows += down
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
            output, judged = outputs["judge"]
            rows += judged
            judge = output.judge
            layers["judge"] = output.layer_score if output.layer_score is not None else 0.0
            if self.panel_audit.layer_reason is not None:
                reasons["judge"] = self.panel_audit.layer_reason
        model_series = build_series(
            plan.name,
            {layer: output for layer, (output, _) in outputs.items()},
            n_chunks=n,
            chunk_conversations=index.conversations,
            consumer_weights=self.config.weights.consumers,
        )
        model_series.field_scores = dict(fields)
        model_series.layer_scores = dict(layers)
        combined = overall_of(layers, weights_used, reasons)
        overall = combined.value if combined.value is not None else 0.0
        model_series.overall = overall
        model_series.overall_weights = dict(combined.weights)
        model_series.overall_left_out = dict(combined.left_out)
        rows.append((plan.name, RUN_LEVEL, "overall", "composite", "score", overall))
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
        return summary_out, rows, model_series

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


class _BatchSpool:
    """The units' pickled batch results, by model, in an unnamed file of the run folder (it
    disappears when closed, or with the process): what the run holds is where each one is."""

    def __init__(self, out_dir: Path) -> None:
        self._file = tempfile.TemporaryFile(dir=out_dir)  # noqa: SIM115 - closed by close()
        self._where: dict[tuple[str, str], list[tuple[int, int]]] = {}
        self._end = 0

    def add(self, name: str, layer: str, blob: bytes) -> None:
        self._file.seek(self._end)
        self._file.write(blob)
        self._where.setdefault((name, layer), []).append((self._end, len(blob)))
        self._end += len(blob)

    def take(self, name: str, layer: str) -> list[BatchResult]:
        """One model's batch results for one layer (the fields its stage reads), in the order
        they were added; forgotten here."""
        results: list[BatchResult] = []
        for offset, size in self._where.pop((name, layer), []):
            self._file.seek(offset)
            results.append(pickle.loads(self._file.read(size)))
        return results

    def close(self) -> None:
        self._file.close()


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
