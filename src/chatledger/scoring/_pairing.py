"""How each structured field pairs reference items with challenger items.

One place for the pairings that are not plain text matching (entities, turning points, phases),
so the scorers and anything that shows their matches (the report's drill-down) pair identically.
All go through :func:`chatledger.matching.assign`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chatledger.core import Entity, Phase
from chatledger.matching import FloatMatrix, IndexArrayPair, assign, preprocess
from chatledger.scoring._context import ScoringContext
from chatledger.scoring._rules import EXACT_CREDIT, FUZZY_CREDIT


@dataclass(frozen=True)
class EntityPairing:
    """Matched (reference, challenger) entity indices, their name similarity and exactness."""

    rows: list[int]
    cols: list[int]
    similarity: list[float]
    exact: list[bool]


def pair_entities(
    ref: Sequence[Entity], pred: Sequence[Entity], ctx: ScoringContext, *, credit_first: bool = True
) -> EntityPairing:
    """Name fuzzy ≥ the entity cutoff and the same type; the most credit first (DESIGN.md §3).

    A pair earns 1 for the same normalised name, 0.5 for a fuzzy-only match; the assignment
    maximises total credit, then the number of matches, then name similarity (credit-first
    :func:`~chatledger.matching.assign`). ``credit_first=False`` is the count-first rule before
    issue 15 (most matches, exact partners winning ties), kept only so the metric audit can
    show both.
    """
    if not ref or not pred:
        return EntityPairing([], [], [], [])
    ref_names = preprocess([e.name for e in ref])
    pred_names = preprocess([e.name for e in pred])
    scores = ctx.matcher.matrix(ref_names, pred_names)
    pred_types = [b.type for b in pred]
    same_type = np.array([[a.type == t for t in pred_types] for a in ref], dtype=bool)
    exact = np.array([[a == b for b in pred_names] for a in ref_names], dtype=bool)
    scores = np.where(same_type, scores, 0.0)
    cutoff = 100.0 * ctx.config.thresholds.entity
    if credit_first:
        rows, cols = assign(scores, cutoff, credit=np.where(exact, EXACT_CREDIT, FUZZY_CREDIT))
    else:
        # The bonus (< 1) never changes the match count, only which equally good partner wins.
        rows, cols = assign(scores, cutoff, bonus=0.5 * exact)
    r, c = rows.tolist(), cols.tolist()
    return EntityPairing(
        r,
        c,
        [float(scores[i, j]) for i, j in zip(r, c, strict=True)],
        [ref_names[i] == pred_names[j] for i, j in zip(r, c, strict=True)],
    )


def position_cutoff(window: int) -> float:
    return 100.0 / (window + 1) - 1e-9


def position_similarity(
    ref_ids: Sequence[str], pred_ids: Sequence[str], ctx: ScoringContext, window: int
) -> FloatMatrix:
    """100 for the same message, falling linearly to 100/(window+1) at ``window`` positions away."""
    positions = ctx.chunk.positions
    scores = np.zeros((len(ref_ids), len(pred_ids)), dtype=np.float64)
    for i, a in enumerate(ref_ids):
        pa = positions.get(a)
        for j, b in enumerate(pred_ids):
            if a == b:
                scores[i, j] = 100.0
                continue
            pb = positions.get(b)
            if pa is not None and pb is not None and abs(pa - pb) <= window:
                scores[i, j] = 100.0 * (1.0 - abs(pa - pb) / (window + 1))
    return scores


def pair_turning_points(
    ref_ids: Sequence[str], pred_ids: Sequence[str], ctx: ScoringContext
) -> IndexArrayPair:
    """Turning points pair when they name the same message or one within ± the window."""
    window = ctx.config.thresholds.turning_point_window
    scores = position_similarity(ref_ids, pred_ids, ctx, window)
    return assign(scores, position_cutoff(window))


def range_iou(a: Phase, b: Phase, ctx: ScoringContext) -> float:
    """IoU of two phases' inclusive message-position ranges (identical id pairs: 1)."""
    a_start, a_end = a.start_message_id, a.end_message_id
    b_start, b_end = b.start_message_id, b.end_message_id
    if (a_start, a_end) == (b_start, b_end):
        return 1.0
    pos = ctx.chunk.positions
    ends = [pos.get(x) for x in (a_start, a_end, b_start, b_end)]
    if any(e is None for e in ends):
        return 0.0
    s1, e1, s2, e2 = (int(e) for e in ends if e is not None)
    lo1, hi1 = min(s1, e1), max(s1, e1)
    lo2, hi2 = min(s2, e2), max(s2, e2)
    inter = max(0, min(hi1, hi2) - max(lo1, lo2) + 1)
    union = (hi1 - lo1 + 1) + (hi2 - lo2 + 1) - inter
    return inter / union


def pair_phases(
    a: Sequence[Phase], b: Sequence[Phase], ctx: ScoringContext
) -> tuple[list[int], list[int], list[float]]:
    """Phases pair only with the same label; among candidates the larger range IoU wins.

    Returns matched indices and the IoU of each matched pair.
    """
    iou: dict[tuple[int, int], float] = {}
    weights = [[0.0] * len(b) for _ in a]
    for i, pa in enumerate(a):
        row = weights[i]
        for j, pb in enumerate(b):
            if pa.phase == pb.phase:
                iou[i, j] = value = range_iou(pa, pb, ctx)
                row[j] = 1.0 + 99.0 * value  # ≥ 1: the same label is what makes a match
    if not a or not b:
        return [], [], []
    rows, cols = assign(np.array(weights, dtype=np.float64), 1.0)
    r, c = rows.tolist(), cols.tolist()
    return r, c, [iou[i, j] for i, j in zip(r, c, strict=True)]
