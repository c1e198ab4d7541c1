"""Stable ids: the same export imported again gives the same message and chunk ids, so
extraction files and the call cache made from the first import still apply.

A message id is ``m-`` and 12 hex digits of the SHA-256 of (conversation id, timestamp,
speaker, text) — what the chunk shows of the message, after aliases and pseudonymisation, so
nothing about the raw text is derived into the id. Two identical messages (same time, same
speaker, same text) get ``-2``, ``-3`` …. Duplicates share a timestamp, so they sit close
together even in an export whose times are slightly out of order (messages queued offline):
the counts of the last ``RECENT`` distinct messages are remembered, which keeps memory flat
however long the export is.
"""

from __future__ import annotations

import hashlib
import re

_SLUG = re.compile(r"[\W_]+")


def slug(text: str, *, fallback: str = "chat") -> str:
    """A lower-case, dash-separated id part (``"Family Trip 2026!"`` → ``family-trip-2026``;
    letters of any script are kept: ``"Zoë & Co"`` → ``zoë-co``)."""
    value = _SLUG.sub("-", text.casefold()).strip("-")[:60].strip("-")
    return value or fallback


RECENT = 10_000


class MessageIds:
    """Ids for the messages of one conversation, given in (roughly) time order."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self._seen: dict[str, int] = {}

    def next(self, timestamp: str, speaker: str, text: str) -> str:
        digest = hashlib.sha256(
            "\x1f".join((self.conversation_id, timestamp, speaker, text)).encode("utf-8")
        ).hexdigest()[:12]
        count = self._seen.pop(digest, 0) + 1
        self._seen[digest] = count  # re-inserted: the most recent at the end
        if len(self._seen) > RECENT:
            del self._seen[next(iter(self._seen))]
        return f"m-{digest}" if count == 1 else f"m-{digest}-{count}"


class ConversationIds:
    """Conversation ids from the export's own keys: their slug, made unique within an import."""

    def __init__(self) -> None:
        self._used: dict[str, int] = {}

    def next(self, key: str) -> str:
        base = slug(key)
        count = self._used.get(base, 0) + 1
        self._used[base] = count
        return base if count == 1 else f"{base}-{count}"
