"""Extraction lines: what ``chatledger extract`` writes, and what it finds already written.

A line is the DESIGN.md §2 extraction line plus ``sample``, ``prompt_style`` and
``fingerprint``::

    {"chunk_id": "c-7", "model": "openai:gpt-5.2", "sample": 0, "prompt_style": "plain",
     "extraction": {...} | null, "error": "..." (only when null),
     "usage": {"input_tokens", "output_tokens", "cost_usd", "latency_s", "calls", "cached",
               "billed_usd"},
     "fingerprint": {"chunk": "<hash>", "prompt": "<hash>", "max_tokens": 4096,
                     "temperature": null, "options": {}}}

``cost_usd`` is what the answer costs at list price, so a line replayed from the cache still
says what the model costs; ``billed_usd`` is what this run paid for it (0 on a cache hit).

The fingerprint is everything the answer depends on besides the model and the prompt style:
``chunk`` hashes the chunk's content (id, conversation, title, participants, every message's
id, speaker, time and text — what the prompt is built from); ``prompt`` hashes the prompt the
style builds (its rules, field guide or worked example, how a chunk is rendered, the output
schema from the vocabulary); the request's parameters are written out. An offline extractor's
lines hold ``chunk`` and ``extractor`` (its id and the chatledger version that ran it).

On resume (:func:`resume_state`) a line counts as done only when its fingerprint matches. A
different chunk hash means the chunk changed: the line is *superseded* — dropped from the file
(rewritten atomically) and the chunk extracted again. A different request parameter means the
file answers another request: that is refused with one line naming the parameter, as a file of
another model or prompt style is (appending would mix two requests in one file). An offline
extractor's version is re-extracted rather than refused: redoing it costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import JsonValue, ValidationError

from chatledger.core import (
    Chunk,
    ExtractionV3,
    InputError,
    Message,
    atomic_path,
    first_validation_error,
)
from chatledger.providers import Completion, PriceTable, canonical_json

log = logging.getLogger("chatledger.extraction")


FINGERPRINT = "fingerprint"
_HASH_CHARS = 16  # 64 bits of SHA-256: no two chunks of a corpus collide by chance


def _digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:_HASH_CHARS]


def chunk_hash(chunk: Chunk) -> str:
    """A hash of everything in the chunk (every field feeds the prompt or the rules)."""
    return _digest(chunk.model_dump(mode="json"))


# A fixed chunk through a prompt style shows its whole template: rules, field guide, example,
# and how ids, participants, times and texts are rendered.
_PROBE = Chunk(
    chunk_id="probe",
    conversation_id="probe-conversation",
    title="Probe",
    participants=["A", "B"],
    messages=[
        Message(id="p1", speaker="A", timestamp="2026-01-01T00:00:00Z", text="Shall we?"),
        Message(id="p2", speaker="B", text="Yes."),
    ],
)


@dataclass(frozen=True)
class Fingerprint:
    """The request side of a line's fingerprint (the chunk hash is added per line).

    ``redo`` names the keys whose change supersedes a line (re-extracted) instead of refusing
    the file.
    """

    request: dict[str, JsonValue]
    redo: frozenset[str] = frozenset()

    @classmethod
    def for_model(
        cls,
        messages: Iterable[Any],
        output_schema: Any,
        *,
        max_tokens: int,
        temperature: float | None,
        options: Mapping[str, JsonValue] | None,
        constraints: dict[str, JsonValue] | None = None,
    ) -> Fingerprint:
        """A language model request: the prompt (``messages`` and ``output_schema`` of the
        probe chunk, pydantic models) hashed, the parameters written out, and the schema's
        constraints (list bounds, the chunk's ids) when there are any."""
        prompt = {
            "messages": [m.model_dump(mode="json") for m in messages],
            "schema": output_schema.model_dump(mode="json") if output_schema else None,
        }
        # Options as JSON reads them back (tuples become lists), so a re-read line compares.
        plain_options = json.loads(canonical_json(dict(options or {})))
        request: dict[str, JsonValue] = {
            "prompt": _digest(prompt),
            "max_tokens": max_tokens,
            "temperature": temperature,
            "options": plain_options,
        }
        if constraints is not None:
            request["schema_constraints"] = constraints
        return cls(request)

    @classmethod
    def for_offline(cls, extractor: str, version: str) -> Fingerprint:
        return cls({"extractor": f"{extractor} (chatledger {version})"}, frozenset({"extractor"}))

    def line(self, chunk: str) -> dict[str, JsonValue]:
        """The ``fingerprint`` of a line for a chunk with hash ``chunk``."""
        return {"chunk": chunk, **self.request}


def probe_chunk() -> Chunk:
    """The fixed chunk whose prompt stands for a prompt style's template."""
    return _PROBE


def extraction_line(
    *,
    chunk_id: str,
    model: str,
    sample: int,
    prompt_style: str,
    completion: Completion,
    prices: PriceTable,
    fingerprint: dict[str, JsonValue] | None = None,
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
            extraction = ExtractionV3.model_validate(completion.parsed, strict=True).model_dump(
                mode="json"
            )
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            error = f"the JSON is not a valid extraction at {where or '(root)'}: {msg}"
    usage = completion.usage().model_dump(mode="json")
    usage["calls"] = completion.calls
    usage["cached"] = completion.cached
    usage["billed_usd"] = completion.cost_usd
    # "length" says the reply ran into max_tokens: a degenerate output the report counts.
    usage["finish_reason"] = completion.finish_reason
    if completion.usage_warnings:
        # The server reported token counts it could not have used (more output than max_tokens,
        # a negative count): what was billed instead, kept beside the line for the record.
        usage["warnings"] = list(completion.usage_warnings)
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
    if fingerprint is not None:
        line[FINGERPRINT] = fingerprint
    return line, extraction is not None


def offline_line(
    *,
    chunk_id: str,
    model: str,
    sample: int,
    prompt_style: str,
    extraction: ExtractionV3 | None,
    error: str | None,
    latency_s: float,
    fingerprint: dict[str, JsonValue] | None = None,
) -> dict[str, Any]:
    """The line of an offline extractor's answer: no tokens, no calls, no cost; the measured
    extraction time as latency."""
    line: dict[str, Any] = {
        "chunk_id": chunk_id,
        "model": model,
        "sample": sample,
        "prompt_style": prompt_style,
        "extraction": extraction.model_dump(mode="json") if extraction is not None else None,
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": 0.0,
            "latency_s": round(latency_s, 6),
            "calls": 0,
            "cached": False,
            "billed_usd": 0.0,
        },
    }
    if extraction is None:
        line["error"] = error
    if fingerprint is not None:
        line[FINGERPRINT] = fingerprint
    return line


@dataclass
class ResumeState:
    """What an extraction file already holds for the chunks asked for.

    ``done``: (chunk_id, sample) pairs with a current line, skipped. ``superseded``: line
    numbers to drop before appending — lines whose chunk changed since (their pairs are in
    ``stale``) and lines that are not JSON (a pair they meant is not done either) — so that the
    re-extracted line is the one the reader takes.
    """

    done: set[tuple[str, int]] = field(default_factory=set)
    stale: set[tuple[str, int]] = field(default_factory=set)
    superseded: set[int] = field(default_factory=set)
    unreadable: int = 0  # of the superseded lines, those that are not JSON


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _request_mismatch(
    path: Path,
    number: int,
    key: str,
    found: Any,
    expected: Any,
    prompt_style: str,
) -> InputError:
    if key == "prompt":
        what = (
            f"another prompt for prompt style {prompt_style!r} (another chatledger version or "
            "vocabulary)"
        )
    else:
        what = f"{key} {_shown(found)}, not {_shown(expected)}"
    return InputError(
        f"the file was written with {what}: choose another output file or delete it",
        path=path,
        line=number,
        field=f"{FINGERPRINT}.{key}",
    )


def resume_state(
    path: Path,
    *,
    model: str,
    prompt_style: str,
    fingerprint: Fingerprint | None = None,
    chunk_hashes: Mapping[str, str] | None = None,
) -> ResumeState:
    """What ``path`` already holds, so a re-run skips it (see the module doc).

    A last line without its newline is what a process killed mid-write leaves: it is cut off
    (and redone). A line written for another model, prompt style or request means ``path``
    belongs to another extraction: appending would mix two in one file, so that is an error. A
    line without a fingerprint (written by chatledger before fingerprints) is refused too:
    whether its chunk is still the same cannot be told. Without ``fingerprint`` only the model
    and prompt style are checked.
    """
    state = ResumeState()
    if not path.exists():
        return state
    if path.is_dir():
        raise InputError("is a directory, expected a .jsonl file", path=path)
    _cut_partial_tail(path)
    hashes = chunk_hashes or {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                data = json.loads(raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, a 5,000-digit number
                if raw.strip():
                    state.superseded.add(number)
                    state.unreadable += 1
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
            if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
                continue
            pair = (data["chunk_id"], sample)
            if fingerprint is None:
                state.done.add(pair)
                continue
            if _is_stale(path, number, data, pair, fingerprint, hashes, prompt_style):
                state.superseded.add(number)
                state.stale.add(pair)
            else:
                state.done.add(pair)
    state.stale -= state.done  # a current duplicate of a stale line stands
    return state


def _is_stale(
    path: Path,
    number: int,
    data: dict[str, Any],
    pair: tuple[str, int],
    fingerprint: Fingerprint,
    hashes: Mapping[str, str],
    prompt_style: str,
) -> bool:
    """Whether the line must be redone; raises when it answers another request."""
    found = data.get(FINGERPRINT)
    if not isinstance(found, dict):
        raise InputError(
            "the file holds lines without a fingerprint (written by an older chatledger), so "
            "whether their chunks changed cannot be told: delete it (the call cache answers "
            "unchanged requests) or choose another output file",
            path=path,
            line=number,
            field=FINGERPRINT,
        )
    stale = False
    for key in sorted((set(found) | set(fingerprint.request)) - {"chunk"}):
        old, new = found.get(key), fingerprint.request.get(key)
        if old == new:
            continue
        if key in fingerprint.redo:
            stale = True
        else:
            raise _request_mismatch(path, number, key, old, new, prompt_style)
    expected = hashes.get(pair[0])
    return stale or (expected is not None and found.get("chunk") != expected)


def finished_lines(
    path: Path,
    *,
    model: str,
    prompt_style: str,
    fingerprint: Fingerprint | None = None,
    chunk_hashes: Mapping[str, str] | None = None,
) -> set[tuple[str, int]]:
    """The (chunk_id, sample) pairs ``path`` holds a current line for (:func:`resume_state`)."""
    return resume_state(
        path,
        model=model,
        prompt_style=prompt_style,
        fingerprint=fingerprint,
        chunk_hashes=chunk_hashes,
    ).done


def drop_lines(path: Path, numbers: set[int]) -> None:
    """Rewrite ``path`` without the lines ``numbers`` (1-based), atomically (``atomic_path``:
    the kept lines go to a temporary file beside it, which then replaces it), so a failure at
    any point leaves the old file whole."""
    if not numbers:
        return
    with atomic_path(path) as temporary, temporary.open("wb") as out, path.open("rb") as source:
        for number, raw in enumerate(source, start=1):
            if number not in numbers:
                out.write(raw)
        out.flush()
        os.fsync(out.fileno())


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
