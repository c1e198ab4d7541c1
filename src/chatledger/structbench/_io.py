"""Dataset and predictions JSON Lines files (DESIGN §8). Every error names file, line and field.

Dataset line: ``{"id", "input", "schema", "ground_truth", "weights"?: {path: w},
"example"?: {"input", "output"}}``. The schema must be a valid Draft 2020-12 schema and the ground
truth (and the example's output) must validate against it — a dataset that contradicts itself
would score every model wrong. Unknown keys are refused: a misspelt ``weight`` would otherwise be
silently ignored.

Predictions line: ``{"id", "output": "<raw model text>"}`` plus optional ``strategy``, ``model``,
``usage`` (any other key is kept out of scoring but allowed, e.g. ``error``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from chatledger.core import InputError
from chatledger.structbench._document import Document, Example, Prediction
from chatledger.structbench._paths import Json
from chatledger.structbench._validation import ValidatorCache, check_schema, schema_key

DATASET_KEYS = frozenset({"id", "input", "schema", "ground_truth", "weights", "example"})


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None
    with handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                yield number, json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", path=path, line=number) from None
            except UnicodeDecodeError:
                raise InputError("not UTF-8", path=path, line=number) from None


def read_dataset(path: str | Path) -> list[Document]:
    """Read and check a dataset file; raises :class:`InputError` at the first bad line."""
    path = Path(path)
    validators = ValidatorCache()
    numbered = (
        (number, document_from_dict(data, path=path, line=number, validators=validators))
        for number, data in _json_lines(path)
    )
    return unique_documents(numbered, path=path, none_found="the dataset has no documents")


def unique_documents(
    numbered: Iterable[tuple[int, Document]], *, path: Path, none_found: str
) -> list[Document]:
    """The documents in file order; refuses a repeated id (at its line) and an empty file."""
    documents: list[Document] = []
    seen: set[str] = set()
    for number, document in numbered:
        if document.id in seen:
            raise InputError(f"duplicate id {document.id!r}", path=path, line=number, field="id")
        seen.add(document.id)
        documents.append(document)
    if not documents:
        raise InputError(none_found, path=path)
    return documents


def document_from_dict(
    data: Any,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    validators: ValidatorCache | None = None,
) -> Document:
    """Check one dataset record and build its :class:`Document`. Pass one ``validators`` cache
    for a whole file: checking a schema against the meta-schema and building its validator are
    by far the slowest steps, and a dataset repeats few distinct schemas."""

    def fail(message: str, field: str | None = None) -> InputError:
        return InputError(message, path=path, line=line, field=field)

    if not isinstance(data, dict):
        raise fail("expected a JSON object")
    unknown = sorted(set(data) - DATASET_KEYS)
    if unknown:
        raise fail(f"unknown key (expected {', '.join(sorted(DATASET_KEYS))})", unknown[0])
    for key in ("id", "input", "schema", "ground_truth"):
        if key not in data:
            raise fail("missing", key)
    if not isinstance(data["id"], str) or not data["id"].strip():
        raise fail("must be a non-empty string", "id")
    if not isinstance(data["input"], str):
        raise fail("must be a string", "input")
    schema = data["schema"]
    if not isinstance(schema, dict):
        raise fail("must be a JSON Schema object", "schema")
    validators = validators if validators is not None else ValidatorCache()
    key = schema_key(schema)
    if not validators.has(key):
        problem = check_schema(schema)
        if problem is not None:
            raise fail(f"not a valid Draft 2020-12 schema: {problem}", "schema")
    validator = validators.validator(key, schema)
    _must_validate(validator, data["ground_truth"], "ground_truth", fail)
    weights = _weights(data.get("weights"), fail)
    example = None
    if data.get("example") is not None:
        raw = data["example"]
        if not isinstance(raw, dict) or set(raw) != {"input", "output"}:
            raise fail("must be an object with exactly 'input' and 'output'", "example")
        if not isinstance(raw["input"], str):
            raise fail("must be a string", "example.input")
        _must_validate(validator, raw["output"], "example.output", fail)
        example = Example(raw["input"], raw["output"])
    return Document(
        id=data["id"],
        input=data["input"],
        schema=schema,
        ground_truth=data["ground_truth"],
        weights=weights,
        example=example,
    )


def _must_validate(validator: Draft202012Validator, value: Json, field: str, fail: Any) -> None:
    error = next(iter(validator.iter_errors(value)), None)
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        raise fail(f"does not follow the schema: {error.message}", f"{field}.{where}".rstrip("."))


def _weights(raw: Any, fail: Any) -> dict[str, float] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise fail("must be an object of path → weight", "weights")
    weights: dict[str, float] = {}
    for key, value in raw.items():
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0:
            raise fail("must be a finite number ≥ 0", f"weights.{key}")
        weights[str(key)] = float(value)
    return weights


def write_dataset(documents: Iterable[Document], path: str | Path) -> None:
    _write_lines((d.to_dict() for d in documents), Path(path))


def read_predictions(path: str | Path) -> list[Prediction]:
    """Read a predictions file; a repeated (id, strategy) pair is an error naming its line."""
    path = Path(path)
    predictions: list[Prediction] = []
    seen: dict[tuple[str, str | None], int] = {}
    for number, data in _json_lines(path):

        def fail(message: str, field: str | None = None, number: int = number) -> InputError:
            return InputError(message, path=path, line=number, field=field)

        if not isinstance(data, dict):
            raise fail("expected a JSON object")
        if not isinstance(data.get("id"), str):
            raise fail("missing or not a string", "id")
        if not isinstance(data.get("output"), str):
            raise fail("missing or not a string (the raw model text)", "output")
        for name in ("strategy", "model"):
            if data.get(name) is not None and not isinstance(data[name], str):
                raise fail("must be a string", name)
        usage = data.get("usage")
        if usage is not None and not isinstance(usage, dict):
            raise fail("must be an object", "usage")
        prediction = Prediction(
            id=data["id"],
            output=data["output"],
            strategy=data.get("strategy"),
            model=data.get("model"),
            usage=usage,
            line=number,
        )
        pair = (prediction.id, prediction.strategy)
        if pair in seen:
            raise fail(f"duplicate prediction for this id (first on line {seen[pair]})", "id")
        seen[pair] = number
        predictions.append(prediction)
    return predictions


def write_predictions(predictions: Iterable[Prediction], path: str | Path) -> None:
    _write_lines((p.to_dict() for p in predictions), Path(path))


def _write_lines(lines: Iterable[dict[str, Json]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
