"""What a gate decided (``chatledger gate --format json``): a typed, versioned record."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chatledger.gating._rules import GateRule

GATE_RESULT_VERSION = 1


class GateSide(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run_dir: str
    run_name: str
    model: str


class RuleOutcome(BaseModel):
    """One rule's verdict with the figures it was decided on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: GateRule
    passed: bool
    baseline: float | None
    candidate: float
    # candidate − baseline (a ratio candidate / baseline for max_ratio)
    difference: float | None = None
    # The interval the verdict read: of the paired difference (max_drop), of the candidate's
    # own figure (min); None when decided on the point estimate only.
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    decided_on: Literal["interval", "point estimate"]
    units: str | None = None  # what was resampled: chunks | conversations
    n_units: int | None = None
    reason: str

    @property
    def name(self) -> str:
        return self.rule.name


class GateResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    rules_source: str
    baseline: GateSide
    candidate: GateSide
    strict: bool
    confidence: float
    resamples: int
    seed: int
    outcomes: list[RuleOutcome]
    notes: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def failures(self) -> list[RuleOutcome]:
        return [o for o in self.outcomes if not o.passed]
