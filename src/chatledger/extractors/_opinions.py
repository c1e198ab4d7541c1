"""Claims, warnings and implicit assumptions: sentence-level cue rules.

Claims
    A sentence of four or more words, not a question and not already a decision, action item or
    question, is a claim when it carries a stance cue ("I think", "I'm not sure", "I prefer",
    "seems"), an evaluation ("is too X", "is great", a copula before a word VADER rates, "works",
    "doesn't work", "kills") — confidence 0.6 — or, failing that, a strong VADER score
    (|compound| >= 0.5) in a sentence of five or more words — confidence 0.5. Polarity is the sign
    of the sentence's VADER compound with VADER's ±0.05 cut-offs. The subject is the first
    content word after a determiner ("the", "this", "our", ...; common adjectives such as "new"
    skipped), else the sentence's content word that is most frequent in the whole chunk.

Warnings
    One per sentence with a cue, at the strongest cue's severity: high for threats ("or else",
    "last chance", "final warning", "or I'll", "you'll regret", "!!" beside an anger word),
    medium for "warning", "careful", "watch out", "beware", "danger", "risk", "urgent", low for
    reminders ("make sure", "don't forget", "remember to", "heads up").

Implicit assumptions
    The clause after "assuming", "I assume", "since" (not the temporal "since Monday"),
    "obviously", "of course", "presumably", "surely", "given that", "as long as", "clearly",
    held by the speaker; at least three words.
"""

from __future__ import annotations

import re
from collections import Counter

from chatledger.core import Assumption, Claim, WarningItem
from chatledger.extractors._calendar import DATE_MENTION
from chatledger.extractors._lexicon import (
    COMMON_ADJECTIVES,
    DETERMINERS,
    EMOTION_WORDS,
    STOPWORDS,
    wordset,
)
from chatledger.extractors._sentiment import compound, polarity, valence
from chatledger.extractors._text import content_words, strip_openers, tidy, word_count, words
from chatledger.extractors._view import ChunkView, Sentence

CUED_CLAIM_CONFIDENCE = 0.6
SENTIMENT_CLAIM_CONFIDENCE = 0.5
_STRONG_SENTIMENT = 0.5

_STANCE = re.compile(
    r"\b(?:i (?:think|thought|believe|feel|guess|reckon|doubt|prefer|love|like|hate)|"
    r"i'm (?:not )?sure|i am (?:not )?sure|in my opinion|i'd (?:say|prefer)|"
    r"i would (?:say|prefer)|i don't (?:like|think)|seems|looks like|"
    r"(?:is|are|was|were|'s|'re) too|works|worked|doesn't work|does not work|won't work|"
    r"kills|killed|sucks|helps|matters)\b",
    re.IGNORECASE,
)
_COPULA_WORD = re.compile(
    r"\b(?:is|are|was|were|'s|'re|be) (?:(?:too|very|really|so|quite|pretty|not|a bit|"
    r"a little|kind of|a|an|the) )*(?P<word>[a-z]+)",
    re.IGNORECASE,
)
_EVALUATIVE = wordset(
    "expensive cheap easy hard difficult important useful useless long short late early "
    "slow fast loud quiet simple complicated"
)
_STANCE_PREFIX = re.compile(
    r"^(?:i (?:think|believe|feel|guess|reckon)(?: that)?|in my opinion,?)\s+", re.IGNORECASE
)

