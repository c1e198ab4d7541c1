"""Execute a run: layer 1 and layer 3 for every challenger, composites, the run directory.

Work streams one challenger at a time: its extraction file is read, scored, its rows appended
to ``scores.parquet`` and only its summary kept, so memory does not grow with the number of
challengers beyond their summaries.
"""

from __future__ import annotations

import platform
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chatledger.core import (
    Chunk,
    InputError,
    atomic_write_json,
    atomic_writer,
    first_validation_error,
    long_chunk_note,
    prepare_output_dir,
)
from chatledger.corpus import ExtractionFile, read_chunks, read_extractions
from chatledger.downstream import ConsumerOutputs, build_outputs, compare_outputs, merge_outputs
from chatledger.providers import ProviderHub
from chatledger.runs._config import LoadedRunConfig, RunConfig
from chatledger.runs._judging import judge_challenger, judge_rows
from chatledger.runs._models import (
    ModelCalls,
    needs_model_calls,
    plan_extractions,
    run_extractions,
    sample_variance,
)
from chatledger.runs._panel import build_judges, judge_entry
from chatledger.runs._results import ModelSummary, RunResult, layer_weights_used, overall_composite
from chatledger.runs._rows import (
    downstream_by_chunk,
    downstream_rows,
    extraction_rows,
    judge_series,
    series_from_rows,
)
from chatledger.runs._stats import FloatArray, ModelSeries, compute_run_stats, stats_rows
from chatledger.runs._tables import RUN_LEVEL, Row, ScoreTableWriter
from chatledger.score import ScoringConfig, count_degenerate
from chatledger.score import score_records as _score_records

ProgressCallback = Callable[[str, int, int], None]


def _usage_totals(source: ExtractionFile, n_chunks: int) -> dict[str, float]:
    """Tokens, dollars and latency of the scored extractions (sample 0), invalid ones included.

    A line replayed from the call cache (``usage.cached``) took no model time: latency per chunk
    is the mean over the lines that were really called, and they are counted apart.
    """
    totals = {"input_tokens": 0.0, "output_tokens": 0.0, "cost_usd": 0.0, "latency_s": 0.0}
    live = cached = 0
    for record in source.records.values():
        totals["input_tokens"] += record.usage.input_tokens
        totals["output_tokens"] += record.usage.output_tokens
        totals["cost_usd"] += record.usage.cost_usd
        if (record.usage.model_extra or {}).get("cached") is True:
            cached += 1
        else:
            live += 1
            totals["latency_s"] += record.usage.latency_s
    totals["cost_per_chunk_usd"] = totals["cost_usd"] / n_chunks if n_chunks else 0.0
    totals["latency_per_chunk_s"] = totals["latency_s"] / live if live else 0.0
    totals["cached_chunks"] = float(cached)
    extra = [r for sample in source.samples.values() for r in sample.values()]
    if extra:
        totals["repeat_samples_cost_usd"] = sum(r.usage.cost_usd for r in extra)
        totals["repeat_samples_tokens"] = float(
            sum(r.usage.input_tokens + r.usage.output_tokens for r in extra)
        )
    return totals


def _model_name(source: ExtractionFile, configured: str | None) -> str:
    return configured or source.model or Path(source.path).stem


def execute_run(
    loaded: LoadedRunConfig,
    out_dir: Path,
    on_progress: ProgressCallback | None = None,
    *,
    hub: ProviderHub | None = None,
) -> RunResult:
    """Run every configured layer for every challenger and write the run directory.

    Sources that name a model are extracted first (see ``runs._models``); ``hub`` replaces the
    provider hub the run would build from its config (cache, budget, prices, concurrency).
    """
    calls = ModelCalls.for_run(loaded, hub) if needs_model_calls(loaded.config) else None
    try:
        return _execute(loaded, out_dir, on_progress, calls)
    finally:
        if calls is not None:
            calls.close()


