"""How many conversations a comparison needs (``chatledger plan``), from a pilot run.

Each figure of each challenger is a function of summed per-conversation statistics; its
leave-one-conversation-out pseudo-values k·θ − (k − 1)·θ₋ᵢ are the per-conversation
contributions whose spread sets the figure's standard error (their variance / k is the
jackknife variance). The conversations needed to show a drop ``detect`` with ``power`` at the
run's level are :func:`chatledger.stats.units_needed` of that spread: the comparison is
assumed paired over the same conversations, with per-conversation differences that vary as
much as the figure does (two models whose per-conversation figures correlate at 0.5; a more
alike pair needs fewer, a less alike one more). A guide, "≈ N", as every power calculation is.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from chatledger.core import InputError
from chatledger.runs._paired import (
    _sides,
    _statistic,
    figure_value,
    load_run_side,
    read_conversation_run,
    resamplable,
)
from chatledger.stats import units_needed


def _figures(model_layers: list[str], fields: list[str]) -> list[str]:
    return ["overall", *(f"layers.{x}" for x in model_layers), *(f"fields.{f}" for f in fields)]


def plan_run(run_dir: Path, *, detect: float = 0.02, power: float = 0.8) -> dict[str, Any]:
    """Per challenger and figure: the figure, its per-conversation SD and the conversations
    needed (None when the run cannot tell: no spread, or beyond a million). ``detect`` is a
    drop on the figures' 0–1 scale, in (0, 1]; ``power`` in (0, 1)."""
    if not (math.isfinite(detect) and 0 < detect <= 1):
        raise InputError(
            f"the drop to detect is on the figures' 0–1 scale: give a number in (0, 1], "
            f"e.g. 0.02 (got {detect:g})",
            field="detect",
        )
    if not (math.isfinite(power) and 0 < power < 1):
        raise InputError(
            f"power is a probability: give a number in (0, 1), e.g. 0.8 (got {power:g})",
            field="power",
        )
    record = read_conversation_run(run_dir, "pilot")
    confidence = record.stats.confidence if record.stats is not None else 0.95
    k = len(dict.fromkeys(record.chunk_conversations))
    rows: list[dict[str, Any]] = []
    for model in record.models:
        side = load_run_side(run_dir, record, model)
        sides = _sides(side, side)
        matrix = sides.conversation_matrix
        total = matrix.sum(axis=0, keepdims=True)
        for figure in _figures(list(model.layers), list(model.fields)):
            value = figure_value(side, figure)
            if value is None or not resamplable(side, figure):
                continue
            statistic, _ = _statistic(sides, 0, figure)
            with np.errstate(all="ignore"):
                left = (
                    np.asarray(statistic(total - matrix), dtype=np.float64).reshape(-1)
                    if matrix.shape[0] > 1
                    else np.zeros(0)
                )
            left = left[~np.isnan(left)]
            n = left.size
            if n < 2:
                continue
            pseudo = n * value - (n - 1) * left
            sd = float(np.std(pseudo, ddof=1))
            rows.append(
                {
                    "model": model.name,
                    "figure": figure.replace("layers.", "").replace("fields.", "extraction."),
                    "value": value,
                    "sd": sd,
                    "needed": units_needed(sd, detect, confidence=confidence, power=power),
                }
            )
    return {
        "run_dir": str(run_dir),
        "detect": detect,
        "power": power,
        "confidence": confidence,
        "k": k,
        "figures": rows,
    }
