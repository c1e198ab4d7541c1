"""A conversation run as an inspect_ai ``.eval`` log (``chatledger export inspect``).

One log holds the whole run: one sample per (model, chunk), in leaderboard order, each with

- ``input``: the chunk's conversation (from the run's chunks file), ``target``: the reference's
  extraction, ``output``: the challenger's extraction (both as indented JSON; an invalid or
  missing line says so);
- two dict scores from ``scores.parquet``: ``fields`` (the chunk's layer-1 score of every
  field) and ``layers`` (the chunk's extraction and judge composites and its validity); the
  components behind them are in the score's metadata;
- metadata: model, chunk id, conversation id, the line's status.

``results.scores`` holds per model (the ``scorer`` of each score) one score per field and per
layer, plus ``overall`` and ``validity``: ``mean`` and ``stderr`` are inspect's own metrics over
that model's samples, ``run_json`` is the figure ``run.json`` records (what the report shows;
it differs from ``mean`` where the run pools instead of averaging chunks: ``confidence`` is
1 − the pooled ECE, a ``micro`` aggregate pools items), and ``ci_low``/``ci_high`` are the
run's bootstrap interval when it has statistics. ``results.metadata["chatledger"]`` repeats the
run-level figures per model for programs. docs/inspect.md has the whole mapping.

inspect_ai is the optional extra ``inspect``; it is imported only here, when a log is written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pyarrow.parquet as pq

from chatledger.core import Chunk, InputError, RecordStatus, atomic_path, require_extra
from chatledger.corpus import ExtractionFile, read_chunks, read_extractions
from chatledger.record import ConversationRun, ModelResult, StructbenchRun, read_run_record
from chatledger.runs import RUN_LEVEL

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalMetric, EvalSample, EvalScore
    from inspect_ai.scorer import SampleScore

INSPECT_EXTRA = "pip install 'chatledger[inspect]'"
SCORES_FILE = "scores.parquet"
DEFAULT_FILE = "inspect.eval"
FIELDS_SCORER = "fields"  # the sample score holding the chunk's field scores
LAYERS_SCORER = "layers"  # the sample score holding the chunk's layer composites and validity
RUN_METRIC = "run_json"  # the metric that is run.json's own figure


@dataclass(frozen=True)
class InspectExport:
    """What :func:`export_inspect_log` wrote."""

    path: Path
    samples: int
    chunks: int
    models: list[str]
    notes: list[str] = field(default_factory=list)


@dataclass
class _ChunkScores:
    """One model's per-chunk rows of scores.parquet, sorted into the two sample scores."""

    fields: dict[str, float] = field(default_factory=dict)  # field → its score
    layers: dict[str, float] = field(default_factory=dict)  # extraction, judge, validity
    # field → component → value (text_f1, polarity_accuracy …), the figures behind a score
    field_components: dict[str, dict[str, float]] = field(default_factory=dict)
    # layer → part → value (the judge's completeness, content_accuracy, hallucination)
    layer_components: dict[str, dict[str, float]] = field(default_factory=dict)


def _require_inspect() -> None:
    require_extra("inspect", "export inspect")


def _read_conversation_run(run_dir: Path) -> ConversationRun:
    if not run_dir.is_dir():
        raise InputError("not a run directory (no such folder)", path=run_dir)
    run = read_run_record(run_dir)
    if isinstance(run, StructbenchRun):
        raise InputError(
            "a structbench run: only conversation runs (chatledger run, the demo's run/) "
            "export to inspect",
            path=run_dir,
        )
    return run


def _read_chunk_scores(path: Path) -> dict[str, dict[str, _ChunkScores]]:
    """model → chunk id → its scores, chunks in the order the table holds them."""
    if not path.is_file():
        raise InputError("the run directory has no scores.parquet", path=path)
    try:
        table = pq.read_table(
            path,
            columns=["model", "chunk_id", "layer", "field", "component", "value"],
            filters=[("chunk_id", "!=", RUN_LEVEL), ("layer", "in", ["extraction", "judge"])],
        )
    except (OSError, ValueError) as exc:  # pyarrow's errors are both
        raise InputError(f"not a readable score table ({exc})", path=path) from None
    out: dict[str, dict[str, _ChunkScores]] = {}
    columns = [table.column(name).to_pylist() for name in table.column_names]
    for model, chunk_id, layer, fname, component, value in zip(*columns, strict=True):
        scores = out.setdefault(str(model), {}).setdefault(str(chunk_id), _ChunkScores())
        number = float(value)
        if layer == "extraction" and component == "score":
            if fname == "composite":
                scores.layers["extraction"] = number
            elif fname == "validity":
                scores.layers["validity"] = number
            else:
                scores.fields[str(fname)] = number
        elif layer == "judge" and fname == "composite" and component == "score":
            scores.layers["judge"] = number
        elif layer == "extraction":
            scores.field_components.setdefault(str(fname), {})[str(component)] = number
        else:
            part = str(fname) if component == "score" else f"{fname}.{component}"
            scores.layer_components.setdefault(str(layer), {})[part] = number
    return out


