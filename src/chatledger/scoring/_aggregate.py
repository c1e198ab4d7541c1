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
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from chatledger.scoring._calibration import N_BINS, bin_index
from chatledger.scoring._types import FieldScore

FloatArray = npt.NDArray[np.float64]
Aggregate = Literal["macro", "micro"]
AGGREGATES: tuple[Aggregate, ...] = ("macro", "micro")


@dataclass(frozen=True)
class PooledRule:
    """How a list field's micro score is built from pooled counts.

    ``f1`` is the weight of the pooled F1 (``f1_name`` is what the field calls it among its
    components); ``pairs`` are the components over matched pairs with their weights.
    """

    f1: float = 1.0
    f1_name: str | None = None
    pairs: tuple[tuple[str, float], ...] = ()


# The weights are the field scorers' own (scoring/_fields.py); a component with weight 0 is
# pooled and reported but not part of the score (entities' exact share).
POOLED_RULES: dict[str, PooledRule] = {
    "topics": PooledRule(),
    "entities": PooledRule(pairs=(("exact_share", 0.0),)),
    "decisions": PooledRule(0.75, "text_f1", (("evidence_jaccard", 0.25),)),
    "action_items": PooledRule(0.70, "text_f1", (("owner_accuracy", 0.30),)),
    "open_questions": PooledRule(),
    "claims": PooledRule(
        0.60, "text_f1", (("polarity_accuracy", 0.25), ("subject_consistency", 0.15))
    ),
    "links": PooledRule(),
    "warnings": PooledRule(),
    "evidence_message_ids": PooledRule(),
    "qa_pairs": PooledRule(0.60, "question_f1", (("answer_agreement", 0.40),)),
    "emotional_tone": PooledRule(),
    "conversation_phases": PooledRule(0.5, "phase_f1", (("mean_iou", 0.5),)),
    "implicit_assumptions": PooledRule(),
    "negotiation_patterns": PooledRule(),
}
PER_CHUNK_ITEM = frozenset({"summary", "emotional_arc"})
# Set fields count distinct keys, not the items listed: what their counts count.
COUNTED_AS = {
    "links": "distinct normalised URLs",
    "evidence_message_ids": "distinct message ids",
    "emotional_tone": "distinct (speaker, emotion) pairs",
    "negotiation_patterns": "distinct (pattern, actor) pairs",
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
    pooled = tuple(f"{comp}:{part}" for comp, _ in rule.pairs for part in ("sum", "n"))
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
    for comp, _ in POOLED_RULES[name].pairs:
        total, n = score.pooled.get(comp, (0.0, 0.0))
        pooled += [total, n]
    return [*base, score.matched, *pooled]


Sums = Mapping[str, FloatArray]


def _ratio(num: FloatArray, den: FloatArray, empty: float = 0.0) -> FloatArray:
    """num / den, ``empty`` where den is 0."""
    safe = np.where(den > 0, den, 1.0)
    out: FloatArray = np.where(den > 0, num / safe, empty)
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
    score = rule.f1 * f1
    # Terms over matched pairs count in proportion to the pooled matched share 2ΣM/(ΣR+ΣP).
    share = _ratio(2.0 * matched, n_ref + n_pred, 1.0)
    for comp, weight in rule.pairs:
        parts[comp] = _ratio(sums[f"{comp}:sum"], sums[f"{comp}:n"])
        score = score + weight * parts[comp] * share
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
