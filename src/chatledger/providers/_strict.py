"""The strict variant of a JSON Schema: what OpenAI's strict mode and llama.cpp-style grammar
engines need before they will constrain a reply to it.

* every property of every object is **required**, and ``additionalProperties`` is false;
* "this or null" is written as a **type union** (``{"type": ["string", "null"]}``, an enum with
  ``null`` added) instead of ``anyOf``, which grammar converters support unevenly;
* a nullable reference to another object (``anyOf: [{$ref}, null]``) becomes the reference
  itself: the reply always holds the object (the engines that take unions of references least
  well are the ones small local models run on);
* keywords the engines refuse or ignore — ``default``, ``title``, ``minimum``, ``maximum``,
  ``examples`` — are dropped; ``minLength`` stays (llama.cpp and node-llama-cpp grammars keep a
  required text from being empty with it).

The variant is for *asking*: a reply is still validated against the full schema and the
pydantic model afterwards, so what it leaves out of the grammar (a confidence above 1, an empty
text) is still refused. Small models fill every field of a strict schema instead of skipping the
ones a lenient schema lets them leave out.
"""

from __future__ import annotations

from typing import Any

_DROPPED = frozenset({"default", "title", "minimum", "maximum", "exclusiveMinimum",
                      "exclusiveMaximum", "examples", "$schema"})  # fmt: skip


def strict_schema(schema: Any) -> Any:
    """The strict variant of ``schema`` (a JSON Schema as plain JSON); ``schema`` is unchanged."""
    if isinstance(schema, list):
        return [strict_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    nullable = _nullable_alternative(schema)
    if nullable is not None:
        return nullable
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key in ("properties", "$defs", "definitions"):
            out[key] = {name: strict_schema(sub) for name, sub in value.items()}
        else:
            out[key] = strict_schema(value)
    if out.get("type") == "object" or "properties" in out:
        out["required"] = list(out.get("properties", {}))
        out["additionalProperties"] = False
    return out


def _nullable_alternative(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``anyOf: [X, {"type": "null"}]`` as X made nullable, or None when it is not that."""
    options = schema.get("anyOf")
    if not isinstance(options, list) or len(options) != 2:
        return None
    others = [o for o in options if o != {"type": "null"}]
    if len(others) != 1:
        return None
    inner = strict_schema(others[0])
    extra = {k: strict_schema(v) for k, v in schema.items() if k != "anyOf" and k not in _DROPPED}
    if "$ref" in inner:
        return {**inner, **extra}
    if "enum" in inner:
        values = list(inner["enum"])
        return {**inner, **extra, "enum": [*values, None] if None not in values else values}
    kind = inner.get("type")
    if isinstance(kind, str):
        return {**inner, **extra, "type": [kind, "null"]}
    if isinstance(kind, list):
        return {**inner, **extra, "type": [*kind, "null"] if "null" not in kind else kind}
    return None
