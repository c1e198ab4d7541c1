"""Layer 1: field-by-field scoring of a challenger extraction against a reference.

The names below are loaded on first use: readers of a run (the gate, stats, the report) need
the run-level arithmetic of :mod:`chatledger.scoring._aggregate` and the field rules, not the
matcher, the 17 field scorers and the file streaming that scoring itself loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger._lazy import lazy_attributes

if TYPE_CHECKING:
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
    from chatledger.scoring._calibration import (
        expected_calibration_error,
        reliability_bins,
    )
    from chatledger.scoring._combine import (
        NO_EVENTS,
        Combined,
        combine,
        combine_arrays,
    )
    from chatledger.scoring._config import (
        WEIGHT_TOLERANCE,
        ScoringConfig,
        Thresholds,
        WeightError,
        load_scoring_config,
        merge_weights,
        weight_value,
    )
    from chatledger.scoring._context import (
        ChunkContext,
        ScoringContext,
    )
    from chatledger.scoring._degenerate import (
        DUPLICATE_AT,
        DegenerateCounter,
        DegenerateOutputs,
        count_degenerate,
        duplicated_items,
    )
    from chatledger.scoring._fields import (
        f1,
        jaccard,
        normalise_url,
    )
    from chatledger.scoring._pairing import (
        EntityPairing,
        pair_entities,
        pair_phases,
        pair_turning_points,
        range_iou,
    )
    from chatledger.scoring._rules import (
        COMPONENT_LABELS,
        FIELD_RULES,
        FieldRule,
        label,
        rules_markdown,
    )
    from chatledger.scoring._run import (
        ChunkResult,
        FieldCountsDict,
        FieldSummary,
        ScoreReport,
        aggregate_of,
        score_chunk,
        score_records,
        summarise_chunks,
    )
    from chatledger.scoring._stream import (
        score_files,
    )
    from chatledger.scoring._types import (
        FIELD_SCORERS,
        FieldScore,
        ScorerSpec,
        field_scorer,
    )

# name → the module that defines it (FIELD_SCORERS: the module that fills the registry)
_WHERE = {
    "AGGREGATES": "_aggregate",
    "COMPONENT_LABELS": "_rules",
    "FIELD_RULES": "_rules",
    "FieldRule": "_rules",
    "label": "_rules",
    "rules_markdown": "_rules",
    "DUPLICATE_AT": "_degenerate",
    "FIELD_SCORERS": "_fields",
    "WEIGHT_TOLERANCE": "_config",
    "Aggregate": "_aggregate",
    "Combined": "_combine",
    "NO_EVENTS": "_combine",
    "combine": "_combine",
    "combine_arrays": "_combine",
    "ChunkContext": "_context",
    "ChunkResult": "_run",
    "DegenerateOutputs": "_degenerate",
    "EntityPairing": "_pairing",
    "FieldScore": "_types",
    "FieldCountsDict": "_run",
    "FieldSummary": "_run",
    "ScoreReport": "_run",
    "ScorerSpec": "_types",
    "ScoringConfig": "_config",
    "ScoringContext": "_context",
    "Thresholds": "_config",
    "WeightError": "_config",
    "aggregate_of": "_run",
    "chunk_statistics": "_aggregate",
    "composite_value": "_aggregate",
    "count_degenerate": "_degenerate",
    "DegenerateCounter": "_degenerate",
    "duplicated_items": "_degenerate",
    "expected_calibration_error": "_calibration",
    "f1": "_fields",
    "field_scorer": "_types",
    "field_value": "_aggregate",
    "jaccard": "_fields",
    "load_scoring_config": "_config",
    "macro_value": "_aggregate",
    "merge_weights": "_config",
    "micro_parts": "_aggregate",
    "normalise_url": "_fields",
    "pair_entities": "_pairing",
    "pair_phases": "_pairing",
    "pair_turning_points": "_pairing",
    "range_iou": "_pairing",
    "reliability_bins": "_calibration",
    "resolve_aggregate": "_aggregate",
    "score_chunk": "_run",
    "score_files": "_stream",
    "score_records": "_run",
    "statistic_names": "_aggregate",
    "summarise_chunks": "_run",
    "weight_value": "_config",
}

__all__ = [
    "AGGREGATES",
    "COMPONENT_LABELS",
    "DUPLICATE_AT",
    "FIELD_RULES",
    "FIELD_SCORERS",
    "NO_EVENTS",
    "WEIGHT_TOLERANCE",
    "Aggregate",
    "ChunkContext",
    "ChunkResult",
    "Combined",
    "DegenerateCounter",
    "DegenerateOutputs",
    "EntityPairing",
    "FieldCountsDict",
    "FieldRule",
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
    "combine",
    "combine_arrays",
    "composite_value",
    "count_degenerate",
    "duplicated_items",
    "expected_calibration_error",
    "f1",
    "field_scorer",
    "field_value",
    "jaccard",
    "label",
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
    "rules_markdown",
    "score_chunk",
    "score_files",
    "score_records",
    "statistic_names",
    "summarise_chunks",
    "weight_value",
]


__getattr__ = lazy_attributes(__name__, _WHERE, globals())
