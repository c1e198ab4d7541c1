"""VADER sentiment (Hutto & Gilbert 2014) through the ``vaderSentiment`` package.

The package ships its lexicon inside the wheel and reads it from disk, so nothing is downloaded
at run time (its ``requests`` dependency is used only by a demo that translates text online,
which we never call). The analyser is built once per process.

``vaderSentiment`` 3.3.2 is quadratic in the length of a text: for every sentiment word it
lower-cases the whole word list again (``_negation_check``, ``_special_idioms_check``), its
"but" rule looks every score up with ``list.index`` and moves it with ``pop``/``insert``, and it
rebuilds the emoji-free text one character at a time. One 200 kB message took 48 s.
:class:`LinearVader` gives the same scores in linear time: the two checks see only the words
they read (three before, two after), the "but" rule is replayed with a first-position index
per value, and the emoji pass joins a list. ``tests/test_rules_scaling.py`` checks it against
the package's own analyser.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from vaderSentiment.vaderSentiment import (
    BOOSTER_DICT,
    SentimentIntensityAnalyzer,
    SentiText,
)

# VADER's own recommended cut-offs for positive / negative compound scores.
POSITIVE_CUTOFF = 0.05
NEGATIVE_CUTOFF = -0.05

# The checks read at most three words before the sentiment word and two after it.
_BEFORE, _AFTER = 3, 2


def _window(words: Sequence[str], i: int) -> list[str]:
    """The words around ``words[i]`` with ``words[i]`` at index 3 of the result.

    Missing words before the start are padded (VADER never reads them: it calls the checks only
    when ``i`` is past every index they use); the words after are cut, so the checks' length
    tests (``len - 1 > i``, ``len - 1 > i + 1``) come out as on the whole list.
    """
    return [""] * max(0, _BEFORE - i) + list(words[max(0, i - _BEFORE) : i + 1 + _AFTER])


class LinearVader(SentimentIntensityAnalyzer):  # type: ignore[misc]
    """``SentimentIntensityAnalyzer`` with the same scores, in linear time (see module doc)."""

    @staticmethod
    def _negation_check(valence: float, words: Sequence[str], start_i: int, i: int) -> float:
        window = _window(words, i)
        result: float = SentimentIntensityAnalyzer._negation_check(
            valence, window, start_i, _BEFORE
        )
        return result

    @staticmethod
    def _special_idioms_check(valence: float, words: Sequence[str], i: int) -> float:
        result: float = SentimentIntensityAnalyzer._special_idioms_check(
            valence, _window(words, i), _BEFORE
        )
        return result

    @staticmethod
    def _but_check(words: Sequence[str], sentiments: list[float]) -> list[float]:
        """VADER's "but" rule, replayed exactly: for each position k in order, the *first*
        position holding a value equal to the current ``sentiments[k]`` is scaled (× 0.5 before
        the first "but", × 1.5 after it). A heap of positions per value finds it in log time
        (stale entries are skipped when popped)."""
        lowered = [str(w).lower() for w in words]
        if "but" not in lowered:
            return sentiments
        bi = lowered.index("but")
        heaps: dict[float, list[int]] = {}
        for position, value in enumerate(sentiments):
            heaps.setdefault(value, []).append(position)  # ascending: already a heap

        def first(value: float) -> int:
            heap = heaps[value]
            while sentiments[heap[0]] != value:
                heapq.heappop(heap)
            return heap[0]

        for k in range(len(sentiments)):
            value = sentiments[k]
            si = first(value)
            if si == bi:
                continue
            new = value * 0.5 if si < bi else value * 1.5
            sentiments[si] = new
            heapq.heappush(heaps.setdefault(new, []), si)
        return sentiments

    def polarity_scores(self, text: str) -> dict[str, float]:
        """The package's ``polarity_scores``, with the emoji pass joining a list."""
        emojis = self.emojis
        if not emojis.keys().isdisjoint(text):
            parts: list[str] = []
            prev_space = True
            for ch in text:
                if ch in emojis:
                    if not prev_space:
                        parts.append(" ")
                    parts.append(emojis[ch])
                    prev_space = False
                else:
                    parts.append(ch)
                    prev_space = ch == " "
            text = "".join(parts)
        text = text.strip()
        sentitext = SentiText(text)
        sentiments: list[float] = []
        words = sentitext.words_and_emoticons
        for i, item in enumerate(words):
            if item.lower() in BOOSTER_DICT:
                sentiments.append(0)
                continue
            if i < len(words) - 1 and item.lower() == "kind" and words[i + 1].lower() == "of":
                sentiments.append(0)
                continue
            sentiments = self.sentiment_valence(0, sentitext, item, i, sentiments)
        sentiments = self._but_check(words, sentiments)
        scores: dict[str, float] = self.score_valence(sentiments, text)
        return scores


@lru_cache(maxsize=1)
def _analyzer() -> Any:
    return LinearVader()


@lru_cache(maxsize=65536)
def compound(text: str) -> float:
    """VADER compound score of ``text`` in [-1, 1] (0.0 for empty text)."""
    if not text.strip():
        return 0.0
    return float(_analyzer().polarity_scores(text)["compound"])


def polarity(score: float) -> str:
    """Claim polarity from a compound score, with VADER's ±0.05 cut-offs."""
    if score >= POSITIVE_CUTOFF:
        return "pro"
    if score <= NEGATIVE_CUTOFF:
        return "con"
    return "neutral"


def valence(word: str) -> float:
    """The word's mean valence in VADER's lexicon (-4 to 4; 0.0 when absent)."""
    return float(_analyzer().lexicon.get(word.lower(), 0.0))
