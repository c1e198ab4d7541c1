"""Phase 1.5 of schema selection (DESIGN.md §9): prompt variants for a field that passed the
screen with consistency below 0.50, re-measured, the most consistent kept.

Variants of a candidate's instruction, built from the candidate itself: a more explicit
definition (what counts as one item, what does not), an example item (from the field's shape,
every key shown), and output constraints (order, length, the messages' own words). A variant
is only an instruction; measuring it (k repeated extractions, consistency with the field's own
scorer) is the caller's ``measure`` — a model run, or the simulated extractor.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from chatledger.select._candidates import Candidate

CONSISTENCY_FLOOR = 0.50


@dataclass(frozen=True)
class PromptVariant:
    name: str
    instruction: str


def example_item(candidate: Candidate) -> dict[str, Any] | Any:
    """One placeholder item (a list field) or value, every key of the shape filled by type."""
    schema = TypeAdapter(candidate.shape).json_schema()
    defs = schema.get("$defs", {})
    node = schema.get("items", schema)
    if "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return _placeholder(node, defs)


def _placeholder(node: dict[str, Any], defs: dict[str, Any]) -> Any:
    if "$ref" in node:
        return _placeholder(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "enum" in node:
        return node["enum"][0]
    if "anyOf" in node:
        return _placeholder(next(n for n in node["anyOf"] if n.get("type") != "null"), defs)
    kind = node.get("type")
    if kind == "object":
        return {k: _placeholder(v, defs) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        return [_placeholder(node.get("items", {"type": "string"}), defs)]
    return {"number": 0.5, "integer": 1, "boolean": False}.get(str(kind), "…")


def prompt_variants(candidate: Candidate) -> list[PromptVariant]:
    """The base instruction and three variants of it."""
    base = candidate.instruction
    example = json.dumps(example_item(candidate), ensure_ascii=False)
    return [
        PromptVariant("base", base),
        PromptVariant(
            "explicit",
            f"{base} One item per distinct {candidate.name.replace('_', ' ')} the messages state "
            "outright; never merge two into one or split one into two; leave out what is only "
            "implied.",
        ),
        PromptVariant("example", f"{base} Each item looks like: {example}"),
        PromptVariant(
            "constrained",
            f"{base} List items in the order they occur, each in under 12 words, using the "
            "messages' own words; no item twice.",
        ),
    ]


@dataclass(frozen=True)
class VariantSearch:
    """Consistency of each variant, the base's and the best's."""

    field: str
    consistency: dict[str, float]  # variant name → measured consistency
    best: PromptVariant

    @property
    def before(self) -> float:
        return self.consistency["base"]

    @property
    def after(self) -> float:
        return self.consistency[self.best.name]


def search_variants(
    candidate: Candidate,
    measure: Callable[[PromptVariant], float],
    variants: Sequence[PromptVariant] | None = None,
) -> VariantSearch:
    """Measure every variant (the base first) and keep the most consistent (the base on ties)."""
    chosen = list(variants) if variants is not None else prompt_variants(candidate)
    if not chosen or chosen[0].name != "base":
        raise ValueError("the variants must start with the base instruction")
    measured = {v.name: float(measure(v)) for v in chosen}
    best = max(chosen, key=lambda v: (measured[v.name], v.name == "base"))
    return VariantSearch(candidate.name, measured, best)


def needs_variants(consistency: float, passed: bool, floor: float = CONSISTENCY_FLOOR) -> bool:
    """Phase 1.5 takes the fields that passed the screen with consistency below the floor."""
    return passed and consistency < floor
