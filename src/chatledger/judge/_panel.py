"""Panels of judges: aggregation (mean scores, majority labels) and agreement statistics."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import krippendorff
import numpy as np

from chatledger.judge._verdict import ISSUE_LABELS, LABEL_SEVERITY, Graded

SCORE_NAMES = ("content_accuracy", "completeness", "hallucination")


@dataclass(frozen=True)
class ChunkJudgement:
    """A panel's aggregated judgement of one chunk (None scores when no judge could score it)."""

    chunk_id: str
    scores: dict[str, float] | None
    labels: dict[str, str]
    n_judges_scored: int

    @property
    def composite(self) -> float | None:
        if self.scores is None:
            return None
        return sum(self.scores[name] for name in SCORE_NAMES) / 300.0


def majority_label(labels: Sequence[str]) -> str:
    """The most frequent label; a tie goes to the more severe label."""
    counts = Counter(labels)
    return max(counts, key=lambda label: (counts[label], LABEL_SEVERITY[label]))


def aggregate_chunk(chunk_id: str, verdicts: Sequence[Graded | None]) -> ChunkJudgement:
    scored = [v for v in verdicts if v is not None]
    if not scored:
        return ChunkJudgement(chunk_id, None, {}, 0)
    scores = {name: float(np.mean([getattr(v, name) for v in scored])) for name in SCORE_NAMES}
    by_item: dict[str, list[str]] = {}
    for verdict in scored:
        for item in verdict.items:
            by_item.setdefault(item.item_id, []).append(item.label)
    labels = {item_id: majority_label(found) for item_id, found in sorted(by_item.items())}
    return ChunkJudgement(chunk_id, scores, labels, len(scored))


def cohens_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's κ of two raters over the same units; 1.0 when both are constant and equal."""
    if len(a) != len(b):
        raise ValueError("raters must label the same units")
    if not a:
        return None
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / (n * n)
    if math.isclose(expected, 1.0):
        return 1.0 if math.isclose(observed, 1.0) else 0.0
    return (observed - expected) / (1.0 - expected)


def _alpha(data: np.ndarray, level: Literal["interval", "nominal"]) -> float | None:
    """Krippendorff's α, None when there is not enough pairable data or no variation."""
    pairable = np.sum(~np.isnan(data), axis=0) >= 2
    if data.shape[0] < 2 or pairable.sum() < 1:
        return None
    values = data[:, pairable]
    if np.unique(values[~np.isnan(values)]).size < 2:
        return None
    return float(krippendorff.alpha(reliability_data=values, level_of_measurement=level))


def panel_agreement(
    verdicts: Mapping[str, Mapping[str, Graded | None]], chunk_ids: Sequence[str]
) -> dict[str, Any]:
    """α (interval) per score, α (nominal) for labels, pairwise Cohen's κ on labels."""
    judges = list(verdicts)
    out: dict[str, Any] = {"judges": judges, "alpha": {}, "kappa": {}}
    for name in SCORE_NAMES:
        data = np.array(
            [
                [
                    getattr(v, name) if (v := verdicts[j].get(c)) is not None else np.nan
                    for c in chunk_ids
                ]
                for j in judges
            ],
            dtype=float,
        )
        out["alpha"][name] = _alpha(data, "interval")
    units: list[tuple[str, str]] = sorted(
        {
            (c, item.item_id)
            for j in judges
            for c in chunk_ids
            if (v := verdicts[j].get(c)) is not None
            for item in v.items
        }
    )
    label_of = {
        j: {
            (c, item.item_id): item.label
            for c in chunk_ids
            if (v := verdicts[j].get(c)) is not None
            for item in v.items
        }
        for j in judges
    }
    code = {label: float(i) for i, label in enumerate(ISSUE_LABELS)}
    label_data = np.array(
        [[code[label_of[j][u]] if u in label_of[j] else np.nan for u in units] for j in judges],
        dtype=float,
    ).reshape(len(judges), len(units))
    out["alpha"]["labels"] = _alpha(label_data, "nominal")
    for a, b in itertools.combinations(judges, 2):
        shared = [u for u in units if u in label_of[a] and u in label_of[b]]
        kappa = cohens_kappa([label_of[a][u] for u in shared], [label_of[b][u] for u in shared])
        out["kappa"][f"{a}|{b}"] = kappa
    return out
