"""Which chunks a person annotates: a seeded sample stratified by conversation.

Fifteen or twenty chunks are what a person can afford; drawn at random from a corpus of a few
long conversations they would cluster in one of them. The sample gives each conversation a
share of the ``n`` chunks proportional to its size (largest remainders, at least one each when
``n`` allows), draws that many of its chunks without replacement, and lists the sample in the
corpus's order. With fewer chunks than conversations, ``n`` conversations are drawn (weighted
by size) and one chunk from each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from chatledger.core import Chunk


def stratified_sample(chunks: Sequence[Chunk], n: int, seed: int) -> list[Chunk]:
    """``n`` chunks (all of them when ``n`` ≥ their number), spread over the conversations."""
    if n >= len(chunks):
        return list(chunks)
    rng = np.random.default_rng(seed)
    by_conversation: dict[str, list[int]] = {}
    for position, chunk in enumerate(chunks):
        by_conversation.setdefault(chunk.conversation_id, []).append(position)
    groups = list(by_conversation.values())
    sizes = np.array([len(g) for g in groups], dtype=np.float64)
    if n < len(groups):
        chosen = rng.choice(len(groups), size=n, replace=False, p=sizes / sizes.sum())
        quota = {int(g): 1 for g in chosen}
    else:
        quota = _allocate(sizes, n)
    picked: list[int] = []
    for g, count in quota.items():
        members = groups[g]
        picked += [int(p) for p in rng.choice(members, size=count, replace=False)]
    return [chunks[p] for p in sorted(picked)]


def _allocate(sizes: np.ndarray, n: int) -> dict[int, int]:
    """One chunk per conversation, the rest in proportion to size by largest remainders (ties
    to the larger conversation, then the earlier), never more than a conversation holds."""
    quota = np.ones(len(sizes), dtype=np.int64)
    left = n - len(sizes)
    spare = sizes - 1
    if left > 0 and spare.sum() > 0:
        exact = spare * left / spare.sum()
        whole = np.minimum(np.floor(exact).astype(np.int64), spare.astype(np.int64))
        quota += whole
        remaining = left - int(whole.sum())
        order = sorted(
            range(len(sizes)), key=lambda g: (-(exact[g] - math.floor(exact[g])), -sizes[g], g)
        )
        for g in order:
            if remaining == 0:
                break
            if quota[g] < sizes[g]:
                quota[g] += 1
                remaining -= 1
    return {g: int(q) for g, q in enumerate(quota)}
