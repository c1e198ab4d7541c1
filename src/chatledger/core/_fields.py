"""The 17 scored fields and their default weights (DESIGN.md §3)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

FIELDS_V3: tuple[str, ...] = (
    "topics",
    "entities",
    "decisions",
    "action_items",
    "open_questions",
    "claims",
    "links",
    "warnings",
    "evidence_message_ids",
    "confidence",
    "summary",
    "qa_pairs",
    "emotional_tone",
    "emotional_arc",
    "conversation_phases",
    "implicit_assumptions",
    "negotiation_patterns",
)
FIELDS_V1: tuple[str, ...] = FIELDS_V3[:10]

WEIGHTS_V3: Mapping[str, float] = MappingProxyType(
    {
        "topics": 0.042,
        "entities": 0.048,
        "decisions": 0.060,
        "action_items": 0.090,
        "open_questions": 0.090,
        "claims": 0.150,
        "links": 0.024,
        "warnings": 0.024,
        "evidence_message_ids": 0.030,
        "confidence": 0.042,
        "summary": 0.080,
        "qa_pairs": 0.070,
        "emotional_tone": 0.060,
        "emotional_arc": 0.060,
        "conversation_phases": 0.040,
        "implicit_assumptions": 0.050,
        "negotiation_patterns": 0.040,
    }
)

WEIGHTS_V1: Mapping[str, float] = MappingProxyType(
    {
        "claims": 0.25,
        "action_items": 0.15,
        "open_questions": 0.15,
        "decisions": 0.10,
        "entities": 0.08,
        "topics": 0.07,
        "confidence": 0.07,
        "evidence_message_ids": 0.05,
        "warnings": 0.04,
        "links": 0.04,
    }
)

SCHEMA_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType({"v1": FIELDS_V1, "v3": FIELDS_V3})
SCHEMA_WEIGHTS: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {"v1": WEIGHTS_V1, "v3": WEIGHTS_V3}
)

# Fields whose items carry a ``confidence`` that the calibration field pools.
CONFIDENCE_FIELDS: tuple[str, ...] = ("decisions", "action_items", "open_questions", "claims")
