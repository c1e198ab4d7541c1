"""Extraction lines: what ``chatledger extract`` writes, and what it finds already written.

A line is the DESIGN.md §2 extraction line plus ``sample`` and ``prompt_style``::

    {"chunk_id": "c-7", "model": "openai:gpt-5.2", "sample": 0, "prompt_style": "plain",
     "extraction": {...} | null, "error": "..." (only when null),
     "usage": {"input_tokens", "output_tokens", "cost_usd", "latency_s", "calls", "cached",
               "billed_usd"}}

``cost_usd`` is what the answer costs at list price, so a line replayed from the cache still
says what the model costs; ``billed_usd`` is what this run paid for it (0 on a cache hit).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chatledger.core import ExtractionV3, InputError, first_validation_error
from chatledger.providers import Completion, PriceTable

log = logging.getLogger("chatledger.extraction")


def extraction_line(
    *,
    chunk_id: str,
    model: str,
    sample: int,
    prompt_style: str,
    completion: Completion,
    prices: PriceTable,
) -> tuple[dict[str, Any], bool]:
    """The line for one completion and whether it holds a valid extraction.

    A completion whose output never validated (or that validates as JSON Schema but not as
    :class:`ExtractionV3`, e.g. a NaN confidence) becomes a line with ``"extraction": null`` and
    an ``error``: the scorer counts it as an invalid extraction of its chunk.
    """
    extraction: dict[str, Any] | None = None
    error = completion.error
    if error is None:
        try:
            extraction = ExtractionV3.model_validate(completion.parsed).model_dump(mode="json")
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            error = f"the JSON is not a valid extraction at {where or '(root)'}: {msg}"
    usage = completion.usage().model_dump(mode="json")
    usage["calls"] = completion.calls
    usage["cached"] = completion.cached
    usage["billed_usd"] = completion.cost_usd
    if completion.cached:
        price = prices.price(completion.model)
        if price is not None:
            usage["cost_usd"] = price.cost(completion.input_tokens, completion.output_tokens)
    line: dict[str, Any] = {
        "chunk_id": chunk_id,
        "model": model,
        "sample": sample,
        "prompt_style": prompt_style,
        "extraction": extraction,
        "usage": usage,
    }
    if extraction is None:
        line["error"] = error
        line["text"] = completion.text
    return line, extraction is not None


def finished_lines(path: Path, *, model: str, prompt_style: str) -> set[tuple[str, int]]:
    """The (chunk_id, sample) pairs ``path`` already holds, so a re-run skips them.

    A last line without its newline is what a process killed mid-write leaves: it is cut off
    (and redone). A line written for another model or prompt style means ``path`` belongs to
    another extraction: appending would mix two models in one file, so that is an error.
    """
    if not path.exists():
        return set()
    if path.is_dir():
        raise InputError("is a directory, expected a .jsonl file", path=path)
    _cut_partial_tail(path)
    done: set[tuple[str, int]] = set()
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                data = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if not isinstance(data, dict) or not isinstance(data.get("chunk_id"), str):
                continue
            for key, expected in (("model", model), ("prompt_style", prompt_style)):
                found = data.get(key)
                if found is not None and found != expected:
                    raise InputError(
                        f"the file already holds extractions with {key} {found!r}, not "
                        f"{expected!r}: choose another output file",
                        path=path,
                        line=number,
                        field=key,
                    )
            sample = data.get("sample", 0)
            if isinstance(sample, int) and not isinstance(sample, bool) and sample >= 0:
                done.add((data["chunk_id"], sample))
    return done


def _cut_partial_tail(path: Path) -> None:
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return
        # Find the end of the last complete line and drop what follows it.
        position = size
        keep = 0
        while position > 0:
            step = min(65536, position)
            position -= step
            handle.seek(position)
            block = handle.read(step)
            newline = block.rfind(b"\n")
            if newline >= 0:
                keep = position + newline + 1
                break
        handle.truncate(keep)
    log.warning("%s: dropped an unfinished last line (%d bytes)", path, size - keep)
