"""Dataset and predictions JSON Lines files (DESIGN §8). Every error names file, line and field.

Dataset line: ``{"id", "input", "schema", "ground_truth", "weights"?: {path: w},
"example"?: {"input", "output"}}``. The schema must be a valid Draft 2020-12 schema and the ground
truth (and the example's output) must validate against it — a dataset that contradicts itself
would score every model wrong. Unknown keys are refused: a misspelt ``weight`` would otherwise be
silently ignored.

Predictions line: ``{"id", "output": "<raw model text>"}`` plus optional ``strategy``, ``model``,
``usage`` (any other key is kept out of scoring but allowed, e.g. ``error``). Predictions are
model output, so a bad line never stops the read: it becomes a :class:`Problem` of the file
(``file:line [field]``) and its document counts as missing (0 on every metric), exactly as
extraction files do (DESIGN §2). Both files are read by the one JSON Lines decoder
(:func:`chatledger.corpus.read_json_lines`: BOM, invalid UTF-8, NaN, huge numbers, deep nesting).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from chatledger.core import InputError, Problem, atomic_writer
from chatledger.corpus import JsonLine, JsonTextError, loads_strict, read_json_lines
from chatledger.structbench.dataset._document import Document, Example, Prediction
from chatledger.structbench.dataset._paths import Json
from chatledger.structbench.dataset._validation import ValidatorCache, check_schema, schema_key

DATASET_KEYS = frozenset({"id", "input", "schema", "ground_truth", "weights", "example"})


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) of every non-blank line; the first bad line raises."""
    for line in read_json_lines(path):
        if not line.ok:
            assert line.error is not None
            raise InputError(line.error, path=path, line=line.number, field=line.field or None)
        yield line.number, line.value


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


class PredictionList(list[Prediction]):
    """The predictions of one file, in file order, with the problems of its bad lines.

    ``lines_read`` counts the non-blank lines: each is a prediction or a problem.
    """

    def __init__(self, path: str = "", predictions: Iterable[Prediction] = ()) -> None:
        super().__init__(predictions)
        self.path = path
        self.problems: list[Problem] = []
        self.lines_read = 0


_ID = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _recover_id(text: str) -> str | None:
    match = _ID.search(text)
    if match is None:
        return None
    try:
        value = loads_strict(f'"{match.group(1)}"')
    except JsonTextError:
        return match.group(1)
    return value if isinstance(value, str) else None


def _line_problem(line: JsonLine, doc_id: Any) -> tuple[str, str | None]:
    """(field, message) of what makes a predictions line unusable; message None: usable."""
    if not line.ok:
        return line.field, line.error
    data = line.value
    if not isinstance(doc_id, str):
        return "id", "missing or not a string"
    if not isinstance(data.get("output"), str):
        return "output", "missing or not a string (the raw model text)"
    for name in ("strategy", "model"):
        if data.get(name) is not None and not isinstance(data[name], str):
            return name, "must be a string"
    if data.get("usage") is not None and not isinstance(data["usage"], dict):
        return "usage", "must be an object"
    return "", None


def read_predictions(path: str | Path) -> PredictionList:
    """Read a predictions file. A bad line (not JSON, a missing ``output``, a repeated
    (id, strategy) pair …) is recorded in ``problems`` and its document counts as missing;
    only a file that cannot be read at all raises :class:`InputError`."""
    path = Path(path)
    result = PredictionList(str(path))
    seen: dict[tuple[str, str | None], int] = {}
    for line in read_json_lines(path):
        result.lines_read += 1
        data = line.value
        doc_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(doc_id, str) and data is None:
            doc_id = _recover_id(line.text)

        note = f" (document {doc_id!r})" if isinstance(doc_id, str) else ""
        where, message = _line_problem(line, doc_id)
        if message is not None:
            result.problems.append(Problem(str(path), line.number, where, message + note))
            continue
        assert isinstance(doc_id, str)
        usage = data.get("usage")
        prediction = Prediction(
            id=doc_id,
            output=data["output"],
            strategy=data.get("strategy"),
            model=data.get("model"),
            usage=usage,
            line=line.number,
        )
        pair = (prediction.id, prediction.strategy)
        if pair in seen:
            result.problems.append(
                Problem(
                    str(path),
                    line.number,
                    "id",
                    f"duplicate prediction for {doc_id!r} ignored (first on line {seen[pair]})",
                )
            )
            continue
        seen[pair] = line.number
        result.append(prediction)
    return result


def write_predictions(predictions: Iterable[Prediction], path: str | Path) -> None:
    _write_lines((p.to_dict() for p in predictions), Path(path))


def _write_lines(lines: Iterable[dict[str, Json]], path: Path) -> None:
    with atomic_writer(path) as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