def _execute(
    loaded: LoadedRunConfig,
    out_dir: Path,
    on_progress: ProgressCallback | None,
    calls: ModelCalls | None,
) -> RunResult:
    config = loaded.config
    judges = (
        build_judges(loaded, calls.hub if calls is not None else None)
        if "judge" in config.layers
        else []
    )
    started = time.perf_counter()
    scoring = _scoring_config(loaded)
    chunks = read_chunks(loaded.chunks)
    planned = plan_extractions(loaded, out_dir)
    prepare_output_dir(out_dir)
    t0 = time.perf_counter()
    run_extractions(planned, chunks, calls, on_progress)
    extract_s = time.perf_counter() - t0
    written = {plan.where: plan.path for plan in planned}
    reference_path = loaded.reference or written["reference"]
    challenger_paths = [
        path or written[f"challengers.{i}"] for i, path in enumerate(loaded.challengers)
    ]
    reference = read_extractions(reference_path)
    reference_name = _model_name(reference, config.reference.label)
    weights_used, note = layer_weights_used(config.weights.layers, list(config.layers))
    timings: dict[str, float] = {"extraction_s": 0.0, "judge_s": 0.0, "downstream_s": 0.0}
    if planned:
        timings["model_extraction_s"] = extract_s
    # Repeat variance for every file holding repeated samples (a model source with samples > 1,
    # or a file from `chatledger extract --samples n`).
    variance: dict[str, Any] = {}
    if reference.sample_count > 1:
        variance[reference_name] = sample_variance(
            reference,
            reference.records,
            chunks,
            scoring,
            samples=range(1, reference.sample_count),
            against_label="its own sample 0",
        )
    models: list[ModelSummary] = []
    downstream_out: dict[str, Any] = {}
    seen: set[str] = {reference_name}
    # The reference's downstream outputs, built once and compared with every challenger's.
    reference_outputs = None
    if "downstream" in config.layers:
        t0 = time.perf_counter()
        reference_outputs = build_outputs(chunks, reference.records)
        timings["downstream_s"] += time.perf_counter() - t0
    series: list[ModelSeries] = []
    steps = len(challenger_paths) * len(config.layers)
    done = 0
    judgements_path = out_dir / "judgements.jsonl"
    with (
        ScoreTableWriter(out_dir / "scores.parquet") as writer,
        atomic_writer(judgements_path) as judgements,
    ):
        for index, path in enumerate(challenger_paths):
            source = read_extractions(path)
            name = _model_name(source, config.challengers[index].label)
            if name in seen:
                raise InputError(
                    f"model name {name!r} is used twice; give each challenger a unique 'name'",
                    path=loaded.path,
                    field=f"challengers.{index}",
                )
            seen.add(name)
            summary, rows, downstream, downstream_chunks = _score_challenger(
                name, source, reference, chunks, scoring, loaded, timings, reference_outputs
            )
            if source.sample_count > 1:
                variance[name] = sample_variance(
                    source,
                    reference.records,
                    chunks,
                    scoring,
                    samples=range(source.sample_count),
                    against_label="the reference",
                )
            model_series = series_from_rows(name, chunks, rows, summary)
            if judges:
                t0 = time.perf_counter()
                judged = judge_challenger(name, judges, chunks, source.records, judgements)
                timings["judge_s"] += time.perf_counter() - t0
                rows.extend(judge_rows(name, chunks, judged))
                summary.layers["judge"] = judged.composite
                summary.judge = judged.to_dict()
                model_series.layers["judge"] = judge_series(chunks, judged)
            if downstream_chunks is not None:
                model_series.layers["downstream"] = downstream_chunks
            model_series.layer_scores = dict(summary.layers)
            series.append(model_series)
            for layer in config.layers:
                done += 1
                if on_progress:
                    on_progress(f"{name}: {layer}", done, steps)
            layers = {k: v for k, v in summary.layers.items() if k in weights_used}
            summary.overall = overall_composite(layers, weights_used)
            summary.layer_weights_used = weights_used
            rows.append((name, RUN_LEVEL, "overall", "composite", "score", summary.overall))
            writer.write(rows)
            models.append(summary)
            if downstream is not None:
                downstream_out[name] = downstream
        t0 = time.perf_counter()
        stats = compute_run_stats(series, weights_used, scoring.weights, config.stats, config.seed)
        if variance:
            stats["repeat_variance"] = variance
        timings["stats_s"] = time.perf_counter() - t0
        gold = _gold_divergence(loaded, chunks, scoring, reference, config, models)
        writer.write(stats_rows(stats, gold))
    timings["total_s"] = time.perf_counter() - started
    result = RunResult(
        name=config.name,
        out_dir=out_dir,
        layers_run=list(config.layers),
        layer_weights_used=weights_used,
        renormalisation_note=note,
        notes=[n for n in (long_chunk_note(chunks),) if n is not None],
        models=models,
        reference_name=reference_name,
        timings=timings,
        stats=stats,
        human_gold=gold,
    )
    downstream_json = {"reference": reference_name, "models": downstream_out}
    _write_json(out_dir / "downstream.json", downstream_json)
    run_json = _run_json(result, loaded, reference, len(chunks))
    run_json["reference"]["model"] = config.reference.model
    run_json["reference"]["usage"] = _usage_totals(reference, len(chunks))
    run_json["judges"] = [judge_entry(judge) for judge in judges]
    run_json["model_calls"] = calls.to_dict() if calls is not None else None
    _write_json(out_dir / "run.json", run_json)
    return result


def _gold_divergence(
    loaded: LoadedRunConfig,
    chunks: list[Chunk],
    scoring: ScoringConfig,
    reference: ExtractionFile,
    config: RunConfig,
    challengers: list[ModelSummary],
) -> dict[str, Any] | None:
    """How far the reference (and each challenger) is from human gold, on the fields it covers."""
    if loaded.gold is None or config.gold is None:
        return None
    gold = read_extractions(loaded.gold)
    gold_name = config.gold.name or gold.model or loaded.gold.stem

    def against_gold(source: ExtractionFile, name: str) -> dict[str, Any]:
        report = _score_records(
            gold.records,
            source.records,
            chunks,
            scoring,
            reference_model=gold_name,
            challenger_model=name,
        )
        return {
            "composite": report.extraction_composite,
            "fields": {k: s.score for k, s in report.fields.items()},
            "chunks": len(report.chunks),
        }

    models = {
        model.name: against_gold(read_extractions(model.file), model.name) for model in challengers
    }
    ref = against_gold(reference, config.reference.label or reference.model)
    return {"gold": gold_name, "reference": ref, "models": models}


