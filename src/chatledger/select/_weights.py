"""Field weights for a selected schema, by the methodology's rule (DESIGN.md §3, §9).

The schema v1 fields keep their v1 weights rescaled to a share (0.60 by default: v1 weight ×
0.6, as schema v3's claims 0.15 = 0.25 × 0.6); the other fields of the selected schema share
the rest in proportion to their screening composites. Weights sum to 1. A weights file for
``chatledger score`` / a run can only name the fields of a scorer schema (v3): the fields of the
selection outside v3 are left out of it and the v3 fields renormalised to sum to 1, which the
file's caller is told (``left_out``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chatledger.core import SCHEMA_FIELDS, SCHEMA_WEIGHTS

V1_SHARE = 0.60


@dataclass(frozen=True)
class DerivedWeights:
    """The weights of a selected schema, and the scorer weights file made from them."""

    weights: dict[str, float]
    v1_share: float

    def weights_file(self, schema: str = "v3") -> tuple[dict[str, object], list[str]]:
        """A weights file ``load_scoring_config`` accepts (``replace_weights``: fields not
        named weigh 0), and the selected fields it had to leave out (not in ``schema``)."""
        fields = SCHEMA_FIELDS[schema]
        kept = {f: w for f, w in self.weights.items() if f in fields}
        left_out = [f for f in self.weights if f not in fields]
        total = sum(kept.values())
        if total <= 0:
            raise ValueError(f"none of the selected fields is a field of schema {schema}")
        scaled = {f: w / total for f, w in kept.items()}
        # The weights must sum to 1 within 1e-6; put the rounding remainder on the largest.
        largest = max(scaled, key=lambda f: scaled[f])
        scaled[largest] += 1.0 - sum(scaled.values())
        return {"replace_weights": True, "weights": scaled}, left_out


def derive_weights(
    fields: Sequence[str],
    composites: Mapping[str, float],
    *,
    v1_share: float = V1_SHARE,
) -> DerivedWeights:
    """Weights of the selected ``fields``: v1 fields by their v1 weights scaled to ``v1_share``
    of the total, the others by ``composites`` (their screening composites) sharing the rest.

    With no v1 field, the others take everything; with no other field, the v1 fields do.
    """
    if not 0.0 <= v1_share <= 1.0:
        raise ValueError("v1_share must be in [0, 1]")
    v1 = SCHEMA_WEIGHTS["v1"]
    old = [f for f in fields if f in v1]
    new = [f for f in fields if f not in v1]
    missing = [f for f in new if f not in composites]
    if missing:
        raise ValueError(f"no screening composite for: {', '.join(missing)}")
    old_share = v1_share if new else 1.0
    new_share = 1.0 - old_share if old else 1.0
    weights: dict[str, float] = {}
    old_total = sum(v1[f] for f in old)
    for f in old:
        weights[f] = old_share * v1[f] / old_total
    new_total = sum(composites[f] for f in new)
    for f in new:
        weights[f] = new_share * (composites[f] / new_total if new_total > 0 else 1 / len(new))
    return DerivedWeights(weights, old_share if new else 1.0)
