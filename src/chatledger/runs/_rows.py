"""One model's results as rows of the score table and as per-chunk series for the statistics."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from chatledger.core import Chunk, RecordStatus
from chatledger.downstream import ConsumerOutputs, DownstreamReport, compare_outputs
from chatledger.runs._judging import JudgeLayerResult
from chatledger.runs._results import ModelSummary
from chatledger.runs._stats import FloatArray, ModelSeries
from chatledger.runs._tables import RUN_LEVEL, Row
from chatledger.score import ScoreReport


def extraction_rows(model: str, report: ScoreReport) -> list[Row]:
    rows: list[Row] = []
    weights = {name: s.weight for name, s in report.fields.items()}
    for chunk in report.chunks:
        composite = 0.0
        for name, score in chunk.fields.items():
            rows.append((model, chunk.chunk_id, "extraction", name, "score", score.score))
            for comp, value in score.components.items():
                rows.append((model, chunk.chunk_id, "extraction", name, comp, float(value)))
            composite += weights[name] * score.score
        rows.append((model, chunk.chunk_id, "extraction", "composite", "score", composite))
        valid = 1.0 if chunk.status is RecordStatus.OK else 0.0
        rows.append((model, chunk.chunk_id, "extraction", "validity", "score", valid))
    for name, summary in report.fields.items():
        rows.append((model, RUN_LEVEL, "extraction", name, "score", summary.score))
        for comp, value in summary.components.items():
            rows.append((model, RUN_LEVEL, "extraction", name, comp, float(value)))
    rows.append((model, RUN_LEVEL, "extraction", "composite", "score", report.extraction_composite))
    return rows


def downstream_rows(model: str, report: DownstreamReport) -> list[Row]:
    rows: list[Row] = []
    for name, data in report.to_dict()["consumers"].items():
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            component = "score" if key == "agreement" else key
            rows.append((model, RUN_LEVEL, "downstream", name, component, float(value)))
    if report.downstream_composite is not None:  # None: no consumer with a weight ran
        composite = report.downstream_composite
        rows.append((model, RUN_LEVEL, "downstream", "composite", "score", composite))
    return rows


def series_from_rows(
    name: str, chunks: list[Chunk], rows: list[Row], summary: ModelSummary
) -> ModelSeries:
    """Per-chunk layer-1 values of one model, read back from its score rows."""
    index = {c.chunk_id: i for i, c in enumerate(chunks)}
    n = len(chunks)
    fields: dict[str, FloatArray] = {}
    composite = np.full(n, np.nan)
    for _model, chunk_id, layer, fname, component, value in rows:
        if layer != "extraction" or component != "score" or chunk_id not in index:
            continue
        if fname == "composite":
            composite[index[chunk_id]] = value
        elif fname != "validity":
            fields.setdefault(fname, np.full(n, np.nan))[index[chunk_id]] = value
    series = ModelSeries(name=name, fields=fields, field_scores=dict(summary.fields))
    if summary.fields:
        series.layers["extraction"] = composite
    return series


def judge_series(chunks: list[Chunk], judged: JudgeLayerResult) -> FloatArray:
    """Per-chunk judge composite: 0 for an unusable extraction, NaN when unscored."""
    by_id = {j.chunk_id: j.composite for j in judged.chunks}
    values = []
    for chunk in chunks:
        if chunk.chunk_id not in by_id:
            values.append(0.0)
        else:
            value = by_id[chunk.chunk_id]
            values.append(np.nan if value is None else value)
    return np.array(values, dtype=np.float64)


def downstream_by_chunk(
    chunks: list[Chunk],
    reference: Mapping[str, ConsumerOutputs],
    challenger: Mapping[str, ConsumerOutputs],
    weights: Mapping[str, float] | None,
) -> FloatArray:
    """Each chunk carries the downstream composite of its own conversation."""
    agreement = {
        conv: compare_outputs(reference[conv], challenger[conv], weights).downstream_composite
        for conv in reference
    }
    return np.array([agreement[c.conversation_id] for c in chunks], dtype=np.float64)
