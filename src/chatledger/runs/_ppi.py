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

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from chatledger.core import InputError, atomic_write_json

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

    version: Literal[1] = 1
    gold: str
    predictor: str  # layers.extraction (against the run's reference) | layers.judge
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
    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.scoring import ScoringConfig, score_records

    config = scoring if isinstance(scoring, ScoringConfig) else ScoringConfig.default("v3")
    gold = read_extractions(gold_path).records
    model = read_extractions(extraction_path).records
    by_conversation: dict[str, list[object]] = {}
    for chunk in read_chunks(chunks_path):
        if chunk.chunk_id in gold:
            by_conversation.setdefault(chunk.conversation_id or chunk.chunk_id, []).append(chunk)
    out: dict[str, float] = {}
    for conversation, chunks in by_conversation.items():
        ids = {c.chunk_id for c in chunks}  # type: ignore[attr-defined]
        report = score_records(
            {k: v for k, v in gold.items() if k in ids},
            {k: v for k, v in model.items() if k in ids},
            chunks,  # type: ignore[arg-type]
            config,
        )
        out[conversation] = float(report.extraction_composite)
    return out


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
    from chatledger.runs._sequential import conversation_figures, read_conversation_run
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
        per = conversation_figures(run_dir, name, name, [figure])[figure]
        f = dict(zip(per.conversations, per.candidate.tolist(), strict=True))
        humans = human_figures(gold_path, Path(source), chunks_path)
        labeled = [c for c in per.conversations if c in humans and c not in set(hide)]
        others = [c for c in per.conversations if c not in labeled]
        annotated = labeled
        if len(labeled) < 2 or not others:
            raise InputError(
                f"PPI needs at least two conversations with human gold and one without "
                f"({len(labeled)} annotated of {len(per.conversations)})",
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
        confidence=confidence,
        interval="student-t" if student else "normal",
        conversations=len(dict.fromkeys(record.chunk_conversations)),
        annotated_conversations=annotated,
        models=out,
    )
