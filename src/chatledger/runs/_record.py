"""The run's typed record (``chatledger.record.ConversationRun``) from what the stages made."""

from __future__ import annotations

from pathlib import Path

from chatledger.downstream import resolve_weights
from chatledger.record import (
    ConversationRun,
    InputFile,
    JudgeInfo,
    ModelCallsInfo,
    ModelResult,
    ReferenceInfo,
    StageRecord,
    Usage,
)
from chatledger.runs._config import LoadedRunConfig
from chatledger.runs._judge_audit import PanelAudit
from chatledger.runs._results import ModelSummary, RunResult


def _model_result(m: ModelSummary, configured: str | None) -> ModelResult:
    return ModelResult(
        name=m.name,
        file=m.file,
        configured_file=configured,
        overall=m.overall,
        layers=m.layers,
        layer_weights_used=m.layer_weights_used,
        fields=m.fields,
        consumers=m.consumers,
        chunks=m.chunks,
        invalid=m.invalid,
        missing=m.missing,
        validity_rate=m.validity_rate,
        usage=m.usage,
        judge=m.judge,
        calibration=m.calibration,
        field_components=m.field_components,
        degenerate=m.degenerate,
        problems=m.problems,
        field_counts=m.field_counts,
        aggregate="micro" if m.aggregate == "micro" else "macro",
        left_out=m.left_out,
        renormalisation=m.renormalisation,
        consumers_left_out=m.consumers_left_out,
        downstream_renormalisation=m.downstream_renormalisation,
    )


def build_record(
    result: RunResult,
    loaded: LoadedRunConfig,
    *,
    reference_path: Path,
    reference_model: str | None,
    reference_problems: list[str],
    reference_usage: dict[str, float],
    n_chunks: int,
    judges: list[JudgeInfo],
    model_calls: ModelCallsInfo | None,
    inputs: list[InputFile],
    executor: str,
    stages: list[StageRecord],
    peak_memory_mb: float,
    chunk_ids: list[str],
    chunk_conversations: list[str],
    field_weights: dict[str, float],
    scored_fields: list[str],
    reference_is_human: bool = False,
    panel_audit: PanelAudit | None = None,
) -> ConversationRun:
    config = loaded.config
    configured = {c.label: c.file for c in config.challengers if c.label}
    return ConversationRun(
        name=result.name,
        config=config.model_dump(mode="json", by_alias=True),
        config_path=str(loaded.path),
        chunks=n_chunks,
        chunks_file=str(loaded.chunks),
        chunks_configured=config.chunks,
        reference=ReferenceInfo(
            name=result.reference_name,
            file=str(reference_path),
            configured_file=config.reference.file,
            model=reference_model,
            problems=reference_problems,
            usage=Usage.model_validate(reference_usage),
        ),
        layers_run=result.layers_run,
        layer_weights_used=result.layer_weights_used,
        renormalisation=result.renormalisation_note,
        notes=result.notes,
        leaderboard=[m.name for m in result.leaderboard()],
        models=[_model_result(m, configured.get(m.name)) for m in result.models],
        stats=result.stats,
        human_gold=result.human_gold,
        timings=result.timings,
        peak_memory_mb=peak_memory_mb,
        judges=judges,
        model_calls=model_calls,
        inputs=inputs,
        executor=executor,
        stages=stages,
        reference_is_human=reference_is_human,
        chunk_ids=chunk_ids,
        chunk_conversations=chunk_conversations,
        field_weights=field_weights,
        scored_fields=scored_fields,
        consumer_weights=resolve_weights(config.weights.consumers),
        judge_audit=panel_audit.mode if panel_audit is not None else None,
        judge_audits=list(panel_audit.audits) if panel_audit is not None else [],
        judges_left_out=dict(panel_audit.judges_left_out) if panel_audit is not None else {},
    )
