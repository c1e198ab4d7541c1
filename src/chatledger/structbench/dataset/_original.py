"""Reading data in the original LLMStructBench layout.

The original set is not public here, so its exact key names are an assumption. What is known:
each scenario has an input message (an email), a one-shot example pair (message → JSON), a JSON
Schema and the ground-truth JSON. This loader reads a JSON array, an object holding such an array
under ``data``/``samples``/``items``, or JSON Lines, and maps the first key found of each group
(case-insensitive):

==============  ====================================================================
our field       keys read, in order
==============  ====================================================================
id              id, uuid, sample_id, scenario_id (else ``<file stem>-<n>``)
input           input, message, input_message, email, text, prompt
schema          schema, json_schema, output_schema
ground_truth    ground_truth, expected_output, expected, target, solution, output
example         example / one_shot (an object with input|message and output|json),
                or the pairs example_input + example_output, example_message + example_json
==============  ====================================================================

A schema, ground truth or example output given as a JSON *string* is decoded. Then each record
is checked exactly like a line of our own format, and errors name the file, the record number and
the original key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chatledger.core import InputError
from chatledger.corpus import JsonTextError, loads_strict
from chatledger.structbench.dataset._document import Document
from chatledger.structbench.dataset._io import document_from_dict, unique_documents

ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "uuid", "sample_id", "scenario_id"),
    "input": ("input", "message", "input_message", "email", "text", "prompt"),
    "schema": ("schema", "json_schema", "output_schema"),
    "ground_truth": ("ground_truth", "expected_output", "expected", "target", "solution", "output"),
}
EXAMPLE_OBJECT_KEYS = ("example", "one_shot", "oneshot_example")
EXAMPLE_PAIRS = (("example_input", "example_output"), ("example_message", "example_json"))
_EXAMPLE_INPUT_KEYS = ("input", "message")
_EXAMPLE_OUTPUT_KEYS = ("output", "json", "expected_output")
_JSON_FIELDS = ("schema", "ground_truth")


def read_original(path: str | Path) -> list[Document]:
    path = Path(path)
    records = _records(path)
    numbered = (
        (
            number,
            original_to_document(
                record, path=path, line=number, fallback_id=f"{path.stem}-{number}"
            ),
        )
        for number, record in records
    )
    return unique_documents(numbered, path=path, none_found="no records found")


def _records(path: Path) -> list[tuple[int, Any]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path=path) from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = loads_strict(text)
        except JsonTextError as exc:
            raise InputError(
                exc.message, path=path, line=exc.line, field=exc.field or None
            ) from None
        return list(enumerate(data, start=1))
    if stripped.startswith("{"):
        try:
            data = loads_strict(text)
        except JsonTextError:
            data = None  # JSON Lines whose first line is an object
        if isinstance(data, dict):
            for key in ("data", "samples", "items", "records"):
                if isinstance(data.get(key), list):
                    return list(enumerate(data[key], start=1))
            return [(1, data)]
    records: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                records.append((number, loads_strict(line)))
            except JsonTextError as exc:
                raise InputError(
                    exc.message, path=path, line=number, field=exc.field or None
                ) from None
    return records


def _find(record: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any] | None:
    lowered = {str(k).lower(): k for k in record}
    for key in keys:
        if key in lowered:
            original = lowered[key]
            return str(original), record[original]
    return None


def original_to_document(
    record: Any, *, path: str | Path | None = None, line: int | None = None, fallback_id: str = ""
) -> Document:
    """Map one original record to our format and check it like any dataset line."""
    if not isinstance(record, dict):
        raise InputError("expected a JSON object", path=path, line=line)
    mapped: dict[str, Any] = {}
    source: dict[str, str] = {}
    for field, keys in ALIASES.items():
        found = _find(record, keys)
        if found is None:
            if field == "id" and fallback_id:
                mapped["id"] = fallback_id
                continue
            raise InputError(
                f"missing (looked for {', '.join(keys)})", path=path, line=line, field=field
            )
        source[field], value = found
        if field in _JSON_FIELDS and isinstance(value, str):
            value = _decode(value, path, line, source[field])
        mapped[field] = str(value) if field == "id" else value
    example = _example(record, path, line)
    if example is not None:
        mapped["example"] = example
    try:
        return document_from_dict(mapped, path=path, line=line)
    except InputError as exc:
        top = (exc.field or "").split(".")[0]
        named = exc.field
        if top in source and source[top] != top:
            named = f"{source[top]}{exc.field[len(top) :]}" if exc.field else source[top]
        raise InputError(exc.detail, path=path, line=line, field=named) from None


def _decode(value: str, path: str | Path | None, line: int | None, key: str) -> Any:
    try:
        return loads_strict(value)
    except JsonTextError as exc:
        raise InputError(f"a JSON string that does not parse: {exc.reason}", path=path, line=line,
                         field=key) from None  # fmt: skip


def _example(record: dict[str, Any], path: str | Path | None, line: int | None) -> Any:
    found = _find(record, EXAMPLE_OBJECT_KEYS)
    if found is not None and isinstance(found[1], dict):
        key, raw = found
        given_input = _find(raw, _EXAMPLE_INPUT_KEYS)
        given_output = _find(raw, _EXAMPLE_OUTPUT_KEYS)
        if given_input is None or given_output is None:
            raise InputError("needs an input/message and an output/json", path=path, line=line,
                             field=key)  # fmt: skip
        output = given_output[1]
        if isinstance(output, str):
            output = _decode(output, path, line, f"{key}.{given_output[0]}")
        return {"input": given_input[1], "output": output}
    for input_key, output_key in EXAMPLE_PAIRS:
        given_input = _find(record, (input_key,))
        given_output = _find(record, (output_key,))
        if given_input is not None and given_output is not None:
            output = given_output[1]
            if isinstance(output, str):
                output = _decode(output, path, line, given_output[0])
            return {"input": given_input[1], "output": output}
    return None
