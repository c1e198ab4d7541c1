"""Runs: a YAML config in, a run directory out (run.json, scores.parquet, downstream.json).

The names below are loaded on first use: readers of a run (the gate, report, stats) import
``chatledger.runs._series`` and its neighbours, and must not pay for the run's config, its
model calls and its executors (extraction, the providers, pyarrow's writers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger._lazy import lazy_attributes

if TYPE_CHECKING:
    from chatledger.runs._audit import (
        DEFAULT_SEVERITIES,
        AuditCase,
        AuditCurve,
        audit_cases,
        audit_metrics,
        pitfall_summary,
    )
    from chatledger.runs._compare import RunComparison, compare_runs
    from chatledger.runs._config import (
        DEFAULT_LAYER_WEIGHTS,
        LoadedRunConfig,
        RunConfig,
        load_run_config,
    )
    from chatledger.runs._execute import execute_run
    from chatledger.runs._judge_audit import AuditInput, audit_inputs, audit_judge
    from chatledger.runs._results import (
        ModelSummary,
        RunResult,
        layer_weights_used,
        overall_composite,
    )
    from chatledger.runs._tables import (
        RUN_LEVEL,
        ScoreTableWriter,
        read_score_table,
        score_schema,
    )

# name → the module that defines it
_WHERE = {
    "DEFAULT_LAYER_WEIGHTS": "_config",
    "DEFAULT_SEVERITIES": "_audit",
    "RUN_LEVEL": "_tables",
    "AuditCase": "_audit",
    "AuditCurve": "_audit",
    "AuditInput": "_judge_audit",
    "audit_inputs": "_judge_audit",
    "audit_judge": "_judge_audit",
    "LoadedRunConfig": "_config",
    "ModelSummary": "_results",
    "RunComparison": "_compare",
    "RunConfig": "_config",
    "RunResult": "_results",
    "ScoreTableWriter": "_tables",
    "audit_cases": "_audit",
    "audit_metrics": "_audit",
    "compare_runs": "_compare",
    "execute_run": "_execute",
    "layer_weights_used": "_results",
    "load_run_config": "_config",
    "overall_composite": "_results",
    "pitfall_summary": "_audit",
    "read_score_table": "_tables",
    "score_schema": "_tables",
}

__all__ = [
    "DEFAULT_LAYER_WEIGHTS",
    "DEFAULT_SEVERITIES",
    "RUN_LEVEL",
    "AuditCase",
    "AuditCurve",
    "AuditInput",
    "LoadedRunConfig",
    "ModelSummary",
    "RunComparison",
    "RunConfig",
    "RunResult",
    "ScoreTableWriter",
    "audit_cases",
    "audit_inputs",
    "audit_judge",
    "audit_metrics",
    "compare_runs",
    "execute_run",
    "layer_weights_used",
    "load_run_config",
    "overall_composite",
    "pitfall_summary",
    "read_score_table",
    "score_schema",
]


__getattr__ = lazy_attributes(__name__, _WHERE, globals())
