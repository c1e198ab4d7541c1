"""Cutting a conversation into chunks the way an extraction pipeline needs them.

A new chunk starts after a silence longer than ``gap`` (a conversation resumed the next day is a
new window), or when the chunk is full: ``max_messages`` messages, or ``max_tokens`` estimated
tokens (UTF-8 bytes / 4, rounded up, of the speaker and text — the usual rule of thumb for
English; a message alone over the limit still makes a chunk of its own: chunks never split a
message). A chunk cut because it was full starts the next one with its last ``overlap``
messages (same ids), so an exchange spanning the cut is seen whole once; a cut at a silence
does not overlap. Participants are the chunk's speakers, in order of first message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chatledger.core import InputError

DEFAULT_GAP = timedelta(hours=6)
DEFAULT_MAX_MESSAGES = 40
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(w|d|h|m|s)")
_UNITS = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(text: str, *, field: str = "--gap") -> timedelta:
    """``"6h"``, ``"90m"``, ``"1d12h"``, ``"45s"`` → a timedelta (``"0"`` or ``"none"``: no gap)."""
    spec = text.strip().lower().replace(" ", "")
    if spec in ("0", "none", "off"):
        return timedelta(0)
    position = 0
    seconds = 0.0
    for match in _DURATION.finditer(spec):
        if match.start() != position:
            break
        seconds += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if position != len(spec) or position == 0:
        raise InputError(
            f"cannot read {text!r} as a duration: use e.g. 6h, 90m, 1d12h or 0 (no gap)",
            field=field,
        )
    return timedelta(seconds=seconds)


@dataclass(frozen=True)
class ChunkingOptions:
    gap: timedelta = DEFAULT_GAP  # timedelta(0): silences never cut
    max_messages: int = DEFAULT_MAX_MESSAGES
    max_tokens: int | None = None
    overlap: int = 0

    def __post_init__(self) -> None:
        if self.max_messages < 1:
            raise InputError("must be at least 1", field="--max-messages")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InputError("must be at least 1", field="--max-tokens")
        if not 0 <= self.overlap < self.max_messages:
            raise InputError(
                f"must be at least 0 and below --max-messages ({self.max_messages})",
                field="--overlap",
            )


def estimate_tokens(speaker: str, text: str) -> int:
    return math.ceil((len(speaker.encode("utf-8")) + len(text.encode("utf-8")) + 2) / 4)


@dataclass(frozen=True, slots=True)
class ChunkMessage:
    """A message as it goes into a chunk: id, speaker, ISO time, text."""

    id: str
    speaker: str
    moment: datetime
    timestamp: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "speaker": self.speaker, "timestamp": self.timestamp,
                "text": self.text}  # fmt: skip


def chunk_conversation(
    conversation_id: str,
    title: str | None,
    messages: Iterator[ChunkMessage],
    options: ChunkingOptions,
) -> Iterator[dict[str, Any]]:
    """The chunks of one conversation, as ``chunks.jsonl`` objects, as soon as each closes."""
    current: list[ChunkMessage] = []
    tokens = 0
    number = 0

    def close() -> dict[str, Any]:
        nonlocal number
        number += 1
        speakers = list(dict.fromkeys(m.speaker for m in current))
        chunk: dict[str, Any] = {
            "chunk_id": f"{conversation_id}-{number:04d}",
            "conversation_id": conversation_id,
        }
        if title:
            chunk["title"] = title
        chunk["participants"] = speakers
        chunk["messages"] = [m.to_json() for m in current]
        return chunk

    for message in messages:
        cost = estimate_tokens(message.speaker, message.text)
        if current:
            silent = (
                options.gap > timedelta(0) and message.moment - current[-1].moment > options.gap
            )
            full = len(current) >= options.max_messages or (
                options.max_tokens is not None and tokens + cost > options.max_tokens
            )
            if silent or full:
                yield close()
                # Carry the last messages over only past a cut for size, and only when they
                # leave room for the next message (never a chunk of repeats alone).
                carry = (
                    current[len(current) - options.overlap :]
                    if full and not silent and options.overlap
                    else []
                )
                carried = sum(estimate_tokens(m.speaker, m.text) for m in carry)
                if options.max_tokens is not None and carried + cost > options.max_tokens:
                    carry, carried = [], 0
                current, tokens = list(carry), carried
        current.append(message)
        tokens += cost
    if current:
        yield close()
