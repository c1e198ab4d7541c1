"""Small text utilities: normalising, sentence splitting, word tokens, tidy item text."""

from __future__ import annotations

import re

from chatledger.extractors._lexicon import STOPWORDS

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_SPACES = re.compile(r"\s+")
# A sentence ends at . ! ? (any run of them) followed by white space, or at a line break.
# URLs survive because their dots are not followed by white space.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Discourse openers that carry no content ("Yes but I'm not sure..." → "I'm not sure...").
_OPENERS = re.compile(
    r"^(?:(?:yes|yeah|yep|no|nope|well|so|and|but|ok|okay|oh|um|uh|hmm|right|fair|deal|"
    r"great|sure|alright|hi|hello|hey)\b[\s,.!;:-]*)+",
    re.IGNORECASE,
)


def normalise(text: str) -> str:
    """Curly quotes to straight ones and runs of white space to one space."""
    return _SPACES.sub(" ", text.translate(_QUOTES)).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of a message (never empty strings)."""
    parts = (p.strip() for p in _SENTENCE_END.split(text.translate(_QUOTES)))
    return [_SPACES.sub(" ", p) for p in parts if p]


def words(text: str) -> list[str]:
    """Lower-cased word tokens; an apostrophe suffix stays attached ("i'll", "don't")."""
    return _WORD.findall(text.lower().translate(_QUOTES))


def content_words(text: str) -> list[str]:
    """Words that can carry a topic: alphabetic, 3+ letters, not a stop word."""
    return [
        w
        for w in (t.removesuffix("'s") for t in words(text))
        if len(w) >= 3 and w.isalpha() and w not in STOPWORDS
    ]


def word_count(text: str) -> int:
    return len(words(text))


def strip_openers(text: str) -> str:
    """Drop leading discourse markers ("yes but", "well,", "ok so")."""
    stripped = _OPENERS.sub("", text).strip()
    return stripped or text.strip()


def _keeps_edge(char: str, kept: str) -> bool:
    return char.isalnum() or char in kept


def tidy(fragment: str) -> str:
    """Item text from a sentence fragment: trimmed of punctuation, emoji and other symbols at
    both ends, first letter upper-cased."""
    text = _SPACES.sub(" ", fragment).strip()
    start, end = 0, len(text)
    while start < end and not _keeps_edge(text[start], "\"'(£$€#@"):
        start += 1
    while end > start and not _keeps_edge(text[end - 1], "\"')%"):
        end -= 1
    text = text[start:end]
    return text[:1].upper() + text[1:] if text else text


def trim_words(text: str, limit: int) -> str:
    """At most ``limit`` words, with "..." when something was cut."""
    parts = text.split()
    return text if len(parts) <= limit else " ".join(parts[:limit]) + "..."
