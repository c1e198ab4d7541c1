"""Leaderboard rows of a structbench run: one per (model, strategy) found in the prediction files.

A predictions file may hold several strategies side by side (``structbench score`` scores each);
each becomes its own row, named ``<model>/<strategy>`` (or ``<model>`` when the lines carry no
strategy). The model is the ``model`` the lines record, else the file's stem. A row's metric
block is exactly the block ``structbench score --format json`` prints for that group, so the
two never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatledger.core import InputError, file_sha256
from chatledger.structbench.aggregate._report import StructReport, score_predictions
from chatledger.structbench.dataset import Document, Prediction, ValidatorCache, read_predictions
from chatledger.structbench.score import DocumentScore

# The keys of the score JSON a row keeps (``by_strategy`` and ``unknown_ids`` describe a file).
ROW_KEYS = (
    "DOC",
    "MK",
    "MV",
    "WV",
    "n",
    "by_depth",
    "micro_f1",
    "f1_keys",
    "f1_values",
    "intervals",
    "bad_output_counts",
    "clean_outputs",
)
_USAGE_NUMBERS = ("input_tokens", "output_tokens", "cost_usd", "latency_s", "calls")


@dataclass(frozen=True)
class PredictionFile:
    """A predictions file as read, with the hash of its bytes (recorded in run.json)."""

    path: Path
    predictions: list[Prediction]
    sha256: str


def load_prediction_file(path: str | Path) -> PredictionFile:
    path = Path(path)
    return PredictionFile(path, read_predictions(path), file_sha256(path))


@dataclass
class Row:
    """One leaderboard row: a model with one strategy, scored on every dataset document."""

    name: str
    model: str
    strategy: str | None
    source: Path
    scores: list[DocumentScore]  # dataset order, one per document
    outputs: dict[str, str]  # document id → raw output (documents without one are missing)
    block: dict[str, Any]  # the score JSON's block for this group
    usage: dict[str, float] | None
    n_predictions: int


@dataclass
class ScoredFile:
    file: PredictionFile
    report: StructReport
    rows: list[Row]


def _model_name(predictions: Sequence[Prediction], source: Path) -> str:
    models = sorted({p.model for p in predictions if p.model})
    return "+".join(models) if models else source.stem


def usage_totals(predictions: Sequence[Prediction], n_documents: int) -> dict[str, float] | None:
    """Tokens, dollars and latency over a row's predictions; None when no line carries usage.

    Cost per document divides by every dataset document (a missing answer cost nothing, as
    the conversation runs count it); latency and tokens per document by the answers that
    report them."""
    reported = [p.usage for p in predictions if p.usage]
    if not reported:
        return None
    totals = dict.fromkeys(_USAGE_NUMBERS, 0.0)
    for usage in reported:
        for key in _USAGE_NUMBERS:
            value = usage.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                totals[key] += float(value)
    answered = len(reported)
    totals["documents_with_usage"] = float(answered)
    totals["cost_per_document_usd"] = totals["cost_usd"] / n_documents if n_documents else 0.0
    totals["latency_per_document_s"] = totals["latency_s"] / answered
    totals["tokens_per_document"] = (totals["input_tokens"] + totals["output_tokens"]) / answered
    return totals


def _block(summary: dict[str, object], label: str | None) -> dict[str, Any]:
    source = summary
    if label is not None:
        by_strategy = summary.get("by_strategy")
        assert isinstance(by_strategy, dict)
        source = by_strategy[label]
    return {key: source[key] for key in ROW_KEYS}


def score_files(
    documents: Sequence[Document],
    files: Sequence[PredictionFile],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    validators: ValidatorCache | None = None,
) -> list[ScoredFile]:
    """Score every file (as ``structbench score`` does) and split it into rows."""
    seen: dict[Path, Path] = {}
    for f in files:
        resolved = f.path.resolve()
        if resolved in seen:
            raise InputError("the same predictions file is given twice", path=f.path)
        seen[resolved] = f.path
    validators = validators or ValidatorCache()
    known = {d.id for d in documents}
    scored: list[ScoredFile] = []
    names: set[str] = set()
    for f in files:
        report = score_predictions(
            documents, f.predictions, validators=validators, n_resamples=n_resamples, seed=seed
        )
        summary = report.to_dict()
        several = len(report.strategies) > 1
        rows = []
        for strategy in report.strategies:
            group = [p for p in f.predictions if p.strategy == strategy and p.id in known]
            model = _model_name(group, f.path)
            name = _unique(f"{model}/{strategy}" if strategy else model, f.path, names)
            label = (strategy or "unspecified") if several else None
            rows.append(
                Row(
                    name=name,
                    model=model,
                    strategy=strategy,
                    source=f.path,
                    scores=[s for s in report.scores if s.strategy == strategy],
                    outputs={p.id: p.output for p in group},
                    block=_block(summary, label),
                    usage=usage_totals(group, len(documents)),
                    n_predictions=len(group),
                )
            )
        scored.append(ScoredFile(f, report, rows))
    return scored


def _unique(name: str, source: Path, taken: set[str]) -> str:
    """Two files of the same model and strategy (say, two dates) stay apart by file name."""
    candidate = name
    if candidate in taken:
        candidate = f"{name} ({source.name})"
    suffix = 2
    while candidate in taken:
        candidate = f"{name} ({source.name} #{suffix})"
        suffix += 1
    taken.add(candidate)
    return candidate
