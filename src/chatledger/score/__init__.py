"""Layer 1: field-by-field scoring of a challenger extraction against a reference."""

from chatledger.score import _fields as _fields  # registers the 17 field scorers
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
    score_chunk,
    score_records,
    summarise_chunks,
)
from chatledger.score._stream import score_files
from chatledger.score._types import FIELD_SCORERS, FieldScore, ScorerSpec, field_scorer

__all__ = [
    "DUPLICATE_AT",
    "FIELD_SCORERS",
    "WEIGHT_TOLERANCE",
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
    "count_degenerate",
    "duplicated_items",
    "expected_calibration_error",
    "f1",
    "field_scorer",
    "jaccard",
    "load_scoring_config",
    "merge_weights",
    "normalise_url",
    "pair_entities",
    "pair_phases",
    "pair_turning_points",
    "range_iou",
    "reliability_bins",
    "score_chunk",
    "score_files",
    "score_records",
    "summarise_chunks",
    "weight_value",
]
