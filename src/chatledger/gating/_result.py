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
    # No interval to decide on (too few conversations, few items): neither passed nor failed
    undecided: bool = False
    test: str | None = None  # the sign-flip test of the p-value (exact or Monte Carlo)
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
        """Every rule passed (an undecided rule has not)."""
        return all(o.passed for o in self.outcomes)

    @property
    def failures(self) -> list[RuleOutcome]:
        """Rules the data decided against (undecided ones are not failures)."""
        return [o for o in self.outcomes if not o.passed and not o.undecided]

    @property
    def undecided(self) -> list[RuleOutcome]:
        """Rules the data cannot decide: too few conversations or items for an interval."""
        return [o for o in self.outcomes if o.undecided]
