"""What breaks when production moves from the recorded 1.5B to a cheaper recorded model.

The demo's main run scores every model against the hand-written gold; the regression gate
(``chatledger gate RUN RUN --baseline-model A --candidate-model B``, rule ``max_drop: 0`` on
every figure) pairs the two models there, figure by figure, over the same units: a figure
*drops* when the whole interval of candidate − production is below 0. Beside it, the switch run
(production as the reference) gives how much of production's output the candidate reproduces.
Both go into ``what-breaks.json`` in the switch run, which its report shows.
"""

from __future__ import annotations

from pathlib import Path

from chatledger.gating import RuleOutcome, evaluate_gate, load_gate_rules
from chatledger.record import (
    ConversationRun,
    Interval,
    ModelResult,
    SwitchComparison,
    SwitchFigure,
    WhatBreaks,
    read_run_record,
)
from chatledger.record._what_breaks import Verdict

# Every figure both models have; a drop of any size counts once the interval shows it.
EVERY_FIGURE = """
overall: {max_drop: 0}
layers.*: {max_drop: 0}
fields.*: {max_drop: 0}
consumers.*: {max_drop: 0}
"""


def _verdict(outcome: RuleOutcome) -> Verdict:
    """A drop is a failed rule whose interval shows it; a rule that failed without one is one
    the data cannot decide (too few conversations or items for an interval)."""
    if not outcome.passed:
        shown = outcome.high is not None and outcome.high < 0.0
        return "drop" if shown else "undecided"
    if outcome.low is not None and outcome.low > 0.0:
        return "gain"
    return "no change shown"


def _agreement(
    record: ConversationRun, model: ModelResult, figure: str
) -> tuple[float | None, Interval | None]:
    """The candidate's figure in the switch run and its interval (keyed as run.json keys it)."""
    group, _, item = figure.partition(".")
    stats = record.stats
    value: float | None
    key: str | None
    if figure == "overall":
        value, key = model.overall, "overall"
    elif group == "layers":
        value, key = model.layers.get(item), item
    elif group == "fields":
        value, key = model.fields.get(item), f"extraction.{item}"
    elif group == "consumers":
        value, key = model.consumers.get(item), None
    else:
        return None, None
    interval = stats.interval(model.name, key) if stats is not None and key else None
    return value, interval


def switch_comparison(
    gold_run: Path, switch_run: Path, production: str, candidate: str
) -> SwitchComparison:
    """``candidate`` against ``production`` in ``gold_run`` (paired, every figure), with the
    candidate's agreement with production from ``switch_run``."""
    result = evaluate_gate(
        load_gate_rules(EVERY_FIGURE),
        gold_run,
        gold_run,
        baseline_model=production,
        candidate_model=candidate,
    )
    gold = read_run_record(gold_run)
    switch = read_run_record(switch_run)
    assert isinstance(gold, ConversationRun) and isinstance(switch, ConversationRun)
    against = next((m for m in switch.models if m.name == candidate), None)
    figures = []
    for outcome in result.outcomes:
        if outcome.baseline is None:
            continue
        agreement, interval = (
            _agreement(switch, against, outcome.rule.figure) if against else (None, None)
        )
        figures.append(
            SwitchFigure(
                figure=outcome.rule.figure,
                production=outcome.baseline,
                candidate=outcome.candidate,
                difference=outcome.candidate - outcome.baseline,
                low=outcome.low,
                high=outcome.high,
                p_value=outcome.p_value,
                units=outcome.units,
                n_units=outcome.n_units,
                verdict=_verdict(outcome),
                agreement=agreement,
                agreement_low=interval.low if interval else None,
                agreement_high=interval.high if interval else None,
            )
        )
    return SwitchComparison(
        production=production,
        candidate=candidate,
        scored_against=gold.reference.name,
        confidence=result.confidence,
        resamples=result.resamples,
        figures=figures,
    )


def write_what_breaks(
    gold_run: Path, switch_run: Path, production: str, candidates: list[str]
) -> WhatBreaks:
    """Every candidate's comparison, written into the switch run (its report shows them)."""
    found = WhatBreaks(
        comparisons=[
            switch_comparison(gold_run, switch_run, production, candidate)
            for candidate in candidates
        ]
    )
    found.write(switch_run)
    return found