_WARNING_CUES = (
    (
        "high",
        re.compile(
            r"\b(?:or else|last chance|final warning|or i'll|or i will|you'll regret|"
            r"i'm warning you|don't you dare)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "medium",
        re.compile(
            r"\b(?:warning|warn|careful|watch out|beware|danger|dangerous|risk|risky|urgent)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "low",
        re.compile(
            r"\b(?:make sure|don't forget|do not forget|remember to|heads up|be aware)\b",
            re.IGNORECASE,
        ),
    ),
)
_ASSUMPTION = re.compile(
    r"\b(?:assuming|i assume|since|obviously|of course|presumably|surely|given that|"
    r"as long as|clearly)\b,?\s*(?P<what>[^,.;!?]*)",
    re.IGNORECASE,
)
_TEMPORAL_SINCE = re.compile(
    rf"^(?:\d|then\b|last\b|yesterday\b|this morning\b|the start\b|{DATE_MENTION.pattern})",
    re.IGNORECASE,
)


def _subject(sentence: Sentence, counts: Counter[str]) -> str:
    tokens = [t.removesuffix("'s") for t in words(sentence.text)]
    for i in range(len(tokens) - 1):
        if tokens[i] not in DETERMINERS:
            continue
        j = i + 1
        while j < len(tokens) and tokens[j] in COMMON_ADJECTIVES:
            j += 1
        if j < len(tokens):
            follower = tokens[j]
            if follower.isalpha() and len(follower) >= 3 and follower not in STOPWORDS:
                return follower
    candidates = content_words(sentence.text)
    if not candidates:
        return ""
    first: dict[str, int] = {}
    for index, word in enumerate(candidates):
        first.setdefault(word, index)
    return max(candidates, key=lambda w: (counts[w], -first[w]))


def _is_evaluative(sentence: Sentence) -> bool:
    if _STANCE.search(sentence.text):
        return True
    for match in _COPULA_WORD.finditer(sentence.text):
        word = match.group("word").lower()
        if word in _EVALUATIVE or valence(word) != 0.0:
            return True
    return False


def find_claims(view: ChunkView, used: set[tuple[int, int]]) -> list[Claim]:
    """Opinion sentences not used by another rule (see the module docstring)."""
    claims: list[Claim] = []
    for sentence in view.sentences():
        if sentence.key in used or sentence.is_question or word_count(sentence.text) < 4:
            continue
        score = compound(sentence.text)
        if _is_evaluative(sentence):
            confidence = CUED_CLAIM_CONFIDENCE
        elif abs(score) >= _STRONG_SENTIMENT and word_count(sentence.text) >= 5:
            confidence = SENTIMENT_CLAIM_CONFIDENCE
        else:
            continue
        text = tidy(_STANCE_PREFIX.sub("", strip_openers(sentence.text)))
        claims.append(
            Claim(
                text=text or tidy(sentence.text),
                subject=_subject(sentence, view.word_counts),
                polarity=polarity(score),
                speaker=sentence.speaker,
                evidence=[sentence.message_id],
                confidence=confidence,
            )
        )
        used.add(sentence.key)
    return claims


def _severity(sentence: Sentence) -> str | None:
    for severity, pattern in _WARNING_CUES:
        if pattern.search(sentence.text):
            return severity
    if "!!" in sentence.text and set(words(sentence.text)) & EMOTION_WORDS["anger"]:
        return "high"
    return None


def find_warnings(view: ChunkView) -> list[WarningItem]:
    """Sentences with a warning cue, one item each (see the module docstring)."""
    found: list[WarningItem] = []
    for sentence in view.sentences():
        severity = _severity(sentence)
        if severity is not None:
            found.append(
                WarningItem(
                    text=tidy(strip_openers(sentence.text)) or tidy(sentence.text),
                    severity=severity,
                    evidence=[sentence.message_id],
                )
            )
    return found


def find_assumptions(view: ChunkView) -> list[Assumption]:
    """Clauses introduced by an assumption cue (see the module docstring)."""
    found: list[Assumption] = []
    for sentence in view.sentences():
        for match in _ASSUMPTION.finditer(sentence.text):
            what = match.group("what").strip()
            if match.group(0).lower().startswith("since") and _TEMPORAL_SINCE.match(what):
                continue
            if word_count(what) < 3:
                continue
            found.append(
                Assumption(
                    text=tidy(what), held_by=sentence.speaker, evidence=[sentence.message_id]
                )
            )
    return found
