"""Prediction-powered agreement with humans for the models of a finished run (issue 33).

Human gold covers some conversations; the run scored every model on every conversation against
its reference (a model) — or judged it. For each model: ``y`` = its extraction agreement with
the human gold on each annotated conversation (scored here, conversation by conversation, as
the run scores: the same scoring settings, micro against gold with ``covers``), ``f`` = the
model-referenced figure on every conversation (``layers.extraction`` against the run's
reference, or ``layers.judge``), and ``stats.ppi_mean`` combines them. ``ppi.json``
(:class:`PPIRecord`, written and read by that class) holds each model's estimate, interval,
the human-only interval beside it and what the model's figure was worth in human labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from chatledger.core import InputError, atomic_write_json

if TYPE_CHECKING:
    from chatledger.core import Chunk, ExtractionRecord

PPI_FILE = "ppi.json"
Predictor = Literal["extraction", "judge"]


class PPIModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    estimate: float
    low: float
    high: float
    lam: float
    human_estimate: float
    human_low: float
    human_high: float
    labels_worth: float
    annotated: int  # conversations with human gold
    others: int  # conversations the predictor alone speaks of
    # With plan_width: annotated conversations an interval that wide needs (None: no number).
    plan_width: float | None = None
    needed_ppi: int | None = None
    needed_humans_only: int | None = None


class PPIRecord(BaseModel):
    """``ppi.json`` of a run with ``human_gold: {ppi: true}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1, 2] = 2
    gold: str
    predictor: str  # layers.extraction (against the run's reference) | layers.judge
    # Version 2: the extraction predictor is scored on these fields only (the gold's; None: all)
    predictor_fields: tuple[str, ...] | None = None
    confidence: float
    interval: str = "student-t"  # student-t (n − 1 df) | normal (as ppi-python)
    conversations: int
    annotated_conversations: list[str]
    models: list[PPIModel] = Field(default_factory=list)

    def write(self, run_dir: Path) -> Path:
        path = run_dir / PPI_FILE
        atomic_write_json(path, self.model_dump(mode="json"))
        return path

    @classmethod
    def read(cls, run_dir: Path) -> PPIRecord | None:
        path = run_dir / PPI_FILE
        if not path.is_file():
            return None
        from pydantic import ValidationError

        from chatledger.core import first_validation_error

        try:
            return cls.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            where, message = first_validation_error(exc)
            raise InputError(message, path=path, field=where) from None


def human_figures(
    gold_path: Path, extraction_path: Path, chunks_path: Path, scoring: object = None
) -> dict[str, float]:
    """Each annotated conversation's extraction agreement of the extractions with the gold."""
    from chatledger.corpus import read_extractions

    return _conversation_agreement(
        read_extractions(gold_path).records, extraction_path, chunks_path, scoring
    )


def gold_fields(gold_path: Path) -> tuple[str, ...] | None:
    """The fields the human gold speaks of: the union of its records' ``covers`` (None: all
    fields) — the annotation scheme, not a label, so it may be known for every conversation."""
    from chatledger.corpus import read_extractions

    covered: dict[str, None] = {}
    for record in read_extractions(gold_path).records.values():
        if record.covers is None:
            return None
        covered.update(dict.fromkeys(record.covers))
    return tuple(covered)


def model_figures(
    reference_path: Path,
    extraction_path: Path,
    chunks_path: Path,
    fields: tuple[str, ...] | None,
    scoring: object = None,
) -> dict[str, float]:
    """Each conversation's extraction agreement with the reference model on ``fields`` only:
    the same figure the humans give ``y`` for, with a model in their place. The run's own
    ``layers.extraction`` averages every field, most of which the humans never annotated, so
    it predicts ``y`` less well (CaSiNo: correlation 0.22 against 0.57 on the gold's fields)."""
    from chatledger.corpus import read_extractions

    reference = read_extractions(reference_path).records
    if fields is not None:
        reference = {k: replace(r, covers=fields) for k, r in reference.items()}
    return _conversation_agreement(reference, extraction_path, chunks_path, scoring)


def _conversation_agreement(
    reference: Mapping[str, ExtractionRecord],
    extraction_path: Path,
    chunks_path: Path,
    scoring: object,
) -> dict[str, float]:
    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.scoring import ScoringConfig, score_records

    config = scoring if isinstance(scoring, ScoringConfig) else ScoringConfig.default("v3")
    model = read_extractions(extraction_path).records
    by_conversation: dict[str, list[Chunk]] = {}
    for chunk in read_chunks(chunks_path):
        if chunk.chunk_id in reference:
            by_conversation.setdefault(chunk.conversation_id or chunk.chunk_id, []).append(chunk)
    out: dict[str, float] = {}
    for conversation, chunks in by_conversation.items():
        ids = {c.chunk_id for c in chunks}
        report = score_records(
            {k: v for k, v in reference.items() if k in ids},
            {k: v for k, v in model.items() if k in ids},
            chunks,
            config,
        )
        out[conversation] = float(report.extraction_composite)
    return out


