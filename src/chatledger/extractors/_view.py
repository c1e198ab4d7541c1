"""A chunk prepared once for all rules: messages split into sentences, with VADER scores."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from chatledger.core import Chunk
from chatledger.extractors._sentiment import compound
from chatledger.extractors._text import content_words, normalise, split_sentences, words

_TRAILING = re.compile(r"[^\w?]+$")
# An auxiliary verb then a pronoun opens a yes/no question even when "?" is missing.
_INTERROGATIVE = re.compile(
    r"^(?:(?:hi|hello|hey|so|and|but|ok|okay|oh|well)\W+)*"
    r"(?:do|does|did|have|has|are|is|was|were|can|could|would|will|should|shall)\s+"
    r"(?:you|we|i|they|he|she|it|there)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Sentence:
    """One sentence of one message; ``key`` identifies it within the chunk."""

    text: str
    lower: str
    position: int
    index: int
    message_id: str
    speaker: str

    @property
    def key(self) -> tuple[int, int]:
        return (self.position, self.index)

    @property
    def is_question(self) -> bool:
        """Ends in "?" (before any "!" or emoji), or opens like one ("have you ...", "is it")."""
        return _TRAILING.sub("", self.text).endswith("?") or bool(_INTERROGATIVE.match(self.text))


@dataclass(frozen=True)
class MessageView:
    """One message: its position in the chunk, sentences and VADER compound score."""

    position: int
    id: str
    speaker: str
    text: str
    lower: str
    sentences: tuple[Sentence, ...]
    compound: float

    @property
    def words(self) -> list[str]:
        return words(self.text)


@dataclass(frozen=True)
class ChunkView:
    """The chunk, its messages in order, content-word counts, and message id → position."""

    chunk: Chunk
    messages: tuple[MessageView, ...]
    speakers: tuple[str, ...]
    word_counts: Counter[str]
    position: dict[str, int]

    @classmethod
    def build(cls, chunk: Chunk) -> ChunkView:
        messages: list[MessageView] = []
        counts: Counter[str] = Counter()
        for position, msg in enumerate(chunk.messages):
            text = normalise(msg.text)
            sentences = tuple(
                Sentence(s, s.lower(), position, i, msg.id, msg.speaker)
                for i, s in enumerate(split_sentences(msg.text))
            )
            messages.append(
                MessageView(
                    position, msg.id, msg.speaker, text, text.lower(), sentences, compound(text)
                )
            )
            counts.update(content_words(text))
        positions = {m.id: m.position for m in messages}
        return cls(chunk, tuple(messages), tuple(chunk.speakers()), counts, positions)

    def sentences(self) -> list[Sentence]:
        return [s for m in self.messages for s in m.sentences]

    def reply_to(self, position: int, within: int = 2) -> MessageView | None:
        """The first later message by someone else, at most ``within`` messages ahead."""
        speaker = self.messages[position].speaker
        for msg in self.messages[position + 1 : position + 1 + within]:
            if msg.speaker != speaker:
                return msg
        return None

    def previous_from_other(self, position: int, within: int = 2) -> MessageView | None:
        """The nearest earlier message by someone else, at most ``within`` messages back."""
        speaker = self.messages[position].speaker
        for msg in reversed(self.messages[max(0, position - within) : position]):
            if msg.speaker != speaker:
                return msg
        return None

    def others(self, speaker: str) -> list[str]:
        return [s for s in self.speakers if s != speaker]
