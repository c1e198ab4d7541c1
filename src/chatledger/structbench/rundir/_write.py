"""A structbench run directory: the same shape as a conversation run (DESIGN §6), for §8.

``run.json``
    The typed record :class:`chatledger.record.StructbenchRun` (``schema_version`` 2, with the
    dataset and prediction files among its ``inputs``), written by its ``write``:
    ``task: "structbench"``, the dataset (path, sha256, documents by depth), the settings, the
    prediction files, one entry per row in ``models`` (leaderboard order, best WV first) holding
    exactly the numbers ``structbench score --format json`` prints for that group plus the
    micro-F1 interval and usage, a pivot ``by_strategy``, paired WV differences and rank
    probabilities; with ≥ 2 models each run with the same ≥ 2 strategies, ``strategy_vs_model``
    (whether the strategy or the model moves each metric more, ``_effects``).
``scores.parquet``
    The tidy long table of :class:`chatledger.runs.ScoreTableWriter`: per row (``model`` = the
    row name) and document (``chunk_id`` = document id), layer ``structbench``, fields DOC, MK,
    MV, WV and micro_f1 (the document's own 0.25·MK + 0.75·F1_values), component ``score``; and
    run-level rows (``chunk_id`` ``__run__``) with components score / ci_low / ci_high. The
    run-level micro_f1 is the pooled one, so it is not the mean of the per-document values.
``drilldown.json``
    The worst documents of each row, in full (see ``_drilldown``).

``scores.parquet`` and ``drilldown.json`` do not depend on the clock, so a rerun writes the same
bytes; ``run.json`` differs only in ``timings`` (seconds spent, as a conversation run records).
"""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatledger.core import atomic_write_json, file_sha256, prepare_output_dir
from chatledger.record import (
    METRICS,
    DatasetInfo,
    InputFile,
    PairedDifferences,
    PairRow,
    PredictionFileInfo,
    RankProbabilities,
    StrategyCell,
    StructbenchRow,
    StructbenchRun,
    StructbenchSettings,
)
from chatledger.runs import RUN_LEVEL, ScoreTableWriter
from chatledger.structbench.aggregate import PredictionFile, Row, ScoredFile, score_files
from chatledger.structbench.dataset import Document, ValidatorCache
from chatledger.structbench.rundir._drilldown import DRILLDOWN_PER_ROW, drilldown
from chatledger.structbench.rundir._effects import grid_pairs, strategy_vs_model
from chatledger.structbench.rundir._stats import (
    CONFIDENCE,
    RANKING_METRIC,
    capped_resamples,
    micro_f1_interval,
    paired_differences,
    rank_table,
)

LAYER = "structbench"
SCORES_FILE = "scores.parquet"
DRILLDOWN_FILE = "drilldown.json"
TABLE_FIELDS = ("DOC", "MK", "MV", "WV", "micro_f1")


@dataclass
class StructRun:
    """What ``write_structbench_run`` wrote (its record, as ``run.json`` holds it), and the
    per-file reports behind it."""

    out_dir: Path
    run: StructbenchRun
    rows: list[Row]
    files: list[ScoredFile]

    @property
    def leaderboard(self) -> list[dict[str, Any]]:
        return [{"name": m.name} | {k: m.metric(k) for k in METRICS} for m in self.run.models]


def _row_entry(row: Row, n_resamples: int, seed: int) -> StructbenchRow:
    block = dict(row.block)
    intervals = dict(block["intervals"]) if isinstance(block["intervals"], dict) else {}
    interval = micro_f1_interval(row.scores, n_resamples=n_resamples, seed=seed)
    if interval is not None:
        intervals["micro_f1"] = interval
    block["intervals"] = intervals
    return StructbenchRow.model_validate(
        {
            "name": row.name,
            "model": row.model,
            "strategy": row.strategy,
            "predictions_file": str(row.source),
            "predictions": row.n_predictions,
            **block,
            "usage": row.usage,
        }
    )


def _by_strategy(entries: Sequence[StructbenchRow]) -> dict[str, dict[str, StrategyCell]]:
    """``{strategy: {model: {DOC, MK, MV, WV, micro_f1, n}}}`` over the rows that name one."""
    pivot: dict[str, dict[str, StrategyCell]] = {}
    for e in entries:
        if e.strategy is None:
            continue
        cell = StrategyCell(DOC=e.DOC, MK=e.MK, MV=e.MV, WV=e.WV, micro_f1=e.micro_f1, n=e.n)
        pivot.setdefault(e.strategy, {})[e.model or e.name] = cell
    return {k: pivot[k] for k in sorted(pivot)}


