"""Conversation chunks: the unit that every layer scores."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

# A chunk is a window of a conversation (the bundled and imported corpora hold 19 to 113
# messages). Above this many messages scoring still works, but matching items against items and
# grounding items against messages grow with the square of the chunk: on 2 cores a run takes
# about 9 s on a 2,000-message chunk, 29 s on 4,000 and 3 minutes on 10,000 (docs/decisions.md).
LONG_CHUNK_MESSAGES = 2_000


class Message(BaseModel):
    """One message of a conversation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    speaker: str
    timestamp: str | None = None
    text: str


class Chunk(BaseModel):
    """A window of one conversation, as one line of ``chunks.jsonl``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_id: str = Field(min_length=1)
    conversation_id: str = ""
    title: str | None = None
    participants: list[str] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)

    # A field validator (not a model validator) so the error's path names ``messages``. One
    # pass over the messages checks both: ids unique, timestamps ISO 8601 (the downstream
    # consumers order and date messages by them; read here, a bad one is named with its file
    # and line instead of failing later in a consumer).
    @field_validator("messages")
    @classmethod
    def _unique_message_ids(cls, messages: list[Message]) -> list[Message]:
        seen: set[str] = set()
        for index, msg in enumerate(messages):
            if msg.id in seen:
                raise ValueError(f"duplicate message id {msg.id!r}")
            seen.add(msg.id)
            if msg.timestamp:
                try:
                    datetime.fromisoformat(msg.timestamp)
                except ValueError:
                    raise ValueError(
                        f"message {index} ({msg.id!r}): timestamp {msg.timestamp!r} is not an "
                        "ISO 8601 date-time (e.g. 2026-02-03T18:04:00Z)"
                    ) from None
        return messages

    @property
    def is_long(self) -> bool:
        """Longer than :data:`LONG_CHUNK_MESSAGES` (see there)."""
        return len(self.messages) > LONG_CHUNK_MESSAGES

    def speakers(self) -> list[str]:
        """Participants, plus any speaker not listed among them, in first-seen order."""
        names = list(dict.fromkeys(self.participants))
        for msg in self.messages:
            if msg.speaker not in names:
                names.append(msg.speaker)
        return names


def long_chunk_note(chunks: Iterable[Chunk]) -> str | None:
    """One line naming the chunks over :data:`LONG_CHUNK_MESSAGES` messages, or None."""
    long = [(c.chunk_id, len(c.messages)) for c in chunks if c.is_long]
    if not long:
        return None
    long.sort(key=lambda item: -item[1])
    shown = ", ".join(f"{cid!r} ({n:,} messages)" for cid, n in long[:3])
    more = f" and {len(long) - 3} more" if len(long) > 3 else ""
    return (
        f"{len(long)} chunk(s) over {LONG_CHUNK_MESSAGES:,} messages: {shown}{more}; scoring "
        "them takes time growing with the square of their length (minutes at 10,000) — split "
        "long conversations into windows"
    )
