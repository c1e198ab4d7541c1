"""Per-document scores summed up: a predictions file against a dataset (:class:`StructReport`:
means, bootstrap intervals, breakdowns, bad-output counts) and the leaderboard rows of several
files. Needs scipy (``chatledger.stats``), so ``chatledger.structbench`` loads it on first use.
Builds on ``score`` and ``dataset``.
"""

from chatledger.structbench.aggregate._report import (
    MAX_BOOTSTRAP_CELLS,
    METRICS,
    MIN_RESAMPLES,
    OUTPUT_KINDS,
    StructReport,
    micro_f1,
    score_predictions,
)
from chatledger.structbench.aggregate._rows import (
    PredictionFile,
    Row,
    ScoredFile,
    load_prediction_file,
    score_files,
)

__all__ = [
    "MAX_BOOTSTRAP_CELLS",
    "METRICS",
    "MIN_RESAMPLES",
    "OUTPUT_KINDS",
    "PredictionFile",
    "Row",
    "ScoredFile",
    "StructReport",
    "load_prediction_file",
    "micro_f1",
    "score_files",
    "score_predictions",
]
