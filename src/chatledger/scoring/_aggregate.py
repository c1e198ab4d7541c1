"""Run-level field figures from additive per-chunk statistics: the one definition of each.

Every run-level layer-1 number is a function of *sums over chunks* of a few per-chunk
statistics (:func:`chunk_statistics`): the macro score (mean of per-chunk scores over the
chunks that score the field), the micro (pooled) precision, recall, F1 and field score, the
pooled ECE of ``confidence``, and the extraction composite. The headline of a run applies these
functions to the sums over all chunks; a bootstrap applies the *same* functions to the sums over
each resample of chunks (or of conversations), so every interval is an interval of exactly the
figure shown (DESIGN.md §7). The functions are vectorised: each sum is an array with a leading
resample dimension.

Micro rules (DESIGN.md §3 "Beside it, always report the pooled …"):

* a list field pools its items: precision = Σ matched / Σ predicted, recall = Σ matched /
  Σ reference (entities: Σ credit); a component taken over matched pairs pools its pairs
  (Σ value / Σ pairs); the field score combines them with the field's own weights, each pair
  term multiplied by the pooled matched share 2ΣM/(ΣR+ΣP) (DESIGN.md §3);
* ``summary`` and ``emotional_arc`` (one item per chunk at most) average over the chunks where
  either side has one — both-empty chunks, which score 1.0 by agreement, are left out;
* when no chunk has an item on either side, the micro score is the share of usable chunks (the
  sides agree wherever the challenger's extraction could be read);
* ``confidence`` pools its items into one ECE under both aggregates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from chatledger.scoring._calibration import N_BINS, bin_index
from chatledger.scoring._rules import FIELD_RULES, FieldRule
from chatledger.scoring._types import FieldScore

FloatArray = npt.NDArray[np.float64]
Aggregate = Literal["macro", "micro"]
AGGREGATES: tuple[Aggregate, ...] = ("macro", "micro")


# The list and set fields' rules, the item fields (one item a chunk at most) and what a set
# field's counts count: all read from the one table of field rules (scoring/_rules.py).
POOLED_RULES: dict[str, FieldRule] = {
    name: rule for name, rule in FIELD_RULES.items() if rule.f1_term is not None
}
PER_CHUNK_ITEM = frozenset(name for name, rule in FIELD_RULES.items() if rule.kind == "item")
COUNTED_AS = {
    name: rule.counted_as for name, rule in FIELD_RULES.items() if rule.counted_as is not None
}
CONFIDENCE = "confidence"

_BASE = ("covered", "usable", "score", "both_empty", "has_items", "n_reference", "n_predicted")


def statistic_names(name: str) -> tuple[str, ...]:
    """The per-chunk statistics of field ``name``, in column order."""
    if name == CONFIDENCE:
        bins = tuple(f"bin{b}:{part}" for b in range(N_BINS) for part in ("n", "conf", "hit"))
        return (*_BASE, "matched", *bins)
    if name in PER_CHUNK_ITEM:
        return (*_BASE, "item_score")
    rule = POOLED_RULES[name]
    pooled = tuple(f"{t.part}:{part}" for t in rule.pair_terms for part in ("sum", "n"))
    return (*_BASE, "matched", *pooled)


def chunk_statistics(name: str, score: FieldScore, usable: bool) -> list[float]:
    """One chunk's statistics of field ``name`` (see :func:`statistic_names`)."""
    has_items = float(score.n_reference + score.n_predicted > 0)
    base = [
        1.0,
        float(usable),
        score.score,
        float(usable and score.both_empty),
        has_items,
        float(score.n_reference),
        float(score.n_predicted),
    ]
    if name == CONFIDENCE:
        # (count, Σ confidence, Σ correct) per bin, in item order: a chunk's few items are
        # binned in plain Python (numpy's per-call cost would dominate), by bin_index.
        bins = [0.0] * (3 * N_BINS)
        if usable:
            for confidence, correct in score.calibration:
                at = 3 * bin_index(confidence)
                bins[at] += 1.0
                bins[at + 1] += confidence
                bins[at + 2] += 1.0 if correct else 0.0
        return [*base, score.matched, *bins]
    if name in PER_CHUNK_ITEM:
        return [*base, score.score * has_items]
    pooled: list[float] = []
    for term in POOLED_RULES[name].pair_terms:
        total, n = score.pooled.get(term.part, (0.0, 0.0))
        pooled += [total, n]
    return [*base, score.matched, *pooled]


Sums = Mapping[str, FloatArray]


def _ratio(num: FloatArray, den: FloatArray, empty: float = 0.0) -> FloatArray:
    """num / den, ``empty`` where den is 0."""
    positive = den > 0  # compared once (the resampled figures call this ~2,000 times a gate)
    out: FloatArray = np.where(positive, num / np.where(positive, den, 1.0), empty)
    return out


