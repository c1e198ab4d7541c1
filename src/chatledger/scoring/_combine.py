"""One rule for a weighted composite whose parts may be left out: Σ w·v / Σ w over the parts
kept, the weights renormalised over them, and each part left out named with its reason.

Every composite of ChatLedger that can lose a part uses it: the downstream composite (a
consumer with no event on either side gives no evidence, DESIGN.md §5), the overall (a layer
with no consumer left, a layer not run, a judge layer whose judge failed its audit). The
headline uses :func:`combine`; a bootstrap resample uses :func:`combine_arrays` on the same
parts (NaN marks a part left out in that resample), so an interval recomputes exactly the
figure shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

NO_EVENTS = "no events"  # the reason of a downstream consumer with no event on either side


@dataclass(frozen=True)
class Combined:
    """A composite of named parts: its value (None when no part with a weight above 0 is
    left), the weights it used (renormalised over the parts kept, summing to 1) and each part
    left out with the reason (a part of weight 0 is never listed)."""

    value: float | None
    weights: dict[str, float]
    left_out: dict[str, str] = field(default_factory=dict)

    def note(self, what: str = "overall") -> str | None:
        """One line for the reader, None when nothing was left out: "judge left out of overall
        (judge failed its audit); weights renormalised to extraction 0.706, downstream 0.294"."""
        if not self.left_out:
            return None
        gone = "; ".join(f"{name} ({reason})" for name, reason in self.left_out.items())
        shown = ", ".join(f"{k} {v:.3f}" for k, v in self.weights.items())
        rest = f"weights renormalised to {shown}" if shown else f"nothing left: no {what}"
        return f"left out of {what}: {gone}; {rest}"

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "weights": self.weights, "left_out": self.left_out}


def combine(
    values: Mapping[str, float | None],
    weights: Mapping[str, float],
    reasons: Mapping[str, str] | None = None,
) -> Combined:
    """Σ w·v / Σ w over the parts of ``weights`` that are kept.

    A part is left out when ``reasons`` names it (why, in a few words: "no events", "judge
    failed its audit", "not run") or its value is None or NaN (reason "no value" unless
    given); parts of weight 0 take no part and are never listed. Parts whose values are all
    1.0 give exactly 1.0 (numerator and denominator are the same sum).
    """
    reasons = dict(reasons or {})
    kept: dict[str, float] = {}
    left_out: dict[str, str] = {}
    for name, weight in weights.items():
        if not weight > 0:
            continue
        value = values.get(name)
        if name in reasons or value is None or value != value:
            left_out[name] = reasons.get(name, "no value" if name in values else "not run")
            continue
        kept[name] = weight
    total = sum(kept.values(), 0.0)
    if not total > 0:
        return Combined(None, {}, left_out)
    numerator = sum((kept[name] * float(values[name]) for name in kept), 0.0)  # type: ignore[arg-type]
    return Combined(numerator / total, {k: w / total for k, w in kept.items()}, left_out)


def combine_arrays(values: Mapping[str, FloatArray], weights: Mapping[str, float]) -> FloatArray:
    """:func:`combine`'s value elementwise (one entry per bootstrap resample, say): NaN in a
    part's array leaves that part out of that entry, and an entry with no part left is NaN."""
    numerator: FloatArray | None = None
    denominator: FloatArray | None = None
    for name, weight in weights.items():
        if not weight > 0 or name not in values:
            continue
        v = np.asarray(values[name], dtype=np.float64)
        present = ~np.isnan(v)
        term = np.where(present, weight * np.where(present, v, 0.0), 0.0)
        w = np.where(present, weight, 0.0)
        numerator = term if numerator is None else numerator + term
        denominator = w if denominator is None else denominator + w
    if numerator is None or denominator is None:
        return np.full(1, np.nan)
    safe = np.where(denominator > 0, denominator, 1.0)
    out: FloatArray = np.where(denominator > 0, numerator / safe, np.nan)
    return out
