"""The judge's verdict (DESIGN.md §4): three scores and an issue label per extracted item."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

IssueLabel = Literal[
    "none",
    "weak_support",
    "fabricated",
    "misattributed",
    "over_interpreted",
    "partially_supported",
]
ISSUE_LABELS: tuple[str, ...] = (
    "none",
    "weak_support",
    "fabricated",
    "misattributed",
    "over_interpreted",
    "partially_supported",
)
# How bad a label is, for breaking ties in a panel's majority vote (worse wins a tie).
LABEL_SEVERITY: dict[str, int] = {
    "none": 0,
    "partially_supported": 1,
    "weak_support": 2,
    "over_interpreted": 3,
    "misattributed": 4,
    "fabricated": 5,
}

Score100 = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]


class ItemVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str = Field(description="the id of the item as listed, e.g. 'claims#0'")
    label: IssueLabel
    reason: str = Field(description="one line")


class Verdict(BaseModel):
    """A judge's structured verdict on one chunk's extraction."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="JudgeVerdict")

    content_accuracy: Score100
    completeness: Score100
    hallucination: Score100 = Field(description="100 = no hallucination")
    items: list[ItemVerdict] = Field(default_factory=list)

    @property
    def composite(self) -> float:
        """(accuracy + completeness + hallucination) / 300."""
        return (self.content_accuracy + self.completeness + self.hallucination) / 300.0


class ItemLabel(NamedTuple):
    """An item's id and label without its reason: what a panel's aggregation reads."""

    item_id: str
    label: str


@dataclass(frozen=True, slots=True)
class VerdictDigest:
    """What a panel aggregates of a :class:`Verdict` (its scores, each item's label), for a
    run that holds every chunk's verdicts until it aggregates them: the reasons, most of a
    verdict's size, go to ``judgements.jsonl`` as soon as they are made (issue 34)."""

    content_accuracy: float
    completeness: float
    hallucination: float
    items: tuple[ItemLabel, ...]

    @classmethod
    def of(cls, verdict: Verdict) -> VerdictDigest:
        return cls(
            verdict.content_accuracy,
            verdict.completeness,
            verdict.hallucination,
            tuple(ItemLabel(sys.intern(i.item_id), i.label) for i in verdict.items),
        )

    @property
    def composite(self) -> float:
        """As :attr:`Verdict.composite`."""
        return (self.content_accuracy + self.completeness + self.hallucination) / 300.0


# What a panel's aggregation reads: a whole verdict or its digest.
Graded = Verdict | VerdictDigest