def usable_share(sums: Sums) -> FloatArray:
    return _ratio(sums["usable"], sums["covered"])


def pooled_ece(sums: Sums) -> FloatArray:
    """Σ_bins |Σ hit − Σ conf| / n over the pooled items (Guo et al.; empty bins add 0)."""
    gap = sum(np.abs(sums[f"bin{b}:hit"] - sums[f"bin{b}:conf"]) for b in range(N_BINS))
    n = sum(sums[f"bin{b}:n"] for b in range(N_BINS))
    assert isinstance(gap, np.ndarray) and isinstance(n, np.ndarray)
    return _ratio(gap, n)


def confidence_value(sums: Sums) -> FloatArray:
    """1 − pooled ECE, scaled by the share of usable chunks (an invalid chunk costs every
    field); with no item at all: 1.0 when neither side had any item, else 0.0."""
    n = sum(sums[f"bin{b}:n"] for b in range(N_BINS))
    assert isinstance(n, np.ndarray)
    no_items_agree = (sums["n_reference"] + sums["n_predicted"]) == 0
    base = np.where(n > 0, 1.0 - pooled_ece(sums), np.where(no_items_agree, 1.0, 0.0))
    out: FloatArray = base * usable_share(sums)
    return out


def macro_value(name: str, sums: Sums) -> FloatArray:
    """The mean of the per-chunk scores over the chunks that score the field."""
    if name == CONFIDENCE:
        return confidence_value(sums)
    return _ratio(sums["score"], sums["covered"])


def micro_parts(name: str, sums: Sums) -> dict[str, FloatArray]:
    """The pooled figures of a field: precision, recall, f1, its pooled pair components and
    ``score`` (what the composite uses under ``aggregate: micro``)."""
    if name == CONFIDENCE:
        return {"score": confidence_value(sums)}
    no_items = (sums["n_reference"] + sums["n_predicted"]) == 0
    if name in PER_CHUNK_ITEM:
        value = _ratio(sums["item_score"], sums["has_items"])
        return {"score": np.where(no_items, usable_share(sums), value)}
    rule = POOLED_RULES[name]
    matched, n_ref, n_pred = sums["matched"], sums["n_reference"], sums["n_predicted"]
    precision = _ratio(matched, n_pred)
    recall = _ratio(matched, n_ref)
    f1 = _ratio(2.0 * precision * recall, precision + recall)
    parts: dict[str, FloatArray] = {"precision": precision, "recall": recall, "f1": f1}
    # The field's own rule on the pooled parts: its F1 term on the pooled F1, each term over
    # matched pairs on the pooled pairs × the pooled matched share 2ΣM/(ΣR+ΣP).
    for term in rule.pair_terms:
        parts[term.part] = _ratio(sums[f"{term.part}:sum"], sums[f"{term.part}:n"])
    share = _ratio(2.0 * matched, n_ref + n_pred, 1.0)
    terms = {**parts, rule.terms[0].part: f1}
    score = rule.combine(terms, share)
    agree = usable_share(sums)
    parts = {k: np.where(no_items, agree, v) for k, v in parts.items()}
    parts["score"] = np.where(no_items, agree, score)
    return parts


def field_value(name: str, sums: Sums, aggregate: Aggregate) -> FloatArray:
    """The field's run-level score under ``aggregate``."""
    if aggregate == "micro":
        return micro_parts(name, sums)["score"]
    return macro_value(name, sums)


def composite_value(
    values: Mapping[str, FloatArray],
    present: Mapping[str, npt.NDArray[np.bool_]],
    weights: Mapping[str, float],
    all_fields: Sequence[str],
) -> FloatArray:
    """Σ w·score over the fields present; renormalised by the weights present when a field of
    ``all_fields`` is absent (no chunk scores it), exactly as the headline composite is."""
    names = [f for f in all_fields if f in values]
    if not names:
        return np.zeros(1)
    total = sum(weights[f] * np.where(present[f], values[f], 0.0) for f in names)
    weight_present = sum(weights[f] * present[f].astype(np.float64) for f in names)
    assert isinstance(total, np.ndarray) and isinstance(weight_present, np.ndarray)
    complete = np.all(np.vstack([present[f] for f in names]), axis=0) & (
        len(names) == len(all_fields)
    )
    out: FloatArray = np.where(complete, total, _ratio(total, weight_present))
    return out


def resolve_aggregate(aggregate: Aggregate | None, partial_reference: bool) -> Aggregate:
    """The aggregate the composite uses: as configured, else micro against a reference with
    ``covers`` (human gold, where both-empty chunks dominate), macro against a model."""
    if aggregate is not None:
        return aggregate
    return "micro" if partial_reference else "macro"
