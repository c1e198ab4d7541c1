"""What the schema of a request may add so that a grammar-constrained model ends its reply.

A small local model decoding greedily can loop on one list ("the same three entities, over and
over") until the token limit cuts the reply, which is then invalid JSON. Given to the grammar,
the schema can stop that: every list gets a ``maxItems`` and every free string a ``maxLength``,
so a looping model must close its list and go on. And a message id can only be one of the
chunk's own ids (an ``enum``), so a model cannot cite the worked example's ids instead.

The bounds come from the bundled hand-written gold (36 chunks, DESIGN.md §3's fields): a list
field's bound is the 99th percentile of its item counts per chunk, at least
:data:`MIN_ITEMS`; a text's bound is 1.5 × the 99th percentile of the gold's text lengths,
rounded up to 50 characters. docs/local-models.md gives the table and what the bounds changed.

Scoring is unchanged: a reply is validated and scored as before. The constraints only shape
what a model is *able* to write, and are recorded in every extraction line's fingerprint.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, JsonValue

from chatledger.core import ExtractionV3

MIN_ITEMS = 3
PERCENTILE = 99.0
TEXT_MARGIN = 1.5
TEXT_STEP = 50
MESSAGE_ID_MARK = "x-message-id"

# Item lists inside items (evidence, made_by) and the arc's turning points share one bound each.
_NESTED_PEOPLE = ("made_by",)


class ListBounds(BaseModel):
    """``maxItems`` per list and ``maxLength`` per string for a request's schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fields: dict[str, int]
    """Top-level list fields of the extraction → their maximum number of items."""
    evidence: int
    """Message ids per item (``evidence``) and people per decision (``made_by``)."""
    turning_points: int
    text_chars: int
    """Every free string of an item (texts, names, subjects, reasons)."""
    summary_chars: int
    source: str
    """Where the bounds were read from, and how."""


class SchemaConstraints(BaseModel):
    """How a request's output schema is shaped beyond the plain v3 schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strict: bool = False
    """Every property required, nullable by type union (:func:`providers.strict_schema`)."""
    list_bounds: ListBounds | None = None
    chunk_ids: bool = False
    """Message ids restricted to the chunk's own ids (an ``enum`` per request)."""

    @property
    def per_chunk(self) -> bool:
        return self.chunk_ids

    def fingerprint(self) -> dict[str, JsonValue] | None:
        """What an extraction line records of the constraints; None for none beyond strict
        (so that lines written before constraints existed keep their fingerprint)."""
        if self.list_bounds is None and not self.chunk_ids:
            return None
        bounds = self.list_bounds.model_dump(mode="json") if self.list_bounds else None
        return {"list_bounds": bounds, "evidence_ids": "chunk" if self.chunk_ids else "any"}


def list_bounds_from(extractions: Iterable[ExtractionV3], *, source: str) -> ListBounds:
    """The bounds that the item counts and text lengths of ``extractions`` support."""
    rows = list(extractions)
    if not rows:
        raise ValueError("list bounds need at least one extraction")
    lists = [name for name, value in rows[0] if isinstance(value, list)]
    fields = {name: _items_bound([len(getattr(row, name)) for row in rows]) for name in lists}
    items = [item for row in rows for name in lists for item in getattr(row, name)]
    nested = [len(getattr(item, key)) for item in items for key in ("evidence", *_NESTED_PEOPLE)
              if isinstance(getattr(item, key, None), list)]  # fmt: skip
    turning = [len(row.emotional_arc.turning_points) for row in rows if row.emotional_arc]
    texts = [len(str(getattr(item, key))) for item in items for key in ("text", "question")
             if isinstance(getattr(item, key, None), str)]  # fmt: skip
    return ListBounds(
        fields=fields,
        evidence=_items_bound(nested),
        turning_points=_items_bound(turning),
        text_chars=_chars_bound(texts),
        summary_chars=_chars_bound([len(row.summary) for row in rows]),
        source=source,
    )


def _items_bound(counts: Sequence[int]) -> int:
    if not counts:
        return MIN_ITEMS
    return max(MIN_ITEMS, math.ceil(float(np.percentile(counts, PERCENTILE))))


def _chars_bound(lengths: Sequence[int]) -> int:
    top = float(np.percentile(lengths, PERCENTILE)) if lengths else 0.0
    return max(TEXT_STEP, math.ceil(TEXT_MARGIN * top / TEXT_STEP) * TEXT_STEP)


@cache
def gold_list_bounds() -> ListBounds:
    """The bounds read off the bundled corpus's hand-written gold (the default for local
    models)."""
    folder = resources.files("chatledger").joinpath("data", "corpus", "parts")
    rows = []
    for part in ("part1_gold.jsonl", "part2_gold.jsonl"):
        for line in folder.joinpath(part).read_text("utf-8").splitlines():
            if line.strip():
                rows.append(ExtractionV3.model_validate(json.loads(line)["extraction"]))
    return list_bounds_from(
        rows,
        source=f"bundled gold ({len(rows)} chunks): items at the {PERCENTILE:g}th percentile "
        f"(at least {MIN_ITEMS}), texts at {TEXT_MARGIN:g} x the {PERCENTILE:g}th percentile",
    )


def bound_schema(schema: Mapping[str, Any], bounds: ListBounds) -> dict[str, Any]:
    """``schema`` (the v3 JSON Schema, annotations kept) with ``maxItems`` and ``maxLength``."""
    out = copy.deepcopy(dict(schema))
    for name, limit in bounds.fields.items():
        node = out.get("properties", {}).get(name)
        if isinstance(node, dict):
            node["maxItems"] = limit
            items = node.get("items", {})
            if items.get("type") == "string" and MESSAGE_ID_MARK not in items:
                items["maxLength"] = bounds.text_chars  # topics
    summary = out.get("properties", {}).get("summary")
    if isinstance(summary, dict):
        summary["maxLength"] = bounds.summary_chars
    for definition in out.get("$defs", {}).values():
        for key, node in definition.get("properties", {}).items():
            _bound_property(key, node, bounds)
    return out


def _bound_property(key: str, node: dict[str, Any], bounds: ListBounds) -> None:
    options = node.get("anyOf", [node])
    for option in options:
        kind = option.get("type")
        if kind == "array":
            option["maxItems"] = bounds.turning_points if key == "turning_points" else (
                bounds.evidence)  # fmt: skip
            items = option.get("items", {})
            if items.get("type") == "string" and MESSAGE_ID_MARK not in items:
                items["maxLength"] = bounds.text_chars  # made_by
        elif kind == "string" and "enum" not in option and MESSAGE_ID_MARK not in option:
            option["maxLength"] = bounds.text_chars


def restrict_message_ids(schema: Any, ids: Sequence[str]) -> Any:
    """``schema`` with every message id (marked ``x-message-id``) one of ``ids``; unchanged
    when there are none (an empty enum admits nothing, not even an empty evidence list's
    alternative)."""
    if not ids:
        return schema
    if isinstance(schema, list):
        return [restrict_message_ids(item, ids) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get(MESSAGE_ID_MARK) is True:
        return {**schema, "enum": list(ids)}
    return {key: restrict_message_ids(value, ids) for key, value in schema.items()}
