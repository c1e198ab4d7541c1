"""Repeat variance (DESIGN.md §7): how much of a model's score spread comes from sampling."""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import numpy.typing as npt


class RepeatVarianceFigures(TypedDict):
    """What :func:`repeat_variance` gives (``record.RepeatVariance`` keeps it in run.json)."""

    mean: float
    chunk_sd_mean: float
    samples: int
    sampling_share: float


def repeat_variance(values: npt.ArrayLike) -> RepeatVarianceFigures:
    """``values`` is chunks × samples for one model and one score.

    Returns the mean, the mean per-chunk sd across samples, and the share of the total variance
    that is within chunks (sampling) rather than between chunks (law of total variance).
    """
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 2 or data.shape[1] < 1:
        raise ValueError("expected chunks × samples")
    n_samples = data.shape[1]
    within = data.var(axis=1, ddof=0).mean() if n_samples > 1 else 0.0
    between = data.mean(axis=1).var(ddof=0)
    total = within + between
    return {
        "mean": float(data.mean()),
        "chunk_sd_mean": float(data.std(axis=1, ddof=1).mean()) if n_samples > 1 else 0.0,
        "samples": n_samples,
        "sampling_share": float(within / total) if total > 0 else 0.0,
    }
