"""One model's results as rows of the score table."""

from __future__ import annotations

from collections.abc import Mapping

from chatledger.core import RecordStatus
from chatledger.downstream import CombinedAgreements, ConsumerAgreement
from chatledger.runs._tables import RUN_LEVEL, Row
from chatledger.scoring import ChunkResult, ScoreReport


def extraction_rows(model: str, report: ScoreReport) -> list[Row]:
    rows: list[Row] = []
    weights = {name: s.weight for name, s in report.fields.items()}
    for chunk in report.chunks:
        chunk_rows(model, chunk, weights, rows)
    return rows + extraction_run_rows(model, report)


def chunk_rows(
    model: str, chunk: ChunkResult, weights: Mapping[str, float], rows: list[Row]
) -> float:
    """One chunk's layer-1 rows, appended to ``rows``; returns its composite (the fields'
    weighted sum)."""
    composite = 0.0
    for name, score in chunk.fields.items():
        rows.append((model, chunk.chunk_id, "extraction", name, "score", score.score))
        for comp, value in score.components.items():
            rows.append((model, chunk.chunk_id, "extraction", name, comp, float(value)))
        composite += weights[name] * score.score
    rows.append((model, chunk.chunk_id, "extraction", "composite", "score", composite))
    valid = 1.0 if chunk.status is RecordStatus.OK else 0.0
    rows.append((model, chunk.chunk_id, "extraction", "validity", "score", valid))
    return composite


def extraction_run_rows(model: str, report: ScoreReport) -> list[Row]:
    """The run-level layer-1 rows (after every chunk's)."""
    rows: list[Row] = []
    for name, summary in report.fields.items():
        rows.append((model, RUN_LEVEL, "extraction", name, "score", summary.score))
        for comp, value in summary.components.items():
            rows.append((model, RUN_LEVEL, "extraction", name, comp, float(value)))
        # The counts behind the score and both aggregates (the score row is the headline).
        # None: not a count this field has (no matching; no listed items apart from keys).
        optional = {
            "n_matched": summary.n_matched,
            "n_reference_items": summary.n_reference_items,
            "n_predicted_items": summary.n_predicted_items,
        }
        counts = {
            **{k: v for k, v in optional.items() if v is not None},
            "n_reference": float(summary.n_reference),
            "n_predicted": float(summary.n_predicted),
            "both_empty": float(summary.both_empty),
            "chunks": float(summary.chunks),
            "macro": summary.macro,
            **{f"micro_{k}": v for k, v in summary.micro.items()},
        }
        for comp, value in counts.items():
            rows.append((model, RUN_LEVEL, "extraction", name, comp, float(value)))
    rows.append((model, RUN_LEVEL, "extraction", "composite", "score", report.extraction_composite))
    return rows


def downstream_rows(
    model: str, agreements: Mapping[str, ConsumerAgreement], combined: CombinedAgreements
) -> list[Row]:
    """Each consumer's numbers (its agreement as ``score``, its weight, the numbers of its
    details, in the order ``downstream.json`` lists them) and the composite, when there is
    one (None: no consumer with a weight ran)."""
    rows: list[Row] = []
    for name, found in agreements.items():
        numbers = {"score": found.agreement, "weight": combined.weights[name], **found.details}
        for key, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            rows.append((model, RUN_LEVEL, "downstream", name, key, float(value)))
    if combined.composite is not None:
        rows.append((model, RUN_LEVEL, "downstream", "composite", "score", combined.composite))
    return rows
