"""A compiled yes/no check for the JSON Schemas model calls use, ~50× faster than jsonschema.

``jsonschema`` walks a schema keyword by keyword, building a validator object per level; for
the v3 extraction schema (15 objects, 25 arrays, 14 references) and a 2.5 kB reply that is
about 4 ms of CPU — most of what the extraction path costs per call once the HTTP is lean.
:func:`compile_check` turns a schema into nested Python closures that answer only "valid or
not", for the keywords these schemas are written with:

``type`` (one or a list), ``enum`` / ``const`` of strings, null and booleans, ``properties``,
``required``, ``additionalProperties`` (a boolean or a schema), ``items`` (one schema),
``minItems`` / ``maxItems``, ``minLength`` / ``maxLength``, ``minimum`` / ``maximum`` /
``exclusiveMinimum`` / ``exclusiveMaximum``, ``anyOf`` / ``allOf`` / ``oneOf``, ``$ref`` to
``#`` or ``#/$defs/…`` (``definitions``), boolean schemas, and the annotations ``title``,
``description``, ``default``, ``examples``, ``$comment``, ``deprecated``, ``readOnly``,
``writeOnly``.

A schema with any other keyword (``pattern``, ``format``, ``$id``, ``prefixItems``, …) is not
compiled (:class:`Unsupported`): jsonschema alone checks it. Each keyword follows Draft 2020-12
as jsonschema implements it — ``integer`` takes ``1.0``, a boolean is not a number, lengths
count code points, NaN passes ``minimum`` and ``maximum`` (no comparison with NaN is true) —
so the check says "valid" exactly when jsonschema finds no error; the provider still asks
jsonschema for the error message whenever the check says "invalid" (tests compare the two on
generated replies).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
_CONTAINERS = frozenset({"$defs", "definitions"})
_KEYWORDS = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "anyOf", "allOf", "oneOf", "$ref",
    }
)  # fmt: skip
_KNOWN = _KEYWORDS | _ANNOTATIONS | _CONTAINERS
_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


class Unsupported(Exception):
    """The schema uses a keyword (or a form of one) the compiled check does not implement."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _type_test(name: str) -> Check:
    if name == "string":
        return lambda v: isinstance(v, str)
    if name == "object":
        return lambda v: isinstance(v, dict)
    if name == "array":
        return lambda v: isinstance(v, list)
    if name == "null":
        return lambda v: v is None
    if name == "boolean":
        return lambda v: isinstance(v, bool)
    if name == "number":
        return _is_number
    if name == "integer":
        return lambda v: (
            (isinstance(v, int) and not isinstance(v, bool))
            or (isinstance(v, float) and v.is_integer())
        )
    raise Unsupported(f"type {name!r}")


def _enum_test(values: list[Any]) -> Check:
    """Membership with jsonschema's equality, for strings, null and booleans only (where it is
    plain identity of kind and value: ``True`` is not ``1``)."""
    strings: set[str] = set()
    other: list[Any] = []
    for value in values:
        if isinstance(value, str):
            strings.add(value)
        elif value is None or isinstance(value, bool):
            other.append(value)
        else:
            raise Unsupported("an enum value that is not a string, null or a boolean")
    has_none = None in other
    has_true = any(v is True for v in other)
    has_false = any(v is False for v in other)

    def test(v: Any) -> bool:
        if isinstance(v, str):
            return v in strings
        if v is None:
            return has_none
        if v is True:
            return has_true
        if v is False:
            return has_false
        return False

    return test


