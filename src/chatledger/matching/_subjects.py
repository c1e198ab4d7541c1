"""Subjects compared on their content words (DESIGN.md §3 "Subject consistency", §5 drift).

A subject is preprocessed (RapidFuzz ``default_process``) and its stop words
(:data:`~chatledger.matching._stopwords.STOP_WORDS`, the one list) dropped before similarity, so
"the car" and "the Fig Tree" no longer share "the" (plain ``token_set_ratio``: exactly 60, a
match) while "the car" and "car" stay the same subject. A subject made of stop words only keeps
its preprocessed text, so "it" and "that" are still compared on their words rather than both
becoming empty (which would make them equal). Used by the claims scorer's subject consistency
and by drift's subject clustering and event matching.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from rapidfuzz import utils

from chatledger.matching._kernel import FloatMatrix, preprocess, token_set_matrix
from chatledger.matching._matchers import TextMatcher
from chatledger.matching._stopwords import STOP_WORDS


@lru_cache(maxsize=8192)
def _content(text: str) -> str:
    processed = utils.default_process(text)
    words = [w for w in processed.split() if w not in STOP_WORDS]
    return " ".join(words) if words else processed


def content_words(texts: Sequence[str]) -> list[str]:
    """Each text preprocessed with its stop words removed (word order kept); a text with
    nothing but stop words keeps its preprocessed form."""
    return [_content(t) for t in texts]


def deduplicated_matrix(
    a: Sequence[str],
    b: Sequence[str],
    matrix: Callable[[Sequence[str], Sequence[str]], FloatMatrix],
) -> FloatMatrix:
    """``matrix(a, b)``, scoring each distinct text once and expanding the result (subjects,
    open questions and the like repeat across the chunks of a conversation)."""
    ua, ub = list(dict.fromkeys(a)), list(dict.fromkeys(b))
    if len(ua) == len(a) and len(ub) == len(b):
        return matrix(a, b)
    index_a = {t: i for i, t in enumerate(ua)}
    index_b = {t: j for j, t in enumerate(ub)}
    unique = matrix(ua, ub)
    rows = np.array([index_a[t] for t in a], dtype=np.intp)
    cols = np.array([index_b[t] for t in b], dtype=np.intp)
    expanded: FloatMatrix = unique[np.ix_(rows, cols)]
    return expanded


def subject_similarity(
    a: Sequence[str],
    b: Sequence[str],
    matcher: TextMatcher | None = None,
    *,
    drop_stop_words: bool = True,
) -> FloatMatrix:
    """Similarity (0–100) of every pair of raw subjects, on their :func:`content_words`.

    ``matcher`` defaults to ``token_set_ratio`` (:func:`token_set_matrix`).
    ``drop_stop_words=False`` compares the whole preprocessed subjects instead: the rule before
    issue 15, kept only so the metric audit can show both.
    """
    prepare = content_words if drop_stop_words else preprocess
    matrix = token_set_matrix if matcher is None else matcher.matrix
    return deduplicated_matrix(prepare(a), prepare(b), matrix)


@lru_cache(maxsize=64)
def _pairs_of(k: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Indices of the pairs (i < j) of k items; the same few sizes recur in every run."""
    rows, cols = np.triu_indices(k, k=1)
    rows.flags.writeable = cols.flags.writeable = False  # shared between calls
    return rows, cols


def subject_consistency(
    ref_subjects: Sequence[str],
    pred_subjects: Sequence[str],
    cutoff: float,
    matcher: TextMatcher | None = None,
    *,
    drop_stop_words: bool = True,
) -> float:
    """Do matched items group into the same subjects on both sides? (DESIGN.md §3)

    ``ref_subjects[i]`` and ``pred_subjects[i]`` belong to the i-th matched pair; two subjects
    are the same when :func:`subject_similarity` ≥ ``cutoff`` (0–100). Over all pairs of matched
    items (i, j): the fraction where "same subject in the reference" equals "same subject in
    the challenger". One matched item: 1.0 if its two subjects are the same, else 0.0; none: 0.0.
    """
    k = len(ref_subjects)
    if len(pred_subjects) != k:
        raise ValueError(f"{k} reference subjects but {len(pred_subjects)} challenger subjects")
    if k == 0:
        return 0.0

    prepare = content_words if drop_stop_words else preprocess
    matrix = token_set_matrix if matcher is None else matcher.matrix
    ref, pred = prepare(ref_subjects), prepare(pred_subjects)
    if k == 1:
        return float(matrix(ref, pred)[0, 0] >= cutoff)
    # One matrix of the distinct subjects of both sides (they share most): each side's
    # "same subject" is its block, as subject_similarity(side, side) would give it.
    distinct = list(dict.fromkeys([*ref, *pred]))
    same = matrix(distinct, distinct) >= cutoff
    where = {t: i for i, t in enumerate(distinct)}
    upper = _pairs_of(k)
    ri = np.array([where[t] for t in ref], dtype=np.intp)
    pi = np.array([where[t] for t in pred], dtype=np.intp)
    agree = same[ri[upper[0]], ri[upper[1]]] == same[pi[upper[0]], pi[upper[1]]]
    return int(np.count_nonzero(agree)) / int(agree.size)
