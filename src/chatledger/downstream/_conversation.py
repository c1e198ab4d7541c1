"""Conversations in time order: what every downstream consumer reads (DESIGN.md §5).

Chunks are grouped by ``conversation_id`` (conversations in first-seen file order). Within a
conversation, chunks are ordered by the timestamp of their first timestamped message; ties keep
file order. A chunk with no timestamp at all keeps its place right after the chunk that precedes
it in the file (it inherits that chunk's time), so one undated chunk does not jump to the start.
Timestamps are ISO 8601; a naive one is read as UTC for ordering. A chunk's *day* is the calendar
date written in its first timestamp (no time-zone conversion), or ``undated``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from chatledger.core import InputError

if TYPE_CHECKING:  # the consumers' counts are read by gate and stats, which read no chunk
    from chatledger.core import Chunk, ExtractionRecord, ExtractionV3  # nor match names
    from chatledger.scoring import ChunkContext

UNDATED = "undated"
PARTICIPANT_THRESHOLD = 70.0  # the participant resolution of layer 1, on 0-100
_BEFORE_EVERYTHING = datetime.min.replace(tzinfo=UTC)

T = TypeVar("T")


@dataclass(frozen=True)
class ChunkRef:
    """Where a chunk sits: its conversation, its 0-based position in it, and its day."""

    conversation_id: str
    chunk_id: str
    position: int
    day: str


@dataclass
class ChunkView:
    """One chunk of a conversation with the extraction the consumers read (empty if unusable)."""

    ref: ChunkRef
    chunk: Chunk
    extraction: ExtractionV3
    _context: ChunkContext = field(repr=False)
    _display: dict[str, str] = field(repr=False)

    @property
    def chunk_id(self) -> str:
        return self.ref.chunk_id

    @property
    def position(self) -> int:
        return self.ref.position

    def speaker(self, name: str | None) -> str:
        """A speaker/owner name resolved to the chunk participant it denotes (fuzzy ≥ 0.70).

        Returns the participant as the chunk spells it; a name that matches nobody comes back as
        written (stripped); a missing name is "".
        """
        if name is None or not name.strip():
            return ""
        folded = self._context.resolve(name, PARTICIPANT_THRESHOLD)
        return self._display.get(folded, name.strip())


@dataclass(frozen=True, eq=False)
class ConversationView:
    """All chunks of one conversation, in time order.

    Consumers build on each other (the daily report reads drift, loops and escalation), so a
    view remembers what was derived from it (:meth:`derived`).
    """

    conversation_id: str
    chunks: tuple[ChunkView, ...]
    _derived: dict[str, Any] = field(default_factory=dict, repr=False)

    def derived(self, key: str, compute: Callable[[ConversationView], T]) -> T:
        """``compute(self)``, computed once per view and key."""
        if key not in self._derived:
            self._derived[key] = compute(self)
        result: T = self._derived[key]
        return result


def _parse_timestamp(chunk: Chunk, index: int, text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"chunk {chunk.chunk_id!r}: timestamp {text!r} is not an ISO 8601 date-time",
            field=f"messages.{index}.timestamp",
        ) from None
    return moment


def _first_time(chunk: Chunk) -> tuple[datetime, str] | None:
    """The first timestamped message's moment (UTC-comparable) and its written date."""
    for index, message in enumerate(chunk.messages):
        if message.timestamp:
            moment = _parse_timestamp(chunk, index, message.timestamp)
            day = moment.date().isoformat()
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return moment, day
    return None


def _usable(record: ExtractionRecord | None) -> ExtractionV3:
    from chatledger.core import ExtractionV3, RecordStatus

    if record is None or record.status is not RecordStatus.OK or record.extraction is None:
        return ExtractionV3()
    return record.extraction


def _view(chunk: Chunk, ref: ChunkRef, extraction: ExtractionV3) -> ChunkView:
    from chatledger.scoring import ChunkContext  # the matcher, only where chunks are read

    speakers = chunk.speakers()
    return ChunkView(
        ref=ref,
        chunk=chunk,
        extraction=extraction,
        _context=ChunkContext.from_chunk(chunk),
        _display={
            key: name
            for name in reversed(speakers)
            for key in (name.casefold(), name.strip().casefold())
        },
    )


def build_conversations(
    chunks: Sequence[Chunk], records: Mapping[str, ExtractionRecord]
) -> tuple[ConversationView, ...]:
    """Group ``chunks`` into time-ordered conversations, attaching one model's extractions.

    A chunk whose record is missing or not ``ok`` is read as an empty extraction.
    """
    grouped: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        grouped.setdefault(chunk.conversation_id, []).append(chunk)
    conversations: list[ConversationView] = []
    for conversation_id, members in grouped.items():
        keyed: list[tuple[datetime, int, Chunk, str]] = []
        previous = _BEFORE_EVERYTHING
        for file_index, chunk in enumerate(members):
            first = _first_time(chunk)
            if first is None:
                keyed.append((previous, file_index, chunk, UNDATED))
            else:
                previous = first[0]
                keyed.append((first[0], file_index, chunk, first[1]))
        keyed.sort(key=lambda item: (item[0], item[1]))
        views = tuple(
            _view(
                chunk,
                ChunkRef(conversation_id, chunk.chunk_id, position, day),
                _usable(records.get(chunk.chunk_id)),
            )
            for position, (_, _, chunk, day) in enumerate(keyed)
        )
        conversations.append(ConversationView(conversation_id, views))
    return tuple(conversations)
