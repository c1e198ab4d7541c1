"""Which chunks the drill-down shows: all of them in a small run; in a large one, a bounded set —
for each challenger the chunks it scores lowest on (extraction composite, the ones that diverge
most from the reference), plus an evenly spaced sample of the rest — so the page does not grow
with the corpus. The choice is deterministic (the same run gives the same page) and the page
says how many it shows out of how many.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DRILL_CAP = 200  # chunks in the drill-down at most
WORST_PER_MODEL = 20  # of those, per challenger, its lowest-scoring chunks (at most)
EVENT_CAP = 300  # downstream events listed per consumer, challenger and kind (missed/invented)


@dataclass(frozen=True)
class DrillSelection:
    """The chunks shown, in the chunks file's order, and why each one is there."""

    chunk_ids: list[str]
    total: int
    per_model: int = 0  # lowest-scoring chunks taken per challenger at most (0: all shown)
    lowest_for: dict[str, list[str]] = field(default_factory=dict)  # chunk id → models

    @property
    def sampled(self) -> bool:
        return len(self.chunk_ids) < self.total

    @property
    def n_sample(self) -> int:
        """Chunks shown as part of the even sample (not for being lowest somewhere)."""
        return sum(1 for c in self.chunk_ids if c not in self.lowest_for)


def select_chunks(
    chunk_ids: list[str],
    composites: dict[str, dict[str, float]],
    *,
    cap: int = DRILL_CAP,
    per_model: int = WORST_PER_MODEL,
) -> DrillSelection:
    """``composites``: model → chunk id → extraction composite (leaderboard order).

    At most ``cap`` chunks: at most half of them — but room for one per challenger, so that
    every challenger's lowest chunk is shown — (and ``per_model`` per challenger) are the
    lowest-scoring ones, taken a rank at a time across the challengers (each one's lowest,
    then each one's second lowest, …; ties in file order); the rest of the page is an evenly
    spaced sample of the other chunks in file order."""
    total = len(chunk_ids)
    if total <= cap:
        return DrillSelection(list(chunk_ids), total)
    position = {c: i for i, c in enumerate(chunk_ids)}
    ranked = {
        model: [
            c for _v, _p, c in sorted((v, position[c], c) for c, v in s.items() if c in position)
        ]
        for model, s in composites.items()
    }
    budget = min(cap, max(1, cap // 2, len(ranked)))
    lowest_for: dict[str, list[str]] = {}
    for rank in range(per_model):
        for model, order in ranked.items():
            if rank >= len(order):
                continue
            chunk_id = order[rank]
            if chunk_id in lowest_for:
                lowest_for[chunk_id].append(model)
            elif len(lowest_for) < budget:
                lowest_for[chunk_id] = [model]
        if len(lowest_for) >= budget:
            break
    rest = [c for c in chunk_ids if c not in lowest_for]
    room = max(0, cap - len(lowest_for))
    step = len(rest) / room if room else 0.0
    sample = {rest[int((j + 0.5) * step)] for j in range(min(room, len(rest)))}
    shown = [c for c in chunk_ids if c in lowest_for or c in sample]
    return DrillSelection(shown, total, per_model=per_model, lowest_for=lowest_for)
