"""VADER sentiment (Hutto & Gilbert 2014) through the ``vaderSentiment`` package.

The package ships its lexicon inside the wheel and reads it from disk, so nothing is downloaded
at run time (its ``requests`` dependency is used only by a demo that translates text online,
which we never call). The analyser is built once per process.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from vaderSentiment.vaderSentiment import (
    SentimentIntensityAnalyzer,
)

# VADER's own recommended cut-offs for positive / negative compound scores.
POSITIVE_CUTOFF = 0.05
NEGATIVE_CUTOFF = -0.05


@lru_cache(maxsize=1)
def _analyzer() -> Any:
    return SentimentIntensityAnalyzer()


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
