"""A compiled yes/no check for the JSON Schemas model calls use, ~100× faster than jsonschema.

``jsonschema`` walks a schema keyword by keyword, building a validator object per level; for
the v3 extraction schema (15 objects, 25 arrays, 14 references) and a 2.5 kB reply that is
about 5 ms of CPU — most of what the extraction path cost per call once the HTTP was lean.
:func:`compile_check` turns a schema into Python source — one function per object, array and
reference, every other keyword an inline test — that answers only "valid or not", for the
keywords these schemas are written with:

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
generated replies). Nothing of the schema's text reaches the source but property names, as
string literals (``repr``), and numbers checked to be finite.
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
# A number and not a boolean (True is an int to Python, not a number to JSON Schema).
_NUMBER = "(isinstance({v}, (int, float)) and not isinstance({v}, bool))"
_TYPE_TESTS = {
    "string": "isinstance({v}, str)",
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "null": "{v} is None",
    "boolean": "({v} is True or {v} is False)",
    "number": _NUMBER,
    "integer": "((isinstance({v}, int) and not isinstance({v}, bool))"
    " or (isinstance({v}, float) and {v}.is_integer()))",
}
# The keywords that apply to one kind of value only, and the Python type of that kind.
_KIND_OF = {"object": dict, "array": list, "string": str}


class Unsupported(Exception):
    """The schema uses a keyword (or a form of one) the compiled check does not implement."""


class _Generator:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.functions: list[str] = []
        self.constants: dict[str, Any] = {}
        self.refs: dict[str, str] = {}
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"_{prefix}{self.count}"

    def constant(self, value: Any) -> str:
        name = self.name("c")
        self.constants[name] = value
        return name

    # --- expressions: a test of the value in variable ``v`` ---------------------------------

    def expr(self, schema: Any, v: str) -> str:
        if schema is True:
            return "True"
        if schema is False:
            return "False"
        if not isinstance(schema, dict):
            raise Unsupported("a schema that is not an object or a boolean")
        unknown = set(schema) - _KNOWN
        if unknown:
            raise Unsupported(sorted(unknown)[0])
        for key in _CONTAINERS & set(schema):
            if not isinstance(schema[key], dict):
                raise Unsupported(key)
        parts: list[str] = []
        single = schema.get("type") if isinstance(schema.get("type"), str) else None
        if "type" in schema:
            parts.append(self.type_expr(schema["type"], v))
        if "enum" in schema:
            if not isinstance(schema["enum"], list):
                raise Unsupported("enum")
            parts.append(self.enum_expr(schema["enum"], v))
        if "const" in schema:
            parts.append(self.enum_expr([schema["const"]], v))
        for kind, specific in (
            ("object", self.object_test(schema)),
            ("array", self.array_test(schema)),
            ("string", self.string_test(schema, v)),
        ):
            if specific is None:
                continue
            test = f"{specific}({v})" if specific.startswith("_") else specific
            if single == kind:
                parts[0] = f"({parts[0]} and {test})"  # the type test guards it already
            else:
                python_type = _KIND_OF[kind].__name__
                parts.append(f"(not isinstance({v}, {python_type}) or {test})")
        bounds = self.bounds_expr(schema, v)
        if bounds is not None:
            parts.append(f"(not {_NUMBER.format(v=v)} or {bounds})")
        for key, joiner in (("anyOf", " or "), ("allOf", " and ")):
            if key in schema:
                parts.append("(" + joiner.join(self.subs(schema, key, v)) + ")")
        if "oneOf" in schema:
            parts.append("((" + ") + (".join(self.subs(schema, "oneOf", v)) + ") == 1)")
        if "$ref" in schema:
            if not isinstance(schema["$ref"], str):
                raise Unsupported("$ref")
            parts.append(f"{self.reference(schema['$ref'])}({v})")
        return "(" + " and ".join(parts) + ")" if parts else "True"

    def subs(self, schema: Mapping[str, Any], key: str, v: str) -> list[str]:
        value = schema[key]
        if not isinstance(value, list) or not value:
            raise Unsupported(key)
        return [self.expr(sub, v) for sub in value]

    def type_expr(self, value: Any, v: str) -> str:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not names or not set(names) <= set(_TYPE_TESTS):
            raise Unsupported("type")
        tests = [_TYPE_TESTS[n].format(v=v) for n in names]
        return tests[0] if len(tests) == 1 else "(" + " or ".join(tests) + ")"

    def enum_expr(self, values: list[Any], v: str) -> str:
        """Membership with jsonschema's equality, for strings, null and booleans only (where it
        is plain identity of kind and value: ``True`` is not ``1``)."""
        strings = {x for x in values if isinstance(x, str)}
        if any(
            not isinstance(x, str) and x is not None and not isinstance(x, bool) for x in values
        ):
            raise Unsupported("an enum value that is not a string, null or a boolean")
        tests = []
        if strings:
            tests.append(f"(isinstance({v}, str) and {v} in {self.constant(frozenset(strings))})")
        if any(x is None for x in values):
            tests.append(f"{v} is None")
        if any(x is True for x in values):
            tests.append(f"{v} is True")
        if any(x is False for x in values):
            tests.append(f"{v} is False")
        return "(" + " or ".join(tests) + ")" if tests else "False"

    def string_test(self, schema: Mapping[str, Any], v: str) -> str | None:
        least = self.count_of(schema, "minLength")
        most = self.count_of(schema, "maxLength")
        tests = []
        if least is not None:
            tests.append(f"len({v}) >= {least}")
        if most is not None:
            tests.append(f"len({v}) <= {most}")
        return "(" + " and ".join(tests) + ")" if tests else None

    def bounds_expr(self, schema: Mapping[str, Any], v: str) -> str | None:
        # Written as jsonschema tests them ("fails if v < minimum"), so NaN passes as it does.
        tests = []
        for key, op in (
            ("minimum", "<"),
            ("maximum", ">"),
            ("exclusiveMinimum", "<="),
            ("exclusiveMaximum", ">="),
        ):
            if key not in schema:
                continue
            bound = schema[key]
            if (
                isinstance(bound, bool)
                or not isinstance(bound, (int, float))
                or not math.isfinite(bound)
            ):
                raise Unsupported(key)
            tests.append(f"not {v} {op} {bound!r}")
        return "(" + " and ".join(tests) + ")" if tests else None

    def count_of(self, schema: Mapping[str, Any], key: str) -> int | None:
        if key not in schema:
            return None
        value = schema[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise Unsupported(key)
        return value

    # --- functions --------------------------------------------------------------------------

    def object_test(self, schema: Mapping[str, Any]) -> str | None:
        """A function checking ``properties``, ``required`` and ``additionalProperties`` of a
        dict in one pass over its keys; its name."""
        if not {"properties", "required", "additionalProperties"} & set(schema):
            return None
        if "patternProperties" in schema:
            raise Unsupported("patternProperties")
        properties = schema.get("properties", {})
        if not isinstance(properties, dict) or not all(isinstance(k, str) for k in properties):
            raise Unsupported("properties")
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
            raise Unsupported("required")
        additional = schema.get("additionalProperties", True)
        name = self.name("o")
        lines = [f"def {name}(v):"]
        lines += [
            f"    if {key!r} not in v:\n        return False" for key in dict.fromkeys(required)
        ]
        branches = []
        for key, sub in properties.items():
            test = self.expr(sub, "x")
            if test != "True":
                branches.append((f"k == {key!r}", f"if not {test}:\n                return False"))
            else:
                branches.append((f"k == {key!r}", "pass"))
        if additional is False:
            otherwise = "return False"
        elif additional is True:
            otherwise = "pass"
        else:
            otherwise = f"if not {self.expr(additional, 'x')}:\n                return False"
        if branches or otherwise != "pass":
            lines.append("    for k, x in v.items():")
            for i, (condition, body) in enumerate(branches):
                lines.append(
                    f"        {'if' if i == 0 else 'elif'} {condition}:\n            {body}"
                )
            if branches:
                lines.append(f"        else:\n            {otherwise}")
            else:
                lines.append(f"        {otherwise}")
        lines.append("    return True")
        self.functions.append("\n".join(lines))
        return name

    def array_test(self, schema: Mapping[str, Any]) -> str | None:
        least = self.count_of(schema, "minItems")
        most = self.count_of(schema, "maxItems")
        if "items" not in schema and least is None and most is None:
            return None
        name = self.name("a")
        lines = [f"def {name}(v):"]
        if least is not None:
            lines.append(f"    if len(v) < {least}:\n        return False")
        if most is not None:
            lines.append(f"    if len(v) > {most}:\n        return False")
        if "items" in schema:
            test = self.expr(schema["items"], "x")
            if test != "True":
                lines.append(f"    for x in v:\n        if not {test}:\n            return False")
        lines.append("    return True")
        self.functions.append("\n".join(lines))
        return name

    def reference(self, ref: str) -> str:
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
            name = self.name("r")
            self.refs[ref] = name  # before compiling: the target may refer back to itself
            self.functions.append(f"def {name}(v):\n    return {self.expr(target, 'v')}")
        return self.refs[ref]


def compile_check(schema: Any) -> Check:
    """The compiled check of ``schema``; raises :class:`Unsupported` for what it cannot do."""
    if isinstance(schema, dict) and "$schema" in schema:
        raise Unsupported("$schema")
    generator = _Generator(schema)
    root = generator.expr(schema, "v")
    source = "\n\n".join([*generator.functions, f"def _check(v):\n    return {root}"])
    namespace: dict[str, Any] = dict(generator.constants)
    try:
        exec(compile(source, "<chatledger schema check>", "exec"), namespace)
    except (SyntaxError, RecursionError, MemoryError) as exc:  # a schema nested absurdly deep
        raise Unsupported(f"the check does not compile ({type(exc).__name__})") from None
    check: Check = namespace["_check"]
    return check
