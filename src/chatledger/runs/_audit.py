"""The metric audit (DESIGN.md §7): does every field's score fall as its corruption rises?

Each corruption operator is applied to the reference at rising severity and the corrupted copy
is scored against the original. For every field an operator targets we report the score curve,
whether it is monotone (never rises as severity rises), and its sensitivity: the score lost
between severity 0 and 1. The ``keywords`` operator is run under both the default and the
guarded matcher, to show the one-keyword pitfall of ``token_set_ratio``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatledger.core import Chunk, ExtractionRecord
from chatledger.score import ScoringConfig, score_records
from chatledger.simulate import OPERATORS, simulate_records

DEFAULT_SEVERITIES: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
TOLERANCE = 1e-9


@dataclass(frozen=True)
class AuditCurve:
    operator: str
    matcher: str
    field: str
    severities: tuple[float, ...]
    scores: tuple[float, ...]

    @property
    def monotone(self) -> bool:
        return all(b <= a + TOLERANCE for a, b in zip(self.scores, self.scores[1:], strict=False))

    @property
    def sensitivity(self) -> float:
        return self.scores[0] - self.scores[-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "matcher": self.matcher,
            "field": self.field,
            "severities": list(self.severities),
            "scores": list(self.scores),
            "monotone": self.monotone,
            "sensitivity": self.sensitivity,
        }


def audit_metrics(
    reference: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk],
    *,
    severities: Sequence[float] = DEFAULT_SEVERITIES,
    operators: Sequence[str] | None = None,
    seed: int = 0,
    matchers: Sequence[str] = ("token_set",),
) -> list[AuditCurve]:
    """Score curves of every (operator, matcher, targeted field)."""
    curves: list[AuditCurve] = []
    names = list(operators) if operators is not None else list(OPERATORS)
    plan = [(op, m) for op in names for m in matchers]
    if "keywords" in names and "guarded" not in matchers:
        plan.append(("keywords", "guarded"))
    for operator, matcher in plan:
        config = ScoringConfig.default("v3", matcher)
        targets = OPERATORS.get(operator).targets
        by_field: dict[str, list[float]] = {f: [] for f in targets}
        for severity in severities:
            corrupted = simulate_records(
                reference, chunks, [(operator, severity)], seed=seed, label=f"audit-{operator}"
            )
            report = score_records(reference, corrupted, chunks, config)
            for fname in targets:
                by_field[fname].append(report.fields[fname].score)
        for fname, scores in by_field.items():
            curves.append(AuditCurve(operator, matcher, fname, tuple(severities), tuple(scores)))
    return curves


def pitfall_summary(curves: Sequence[AuditCurve]) -> dict[str, Any]:
    """The keyword collapse under each matcher: mean score lost at full severity."""
    out: dict[str, Any] = {}
    for curve in curves:
        if curve.operator != "keywords":
            continue
        out.setdefault(curve.matcher, []).append(curve.sensitivity)
    return {m: sum(v) / len(v) for m, v in out.items() if v}
