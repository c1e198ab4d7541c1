"""A judge's audit against known truth (DESIGN.md §4, issue 28), as kept in ``run.json`` and
printed by ``chatledger judges audit``.

Every judge grades extractions whose truth is known — the reference itself, the corruption
ladder (the demo's severities), one operator at a time (probes), and adversarial extractions
(a copier, keywords only, empty). From its verdicts: the detection rate of each corruption
(items flagged, and flagged with the label that corruption calls for), false alarms on the
untouched reference, whether its composite falls with severity, and where each adversarial
extraction lands against the ladder. A judge that fails is marked and, under the run's
``judges: {audit: strict}``, left out of ``overall``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from chatledger.record._common import RecordModel

AuditMode = Literal["strict", "warn", "off"]
SetKind = Literal["reference", "ladder", "probe", "adversarial"]


class AuditedSet(RecordModel):
    """One extraction of known truth as the judge graded it (means over scored chunks)."""

    name: str  # "reference", "simulated:light", "probe:invent_item", "adversarial:copier"
    kind: SetKind
    severity: float | None = None
    composite: float | None = None  # None: no chunk could be scored
    scores: dict[str, float] = Field(default_factory=dict)  # accuracy, completeness, halluc.
    chunks: int = 0
    unscored: int = 0
    items: int = 0
    label_counts: dict[str, int] = Field(default_factory=dict)


class Detection(RecordModel):
    """How often the judge flagged items that underwent one corruption (alone), by field."""

    effect: str
    field: str | None = None  # None: all fields together
    items: int
    flagged: float  # share labelled anything but ``none``
    expected_label: str | None = None  # the label this corruption calls for, if one does
    as_expected: float | None = None  # share labelled exactly that
    labels: dict[str, int] = Field(default_factory=dict)


class HumanAgreementSummary(RecordModel):
    """Judge-vs-person Cohen's κ on items a person decided on the annotation page."""

    kappa: float | None
    items: int
    source: str


class JudgeAudit(RecordModel):
    judge: str
    family: str = ""
    chunks: int = 0  # chunks of the reference the audit used
    seed: int = 0
    sets: list[AuditedSet] = Field(default_factory=list)
    detection: list[Detection] = Field(default_factory=list)
    false_alarms: float | None = None  # share of untouched reference items flagged
    false_alarm_items: int = 0
    false_alarm_labels: dict[str, int] = Field(default_factory=dict)
    max_false_alarms: float = 0.10
    monotone: bool | None = None
    # adversarial set → "below simulated:heavy" / "between simulated:light and simulated:medium"
    # / "above the reference" …
    adversarial_rank: dict[str, str] = Field(default_factory=dict)
    passed: bool = True
    failures: list[str] = Field(default_factory=list)
    human: HumanAgreementSummary | None = None
    # Why there is no audit (a priced judge not opted in, audit off): the judge counts as is.
    skipped: str | None = None

    def set(self, name: str) -> AuditedSet | None:
        return next((s for s in self.sets if s.name == name), None)

    def detection_of(self, effect: str, field: str | None = None) -> Detection | None:
        return next((d for d in self.detection if d.effect == effect and d.field == field), None)
