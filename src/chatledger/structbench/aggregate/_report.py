"""Scoring a predictions file against a dataset: means, intervals, breakdowns, bad-output counts.

Every dataset document is scored once per strategy found in the predictions (a file may hold
several strategies side by side); a document without a prediction scores 0 and is counted as
``missing``. Predictions whose id is not in the dataset are counted (``unknown_ids``) and ignored.
Lines of the predictions file that could not be used (:func:`read_predictions` records them) are
listed as ``problems`` and counted in ``invalid_lines``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from chatledger.stats import bootstrap_intervals
from chatledger.structbench.dataset import (
    BAD_ENUM,
    BAD_FORMAT,
    EXTRA_KEYS,
    MISSING_KEYS,
    OTHER_SCHEMA,
    WRONG_TYPE,
    Document,
    Prediction,
    ValidatorCache,
)
from chatledger.structbench.score import (
    CLEAN,
    EMPTY,
    FENCED,
    KEY_F1_SHARE,
    MALFORMED,
    MISSING,
    NO_JSON,
    SURROUNDING_PROSE,
    THINK_BLOCK,
    TRUNCATED,
    DocumentScore,
    score_document,
)

METRICS = ("DOC", "MK", "MV", "WV")
# Fixed order and always present, so a consumer can read any count without a KeyError.
OUTPUT_KINDS = (
    MISSING,
    EMPTY,
    NO_JSON,
    TRUNCATED,
    MALFORMED,
    SURROUNDING_PROSE,
    FENCED,
    THINK_BLOCK,
    WRONG_TYPE,
    EXTRA_KEYS,
    MISSING_KEYS,
    BAD_ENUM,
    BAD_FORMAT,
    OTHER_SCHEMA,
)
UNSPECIFIED_STRATEGY = "unspecified"
# BCa needs a jackknife (n² work); above this many documents the percentile method is used.
BCA_MAX_DOCUMENTS = 2000
# Bootstrap memory is documents × resamples floats per metric; cap it near 80 MB.
MAX_BOOTSTRAP_CELLS = 10_000_000
MIN_RESAMPLES = 100


def _metric_values(scores: Sequence[DocumentScore]) -> list[list[float]]:
    return [
        [s.doc for s in scores],
        [s.mk for s in scores],
        [s.mv for s in scores],
        [s.wv for s in scores],
    ]


def _means(scores: Sequence[DocumentScore]) -> dict[str, float]:
    n = len(scores)
    if n == 0:
        return dict.fromkeys(METRICS, 0.0)
    rows = _metric_values(scores)
    return {name: sum(row) / n for name, row in zip(METRICS, rows, strict=True)}


def micro_f1(scores: Sequence[DocumentScore]) -> dict[str, float]:
    """The paper's figure, pooled over all documents: 0.25·F1_keys + 0.75·F1_values."""
    truth = sum(s.truth_leaves for s in scores)
    predicted = sum(s.predicted_leaves for s in scores)
    total = truth + predicted
    f1_keys = 2.0 * sum(s.matched_keys for s in scores) / total if total else 0.0
    f1_values = 2.0 * sum(s.matched_values for s in scores) / total if total else 0.0
    return {
        "micro_f1": KEY_F1_SHARE * f1_keys + (1.0 - KEY_F1_SHARE) * f1_values,
        "f1_keys": f1_keys,
        "f1_values": f1_values,
    }


def output_kind_counts(scores: Iterable[DocumentScore]) -> dict[str, int]:
    counts = Counter(kind for s in scores for kind in s.kinds)
    return {kind: counts.get(kind, 0) for kind in OUTPUT_KINDS}


def intervals(
    scores: Sequence[DocumentScore], *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, object]:
    """Bootstrap intervals (resampling documents) of the four means."""
    n = len(scores)
    if n == 0 or n_resamples <= 0:
        return {}
    resamples = max(MIN_RESAMPLES, min(n_resamples, MAX_BOOTSTRAP_CELLS // n))
    method = "BCa" if n <= BCA_MAX_DOCUMENTS else "percentile"
    out: dict[str, object] = {}
    for name, row in zip(METRICS, _metric_values(scores), strict=True):
        (interval,) = bootstrap_intervals([row], n_resamples=resamples, seed=seed, method=method)
        out[name] = interval.to_dict()
    out["n_resamples"] = resamples
    return out


def _by_depth(scores: Sequence[DocumentScore]) -> dict[str, dict[str, float | int]]:
    groups: dict[int, list[DocumentScore]] = {}
    for s in scores:
        groups.setdefault(s.depth, []).append(s)
    return {
        str(depth): {**_means(group), "n": len(group)} for depth, group in sorted(groups.items())
    }


def summary(
    scores: Sequence[DocumentScore], *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, object]:
    """The metric block of one group of scored documents."""
    return {
        **_means(scores),
        "n": len(scores),
        "by_depth": _by_depth(scores),
        **micro_f1(scores),
        "intervals": intervals(scores, n_resamples=n_resamples, seed=seed),
        "bad_output_counts": output_kind_counts(scores),
        "clean_outputs": sum(1 for s in scores if CLEAN in s.kinds),
    }


@dataclass
class StructReport:
    """All document scores of one predictions file, and how to summarise them."""

    scores: list[DocumentScore]
    strategies: list[str | None]
    unknown_ids: int = 0
    n_resamples: int = 1000
    seed: int = 0
    validators_built: int = 0
    problems: list[str] = field(default_factory=list)
    _summary: dict[str, object] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, object]:
        """``{"DOC", "MK", "MV", "WV", "n", "by_depth", …}`` as ``structbench score`` prints."""
        if self._summary is None:
            out = summary(self.scores, n_resamples=self.n_resamples, seed=self.seed)
            if any(s is not None for s in self.strategies):
                out["by_strategy"] = {
                    _label(strategy): summary(
                        [s for s in self.scores if s.strategy == strategy],
                        n_resamples=self.n_resamples,
                        seed=self.seed,
                    )
                    for strategy in self.strategies
                }
            out["unknown_ids"] = self.unknown_ids
            out["invalid_lines"] = len(self.problems)
            out["problems"] = list(self.problems)
            self._summary = out
        return self._summary


def _label(strategy: str | None) -> str:
    return strategy if strategy is not None else UNSPECIFIED_STRATEGY


def score_predictions(
    documents: Sequence[Document],
    predictions: Iterable[Prediction],
    *,
    validators: ValidatorCache | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> StructReport:
    """Score every document under every strategy present in ``predictions``."""
    validators = validators or ValidatorCache()
    # A file read by read_predictions carries the problems of its unusable lines.
    problems = [str(p) for p in getattr(predictions, "problems", ())]
    known = {d.id for d in documents}
    by_strategy: dict[str | None, dict[str, str]] = {}
    unknown = 0
    for p in predictions:
        if p.id not in known:
            unknown += 1
            continue
        by_strategy.setdefault(p.strategy, {})[p.id] = p.output
    strategies: list[str | None] = sorted(by_strategy, key=lambda s: (s is not None, s or ""))
    if not strategies:
        strategies = [None]
    scores = [
        score_document(d, by_strategy.get(strategy, {}).get(d.id), validators, strategy=strategy)
        for strategy in strategies
        for d in documents
    ]
    return StructReport(
        scores=scores,
        strategies=strategies,
        unknown_ids=unknown,
        n_resamples=n_resamples,
        seed=seed,
        validators_built=validators.built,
        problems=problems,
    )
