"""Layer 1: field-by-field scoring of a challenger extraction against a reference."""

from chatledger.scoring import _fields as _fields  # registers the 17 field scorers
from chatledger.scoring._aggregate import (
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
from chatledger.scoring._calibration import expected_calibration_error, reliability_bins
from chatledger.scoring._config import (
    WEIGHT_TOLERANCE,
    ScoringConfig,
    Thresholds,
    WeightError,
    load_scoring_config,
    merge_weights,
    weight_value,
)
from chatledger.scoring._context import ChunkContext, ScoringContext
from chatledger.scoring._degenerate import (
    DUPLICATE_AT,
    DegenerateOutputs,
    count_degenerate,
    duplicated_items,
)
from chatledger.scoring._fields import f1, jaccard, normalise_url
from chatledger.scoring._pairing import (
    EntityPairing,
    pair_entities,
    pair_phases,
    pair_turning_points,
    range_iou,
)
from chatledger.scoring._run import (
    ChunkResult,
    FieldSummary,
    ScoreReport,
    aggregate_of,
    score_chunk,
    score_records,
    summarise_chunks,
)
from chatledger.scoring._stream import score_files
from chatledger.scoring._types import FIELD_SCORERS, FieldScore, ScorerSpec, field_scorer

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
