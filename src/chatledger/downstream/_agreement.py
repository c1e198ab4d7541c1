"""Shared arithmetic of the consumers: text clustering, keyed fuzzy matching, F1 and Cohen's κ.

Text similarity is the one matcher of DESIGN.md §3 (RapidFuzz ``token_set_ratio`` on
``default_process``ed text, 0-100) and one-to-one matching is the optimal assignment of
:func:`chatledger.matching.assign`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from chatledger.downstream._base import (
    Consumer,
    ConsumerAgreement,
    ConsumerOutput,
    Counts,
    DownstreamEvent,
    FloatArray,
)
from chatledger.downstream._conversation import ChunkRef

if TYPE_CHECKING:  # the matcher (rapidfuzz) where events are matched, not where counts are read
    from chatledger.matching import FloatMatrix

TEXT_CUTOFF = 60.0  # fuzzy ≥ 0.60 on the 0-100 scale

Similarity = Callable[[Sequence[str], Sequence[str]], "FloatMatrix"]  # raw texts → 0-100 matrix

T = TypeVar("T")
E = TypeVar("E", bound=DownstreamEvent)


def similarity(a: Sequence[str], b: Sequence[str]) -> FloatMatrix:
    """Token-set similarity (0-100) of every pair of raw texts.

    Extractions repeat themselves across chunks (the same subject, the same open question), so
    each distinct preprocessed text is scored once and the matrix expanded from that.
    """
    from chatledger.matching import deduplicated_matrix, preprocess, token_set_matrix

    return deduplicated_matrix(preprocess(a), preprocess(b), token_set_matrix)


def cluster_texts(
    texts: Sequence[str], cutoff: float = TEXT_CUTOFF, scorer: Similarity = similarity
) -> list[int]:
    """Leader clustering in order: each text joins the most similar earlier cluster leader
    scoring ≥ ``cutoff`` (the earliest on ties), else leads a new cluster. ``scorer`` gives the
    similarity matrix (default :func:`similarity`; drift passes the subject similarity).

    Comparing with leaders only (not every member) stops chains of near-misses from merging
    unrelated texts. Returns the cluster index of each text; cluster ``k``'s leader is the first
    text labelled ``k``.
    """
    if not texts:
        return []
    scores = scorer(texts, texts)
    leaders: list[int] = []
    labels: list[int] = []
    for i in range(len(texts)):
        if leaders:
            row = scores[i, leaders]
            best = int(np.argmax(row))  # the first maximum: the earliest leader on ties
            if row[best] >= cutoff:
                labels.append(best)
                continue
        labels.append(len(leaders))
        leaders.append(i)
    return labels


def union_chunks(reference: ConsumerOutput[Any], challenger: ConsumerOutput[Any]) -> list[ChunkRef]:
    """The chunks either output looked at (the same run's chunks, normally), reference first."""
    seen: dict[tuple[str, str], ChunkRef] = {}
    for ref in (*reference.chunks, *challenger.chunks):
        seen.setdefault((ref.conversation_id, ref.chunk_id), ref)
    return list(seen.values())


def f1_array(matched: ArrayLike, n_reference: ArrayLike, n_challenger: ArrayLike) -> FloatArray:
    """F1 = 2·matched / (n_ref + n_chal), elementwise: both empty agree (1.0), one side empty
    scores 0. The one F1 of the matching consumers, on a run's counts or a bootstrap's."""
    m = np.asarray(matched, dtype=np.float64)
    n_ref = np.asarray(n_reference, dtype=np.float64)
    n_chal = np.asarray(n_challenger, dtype=np.float64)
    total = n_ref + n_chal
    one_empty = (n_ref == 0) | (n_chal == 0)
    f1 = np.divide(2.0 * m, total, out=np.zeros(np.broadcast(m, total).shape), where=~one_empty)
    result: FloatArray = np.where(total == 0, 1.0, f1)
    return result


def share_or_one(part: ArrayLike, whole: ArrayLike) -> FloatArray:
    """part / whole elementwise, 1.0 where ``whole`` is 0 (nothing to disagree on): the
    agreement of the consumers that count agreeing units (arcs' chunks, the daily report's
    per-day F1 over its days)."""
    num = np.asarray(part, dtype=np.float64)
    den = np.asarray(whole, dtype=np.float64)
    ratio = np.divide(num, den, out=np.ones(np.broadcast(num, den).shape), where=den != 0)
    result: FloatArray = np.where(den == 0, 1.0, ratio)
    return result


def f1_from_counts(matched: int, n_reference: int, n_challenger: int) -> float:
    """F1 = 2·matched / (n_ref + n_chal); both empty agree (1.0), one side empty scores 0."""
    return float(f1_array(matched, n_reference, n_challenger))


# The counts of the F1 consumers (drift, loops, escalation), each a sum over conversations.
F1_COUNTS = ("matched", "n_reference", "n_challenger")
F1_EVIDENCE = ("n_reference", "n_challenger")  # an event on either side


def f1_agreement(counts: Counts) -> FloatArray:
    """:func:`f1_array` of ``counts`` named as in :data:`F1_COUNTS`."""
    return f1_array(counts["matched"], counts["n_reference"], counts["n_challenger"])


def cohen_kappa(reference: Sequence[bool], challenger: Sequence[bool]) -> float:
    """Cohen's κ of two binary raters over the same units.

    κ = (p_o − p_e) / (1 − p_e). When p_e = 1 both raters gave one and the same label to every
    unit (κ is 0/0): we define κ = 1.0, since they are identical. Two constant raters that
    differ have p_o = p_e = 0 and get κ = 0.0 from the formula itself; no units → 1.0.
    """
    if len(reference) != len(challenger):
        raise ValueError("raters must rate the same units")
    return kappa_of_table(rating_table(reference, challenger))


def rating_table(reference: Sequence[bool], challenger: Sequence[bool]) -> tuple[int, ...]:
    """(units, units rated alike, units the reference rated True, units the challenger rated
    True): what :func:`cohen_kappa` is a function of; tables of disjoint units add up."""
    return (
        len(reference),
        sum(1 for a, b in zip(reference, challenger, strict=True) if a == b),
        sum(reference),
        sum(challenger),
    )


def kappa_of_table(table: Sequence[int]) -> float:
    """:func:`cohen_kappa` of a :func:`rating_table` (or the sum of several)."""
    n, alike, reference_true, challenger_true = table
    if n == 0:
        return 1.0
    observed = alike / n
    p_ref = reference_true / n
    p_chal = challenger_true / n
    expected = p_ref * p_chal + (1.0 - p_ref) * (1.0 - p_chal)
    if expected >= 1.0:
        return 1.0
    return (observed - expected) / (1.0 - expected)


def fuzzy_pairs(
    reference: Sequence[T],
    challenger: Sequence[T],
    *,
    key: Callable[[T], Hashable],
    text: Callable[[T], str],
    compatible: Callable[[T, T], bool] | None = None,
    bonus: Callable[[T, T], float] | None = None,
    cutoff: float = TEXT_CUTOFF,
    scorer: Similarity = similarity,
) -> list[tuple[int, int]]:
    """Optimal one-to-one (reference, challenger) index pairs.

    Two items can pair only when their ``key`` is equal and ``compatible`` allows it; their
    score is the ``scorer`` similarity (default :func:`similarity`) of their ``text`` and must
    reach ``cutoff``. ``bonus`` (< 1) only breaks ties between equally good pairings.
    """
    from chatledger.matching import assign

    groups: dict[Hashable, tuple[list[int], list[int]]] = {}
    for i, item in enumerate(reference):
        groups.setdefault(key(item), ([], []))[0].append(i)
    for j, item in enumerate(challenger):
        groups.setdefault(key(item), ([], []))[1].append(j)
    pairs: list[tuple[int, int]] = []
    for ref_idx, chal_idx in groups.values():
        if not ref_idx or not chal_idx:
            continue
        scores = scorer(
            [text(reference[i]) for i in ref_idx], [text(challenger[j]) for j in chal_idx]
        )
        extra = np.zeros_like(scores) if bonus is not None else None
        for r, i in enumerate(ref_idx):
            for c, j in enumerate(chal_idx):
                if compatible is not None and not compatible(reference[i], challenger[j]):
                    scores[r, c] = -1.0
                elif extra is not None and bonus is not None:
                    extra[r, c] = bonus(reference[i], challenger[j])
        rows, cols = assign(scores, cutoff, extra)
        pairs.extend((ref_idx[int(r)], chal_idx[int(c)]) for r, c in zip(rows, cols, strict=True))
    return sorted(pairs)


def matched_agreement(
    consumer: Consumer[E],
    reference: Sequence[E],
    challenger: Sequence[E],
    pairs: Sequence[tuple[int, int]],
) -> ConsumerAgreement:
    """F1 of a one-to-one matching (through ``consumer``'s ``agreement_from_counts``), with
    counts, precision/recall and the unmatched events."""
    matched = len(pairs)
    n_ref, n_chal = len(reference), len(challenger)
    ref_hit = {i for i, _ in pairs}
    chal_hit = {j for _, j in pairs}
    details: dict[str, Any] = {
        "n_reference": n_ref,
        "n_challenger": n_chal,
        "matched": matched,
        "precision": matched / n_chal if n_chal else (1.0 if n_ref == 0 else 0.0),
        "recall": matched / n_ref if n_ref else (1.0 if n_chal == 0 else 0.0),
    }
    return consumer.counted(
        {"matched": matched, "n_reference": n_ref, "n_challenger": n_chal},
        details,
        [e for i, e in enumerate(reference) if i not in ref_hit],
        [e for j, e in enumerate(challenger) if j not in chal_hit],
    )
