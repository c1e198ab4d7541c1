"""Schema validation for DOC: one Draft 2020-12 validator (with format checking) per distinct
schema, built on first use and kept."""

from __future__ import annotations

import json
from collections.abc import Iterable

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from chatledger.structbench.dataset._paths import Json

# How a schema violation is counted among the bad outputs (keyed by the failing keyword).
WRONG_TYPE = "wrong_type"
EXTRA_KEYS = "extra_keys"
MISSING_KEYS = "missing_keys"
BAD_ENUM = "bad_enum"
BAD_FORMAT = "bad_format"
OTHER_SCHEMA = "other_schema"
_KIND_OF_KEYWORD = {
    "type": WRONG_TYPE,
    "additionalProperties": EXTRA_KEYS,
    "unevaluatedProperties": EXTRA_KEYS,
    "required": MISSING_KEYS,
    "enum": BAD_ENUM,
    "const": BAD_ENUM,
    "format": BAD_FORMAT,
    "pattern": BAD_FORMAT,  # e.g. a 24-hour time written "2:30 pm"
}


def schema_key(schema: Json) -> str:
    """One spelling per schema, so equal schemas share a validator."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def check_schema(schema: Json) -> str | None:
    """None when ``schema`` is a valid Draft 2020-12 schema, else the reason."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return None


class ValidatorCache:
    """Validators by :func:`schema_key`; ``built`` counts how many were constructed."""

    def __init__(self) -> None:
        self._validators: dict[str, Draft202012Validator] = {}
        self.built = 0

    def has(self, key: str) -> bool:
        return key in self._validators

    def validator(self, key: str, schema: Json) -> Draft202012Validator:
        found = self._validators.get(key)
        if found is None:
            found = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
            self._validators[key] = found
            self.built += 1
        return found

    def violations(self, key: str, schema: Json, value: Json) -> tuple[str, ...]:
        """The kinds of schema violation in ``value`` (empty when it validates), each once."""
        errors: Iterable[ValidationError] = self.validator(key, schema).iter_errors(value)
        kinds = {_KIND_OF_KEYWORD.get(str(error.validator), OTHER_SCHEMA) for error in errors}
        return tuple(sorted(kinds))
