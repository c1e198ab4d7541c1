"""Runs: a YAML config in, a run directory out (run.json, scores.parquet, downstream.json)."""

from chatledger.runs._audit import (
    DEFAULT_SEVERITIES,
    AuditCase,
    AuditCurve,
    audit_cases,
    audit_metrics,
    pitfall_summary,
)
from chatledger.runs._compare import compare_runs
from chatledger.runs._config import (
    DEFAULT_LAYER_WEIGHTS,
    LoadedRunConfig,
    RunConfig,
    load_run_config,
)
from chatledger.runs._execute import execute_run
from chatledger.runs._results import (
    ModelSummary,
    RunResult,
    layer_weights_used,
    overall_composite,
)
from chatledger.runs._tables import RUN_LEVEL, SCORE_SCHEMA, ScoreTableWriter, read_score_table

__all__ = [
    "DEFAULT_LAYER_WEIGHTS",
    "DEFAULT_SEVERITIES",
    "RUN_LEVEL",
    "SCORE_SCHEMA",
    "AuditCase",
    "AuditCurve",
    "LoadedRunConfig",
    "ModelSummary",
    "RunConfig",
    "RunResult",
    "ScoreTableWriter",
    "audit_cases",
    "audit_metrics",
    "compare_runs",
    "execute_run",
    "layer_weights_used",
    "load_run_config",
    "overall_composite",
    "pitfall_summary",
    "read_score_table",
]
