"""The prompt texts of the prompting strategies, kept apart so they can be read and compared."""

from __future__ import annotations

import json

from chatledger.structbench.dataset import Json

SYSTEM = (
    "You extract structured data from emails. Reply with one JSON object and nothing else: "
    "no explanations, no Markdown code fences. Copy names, codes and amounts exactly as the "
    "email gives them; write dates as YYYY-MM-DD and times as HH:MM (24-hour)."
)


def compact(value: Json) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def skeleton(schema: Json) -> Json:
    """The shape a schema asks for, with type names as values — what zero-shot is told."""
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {k: skeleton(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array" or "items" in schema:
        return [skeleton(schema.get("items") or {})]
    return str(kind or "any")


def zero_shot(email: str, schema: Json) -> str:
    return (
        "Extract the data from the email below as a JSON object with exactly these fields "
        f"(types shown as values):\n{compact(skeleton(schema))}\n\nEmail:\n{email}"
    )


def schema_in_prompt(email: str, schema: Json) -> str:
    return (
        "Extract the data from the email below. Your reply must be one JSON object that "
        f"validates against this JSON Schema:\n{compact(schema)}\n\nEmail:\n{email}"
    )


def provider_schema(email: str) -> str:
    return f"Extract the data from this email into the required JSON structure.\n\nEmail:\n{email}"


FACTS_SYSTEM = (
    "You read emails and list the facts in them. Reply with plain text lines of the form "
    "'label: value', one fact per line, values copied exactly as written."
)


def facts(email: str, schema: Json) -> str:
    fields = ", ".join(sorted(_field_names(schema)))
    return (
        "List every fact in this email that a form with these fields would need: "
        f"{fields}.\nFor lists (items, people, flights, …) give one line per entry.\n\n"
        f"Email:\n{email}"
    )


def format_facts(fact_lines: str, schema: Json) -> str:
    return (
        "Turn these facts, extracted from an email, into one JSON object that validates "
        f"against this JSON Schema:\n{compact(schema)}\n\nFacts:\n{fact_lines}"
    )


def _field_names(schema: Json) -> set[str]:
    names: set[str] = set()
    if isinstance(schema, dict):
        for key, sub in (schema.get("properties") or {}).items():
            names.add(key)
            names |= _field_names(sub)
        if isinstance(schema.get("items"), dict):
            names |= _field_names(schema["items"])
    return names