def _scoring_config(loaded: LoadedRunConfig) -> ScoringConfig:
    config = loaded.config
    data: dict[str, Any] = {"matcher": config.matcher}
    if config.weights.fields is not None:
        data["weights"] = config.weights.fields
    if config.thresholds:
        data["thresholds"] = config.thresholds
    try:
        return ScoringConfig.from_mapping(data, schema_version=config.schema_version)
    except ValidationError as exc:
        where, msg = first_validation_error(exc)
        raise InputError(msg, path=loaded.path, field=where or "weights.fields") from None
    except ValueError as exc:
        raise InputError(str(exc), path=loaded.path, field="weights.fields") from None


def _score_challenger(
    name: str,
    source: ExtractionFile,
    reference: ExtractionFile,
    chunks: list[Chunk],
    scoring: ScoringConfig,
    loaded: LoadedRunConfig,
    timings: dict[str, float],
    reference_outputs: dict[str, ConsumerOutputs] | None,
) -> tuple[ModelSummary, list[Row], dict[str, Any] | None, FloatArray | None]:
    config = loaded.config
    rows: list[Row] = []
    layers: dict[str, float] = {}
    fields: dict[str, float] = {}
    consumers: dict[str, float] = {}
    invalid = missing = 0
    validity = 1.0
    problems = [str(p) for p in source.problems]
    components: dict[str, dict[str, float]] = {}
    calibration: list[dict[str, float]] = []
    downstream: dict[str, Any] | None = None
    if "extraction" in config.layers:
        t0 = time.perf_counter()
        report = _score_records(
            reference.records,
            source.records,
            chunks,
            scoring,
            reference_model=reference.model,
            challenger_model=name,
            problems=source.problems,
        )
        timings["extraction_s"] += time.perf_counter() - t0
        rows.extend(extraction_rows(name, report))
        layers["extraction"] = report.extraction_composite
        fields = {k: s.score for k, s in report.fields.items()}
        components = {k: dict(s.components) for k, s in report.fields.items()}
        confidence = report.fields.get("confidence")
        calibration = confidence.reliability if confidence is not None else []
        invalid, missing, validity = report.invalid, report.missing, report.validity_rate
        problems = [str(p) for p in report.problems]
    else:
        invalid = source.invalid_count
        missing = sum(1 for c in chunks if c.chunk_id not in source.records)
        validity = (len(chunks) - invalid - missing) / len(chunks)
    per_chunk: FloatArray | None = None
    if "downstream" in config.layers and reference_outputs is not None:
        t0 = time.perf_counter()
        weights = config.weights.consumers
        challenger_outputs = build_outputs(chunks, source.records)
        down = compare_outputs(
            merge_outputs(reference_outputs), merge_outputs(challenger_outputs), weights
        )
        per_chunk = downstream_by_chunk(chunks, reference_outputs, challenger_outputs, weights)
        timings["downstream_s"] += time.perf_counter() - t0
        rows.extend(downstream_rows(name, down))
        layers["downstream"] = down.downstream_composite
        downstream = down.to_dict()
        consumers = {k: float(v["agreement"]) for k, v in downstream["consumers"].items()}
    summary = ModelSummary(
        name=name,
        file=str(source.path),
        layers=layers,
        overall=0.0,
        layer_weights_used={},
        fields=fields,
        consumers=consumers,
        chunks=len(chunks),
        invalid=invalid,
        missing=missing,
        validity_rate=validity,
        usage=_usage_totals(source, len(chunks)),
        problems=problems,
        calibration=calibration,
        field_components=components,
        degenerate=count_degenerate(reference.records, source.records, chunks).model_dump(),
    )
    return summary, rows, downstream, per_chunk


def _run_json(
    result: RunResult, loaded: LoadedRunConfig, reference: ExtractionFile, n_chunks: int
) -> dict[str, Any]:
    from chatledger import __version__

    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "name": result.name,
        "chatledger_version": __version__,
        "python": platform.python_version(),
        "config": loaded.config.model_dump(mode="json", by_alias=True),
        "config_path": str(loaded.path),
        "chunks": n_chunks,
        "chunks_file": str(loaded.chunks),
        "reference": {
            "name": result.reference_name,
            "file": str(reference.path),
            "problems": [str(p) for p in reference.problems],
        },
        "layers_run": result.layers_run,
        "layer_weights_used": result.layer_weights_used,
        "renormalisation": result.renormalisation_note,
        "notes": result.notes,
        "leaderboard": [m.name for m in result.leaderboard()],
        "models": [m.to_dict() for m in result.models],
        "stats": result.stats,
        "human_gold": result.human_gold,
        "timings": result.timings,
        "peak_memory_mb": peak_kb / 1024.0,
    }


def _write_json(path: Path, data: Any) -> None:
    atomic_write_json(path, data)
