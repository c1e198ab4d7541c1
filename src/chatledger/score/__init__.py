"""Layer 1: field-by-field scoring of a challenger extraction against a reference."""

from chatledger.score import _fields as _fields  # registers the 17 field scorers
from chatledger.score._aggregate import (
    AGGREGATES,
    Aggregate,
    chunk_statistics,
    composite_value,
    field_value,
    macro_value,
    micro_parts,
    resolve_aggregate,
    statistic_names,
)
from chatledger.score._calibration import expected_calibration_error, reliability_bins
from chatledger.score._config import (
    WEIGHT_TOLERANCE,
    ScoringConfig,
    Thresholds,
    WeightError,
    load_scoring_config,
    merge_weights,
    weight_value,
)
from chatledger.score._context import ChunkContext, ScoringContext
from chatledger.score._degenerate import (
    DUPLICATE_AT,
    DegenerateOutputs,
    count_degenerate,
    duplicated_items,
)
from chatledger.score._fields import f1, jaccard, normalise_url
from chatledger.score._pairing import (
    EntityPairing,
    pair_entities,
    pair_phases,
    pair_turning_points,
    range_iou,
)
from chatledger.score._run import (
    ChunkResult,
    FieldSummary,
    ScoreReport,
    aggregate_of,
    score_chunk,
    score_records,
    summarise_chunks,
)
from chatledger.score._stream import score_files
from chatledger.score._types import FIELD_SCORERS, FieldScore, ScorerSpec, field_scorer

__all__ = [
    "AGGREGATES",
    "DUPLICATE_AT",
    "FIELD_SCORERS",
    "WEIGHT_TOLERANCE",
    "Aggregate",
    "ChunkContext",
    "ChunkResult",
    "DegenerateOutputs",
    "EntityPairing",
    "FieldScore",
    "FieldSummary",
    "ScoreReport",
    "ScorerSpec",
    "ScoringConfig",
    "ScoringContext",
    "Thresholds",
    "WeightError",
    "aggregate_of",
    "chunk_statistics",
    "composite_value",
    "count_degenerate",
    "duplicated_items",
    "expected_calibration_error",
    "f1",
    "field_scorer",
    "field_value",
    "jaccard",
    "load_scoring_config",
    "macro_value",
    "merge_weights",
    "micro_parts",
    "normalise_url",
    "pair_entities",
    "pair_phases",
    "pair_turning_points",
    "range_iou",
    "reliability_bins",
    "resolve_aggregate",
    "score_chunk",
    "score_files",
    "score_records",
    "statistic_names",
    "summarise_chunks",
    "weight_value",
]