def _find_input(run_dir: Path, stored: str | None, configured: str | None) -> Path | None:
    """An input file of the run: where run.json says it was, else where the config's relative
    path puts it beside a moved run directory (as the report looks for it)."""
    candidates = [Path(stored)] if stored else []
    if configured:
        candidates += [run_dir.parent / configured, run_dir / configured]
    return next((p for p in candidates if p.is_file()), None)


def _read_inputs(
    run: ConversationRun, run_dir: Path, notes: list[str]
) -> tuple[dict[str, Chunk], ExtractionFile | None, dict[str, ExtractionFile]]:
    chunks: dict[str, Chunk] = {}
    path = _find_input(run_dir, run.chunks_file, run.chunks_configured)
    if path is None:
        notes.append(f"the run's chunks file ({run.chunks_file}) is gone: inputs show chunk ids")
    else:
        try:
            chunks = {c.chunk_id: c for c in read_chunks(path)}
        except InputError as exc:
            notes.append(f"the chunks file cannot be read ({exc}): inputs show chunk ids")
    reference = _read_extraction_file(
        "the reference", run_dir, run.reference.file, run.reference.configured_file, notes
    )
    challengers: dict[str, ExtractionFile] = {}
    for model in run.models:
        found = _read_extraction_file(model.name, run_dir, model.file, model.configured_file, notes)
        if found is not None:
            challengers[model.name] = found
    return chunks, reference, challengers


def _read_extraction_file(
    who: str, run_dir: Path, stored: str, configured: str | None, notes: list[str]
) -> ExtractionFile | None:
    path = _find_input(run_dir, stored, configured)
    if path is None:
        notes.append(f"the extraction file of {who} ({stored}) is gone: not shown")
        return None
    try:
        return read_extractions(path)
    except InputError as exc:
        notes.append(f"the extraction file of {who} cannot be read ({exc}): not shown")
        return None


def _conversation_text(chunk: Chunk) -> str:
    lines = [chunk.title] if chunk.title else []
    for message in chunk.messages:
        when = f"[{message.timestamp}] " if message.timestamp else ""
        lines.append(f"{when}{message.speaker}: {message.text}  ({message.id})")
    return "\n".join(lines)


def _extraction_text(file: ExtractionFile | None, chunk_id: str, indent: int | None = 2) -> str:
    if file is None:
        return "(the extraction file is not available)"
    record = file.get(chunk_id)
    if record.status is RecordStatus.OK and record.extraction is not None:
        data = record.extraction.model_dump(mode="json")
        return json.dumps(data, indent=indent, ensure_ascii=False)
    problems = "; ".join(p.message for p in record.problems)
    return f"({record.status.value} extraction{': ' + problems if problems else ''})"


def _metric(name: str, value: float) -> EvalMetric:
    from inspect_ai.log import EvalMetric

    return EvalMetric(name=name, value=value)


def _sample_metrics(values: list[SampleScore]) -> dict[str, EvalMetric]:
    """inspect's own ``mean`` and ``stderr`` over the samples' values."""
    from inspect_ai.scorer import MetricProtocol, mean, stderr

    if not values:
        return {}
    out: dict[str, EvalMetric] = {}
    for name, metric in (("mean", mean()), ("stderr", stderr())):
        # ``Metric`` is a union with the deprecated form that takes scores, not sample scores.
        found = cast(MetricProtocol, metric)(values)
        if not isinstance(found, int | float):
            raise TypeError(f"inspect's {name} gave {type(found).__name__}, not a number")
        out[name] = _metric(name, float(found))
    return out


def _score(
    run: ConversationRun,
    model: ModelResult,
    name: str,
    per_chunk: list[SampleScore],
    recorded: float | None,
    interval_key: str,
    layer: str,
) -> EvalScore:
    from inspect_ai.log import EvalScore

    metrics = _sample_metrics(per_chunk)
    if recorded is not None:
        metrics[RUN_METRIC] = _metric(RUN_METRIC, recorded)
    interval = run.stats.interval(model.name, interval_key) if run.stats is not None else None
    if interval is not None:
        metrics["ci_low"] = _metric("ci_low", interval.low)
        metrics["ci_high"] = _metric("ci_high", interval.high)
    # inspect view lists a score by its name only: the name says whose it is.
    return EvalScore(
        name=f"{model.name}/{name}",
        scorer=model.name,
        scored_samples=len(per_chunk),
        unscored_samples=0,
        metrics=metrics,
        metadata={"model": model.name, "layer": layer, "figure": name},
    )


