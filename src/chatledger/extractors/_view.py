"""A chunk prepared once for all rules: messages split into sentences, with VADER scores."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from chatledger.core import Chunk
from chatledger.extractors._sentiment import compound
from chatledger.extractors._text import content_words, normalise, split_sentences, words

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
        return _ends_in_question_mark(self.text) or bool(_INTERROGATIVE.match(self.text))


def _ends_in_question_mark(text: str) -> bool:
    """The last character that is a word character (``\\w``) or "?" is a "?".

    The same as stripping ``[^\\w?]+$`` with a regular expression, which is quadratic in a
    long run of symbols (it tries every start in the run).
    """
    for char in reversed(text):
        if char == "?":
            return True
        if char.isalnum() or char == "_":
            return False
    return False


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

    @cached_property
    def words(self) -> list[str]:
        """Word tokens of the message (read by several rules, so computed once)."""
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
        # Chunk.speakers() in linear time: participants, then other speakers as first seen.
        speakers = dict.fromkeys(chunk.participants)
        speakers.update(dict.fromkeys(m.speaker for m in chunk.messages))
        return cls(chunk, tuple(messages), tuple(speakers), counts, positions)

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
