"""The request of one selection extraction: the chunk, the candidate fields asked (each with
its instruction) in a prompt style, and the JSON Schema of exactly those fields.

Five prompt styles, the tournament's second axis (Phase 2): ``plain`` (the fields and their
instructions), ``explicit`` (plus what counts as one item), ``example`` (plus one example
object of every field asked, from the fields' shapes), ``constrained`` (plus output limits) and
``field-guide`` (all three). A field's instruction is its candidate's, or the prompt variant
Phase 1.5 kept for it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import JsonValue, TypeAdapter

from chatledger.core import FIELDS_V3, Chunk, Vocabulary, extraction_json_schema
from chatledger.extraction import render_chunk
from chatledger.providers import ChatMessage, CompletionRequest, OutputSchema, strict_schema
from chatledger.select._candidates import CANDIDATES
from chatledger.select._variants import example_item

STYLES: tuple[str, ...] = ("plain", "explicit", "example", "constrained", "field-guide")

_TASK = """You extract structured data from one chunk of a conversation.
- Use only what the messages say; leave a list empty rather than guess.
- People fields are participant names as listed; evidence and message ids are the ids in
  square brackets.
- Answer with one JSON object with exactly the fields listed, and nothing else."""
_EXPLICIT = (
    "One item per distinct thing the messages state outright: never merge two into one or "
    "split one into two; leave out what is only implied."
)
_CONSTRAINED = (
    "List items in the order they occur, each in under 12 words, in the messages' own words; "
    "no item twice."
)


@dataclass(frozen=True)
class FieldAsk:
    """One field asked: its name, the instruction shown, and which variant that is."""

    name: str
    instruction: str
    variant: str = "base"


def default_asks(names: Sequence[str]) -> list[FieldAsk]:
    return [FieldAsk(n, CANDIDATES.get(n).instruction) for n in names]


@cache
def _v3_schema() -> dict[str, Any]:
    schema = extraction_json_schema("v3", Vocabulary())
    return {k: v for k, v in schema.items() if not k.startswith("x-") and k != "$schema"}


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if not k.startswith("x-")}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def fields_schema(names: Sequence[str], *, strict: bool = False) -> OutputSchema:
    """The JSON Schema of an object holding exactly ``names``: a v3 field as schema v3 has it
    (with the vocabulary's enumerations), another from its candidate's pydantic shape."""
    v3 = _v3_schema()
    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for name in names:
        if name in FIELDS_V3 and name in v3.get("properties", {}):
            properties[name] = v3["properties"][name]
            defs.update(v3.get("$defs", {}))
        else:
            node = TypeAdapter(CANDIDATES.get(name).shape).json_schema(
                ref_template="#/$defs/{model}"
            )
            defs.update(node.pop("$defs", {}))
            properties[name] = node
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(names),
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = defs
    schema = _strip(schema)
    return OutputSchema.model_validate(
        {
            "name": "chatledger_selection",
            "schema": strict_schema(schema) if strict else schema,
            "description": "Candidate fields of one conversation chunk (schema selection).",
            "strict": strict,
        }
    )


def _example(asks: Sequence[FieldAsk]) -> str:
    out: dict[str, Any] = {}
    for ask in asks:
        candidate = CANDIDATES.get(ask.name)
        item = example_item(candidate)
        is_list = TypeAdapter(candidate.shape).json_schema().get("type") == "array"
        out[ask.name] = [item] if is_list else item
    return json.dumps(out, ensure_ascii=False)


def system_text(asks: Sequence[FieldAsk], style: str) -> str:
    if style not in STYLES:
        raise ValueError(f"unknown prompt style {style!r} (known: {', '.join(STYLES)})")
    lines = [_TASK, "", "Fields:"]
    lines += [f"- {a.name}: {a.instruction}" for a in asks]
    if style in ("explicit", "field-guide"):
        lines += ["", _EXPLICIT]
    if style in ("constrained", "field-guide"):
        lines += ["", _CONSTRAINED]
    if style in ("example", "field-guide"):
        lines += ["", f"The shape of an answer (placeholder values): {_example(asks)}"]
    return "\n".join(lines)


def selection_request(
    chunk: Chunk,
    asks: Sequence[FieldAsk],
    *,
    model: str,
    style: str,
    sample: int,
    max_tokens: int,
    temperature: float | None,
    strict: bool,
    options: dict[str, JsonValue] | None = None,
) -> CompletionRequest:
    """One request; its cache key holds the sample index, so each repeat is its own call."""
    return CompletionRequest(
        model=model,
        messages=(
            ChatMessage(role="system", content=system_text(asks, style)),
            ChatMessage(role="user", content=f"{render_chunk(chunk)}\n\nExtract the fields."),
        ),
        max_tokens=max_tokens,
        temperature=temperature,
        output_schema=fields_schema([a.name for a in asks], strict=strict),
        sample_index=sample,
        options=options or {},
    )
