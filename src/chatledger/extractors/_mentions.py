"""Entities, links and topics: what the chunk mentions.

Entities
    * every participant (person), named in full as the chunk lists them;
    * calendar mentions — weekdays, dates, "today", "next week", month names (date);
    * money amounts such as "£40" or "300 dollars" (other);
    * runs of capitalised words that do not open a sentence and are neither function words nor
      part of a participant's name, typed by cue: an organisation noun inside ("Acme Ltd") →
      organization; an event noun ("Jazz Festival") → event; a place noun last ("Baker Street"),
      or after "in / at / near / from / via / around", or after "<place noun> on" ("studio on
      Fifth") → location; with a digit ("O2", "P0420") → other; next to a person cue ("you or
      Theo", "ask Ana") → person; else other.
    Names are kept as written; duplicates (case-insensitive) are dropped.

Links
    Every http(s):// or www. address (trailing punctuation removed); the context is the rest of
    the sentence it appears in.

Topics
    Up to two content-word bigrams that share no word, then single content words (not a bare
    common adjective such as "new"), each occurring at least twice (most frequent first, ties by
    first appearance), five in all; a chunk where nothing repeats gets its first three content
    words. Participants' names and calendar words ("today", "week") are never topics.
"""

from __future__ import annotations

import re
from collections import Counter

from chatledger.core import Entity, Link
from chatledger.extractors._calendar import DATE_MENTION
from chatledger.extractors._lexicon import (
    COMMON_ADJECTIVES,
    EVENT_NOUNS,
    GREETING_WORDS,
    ORGANIZATION_NOUNS,
    PERSON_CUES,
    PLACE_NOUNS,
    STOPWORDS,
    wordset,
)
from chatledger.extractors._negotiation import MONEY
from chatledger.extractors._text import tidy, trim_words, words
from chatledger.extractors._view import ChunkView

_URL = re.compile(r"\bhttps?://[^\s<>\"')\]]+|\bwww\.[^\s<>\"')\]]+", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'&-]*")
_LOCATION_PREPOSITIONS = wordset("in at near from via around")
# Calendar words say when, not what: they are date entities, never topics.
_TIME_WORDS = wordset("week weekend month year day days morning afternoon evening night time")
_MAX_TOPICS = 5
_MAX_BIGRAMS = 2
_FALLBACK_TOPICS = 3


def _name_tokens(view: ChunkView) -> set[str]:
    return {t for name in view.speakers for t in words(name)}


def _is_capitalised(token: str) -> bool:
    plain = token.removesuffix("'s").lower()
    return (
        token[:1].isupper()
        and token != "I"
        and plain not in STOPWORDS
        and plain not in GREETING_WORDS
        and not DATE_MENTION.fullmatch(plain)
    )


def _entity_type(run: list[str], before: list[str], after: str) -> str:
    lowered = [t.lower() for t in run]
    if any(t in ORGANIZATION_NOUNS for t in lowered):
        return "organization"
    if any(t in EVENT_NOUNS for t in lowered):
        return "event"
    previous = before[-1] if before else ""
    if (
        lowered[-1] in PLACE_NOUNS
        or previous in _LOCATION_PREPOSITIONS
        or (previous == "on" and len(before) >= 2 and before[-2] in PLACE_NOUNS)
    ):
        return "location"
    if any(ch.isdigit() for t in run for ch in t):
        return "other"  # a code or model number ("O2", "P0420"), never a person
    if previous in PERSON_CUES or after in PERSON_CUES:
        return "person"
    return "other"


def _capitalised_runs(text: str) -> list[tuple[list[str], list[str], str]]:
    """(run, the two lower-cased words before it, lower-cased word after it) for each name-like
    run (:func:`_entity_type` reads no further back; a longer list would make this quadratic)."""
    tokens = [m.group(0) for m in _TOKEN.finditer(text)]
    runs: list[tuple[list[str], list[str], str]] = []
    i = 1  # the first word of a sentence is capitalised anyway
    while i < len(tokens):
        if not _is_capitalised(tokens[i]):
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and _is_capitalised(tokens[j + 1]):
            j += 1
        run = [t.removesuffix("'s") for t in tokens[i : j + 1]]
        after = tokens[j + 1].lower() if j + 1 < len(tokens) else ""
        runs.append((run, [t.lower() for t in tokens[max(0, i - 2) : i]], after))
        i = j + 1
    return runs


def find_entities(view: ChunkView) -> list[Entity]:
    """Participants, dates, money and capitalised names (see the module docstring)."""
    found: dict[str, Entity] = {}

    def add(name: str, kind: str) -> None:
        key = name.casefold()
        if name and key not in found:
            found[key] = Entity(name=name, type=kind)

    for speaker in view.speakers:
        add(speaker, "person")
    participant_tokens = _name_tokens(view)
    for msg in view.messages:
        for sentence in msg.sentences:
            for match in DATE_MENTION.finditer(sentence.text):
                add(match.group(0), "date")
            for match in MONEY.finditer(sentence.text):
                add(match.group(0), "other")
            for run, before, after in _capitalised_runs(_URL.sub(" ", sentence.text)):
                if {t.lower() for t in run} <= participant_tokens:
                    continue
                add(" ".join(run), _entity_type(run, before, after))
    return list(found.values())


def find_links(view: ChunkView) -> list[Link]:
    """Every URL once, with the words around it as context."""
    links: dict[str, Link] = {}
    for sentence in view.sentences():
        context: str | None = None  # the same for every URL of the sentence
        for match in _URL.finditer(sentence.text):
            url = match.group(0).rstrip(".,;:!?")
            if context is None:
                context = trim_words(tidy(_URL.sub(" ", sentence.text)), 12)
            links.setdefault(url, Link(url=url, context=context))
    return list(links.values())


def find_topics(view: ChunkView) -> list[str]:
    """Most repeated content bigrams and words (see the module docstring)."""
    banned = _name_tokens(view)
    unigrams: Counter[str] = Counter()
    bigrams: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for sentence in view.sentences():
        tokens = [t.removesuffix("'s") for t in words(_URL.sub(" ", sentence.text))]
        keep = [
            len(t) >= 3
            and t.isalpha()
            and t not in STOPWORDS
            and t not in banned
            and t not in _TIME_WORDS
            and not DATE_MENTION.fullmatch(t)
            for t in tokens
        ]
        for i, token in enumerate(tokens):
            if not keep[i]:
                continue
            unigrams[token] += 1
            first_seen.setdefault(token, len(first_seen))
            if i + 1 < len(tokens) and keep[i + 1]:
                pair = f"{token} {tokens[i + 1]}"
                bigrams[pair] += 1
                first_seen.setdefault(pair, len(first_seen))

    def ranked(counts: Counter[str]) -> list[str]:
        return sorted(
            (t for t, n in counts.items() if n >= 2), key=lambda t: (-counts[t], first_seen[t])
        )

    topics: list[str] = []
    covered: set[str] = set()
    for pair in ranked(bigrams):
        if len(topics) < _MAX_BIGRAMS and not covered & set(pair.split()):
            topics.append(pair)
            covered.update(pair.split())
    for word in ranked(unigrams):
        if len(topics) >= _MAX_TOPICS:
            break
        if word not in covered and word not in COMMON_ADJECTIVES:
            topics.append(word)
    if not topics:
        topics = sorted(unigrams, key=lambda t: first_seen[t])[:_FALLBACK_TOPICS]
    return topics