def _model_scores(
    run: ConversationRun, model: ModelResult, chunks: Mapping[str, _ChunkScores]
) -> list[EvalScore]:
    """Overall, each layer, validity and each field of one model (run.json's order)."""
    from inspect_ai.scorer import SampleScore, Score

    def values(pick: str, key: str) -> list[SampleScore]:
        out = []
        for chunk_id, scores in chunks.items():
            found = (scores.fields if pick == FIELDS_SCORER else scores.layers).get(key)
            if found is not None:
                out.append(SampleScore(score=Score(value=found), sample_id=chunk_id))
        return out

    result = [_score(run, model, "overall", [], model.overall, "overall", "overall")]
    for layer in [*run.layers_run, *(k for k in model.layers if k not in run.layers_run)]:
        recorded = model.layers.get(layer)
        per_chunk = values(LAYERS_SCORER, layer)
        if recorded is None and not per_chunk:
            continue
        result.append(_score(run, model, layer, per_chunk, recorded, layer, layer))
    validity = values(LAYERS_SCORER, "validity")
    result.append(
        _score(run, model, "validity", validity, model.validity_rate, "validity", "extraction")
    )
    names = list(model.fields)
    names += sorted({f for s in chunks.values() for f in s.fields} - set(names))
    for name in names:
        result.append(
            _score(
                run,
                model,
                name,
                values(FIELDS_SCORER, name),
                model.fields.get(name),
                f"extraction.{name}",
                "extraction",
            )
        )
    return result


def _sample_ids(pairs: list[tuple[str, str]]) -> Iterator[str]:
    seen: set[str] = set()
    for model, chunk_id in pairs:
        sample_id = base = f"{model}/{chunk_id}"
        n = 1
        while sample_id in seen:
            n += 1
            sample_id = f"{base}#{n}"
        seen.add(sample_id)
        yield sample_id


def _samples(
    run: ConversationRun,
    table: dict[str, dict[str, _ChunkScores]],
    chunks: dict[str, Chunk],
    reference: ExtractionFile | None,
    challengers: dict[str, ExtractionFile],
) -> list[EvalSample]:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, ModelUsage
    from inspect_ai.scorer import Score

    pairs = [(name, c) for name in run.model_names for c in table.get(name, {})]
    samples: list[EvalSample] = []
    for sample_id, (name, chunk_id) in zip(_sample_ids(pairs), pairs, strict=True):
        scores = table[name][chunk_id]
        chunk = chunks.get(chunk_id)
        text = _conversation_text(chunk) if chunk is not None else f"(chunk {chunk_id})"
        target = _extraction_text(reference, chunk_id)
        challenger = challengers.get(name)
        answer = _extraction_text(challenger, chunk_id)
        answer_line = _extraction_text(challenger, chunk_id, indent=None)
        record = challenger.get(chunk_id) if challenger is not None else None
        usage = record.usage if record is not None else None
        sample_scores = {
            FIELDS_SCORER: Score(
                value=dict(scores.fields), answer=answer_line, metadata=scores.field_components
            ),
            LAYERS_SCORER: Score(value=dict(scores.layers), metadata=scores.layer_components),
        }
        samples.append(
            EvalSample(
                id=sample_id,
                epoch=1,
                input=text,
                target=target,
                messages=[ChatMessageUser(content=text), ChatMessageAssistant(content=answer)],
                output=ModelOutput.from_content(model=name, content=answer),
                scores=sample_scores,
                metadata={
                    "model": name,
                    "chunk_id": chunk_id,
                    "conversation_id": chunk.conversation_id if chunk is not None else None,
                    "reference": run.reference.name,
                    "status": record.status.value if record is not None else None,
                },
                model_usage={}
                if usage is None
                else {
                    name: ModelUsage(
                        input_tokens=usage.input_tokens,
                        output_tokens=usage.output_tokens,
                        total_tokens=usage.input_tokens + usage.output_tokens,
                        total_cost=usage.cost_usd,
                    )
                },
                total_time=usage.latency_s if usage is not None else None,
            )
        )
    return samples


def _own_version() -> str | None:
    """This ChatLedger's version, from its installed metadata (not ``chatledger.__version__``:
    importing the package root would import everything it re-exports)."""
    try:
        return metadata.version("chatledger")
    except metadata.PackageNotFoundError:
        return None


