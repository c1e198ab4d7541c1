"""The candidate schemas of the tournament (Phase 2): the proven fields plus subsets of the
survivors, in a fixed order, the first ``n`` distinct ones kept.

1. ``proven`` — the six proven fields alone (the floor every schema must beat);
2. ``all`` — the proven fields and every survivor;
3. ``scored`` — the proven fields and the survivors the reference holds (schema v3's fields:
   the only ones the tournament's layer-1 scoring can reward);
4. ``top-K`` — the proven fields and the K survivors with the highest screening composite,
   for K = 1, 2, 4, 8, … below the number of survivors;
5. ``+TIER`` — the proven fields and the survivors of one tier (latent, structural, derived);
6. ``all-TIER`` — every survivor but those of one tier.

A schema lists its fields in registry order (the order of the prompt). Two recipes that give
the same set of fields are one schema, under the first name.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatledger.select._candidates import CANDIDATES

TIER_ORDER = ("latent", "structural", "derived")


def candidate_schemas(
    proven: Sequence[str],
    survivors: Sequence[tuple[str, str, float]],  # (name, tier, composite)
    n: int,
) -> dict[str, list[str]]:
    order = {name: i for i, name in enumerate(CANDIDATES)}
    ranked = [s[0] for s in sorted(survivors, key=lambda s: (-s[2], order[s[0]]))]
    recipes: list[tuple[str, list[str]]] = [
        ("proven", []),
        ("all", ranked),
        ("scored", [r for r in ranked if CANDIDATES.get(r).in_v3 and r != "confidence"]),
    ]
    k = 1
    while k < len(ranked):
        recipes.append((f"top-{k}", ranked[:k]))
        k *= 2
    for tier in TIER_ORDER:
        members = [s[0] for s in survivors if s[1] == tier]
        recipes.append((f"+{tier}", members))
        recipes.append((f"all-{tier}", [r for r in ranked if r not in members]))
    out: dict[str, list[str]] = {}
    seen: set[frozenset[str]] = set()
    for name, extra in recipes:
        fields = sorted({*proven, *extra}, key=lambda f: order[f])
        key = frozenset(fields)
        if key in seen:
            continue
        seen.add(key)
        out[name] = fields
        if len(out) == n:
            break
    return out
