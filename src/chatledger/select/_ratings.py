"""Human chunk ratings for discrimination (DESIGN.md §9: rank correlation with human chunk
ratings when given): a JSON object ``{chunk_id: rating}`` or JSON Lines
``{"chunk_id": …, "rating": …}``. Every screened chunk needs a rating; a rating for a chunk the
chunks file does not hold is a mistake, named with its line."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from chatledger.core import InputError


def _number(value: object, path: Path, line: int | None, chunk_id: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"rating of {chunk_id!r} is not a number", path=path, line=line)
    return float(value)


def read_ratings(path: Path, chunk_ids: Sequence[str]) -> dict[str, float]:
    known = set(chunk_ids)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ratings: {exc}", path=path) from None
    ratings: dict[str, float] = {}
    stripped = text.lstrip()
    if stripped.startswith("{") and path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON: {exc.msg}", path=path, line=exc.lineno) from None
        if not isinstance(data, dict):
            raise InputError("expected an object of chunk id to rating", path=path)
        for chunk_id, value in data.items():
            ratings[str(chunk_id)] = _number(value, path, None, str(chunk_id))
    else:
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"not a JSON line: {exc.msg}", path=path, line=number) from None
            if not isinstance(item, dict) or "chunk_id" not in item or "rating" not in item:
                raise InputError('expected {"chunk_id": …, "rating": …}', path=path, line=number)
            chunk_id = str(item["chunk_id"])
            if chunk_id in ratings:
                raise InputError(f"chunk {chunk_id!r} rated twice", path=path, line=number)
            ratings[chunk_id] = _number(item["rating"], path, number, chunk_id)
    unknown = sorted(set(ratings) - known)
    if unknown:
        raise InputError(
            f"rating for a chunk not in the chunks file: {unknown[0]!r}"
            + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""),
            path=path,
        )
    return ratings
