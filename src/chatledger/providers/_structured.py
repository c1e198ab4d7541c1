"""Structured output when the provider cannot enforce a schema: parse, repair, validate, re-ask.

A reply is read as JSON after dropping ``<think>`` blocks and Markdown code fences; if it is not
valid JSON as it stands, ``json-repair`` gets one go at it (truncated output, trailing commas,
prose around the object). The result is validated against the schema (Draft 2020-12, one
validator per schema). What fails is described in one line, which the provider sends back to the
model as a re-ask.

Validation first runs the schema's compiled check (:mod:`chatledger.providers._fastcheck`,
~50× faster than jsonschema on the extraction schema); jsonschema decides, and words the error,
whenever that check says "invalid" or cannot compile the schema. What each call needs of a
schema — its canonical JSON, its size, its validator and check — is worked out once per
:class:`OutputSchema` object (:func:`schema_facts`; an output schema, like the request that
holds it, is not changed after it is made).
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import json_repair
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from pydantic import JsonValue

from chatledger.providers._cache import canonical_json
from chatledger.providers._fastcheck import Check, Unsupported, compile_check
from chatledger.providers._types import OutputSchema

_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_MAX_ERROR_CHARS = 400


@dataclass(frozen=True)
class SchemaFacts:
    """What model calls need of one output schema, worked out once."""

    # canonical_json of the JSON Schema, and its size in UTF-8 bytes.
    canonical: str
    size: int
    # The JSON Schema as compact ASCII JSON, to put in request bodies as it is.
    wire: str
    # canonical_json of the whole OutputSchema (name, schema, description, strict): the
    # schema's part of a call's cache key.
    key_text: str
    validator: Draft202012Validator
    # The compiled yes/no check, or None when jsonschema alone can check the schema.
    check: Check | None


# id(schema) -> (a weak reference to it, its facts); an entry goes when its schema does.
_FACTS: dict[int, tuple[weakref.ref[OutputSchema], SchemaFacts]] = {}


def schema_facts(schema: OutputSchema) -> SchemaFacts:
    """The facts of ``schema``, computed on its first use."""
    key = id(schema)
    found = _FACTS.get(key)
    if found is not None and found[0]() is schema:
        return found[1]
    canonical = canonical_json(schema.json_schema)
    facts = SchemaFacts(
        canonical=canonical,
        size=len(canonical.encode("utf-8")),
        wire=json.dumps(schema.json_schema, separators=(",", ":")),
        key_text=canonical_json(schema.model_dump(by_alias=True)),
        validator=_validator_from_text(canonical),
        check=_check_from_text(canonical),
    )
    _FACTS[key] = (weakref.ref(schema, lambda _: _FACTS.pop(key, None)), facts)
    return facts


def validator_for(schema: OutputSchema) -> Draft202012Validator:
    """The validator of ``schema``, built once per distinct schema."""
    return schema_facts(schema).validator


@lru_cache(maxsize=64)
def _validator_from_text(schema_text: str) -> Draft202012Validator:
    schema = json.loads(schema_text)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


@lru_cache(maxsize=64)
def _check_from_text(schema_text: str) -> Check | None:
    try:
        return compile_check(json.loads(schema_text))
    except (Unsupported, RecursionError):
        return None


def extract_json(text: str) -> tuple[JsonValue | None, str | None]:
    """The JSON value in a reply, or ``(None, reason)``. Repairs what ``json-repair`` can."""
    body = _THINK_BLOCK.sub("", text)
    fenced = _FENCE.search(body)
    if fenced is not None:
        body = fenced.group(1)
    body = body.strip()
    if not body:
        return None, "the reply contains no JSON"
    try:
        value: JsonValue = json.loads(body)
        return value, None
    except json.JSONDecodeError:
        pass
    repaired: Any = json_repair.loads(body)
    # json-repair answers "" when it finds no JSON at all (and [] / {} for stray brackets).
    if repaired == "" or (repaired in ([], {}) and not body.startswith(("[", "{"))):
        return None, "the reply contains no JSON"
    return repaired, None


def validation_error(value: JsonValue, schema: OutputSchema) -> str | None:
    """One line saying where and how ``value`` breaks ``schema``; ``None`` when it validates."""
    facts = schema_facts(schema)
    if facts.check is not None:
        try:
            if facts.check(value):
                return None
        except RecursionError:
            pass  # a reply nested deeper than the interpreter's stack: jsonschema says
    error = best_match(facts.validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    message = f"at {where}: {error.message}"
    return message if len(message) <= _MAX_ERROR_CHARS else message[:_MAX_ERROR_CHARS] + "…"


def check_reply(
    text: str, structured: JsonValue | None, schema: OutputSchema
) -> tuple[JsonValue | None, str | None]:
    """``(parsed, None)`` when the reply validates, else ``(None, error)``.

    ``structured`` is what a schema mechanism returned directly (a tool call's input); it is
    validated too, because models do not always honour a tool's schema.
    """
    value, error = (structured, None) if structured is not None else extract_json(text)
    if error is not None:
        return None, error
    invalid = validation_error(value, schema)
    if invalid is not None:
        return None, f"the JSON does not match the schema {schema.name!r} {invalid}"
    return value, None


def schema_instruction(schema: OutputSchema) -> str:
    """The system-prompt paragraph that asks for the schema when it cannot be enforced."""
    about = f" ({schema.description})" if schema.description else ""
    return (
        f"Answer with a single JSON value that validates against the JSON Schema named "
        f"{schema.name!r}{about} below. Reply with the JSON only: no prose, no Markdown fences.\n"
        f"JSON Schema:\n{json.dumps(schema.json_schema, ensure_ascii=False)}"
    )


def reask_text(error: str) -> str:
    """The user turn that sends a failed reply's problem back to the model."""
    return (
        f"Your previous reply could not be used: {error}. "
        "Reply again with only the corrected JSON value."
    )
