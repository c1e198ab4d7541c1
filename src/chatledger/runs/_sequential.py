"""Per-conversation figures of two models of one run: what a sequential comparison reads.

Every figure a gate rule names is a function of sums of per-unit statistics
(``runs._paired``); applied to one conversation's sums it is that figure *on that
conversation*. A sequential decision (``gating._sequential``) follows the mean over
conversations of these per-conversation figures — each conversation one independent, bounded
observation — rather than the pooled figure, which is not a mean of independent terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chatledger.core import InputError
from chatledger.record import ConversationRun
from chatledger.runs._paired import (
    _scored_chunks,
    _sides,
    _statistic,
    load_run_side,
    read_conversation_run,
    resamplable,
)
from chatledger.runs._stats import FloatArray


@dataclass(frozen=True)
class ConversationFigures:
    """One figure of both models on each conversation of a run, in the run's order; NaN where
    the figure says nothing of a conversation (a field neither side's reference covers there)."""

    figure: str
    conversations: list[str]
    baseline: FloatArray
    candidate: FloatArray


def conversation_figures(
    run_dir: Path,
    baseline_model: str,
    candidate_model: str,
    figures: Sequence[str],
    *,
    missing: bool = False,
) -> dict[str, ConversationFigures]:
    """Each figure of ``baseline_model`` and ``candidate_model`` per conversation of the run;
    with ``missing``, a field the run did not score is NaN on every conversation (a batch whose
    human gold covers none of its chunks for it) instead of an error."""
    record = read_conversation_run(run_dir, "run")
    names = [m.name for m in record.models]
    for name in (baseline_model, candidate_model):
        if name not in names:
            raise InputError(
                f"no model {name!r} in the run (models: {', '.join(names)})", path=run_dir
            )
    base = load_run_side(run_dir, record, record.model(baseline_model))
    cand = load_run_side(run_dir, record, record.model(candidate_model))
    absent = [
        f
        for f in figures
        if missing
        and f.startswith("fields.")
        and not (resamplable(base, f) or resamplable(cand, f))
    ]
    for figure in figures:
        if figure in absent:
            continue
        if not (resamplable(base, figure) and resamplable(cand, figure)):
            raise InputError(
                f"{figure}: the run has no per-conversation statistics for it (a layer it did "
                "not run, or a field neither model scores)",
                path=run_dir,
            )
    sides = _sides(base, cand)
    matrix = sides.conversation_matrix
    conversations = list(dict.fromkeys(record.chunk_conversations))
    out: dict[str, ConversationFigures] = {}
    for figure in absent:
        nothing = np.full(len(conversations), np.nan)
        out[figure] = ConversationFigures(figure, conversations, nothing, nothing.copy())
    for figure in figures:
        if figure in absent:
            continue
        values = []
        for side in (0, 1):
            statistic, _ = _statistic(sides, side, figure)
            values.append(np.asarray(statistic(matrix), dtype=np.float64).reshape(-1))
        said = _said(record, sides, figure, len(conversations))
        out[figure] = ConversationFigures(
            figure=figure,
            conversations=conversations,
            baseline=np.where(said, values[0], np.nan),
            candidate=np.where(said, values[1], np.nan),
        )
    return out


def _said(record: ConversationRun, sides: object, figure: str, n: int) -> np.ndarray:
    """Conversations the figure speaks of: for a field, those with a chunk that scores it."""
    from chatledger.runs._paired import _Sides

    assert isinstance(sides, _Sides)
    mask = _scored_chunks(sides, figure)
    if mask is None:
        return np.ones(n, dtype=bool)
    position = {c: i for i, c in enumerate(dict.fromkeys(record.chunk_conversations))}
    rows = np.array([position[c] for c in record.chunk_conversations], dtype=np.intp)
    said = np.zeros(n, dtype=bool)
    said[rows[mask]] = True
    return said


__all__ = ["ConversationFigures", "conversation_figures", "read_conversation_run"]
