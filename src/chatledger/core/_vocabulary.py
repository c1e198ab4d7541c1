"""Enumerations of schema v3 (DESIGN.md §3). A schema file may extend them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

DEFAULT_VOCABULARY: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "entity_type": (
            "person",
            "organization",
            "location",
            "date",
            "event",
            "product",
            "other",
        ),
        "status": ("open", "done"),
        "polarity": ("pro", "con", "neutral"),
        "severity": ("low", "medium", "high"),
        "emotion": (
            "joy",
            "trust",
            "fear",
            "surprise",
            "sadness",
            "disgust",
            "anger",
            "anticipation",
            "neutral",
        ),
        "trajectory": ("improving", "worsening", "stable", "volatile"),
        "phase": (
            "opening",
            "small_talk",
            "information_exchange",
            "problem_solving",
            "negotiation",
            "conflict",
            "decision",
            "planning",
            "resolution",
            "closing",
        ),
        "negotiation_pattern": (
            "anchoring",
            "concession",
            "compromise",
            "ultimatum",
            "deflection",
            "appeal_to_fairness",
            "elicit_preference",
            "self_need",
            "other_need",
            "undervalue_partner",
            "showing_empathy",
            "promote_coordination",
            "small_talk",
            "no_need",
        ),
    }
)


@dataclass(frozen=True)
class Vocabulary:
    """Allowed values per enumeration; defaults plus any extension from a schema file."""

    values: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: DEFAULT_VOCABULARY)

    def allowed(self, kind: str) -> tuple[str, ...]:
        return self.values[kind]

    def extended(self, extra: Mapping[str, list[str] | tuple[str, ...]]) -> Vocabulary:
        """A vocabulary with ``extra`` values appended (unknown kinds are an error)."""
        merged = dict(self.values)
        for kind, added in extra.items():
            if kind not in merged:
                known = ", ".join(sorted(merged))
                raise KeyError(f"unknown enumeration {kind!r} (known: {known})")
            merged[kind] = tuple(dict.fromkeys([*merged[kind], *added]))
        return Vocabulary(MappingProxyType(merged))


DEFAULT = Vocabulary()
