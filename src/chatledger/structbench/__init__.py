"""LLMStructBench-style email → JSON extraction (DESIGN §8): a seeded email generator, the
DOC / MK / MV / WV metrics, prompting strategies and a rule-based baseline.

    from chatledger.structbench import read_dataset, read_predictions, score_predictions

    report = score_predictions(read_dataset("emails.jsonl"), read_predictions("preds.jsonl"))
    print(report.to_dict()["MV"])

The prompting strategies and the runner need the provider layer; they are imported on first use
(``STRATEGIES``, ``run_strategy``, …) so scoring works without the model SDKs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from chatledger._lazy import lazy_attributes
from chatledger.structbench.baseline import (
    BASELINE_MODEL,
    BASELINE_STRATEGY,
    baseline_predictions,
    extract_by_rules,
)
from chatledger.structbench.dataset import (
    Document,
    Example,
    Prediction,
    ValidatorCache,
    default_weight,
    document_from_dict,
    field_importance,
    flatten,
    original_to_document,
    read_dataset,
    read_original,
    read_predictions,
    resolve_weights,
    schema_depth,
    value_depth,
    write_dataset,
    write_predictions,
)
from chatledger.structbench.generate import (
    DATASET_VERSION,
    DEFAULT_SEED,
    DEPTHS,
    EMAIL_KINDS,
    EmailKind,
    generate_document,
    generate_documents,
    value_in_text,
    values_missing_from_text,
)
from chatledger.structbench.score import (
    DocumentScore,
    ParsedOutput,
    normalise_text,
    parse_output,
    score_document,
    strip_wrappers,
    values_match,
)

if TYPE_CHECKING:
    from chatledger.structbench._demo import StructbenchDemo, structbench_demo
    from chatledger.structbench.aggregate import (
        METRICS,
        OUTPUT_KINDS,
        PredictionFile,
        StructReport,
        load_prediction_file,
        micro_f1,
        score_predictions,
    )
    from chatledger.structbench.prompting import (
        STRATEGIES,
        CallOptions,
        RunOutcome,
        Strategy,
        StrategyResult,
        examples_by_schema,
        run_strategy,
        strategy_named,
    )
    from chatledger.structbench.rundir import StructRun, write_structbench_run

# dataset, score, generate and baseline load with the package; the parts below are imported on
# first use of one of their names.
_LAZY = {
    # Scoring reports bootstrap intervals (scipy): generating a dataset does not need it.
    "METRICS": "aggregate",
    "OUTPUT_KINDS": "aggregate",
    "StructReport": "aggregate",
    "micro_f1": "aggregate",
    "score_predictions": "aggregate",
    "PredictionFile": "aggregate",
    "load_prediction_file": "aggregate",
    # The strategies and the runner need the provider layer.
    "STRATEGIES": "prompting",
    "CallOptions": "prompting",
    "Strategy": "prompting",
    "StrategyResult": "prompting",
    "RunOutcome": "prompting",
    "examples_by_schema": "prompting",
    "run_strategy": "prompting",
    "strategy_named": "prompting",
    # The run directory and the demo write parquet and the report: imported on first use.
    "StructRun": "rundir",
    "write_structbench_run": "rundir",
    "StructbenchDemo": "_demo",
    "structbench_demo": "_demo",
}


__getattr__ = lazy_attributes(__name__, _LAZY, globals())


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
