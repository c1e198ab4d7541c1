"""Reading a model's raw output as the original pipeline does (DESIGN §8). Nothing is repaired.

1. ``<think>…</think>`` blocks are removed. An opening ``<think>`` that never closes swallows the
   rest of the text (the model ran out of tokens while reasoning: there is no answer); a closing
   ``</think>`` without an opening (some servers strip the opening tag) drops everything before it.
2. Markdown code-fence lines (```` ``` ```` or ```` ```json ````) are removed. A fence line can
   never sit inside valid JSON (JSON strings cannot hold a raw newline), so this cannot damage
   the JSON itself. A fence glued to the JSON on one line (```` ```json{…}``` ````) is removed too.
3. What is left, trimmed, must be exactly one JSON value (``json.loads``; ``NaN``/``Infinity``
   are not JSON and are refused). Then the output is a *single value*: DOC is decided by the
   schema.
4. Otherwise the text is searched for its first *complete* JSON object. Each JSON-looking object
   start (``{`` followed by ``"`` or ``}``: no other ``{`` can begin an object) is decoded in
   turn with ``JSONDecoder.raw_decode`` until one decodes. If one does, the output had prose (or
   a second value) around the JSON: DOC is 0, MK/MV/WV are computed on that object. If none
   does, the output is unparseable, with the kind of the first start that failed: *truncated*
   when the decoder ran off the end of the text, *malformed* otherwise. No object start at all
   is *no_json*; an empty text is *empty*.

   A start that fails is skipped together with the text the decoder read from it. The decoder
   read ``body[start:pos]`` as the beginning of one object, so every ``{`` in that stretch lies
   in one of its strings or is one of its nested values: decoding it would read a string's
   contents as JSON, or salvage the inner object of a broken answer, i.e. repair it. So the
   search resumes where the decoder failed, and a truncated start ends it (all the rest of the
   text is inside it). A failure the decoder gives no position for is a ``NaN``/``Infinity``
   (the search resumes after the value, as a decoder that accepts them reads it) or nesting
   deeper than the decoder can follow (the search ends). Every character is read by at most one
   failed start, so the search reads the text about once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from chatledger.structbench.dataset import Json

_THINK_BLOCK = re.compile(r"<think\b[^>]*>.*?</think\s*>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think\b[^>]*>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)
_FENCE_LINE = re.compile(r"^[ \t]*```[^\n`]*$\n?", re.MULTILINE)
_FENCE_GLUED_START = re.compile(r"\A```[A-Za-z0-9_+-]*")
_FENCE_GLUED_END = re.compile(r"```\Z")
_OBJECT_START = re.compile(r"\{\s*[\"}]")

# Kinds of output worth counting (a document can show several).
THINK_BLOCK = "think_block"
FENCED = "fenced"
SURROUNDING_PROSE = "surrounding_prose"
EMPTY = "empty"
NO_JSON = "no_json"
TRUNCATED = "truncated"
MALFORMED = "malformed"


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
_LENIENT = json.JSONDecoder()  # only to find where a value holding NaN/Infinity ends
_REBASE = 4096  # characters; see parse_output


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    """``value`` is what MK/MV/WV read; ``single_value`` says DOC may be 1 (schema permitting)."""

    value: Json
    parsed: bool
    single_value: bool
    kinds: tuple[str, ...]


def strip_wrappers(text: str) -> tuple[str, list[str]]:
    """Remove think blocks and code fences; return the rest and the kinds of wrapper seen."""
    kinds: list[str] = []
    body = _THINK_BLOCK.sub("", text)
    opened = _THINK_OPEN.search(body)
    if opened is not None:
        body = body[: opened.start()]
    closes = list(_THINK_CLOSE.finditer(body))
    if closes:
        body = body[closes[-1].end() :]
    if body != text:
        kinds.append(THINK_BLOCK)
    unfenced = _FENCE_LINE.sub("", body).strip()
    unfenced = _FENCE_GLUED_END.sub("", _FENCE_GLUED_START.sub("", unfenced)).strip()
    if unfenced != body.strip():
        kinds.append(FENCED)
    return unfenced, kinds


def parse_output(text: str) -> ParsedOutput:
    """Parse a raw model output by the rules in the module docstring. Never raises."""
    body, kinds = strip_wrappers(text)
    if not body:
        return ParsedOutput(None, False, False, (*kinds, EMPTY))
    resume_at = 0
    try:
        value, end = _DECODER.raw_decode(body)
        if end == len(body):
            return ParsedOutput(value, True, True, tuple(kinds))
    except (ValueError, RecursionError) as exc:
        if body[0] == "[":
            # A broken array is skipped as a broken object is: a truncated one holds the rest
            # of the text (nothing after it to find), a malformed one what the decoder read.
            kind, resume = _failure(body, 0, exc)
            if resume is None:
                return ParsedOutput(None, False, False, (*kinds, kind))
            resume_at = resume
    start = _OBJECT_START.search(body, resume_at)
    if start is None:
        if body[0] in "[{":  # an array or object that is itself broken
            return ParsedOutput(None, False, False, (*kinds, _failure_kind(body, 0)))
        return ParsedOutput(None, False, False, (*kinds, NO_JSON))
    first_failure = ""
    # A decode error counts the newlines before its position from the start of the string it
    # was given. Far into a long text the decoder gets the text's tail instead (``rest``, from
    # ``base``, cut afresh every _REBASE characters), so a failed start costs what it read plus
    # at most _REBASE, not the length of the text.
    rest, base = body, 0
    while start is not None:
        if start.start() - base > _REBASE:
            rest, base = body[start.start() :], start.start()
        at = start.start() - base
        try:
            value, _ = _DECODER.raw_decode(rest, at)
        except (ValueError, RecursionError) as exc:
            kind, resume = _failure(rest, at, exc)
            first_failure = first_failure or kind
            if resume is None:
                break
            start = _OBJECT_START.search(body, base + resume)
            continue
        return ParsedOutput(value, True, False, (*kinds, SURROUNDING_PROSE))
    return ParsedOutput(None, False, False, (*kinds, first_failure))


def _failure(body: str, start: int, exc: Exception) -> tuple[str, int | None]:
    """The kind of a failed decode of ``body`` from ``start``, and where in ``body`` the search
    for an object may resume (``None``: nowhere, the rest belongs to the broken value)."""
    if isinstance(exc, json.JSONDecodeError):
        if _ran_off_the_end(body, exc):
            return TRUNCATED, None
        return MALFORMED, max(exc.pos, start + 1)
    if isinstance(exc, RecursionError):
        return MALFORMED, None
    # A ValueError without a position: a NaN/Infinity refused (or an integer too long for int()).
    try:
        _, end = _LENIENT.raw_decode(body, start)
    except json.JSONDecodeError as lenient:
        if _ran_off_the_end(body, lenient):
            return MALFORMED, None
        return MALFORMED, max(lenient.pos, start + 1)
    except (ValueError, RecursionError):
        return MALFORMED, None
    return MALFORMED, end


def _ran_off_the_end(body: str, exc: json.JSONDecodeError) -> bool:
    """The decoder needed more text than there is (an unterminated string runs to the end)."""
    return exc.pos >= len(body) or exc.msg.startswith("Unterminated string")


def _failure_kind(body: str, start: int) -> str:
    """Truncated when the decoder needed more text than there is, malformed otherwise."""
    try:
        _DECODER.raw_decode(body, start)
    except json.JSONDecodeError as exc:
        return TRUNCATED if _ran_off_the_end(body, exc) else MALFORMED
    except (ValueError, RecursionError):
        return MALFORMED
    return MALFORMED  # pragma: no cover - only called after a failed decode
