"""What every chat-export reader hands the import pipeline.

A reader turns one export (a WhatsApp ``.txt``, a Slack folder, an iMessage ``chat.db`` …) into
:class:`Conversation` objects, each with its messages **in time order** as an iterator, so a
long export streams through the pipeline: memory holds the chunk being built, not the export.
What a reader does not keep (a system line, a tapback, a service message) it counts in
:class:`SkipLog` by reason; nothing is dropped without a count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Literal

# What a kept message is: ordinary text, a media placeholder ("<Media omitted>", "image
# omitted", an attachment with no text), or something else a reader flags (a sticker, a poll).
MessageKind = Literal["text", "media", "sticker", "poll", "call", "other"]
DateOrder = Literal["auto", "dmy", "mdy", "ymd", "ydm"]
# Every order of day, month and year a WhatsApp export has been seen in (``auto``: decided from
# the file's own dates); --date-order accepts each.
DATE_ORDERS: tuple[str, ...] = ("dmy", "mdy", "ymd", "ydm")


@dataclass(frozen=True, slots=True)
class ExportMessage:
    """One message as the export has it. ``timestamp`` is timezone-aware when the export says
    the zone (epoch times are UTC), naive when it does not (WhatsApp's local times)."""

    timestamp: datetime
    speaker: str
    text: str
    kind: MessageKind = "text"
    # The export's own id of the message, and of the message it replies to, when it has them.
    native_id: str | None = None
    reply_to: str | None = None


@dataclass
class Conversation:
    """One chat (a WhatsApp chat, a Slack channel, a Telegram chat, an iMessage thread).

    ``key`` is the export's own stable name for it (a channel name, a chat id, the file name);
    the pipeline makes the conversation id from it. ``members`` are the names the export's
    participant metadata gives (users.json, a thread's participants), used with the speakers
    to pseudonymise: names come from the export, never from guessing.
    """

    key: str
    title: str | None
    messages: Iterable[ExportMessage]
    members: tuple[str, ...] = ()


@dataclass
class SkipLog:
    """Counts of what an import did not keep, by reason, and of kept messages by kind."""

    skipped: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] += count

    def kept(self, kind: str) -> None:
        self.kinds[kind] += 1


@dataclass(frozen=True)
class CsvMapping:
    """Which CSV columns hold what (names as in the header), and how to read the timestamp.

    Columns left ``None`` are found from common header names (timestamp/date/time,
    sender/speaker/author/from/name, message/text/content/body, conversation/chat/thread).
    ``date_format`` is a :func:`datetime.strptime` format; without it ISO 8601 and epoch
    seconds are read.
    """

    timestamp: str | None = None
    speaker: str | None = None
    text: str | None = None
    conversation: str | None = None
    date_format: str | None = None


@dataclass
class ReadContext:
    """Options a reader may need, and where it reports what it skipped and noticed."""

    date_order: DateOrder = "auto"
    me: str = "me"
    timezone: tzinfo | None = None
    csv: CsvMapping = field(default_factory=CsvMapping)
    log: SkipLog = field(default_factory=SkipLog)
    # One line each, shown in the import summary (e.g. "times have no time zone").
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def in_time_order(messages: Iterable[ExportMessage]) -> Iterator[ExportMessage]:
    """``messages`` sorted by time, stably (for exports whose files are not in order)."""
    return iter(sorted(messages, key=_sort_key))


def _sort_key(message: ExportMessage) -> float:
    # Aware and naive times never meet inside one conversation; compare as POSIX seconds
    # (naive times as if they were UTC), which orders either kind correctly.
    moment = message.timestamp
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
