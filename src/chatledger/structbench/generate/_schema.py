"""Small builders for the generated JSON Schemas: every property required, no extra keys
(what structured-output APIs in strict mode expect), ISO formats for dates and e-mails."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
NUMBER: Schema = {"type": "number"}
INTEGER: Schema = {"type": "integer"}
DATE: Schema = {"type": "string", "format": "date"}
EMAIL: Schema = {"type": "string", "format": "email"}
TIME: Schema = {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"}
CURRENCY: Schema = {"type": "string", "enum": ["USD", "EUR", "GBP"]}


def obj(properties: dict[str, Schema]) -> Schema:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def enum(*values: str) -> Schema:
    return {"type": "string", "enum": list(values)}


def nullable(schema: Schema) -> Schema:
    out = dict(schema)
    out["type"] = [schema["type"], "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def described(schema: Schema, description: str) -> Schema:
    return {**schema, "description": description}


# Shapes several kinds share.
PERSON: Schema = obj({"name": STRING, "email": EMAIL})
ADDRESS: Schema = obj({"street": STRING, "city": STRING, "postal_code": STRING, "country": STRING})
PRICE: dict[str, Schema] = {"total": NUMBER, "currency": CURRENCY}


def root(title: str, properties: dict[str, Schema]) -> Schema:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title} | obj(
        properties
    )
