"""Conversation chunks: the unit that every layer scores."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


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

    # A field validator (not a model validator) so the error's path names ``messages``.
    @field_validator("messages")
    @classmethod
    def _unique_message_ids(cls, messages: list[Message]) -> list[Message]:
        seen: set[str] = set()
        for msg in messages:
            if msg.id in seen:
                raise ValueError(f"duplicate message id {msg.id!r}")
            seen.add(msg.id)
        return messages

    def speakers(self) -> list[str]:
        """Participants, plus any speaker not listed among them, in first-seen order."""
        names = list(dict.fromkeys(self.participants))
        for msg in self.messages:
            if msg.speaker not in names:
                names.append(msg.speaker)
        return names