def _table_rows(entry: StructbenchRow, row: Row) -> list[tuple[str, str, str, str, str, float]]:
    name = row.name
    out = []
    for s in row.scores:
        values = (s.doc, s.mk, s.mv, s.wv, s.paper_f1)
        for fname, value in zip(TABLE_FIELDS, values, strict=True):
            out.append((name, s.id, LAYER, fname, "score", float(value)))
    for fname in TABLE_FIELDS:
        out.append((name, RUN_LEVEL, LAYER, fname, "score", entry.metric(fname)))
        interval = entry.intervals.get(fname)
        if interval is not None:
            out.append((name, RUN_LEVEL, LAYER, fname, "ci_low", float(interval.low)))
            out.append((name, RUN_LEVEL, LAYER, fname, "ci_high", float(interval.high)))
    return out


def _write_json(path: Path, data: Any) -> None:
    atomic_write_json(path, data)


def write_structbench_run(
    out_dir: str | Path,
    documents: Sequence[Document],
    files: Sequence[PredictionFile],
    *,
    dataset_path: str | Path,
    dataset_format: str = "chatledger",
    n_resamples: int = 1000,
    seed: int = 0,
    drilldown_per_row: int = DRILLDOWN_PER_ROW,
    name: str | None = None,
    validators: ValidatorCache | None = None,
) -> StructRun:
    """Score the prediction files and write ``run.json``, ``scores.parquet`` and
    ``drilldown.json`` into ``out_dir`` (the report is built from them separately)."""
    from chatledger._version import __version__

    started = time.perf_counter()
    out = prepare_output_dir(out_dir)
    validators = validators or ValidatorCache()
    scored = score_files(
        documents, files, n_resamples=n_resamples, seed=seed, validators=validators
    )
    scored_at = time.perf_counter()
    rows = [row for f in scored for row in f.rows]
    # Leaderboard order: best WV first; ties keep the order the files were given in.
    rows = sorted(rows, key=lambda r: -float(r.block[RANKING_METRIC]))
    entries = [_row_entry(row, n_resamples, seed) for row in rows]
    names = [row.name for row in rows]
    series = [row.scores for row in rows]
    dataset = Path(dataset_path)
    depths: dict[str, int] = {}
    for d in documents:
        depths[str(d.depth)] = depths.get(str(d.depth), 0) + 1
    dataset_sha256 = file_sha256(dataset)
    prediction_files = [
        PredictionFileInfo(
            path=str(f.file.path.resolve()),
            sha256=f.file.sha256,
            lines=len(f.file.predictions),
            unknown_ids=f.report.unknown_ids,
            rows=[r.name for r in f.rows],
        )
        for f in scored
    ]
    pairs = paired_differences(names, series, n_resamples=n_resamples, seed=seed)
    ranks = rank_table(names, series, n_resamples=n_resamples, seed=seed)
    effects = strategy_vs_model(rows, n_resamples=n_resamples, seed=seed)
    grid = grid_pairs(rows, n_resamples=n_resamples, seed=seed)
    compared_at = time.perf_counter()
    with ScoreTableWriter(out / SCORES_FILE) as writer:
        for entry, row in zip(entries, rows, strict=True):
            writer.write(_table_rows(entry, row))
    _write_json(
        out / DRILLDOWN_FILE, drilldown(documents, rows, validators, per_row=drilldown_per_row)
    )
    finished = time.perf_counter()
    run = StructbenchRun(
        name=name or out.resolve().name,
        chatledger_version=__version__,
        python=platform.python_version(),
        inputs=[
            InputFile(role="dataset", path=str(dataset.resolve()), sha256=dataset_sha256),
            *(
                InputFile(role="predictions", path=f.path, sha256=f.sha256)
                for f in prediction_files
            ),
        ],
        dataset=DatasetInfo(
            path=str(dataset.resolve()),
            sha256=dataset_sha256,
            format=dataset_format,
            n_documents=len(documents),
            by_depth={k: depths[k] for k in sorted(depths, key=int)},
        ),
        n=len(documents),
        settings=StructbenchSettings(
            resamples=capped_resamples(len(documents), n_resamples),
            resamples_requested=n_resamples,
            confidence=CONFIDENCE,
            seed=seed,
            ranking_metric=RANKING_METRIC,
            drilldown_per_row=drilldown_per_row,
        ),
        prediction_files=prediction_files,
        leaderboard=names,
        models=entries,
        by_strategy=_by_strategy(entries),
        paired_differences=PairedDifferences(
            metric=RANKING_METRIC, pairs=[PairRow.model_validate(p) for p in pairs]
        ),
        rank_probabilities=RankProbabilities(metric=RANKING_METRIC, rows=ranks),
        strategy_vs_model=effects,
        grid_pairs=grid,
        timings={
            "score_s": scored_at - started,  # scoring and the per-row intervals
            "compare_s": compared_at - scored_at,  # micro-F1 intervals, paired differences, ranks
            "write_s": finished - compared_at,
            "total_s": finished - started,
        },
    )
    run.write(out)
    return StructRun(out_dir=out, run=run, rows=rows, files=scored)