class _Compiler:
    def __init__(self, root: Any) -> None:
        self.root = root
        # Compiled references, filled lazily (a reference may point back up: recursion).
        self.refs: dict[str, Check] = {}

    def reference(self, ref: str) -> Check:
        if ref != "#" and not ref.startswith(("#/$defs/", "#/definitions/")):
            raise Unsupported(f"$ref {ref!r}")
        if ref not in self.refs:
            target = self.root
            if ref != "#":
                for part in ref[2:].split("/"):
                    part = part.replace("~1", "/").replace("~0", "~")
                    if "%" in part or not isinstance(target, dict) or part not in target:
                        raise Unsupported(f"$ref {ref!r}")
                    target = target[part]
            slot: list[Check] = []
            self.refs[ref] = lambda v: slot[0](v)
            slot.append(self.compile(target))
        return self.refs[ref]

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return lambda v: True
        if schema is False:
            return lambda v: False
        if not isinstance(schema, dict):
            raise Unsupported("a schema that is not an object or a boolean")
        unknown = set(schema) - _KNOWN
        if unknown:
            raise Unsupported(sorted(unknown)[0])
        for key in _CONTAINERS & set(schema):
            if not isinstance(schema[key], dict):
                raise Unsupported(key)
        steps: list[Check] = []
        names = schema.get("type")
        single = names if isinstance(names, str) else None
        if "type" in schema:
            steps.append(self.type_test(names))
        if "enum" in schema:
            steps.append(_enum_test(self.enum(schema["enum"])))
        if "const" in schema:
            steps.append(_enum_test([schema["const"]]))
        # Each kind's keywords apply to values of that kind only; with a single type that is
        # the same kind, the type test guards them already.
        for kind, python_type, specific in (
            ("object", dict, self.object_test(schema)),
            ("array", list, self.array_test(schema)),
            ("string", str, self.string_test(schema)),
        ):
            if specific is None:
                continue
            if single == kind:
                steps[0] = _both(steps[0], specific)
            else:
                steps.append(_when(python_type, specific))
        on_number = self.number_test(schema)
        if on_number is not None:
            steps.append(_when_number(on_number))
        steps += self.combinators(schema)
        return _all(tuple(steps))

    def type_test(self, value: Any) -> Check:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or not set(names) <= _TYPES:
            raise Unsupported("type")
        tests = tuple(_type_test(n) for n in names)
        if len(tests) == 1:
            return tests[0]

        def any_type(v: Any) -> bool:
            for t in tests:  # noqa: SIM110 -- a loop is cheaper than any() over a generator
                if t(v):
                    return True
            return False

        return any_type

    def enum(self, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise Unsupported("enum")
        return value

    def object_test(self, schema: Mapping[str, Any]) -> Check | None:
        """``properties``, ``required`` and ``additionalProperties`` of an object, in one pass
        over its keys."""
        if not {"properties", "required", "additionalProperties"} & set(schema):
            return None
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            raise Unsupported("properties")
        checks = {name: self.compile(sub) for name, sub in properties.items()}
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
            raise Unsupported("required")
        names = tuple(required)
        additional = schema.get("additionalProperties", True)
        closed = additional is False
        extra = None if additional is True or closed else self.compile(additional)

        def test(v: dict[str, Any]) -> bool:
            for name in names:
                if name not in v:
                    return False
            for name, item in v.items():
                check = checks.get(name)
                if check is None:
                    if closed or (extra is not None and not extra(item)):
                        return False
                elif not check(item):
                    return False
            return True

        return test

    def array_test(self, schema: Mapping[str, Any]) -> Check | None:
        least = self.count(schema, "minItems")
        most = self.count(schema, "maxItems")
        item = self.compile(schema["items"]) if "items" in schema else None
        if item is None and least is None and most is None:
            return None

        def test(v: list[Any]) -> bool:
            if least is not None and len(v) < least:
                return False
            if most is not None and len(v) > most:
                return False
            if item is not None:
                for x in v:
                    if not item(x):
                        return False
            return True

        return test

    def string_test(self, schema: Mapping[str, Any]) -> Check | None:
        least = self.count(schema, "minLength")
        most = self.count(schema, "maxLength")
        if least is None and most is None:
            return None
        low = least or 0
        high = most if most is not None else math.inf
        return lambda v: low <= len(v) <= high

    def number_test(self, schema: Mapping[str, Any]) -> Check | None:
        bounds = []
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if key in schema:
                value = schema[key]
                if not _is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
                    raise Unsupported(key)
                bounds.append((key, value))
        if not bounds:
            return None
        tests: list[Check] = []
        # Written as jsonschema tests them ("fails if v < minimum"), so NaN passes as it does.
        for key, bound in bounds:
            tests.append(_bound_test(key, bound))
        all_tests = tuple(tests)

        def test(v: Any) -> bool:
            for t in all_tests:  # noqa: SIM110 -- cheaper than all() over a generator
                if not t(v):
                    return False
            return True

        return test

    def count(self, schema: Mapping[str, Any], key: str) -> int | None:
        if key not in schema:
            return None
        value = schema[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise Unsupported(key)
        return value

    def combinators(self, schema: Mapping[str, Any]) -> tuple[Check, ...]:
        found: list[Check] = []
        for key in ("anyOf", "allOf", "oneOf"):
            if key not in schema:
                continue
            value = schema[key]
            if not isinstance(value, list) or not value:
                raise Unsupported(key)
            subs = tuple(self.compile(s) for s in value)
            found.append(_combine(key, subs))
        if "$ref" in schema:
            if not isinstance(schema["$ref"], str):
                raise Unsupported("$ref")
            found.append(self.reference(schema["$ref"]))
        return tuple(found)


def _bound_test(key: str, bound: float) -> Check:
    if key == "minimum":
        return lambda v: not v < bound
    if key == "maximum":
        return lambda v: not v > bound
    if key == "exclusiveMinimum":
        return lambda v: not v <= bound
    return lambda v: not v >= bound


def _when_number(check: Check) -> Check:
    return lambda v: not _is_number(v) or check(v)


def _both(first: Check, second: Check) -> Check:
    return lambda v: first(v) and second(v)


def _when(python_type: type, check: Check) -> Check:
    return lambda v: not isinstance(v, python_type) or check(v)


def _all(steps: tuple[Check, ...]) -> Check:
    if not steps:
        return lambda v: True
    if len(steps) == 1:
        return steps[0]
    if len(steps) == 2:
        return _both(*steps)

    def every(v: Any) -> bool:
        for step in steps:  # noqa: SIM110 -- a loop is cheaper than all() over a generator
            if not step(v):
                return False
        return True

    return every


def _combine(key: str, subs: tuple[Check, ...]) -> Check:
    if key == "anyOf":

        def any_of(v: Any) -> bool:
            for sub in subs:  # noqa: SIM110 -- a loop is cheaper than any() over a generator
                if sub(v):
                    return True
            return False

        return any_of
    if key == "allOf":

        def all_of(v: Any) -> bool:
            for sub in subs:  # noqa: SIM110 -- cheaper than all() over a generator
                if not sub(v):
                    return False
            return True

        return all_of
    return lambda v: sum(1 for sub in subs if sub(v)) == 1


def compile_check(schema: Any) -> Check:
    """The compiled check of ``schema``; raises :class:`Unsupported` for what it cannot do."""
    if isinstance(schema, dict) and "$schema" in schema:
        raise Unsupported("$schema")
    return _Compiler(schema).compile(schema)