def predictor_figures(
    run_dir: Path, model: str, predictor: Predictor, gold_path: Path
) -> tuple[list[str], npt.NDArray[np.float64]]:
    """The human-free figure ``f`` of ``model`` on each conversation of a run, in the run's
    order: with ``extraction``, its agreement with the run's reference model on the fields the
    human gold covers (:func:`model_figures`); with ``judge``, the run's judge layer."""
    from chatledger.runs._sequential import conversation_figures, read_conversation_run

    if predictor == "judge":
        per = conversation_figures(run_dir, model, model, ["layers.judge"])["layers.judge"]
        return list(per.conversations), per.candidate
    record = read_conversation_run(run_dir, "run")
    paths = {i.role: Path(i.path) for i in record.inputs}
    if f"challenger:{model}" not in paths:
        raise InputError(f"no extraction file of {model!r} in the run's inputs", path=run_dir)
    figures = model_figures(
        paths["reference"], paths[f"challenger:{model}"], paths["chunks"], gold_fields(gold_path)
    )
    order = list(dict.fromkeys(record.chunk_conversations))
    return order, np.array([figures.get(c, np.nan) for c in order], dtype=np.float64)


def ppi_of_run(
    run_dir: Path,
    gold_path: Path,
    *,
    predictor: Predictor = "extraction",
    models: Sequence[str] | None = None,
    hide: Sequence[str] = (),
    confidence: float = 0.95,
    student: bool = True,
    plan_width: float | None = None,
) -> PPIRecord:
    """PPI for each model of the run (``models``: all); ``hide`` leaves the gold of those
    conversations out (to study what fewer labels give)."""
    from chatledger.runs._sequential import read_conversation_run
    from chatledger.stats import ppi_labels_needed, ppi_mean

    record = read_conversation_run(run_dir, "run")
    chunks_path = Path(next(i.path for i in record.inputs if i.role == "chunks"))
    figure = f"layers.{predictor}"
    out: list[PPIModel] = []
    annotated: list[str] = []
    names = list(models) if models is not None else [m.name for m in record.models]
    for name in names:
        source = next((i.path for i in record.inputs if i.role == f"challenger:{name}"), None)
        if source is None:
            raise InputError(f"no extraction file of {name!r} in the run's inputs", path=run_dir)
        conversations, values = predictor_figures(run_dir, name, predictor, gold_path)
        f = dict(zip(conversations, values.tolist(), strict=True))
        conversations = [c for c in conversations if np.isfinite(f[c])]  # the reference's
        humans = human_figures(gold_path, Path(source), chunks_path)
        labeled = [c for c in conversations if c in humans and c not in set(hide)]
        others = [c for c in conversations if c not in labeled]
        annotated = labeled
        if len(labeled) < 2 or not others:
            raise InputError(
                f"PPI needs at least two conversations with human gold and one without "
                f"({len(labeled)} annotated of {len(conversations)})",
                path=gold_path,
            )
        estimate = ppi_mean(
            np.array([humans[c] for c in labeled]),
            np.array([f[c] for c in labeled]),
            np.array([f[c] for c in others]),
            alpha=1.0 - confidence,
            student=student,
        )
        needed: tuple[int | None, int | None] = (None, None)
        if plan_width is not None:
            needed = ppi_labels_needed(
                plan_width,
                np.array([humans[c] for c in labeled]),
                np.array([f[c] for c in labeled]),
                np.array([f[c] for c in others]),
                alpha=1.0 - confidence,
            )
        out.append(
            PPIModel(
                model=name,
                estimate=estimate.estimate,
                low=estimate.low,
                high=estimate.high,
                lam=estimate.lam,
                human_estimate=estimate.human_estimate,
                human_low=estimate.human_low,
                human_high=estimate.human_high,
                labels_worth=estimate.labels_worth,
                annotated=len(labeled),
                others=len(others),
                plan_width=plan_width,
                needed_ppi=needed[0],
                needed_humans_only=needed[1],
            )
        )
    return PPIRecord(
        gold=str(gold_path),
        predictor=figure,
        predictor_fields=gold_fields(gold_path) if predictor == "extraction" else None,
        confidence=confidence,
        interval="student-t" if student else "normal",
        conversations=len(dict.fromkeys(record.chunk_conversations)),
        annotated_conversations=annotated,
        models=out,
    )
