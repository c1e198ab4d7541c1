"""``what-breaks.json``: what changes when production moves from one model to a cheaper one.

Two readings of one switch, per figure (overall, layers, fields, consumers):

- **against people** — both models scored against the same human gold in one run, and the
  candidate − production difference paired over the same units (the regression gate's paired
  test): a *drop* is a difference whose whole interval is below 0;
- **against production** — the candidate scored with the production model as the reference (the
  switch run): how much of what production extracted, judged and fed downstream the candidate
  reproduces.

Written by the code that compares (the demo, from ``chatledger.gating``) and read by the report,
through this class only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from chatledger.core import InputError, atomic_write_json, first_validation_error
from chatledger.record._common import RecordModel

WHAT_BREAKS_FILE = "what-breaks.json"
WHAT_BREAKS_VERSION = 1
# undecided: too few conversations or items for an interval (the gate says which).
Verdict = Literal["drop", "gain", "no change shown", "undecided"]


class SwitchFigure(RecordModel):
    figure: str  # overall | layers.<layer> | fields.<field> | consumers.<consumer>
    production: float  # against the human gold
    candidate: float
    difference: float  # candidate − production
    low: float | None = None  # the paired interval of the difference (None: point estimate)
    high: float | None = None
    p_value: float | None = None
    units: str | None = None  # what the paired test resampled: chunks | conversations
    n_units: int | None = None
    verdict: Verdict
    # The candidate against production as the reference (the switch run); None where that
    # run has no such figure.
    agreement: float | None = None
    agreement_low: float | None = None
    agreement_high: float | None = None


class SwitchComparison(RecordModel):
    production: str
    candidate: str
    scored_against: str  # the human gold both were scored against
    confidence: float
    resamples: int
    figures: list[SwitchFigure] = Field(default_factory=list)

    @property
    def drops(self) -> list[SwitchFigure]:
        return [f for f in self.figures if f.verdict == "drop"]


class WhatBreaks(RecordModel):
    version: Literal[1] = 1  # WHAT_BREAKS_VERSION
    comparisons: list[SwitchComparison] = Field(default_factory=list)

    def write(self, run_dir: Path) -> Path:
        path = run_dir / WHAT_BREAKS_FILE
        atomic_write_json(path, self.model_dump(mode="json"))
        return path

    @classmethod
    def read(cls, run_dir: Path) -> WhatBreaks | None:
        """The run's comparison, None when it has none; a broken file is an InputError."""
        path = run_dir / WHAT_BREAKS_FILE
        if not path.is_file():
            return None
        try:
            return cls.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            raise InputError(
                f"not a what-breaks file this ChatLedger reads: {msg}",
                path=path,
                field=where or None,
            ) from None
