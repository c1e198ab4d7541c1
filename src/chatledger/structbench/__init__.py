"""LLMStructBench-style email → JSON extraction (DESIGN §8): a seeded email generator, the
DOC / MK / MV / WV metrics, prompting strategies and a rule-based baseline.

    from chatledger.structbench import read_dataset, read_predictions, score_predictions

    report = score_predictions(read_dataset("emails.jsonl"), read_predictions("preds.jsonl"))
    print(report.to_dict()["MV"])

The prompting strategies and the runner need the provider layer; they are imported on first use
(``STRATEGIES``, ``run_strategy``, …) so scoring works without the model SDKs.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatledger.structbench._baseline import (
    BASELINE_MODEL,
    BASELINE_STRATEGY,
    baseline_predictions,
    extract_by_rules,
)
from chatledger.structbench._document import Document, Example, Prediction
from chatledger.structbench._gen_kind import DEPTHS, EMAIL_KINDS, EmailKind
from chatledger.structbench._gen_surface import value_in_text, values_missing_from_text
from chatledger.structbench._generate import (
    DATASET_VERSION,
    DEFAULT_SEED,
    generate_document,
    generate_documents,
)
from chatledger.structbench._io import (
    document_from_dict,
    read_dataset,
    read_predictions,
    write_dataset,
    write_predictions,
)
from chatledger.structbench._metrics import DocumentScore, score_document
from chatledger.structbench._original import original_to_document, read_original
from chatledger.structbench._parse import ParsedOutput, parse_output, strip_wrappers
from chatledger.structbench._paths import flatten, schema_depth, value_depth
from chatledger.structbench._validation import ValidatorCache
from chatledger.structbench._values import normalise_text, values_match
from chatledger.structbench._weights import default_weight, field_importance, resolve_weights

if TYPE_CHECKING:
    from chatledger.structbench._demo import StructbenchDemo, structbench_demo
    from chatledger.structbench._report import (
        METRICS,
        OUTPUT_KINDS,
        StructReport,
        micro_f1,
        score_predictions,
    )
    from chatledger.structbench._rows import PredictionFile, load_prediction_file
    from chatledger.structbench._run import (
        RunOutcome,
        examples_by_schema,
        run_strategy,
        strategy_named,
    )
    from chatledger.structbench._rundir import StructRun, write_structbench_run
    from chatledger.structbench._strategies import (
        STRATEGIES,
        CallOptions,
        Strategy,
        StrategyResult,
    )

_LAZY = {
    # Scoring reports bootstrap intervals (scipy): generating a dataset does not need it.
    "METRICS": "_report",
    "OUTPUT_KINDS": "_report",
    "StructReport": "_report",
    "micro_f1": "_report",
    "score_predictions": "_report",
    "PredictionFile": "_rows",
    "load_prediction_file": "_rows",
    "STRATEGIES": "_strategies",
    "CallOptions": "_strategies",
    "Strategy": "_strategies",
    "StrategyResult": "_strategies",
    "RunOutcome": "_run",
    "examples_by_schema": "_run",
    "run_strategy": "_run",
    "strategy_named": "_run",
    # The run directory and the demo write parquet and the report: imported on first use.
    "StructRun": "_rundir",
    "write_structbench_run": "_rundir",
    "StructbenchDemo": "_demo",
    "structbench_demo": "_demo",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def shipped_dataset_path() -> Path:
    """The generated set shipped with the package (``data/structbench/emails-v1.jsonl``)."""
    return Path(__file__).resolve().parents[1] / "data" / "structbench" / f"{DATASET_VERSION}.jsonl"


__all__ = [
    "BASELINE_MODEL",
    "BASELINE_STRATEGY",
    "DATASET_VERSION",
    "DEFAULT_SEED",
    "DEPTHS",
    "EMAIL_KINDS",
    "METRICS",
    "OUTPUT_KINDS",
    "STRATEGIES",
    "CallOptions",
    "Document",
    "DocumentScore",
    "EmailKind",
    "Example",
    "ParsedOutput",
    "Prediction",
    "PredictionFile",
    "RunOutcome",
    "Strategy",
    "StrategyResult",
    "StructReport",
    "StructRun",
    "StructbenchDemo",
    "ValidatorCache",
    "baseline_predictions",
    "default_weight",
    "document_from_dict",
    "examples_by_schema",
    "extract_by_rules",
    "field_importance",
    "flatten",
    "generate_document",
    "generate_documents",
    "load_prediction_file",
    "micro_f1",
    "normalise_text",
    "original_to_document",
    "parse_output",
    "read_dataset",
    "read_original",
    "read_predictions",
    "resolve_weights",
    "run_strategy",
    "schema_depth",
    "score_document",
    "score_predictions",
    "shipped_dataset_path",
    "strategy_named",
    "strip_wrappers",
    "structbench_demo",
    "value_depth",
    "value_in_text",
    "values_match",
    "values_missing_from_text",
    "write_dataset",
    "write_predictions",
    "write_structbench_run",
]
