"""Text similarity matchers, registered by name (DESIGN.md §3).

``token_set`` is the source methodology's matcher and the default, kept for comparability. Its
known pitfall: a one-word text scores 100 against any text containing that word. ``guarded``
scales the same score by how much of the longer text the shorter one can cover: full score when
the shorter has at least half as many tokens, linearly less below that. A one-word prediction
against an eight-word claim scores at most 25 instead of 100.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from chatledger.core import Registry
from chatledger.matching._kernel import (
    FloatMatrix,
    FloatVector,
    preprocess,
    token_set_matrix,
    token_set_pairs,
)


class TextMatcher(ABC):
    """Similarity of every pair of texts, on 0–100."""

    name: str = ""

    @abstractmethod
    def matrix(self, a: Sequence[str], b: Sequence[str]) -> FloatMatrix:
        """Scores for already-preprocessed texts (see :func:`preprocess`)."""

    def pairs(self, a: Sequence[str], b: Sequence[str]) -> FloatVector:
        """The score of ``a[i]`` with ``b[i]`` for each i (preprocessed texts): the diagonal of
        :meth:`matrix`. A matcher may compute it in one call (the built-in ones do); this
        default scores each pair alone."""
        if len(a) != len(b):
            raise ValueError(f"{len(a)} texts against {len(b)}: pairs need the same number")
        return np.array(
            [self.matrix([x], [y])[0, 0] for x, y in zip(a, b, strict=True)], dtype=np.float64
        )

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> FloatMatrix:
        """Scores for raw texts."""
        return self.matrix(preprocess(a), preprocess(b))

    def pair(self, a: str, b: str) -> float:
        return float(self.similarity([a], [b])[0, 0])


# The similarity scorer a run config's ``matcher:`` names; other packages add theirs through
# the entry-point group ``chatledger.scorers`` (docs/plugins.md).
MATCHERS: Registry[type[TextMatcher]] = Registry(
    "matcher", group="chatledger.scorers", expects=TextMatcher
)


@MATCHERS.register("token_set")
class TokenSetMatcher(TextMatcher):
    """RapidFuzz ``token_set_ratio`` with ``default_process`` (the source methodology's matcher)."""

    name = "token_set"

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> FloatMatrix:
        return token_set_matrix(a, b)

    def pairs(self, a: Sequence[str], b: Sequence[str]) -> FloatVector:
        return token_set_pairs(a, b)


@MATCHERS.register("guarded")
class GuardedMatcher(TextMatcher):
    """``token_set_ratio`` × min(1, 2·short/long token count): no credit for a lone keyword."""

    name = "guarded"

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> FloatMatrix:
        scores = token_set_matrix(a, b)
        if scores.size == 0:
            return scores
        len_a, len_b = _words(a), _words(b)
        guarded: FloatMatrix = scores * _cover(
            np.minimum.outer(len_a, len_b), np.maximum.outer(len_a, len_b)
        )
        return guarded

    def pairs(self, a: Sequence[str], b: Sequence[str]) -> FloatVector:
        scores = token_set_pairs(a, b)
        if scores.size == 0:
            return scores
        len_a, len_b = _words(a), _words(b)
        guarded: FloatVector = scores * _cover(np.minimum(len_a, len_b), np.maximum(len_a, len_b))
        return guarded


def _words(texts: Sequence[str]) -> FloatVector:
    """Each text's number of tokens (at least 1)."""
    return np.array([max(len(t.split()), 1) for t in texts], dtype=np.float64)


def _cover(short: FloatMatrix, long: FloatMatrix) -> FloatMatrix:
    """The guard: full score when the shorter text has at least half the longer's tokens."""
    factor: FloatMatrix = np.minimum(1.0, 2.0 * short / long)
    return factor


def get_matcher(name: str) -> TextMatcher:
    """Build a registered matcher by name."""
    return MATCHERS.get(name)()
