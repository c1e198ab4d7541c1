"""Repeat variance of a model whose file holds repeated samples (``samples: n``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chatledger.core import Chunk, ExtractionRecord
from chatledger.corpus import ExtractionFile
from chatledger.record import RepeatVariance
from chatledger.scoring import ScoreReport, ScoringConfig, score_records
from chatledger.stats import repeat_variance


def chunk_composites(report: ScoreReport) -> dict[str, float]:
    """Per-chunk extraction composite (Σ weight · field score), as in the score table."""
    weights = {name: summary.weight for name, summary in report.fields.items()}
    return {
        chunk.chunk_id: sum(weights[name] * score.score for name, score in chunk.fields.items())
        for chunk in report.chunks
    }


def sample_variance(
    source: ExtractionFile,
    against: dict[str, ExtractionRecord],
    chunks: list[Chunk],
    scoring: ScoringConfig,
    *,
    samples: Sequence[int],
    against_label: str,
) -> RepeatVariance | None:
    """Repeat variance of one model: each sample scored against ``against``; the per-chunk
    extraction composites form the chunks × samples matrix of :func:`repeat_variance`."""
    columns = []
    for sample in samples:
        report = score_records(against, source.sample_records(sample), chunks, scoring)
        columns.append(chunk_composites(report))
    if not columns or not columns[0]:
        return None
    chunk_ids = list(columns[0])
    matrix = np.array([[column.get(c, 0.0) for column in columns] for c in chunk_ids])
    figures = repeat_variance(matrix)
    return RepeatVariance(
        mean=figures["mean"],
        chunk_sd_mean=figures["chunk_sd_mean"],
        samples=figures["samples"],
        sampling_share=figures["sampling_share"],
        against=against_label,
        chunks=len(chunk_ids),
        per_sample_mean=[float(v) for v in matrix.mean(axis=0)],
    )