def _run_figures(run: ConversationRun) -> dict[str, object]:
    """The run-level figures of run.json, per model, for programs reading the log."""
    return {
        "run": run.name,
        "reference": run.reference.name,
        "chunks": run.chunks,
        "layers_run": run.layers_run,
        "layer_weights_used": run.layer_weights_used,
        "leaderboard": run.model_names,
        "models": {
            m.name: {
                "overall": m.overall,
                "layers": m.layers,
                "fields": m.fields,
                "validity_rate": m.validity_rate,
                "chunks": m.chunks,
                "invalid": m.invalid,
                "missing": m.missing,
                "aggregate": m.aggregate,
            }
            for m in run.models
        },
    }


def _build_log(run: ConversationRun, run_dir: Path, notes: list[str]) -> tuple[EvalLog, int]:
    """The log, and how many chunks its samples cover."""
    from inspect_ai import __version__ as inspect_version
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalPlan,
        EvalPlanStep,
        EvalResults,
        EvalSpec,
        EvalStats,
        HeadlineMetric,
    )
    from inspect_ai.model import ModelConfig, ModelUsage

    table = _read_chunk_scores(run_dir / SCORES_FILE)
    chunks, reference, challengers = _read_inputs(run, run_dir, notes)
    samples = _samples(run, table, chunks, reference, challengers)
    record_path = run_dir / "run.json"
    digest = hashlib.sha256(record_path.read_bytes()).hexdigest()
    created = datetime.fromtimestamp(record_path.stat().st_mtime, tz=UTC).isoformat()
    names = run.model_names
    scores = [s for name in names for s in _model_scores(run, run.model(name), table.get(name, {}))]
    chunk_ids = list(dict.fromkeys(c for name in names for c in table.get(name, {})))
    # The log listing's one number: the leader's overall, as run.json has it.
    headline = HeadlineMetric(scorer=names[0], score=f"{names[0]}/overall", metric=RUN_METRIC)
    spec = EvalSpec(
        eval_id=digest[:22],
        run_id=digest[22:44],
        created=created,
        task=run.name,
        task_id=digest[44:],
        task_display_name=run.name,
        task_description=f"{len(names)} challengers against {run.reference.name}",
        task_attribs={"layers": run.layers_run},
        dataset=EvalDataset(
            name=Path(run.chunks_file).name,
            location=run.chunks_file,
            samples=len(chunk_ids),
            sample_ids=chunk_ids,
            shuffled=False,
        ),
        model=names[0] if len(names) == 1 else f"chatledger/{len(names)}-models",
        model_roles={"reference": ModelConfig(model=run.reference.model or run.reference.name)},
        config=EvalConfig(epochs=1),
        packages={"chatledger": run.chatledger_version, "inspect_ai": inspect_version},
        metadata={
            "chatledger": {
                "run_dir": str(run_dir),
                "challengers": names,
                "exported_by": _own_version(),
            }
        },
        headline_metric=headline,
    )
    results = EvalResults(
        total_samples=len(samples),
        completed_samples=len(samples),
        scores=scores,
        headline=headline,
        metadata={"chatledger": _run_figures(run)},
    )
    usage = {
        m.name: ModelUsage(
            input_tokens=int(m.usage.input_tokens),
            output_tokens=int(m.usage.output_tokens),
            total_tokens=int(m.usage.input_tokens + m.usage.output_tokens),
            total_cost=m.usage.cost_usd,
        )
        for m in run.models
    }
    log = EvalLog(
        status="success",
        eval=spec,
        plan=EvalPlan(
            name="chatledger run",
            steps=[EvalPlanStep(solver="chatledger run", params={"config": run.config_path})],
        ),
        results=results,
        stats=EvalStats(started_at=created, completed_at=created, model_usage=usage),
        samples=samples,
        metadata={"chatledger_notes": notes} if notes else {},
    )
    return log, len(chunk_ids)


def export_inspect_log(run_dir: str | Path, out: str | Path | None = None) -> InspectExport:
    """Write the conversation run in ``run_dir`` as an inspect ``.eval`` log at ``out``
    (default ``run_dir/inspect.eval``). A missing or non-run directory, a structbench run and
    a missing inspect_ai are one-line :class:`InputError` s."""
    run_dir = Path(run_dir)
    run = _read_conversation_run(run_dir)
    if not run.models:
        raise InputError("the run has no models to export", path=run_dir / "run.json")
    _require_inspect()
    from inspect_ai.log import write_eval_log

    notes: list[str] = []
    log, chunks = _build_log(run, run_dir, notes)
    target = Path(out) if out is not None else run_dir / DEFAULT_FILE
    with atomic_path(target) as temporary:
        write_eval_log(log, temporary, format="eval")
    return InspectExport(
        path=target,
        samples=len(log.samples or []),
        chunks=chunks,
        models=run.model_names,
        notes=notes,
    )
