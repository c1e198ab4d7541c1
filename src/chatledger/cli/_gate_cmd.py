"""``chatledger gate``: fail a build when the candidate run is significantly worse."""

from __future__ import annotations

import os
import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from chatledger.cli._app import app, console, emit_json, note, styled

if TYPE_CHECKING:
    from chatledger.gating import GateResult, RuleOutcome

EXIT_FAILED = 1
EXIT_UNDECIDED = 3  # no rule failed, but the data cannot decide one (too few conversations)
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


class GateFormat(StrEnum):
    table = "table"
    json = "json"
    junit = "junit"
    github = "github"


_THRESHOLD = {"max_drop": "drop ≤ {:g}", "min": "≥ {:g}", "max": "≤ {:g}", "max_ratio": "× ≤ {:g}"}


def _figure(value: float | None, outcome: RuleOutcome) -> str:
    if value is None:
        return "—"
    if outcome.rule.figure == "cost_per_chunk":
        return f"${value:.4f}"
    if outcome.rule.figure == "latency_per_chunk":
        return f"{value:.2f} s"
    return f"{value:.3f}"


def _change(outcome: RuleOutcome) -> str:
    """The change the verdict read, over its interval on a second line."""
    if outcome.difference is None:
        return "—"
    if outcome.rule.kind == "max_ratio":
        return f"×{outcome.difference:.3f}"
    if outcome.rule.kind == "min":
        shown = (
            ""
            if outcome.low is None or outcome.high is None
            else (f"[{outcome.low:.3f}, {outcome.high:.3f}]")
        )
        return f"{outcome.candidate:.3f}\n{shown}".rstrip()
    if outcome.rule.kind == "max":
        return "—"
    shown = (
        ""
        if outcome.low is None or outcome.high is None
        else (f"[{outcome.low:+.3f}, {outcome.high:+.3f}]")
    )
    return f"{outcome.difference:+.3f}\n{shown}".rstrip()


def print_gate_table(result: GateResult) -> None:
    from rich.table import Table

    units = sorted({f"{o.n_units} {o.units}" for o in result.outcomes if o.units is not None})
    over = f", {', '.join(units)}" if units else ""
    how = (
        "point estimates (--strict)"
        if result.strict
        else f"{result.confidence:.0%} intervals{over}"
    )
    table = Table(title=f"Gate — {result.baseline.model} → {result.candidate.model} ({how})")
    # Fits 80 columns: the rule under its figure, the interval under the change.
    table.add_column("figure / rule", no_wrap=True)
    table.add_column("base", justify="right", no_wrap=True)
    table.add_column("cand", justify="right", no_wrap=True)
    table.add_column("change [interval]", justify="right", no_wrap=True)
    table.add_column("result", no_wrap=True)
    for o in result.outcomes:
        table.add_row(
            f"{o.rule.figure}\n  {_THRESHOLD[o.rule.kind].format(o.rule.value)}",
            _figure(o.baseline, o),
            _figure(o.candidate, o),
            _change(o),
            styled("pass", "green")
            if o.passed
            else styled("open", "yellow")
            if o.undecided
            else styled("FAIL", "bold red"),
        )
    console("stdout").print(table)
    for o in result.failures:
        note(o.reason, label="failed", style="red")  # the reason names figure and rule
    for text in result.notes:
        note(text)
    n = len(result.outcomes)
    for o in result.undecided:
        note(f"{o.name}: {o.reason}", label="undecided", style="yellow")
    verdict = (
        "passed"
        if result.passed
        else f"failed: {len(result.failures)} of {n} rules"
        if result.failures
        else f"undecided: {len(result.undecided)} of {n} rules"
    )
    console("stdout").print(
        styled(f"gate {verdict}", "bold green" if result.passed else "bold red")
    )


@app.command("gate")
def gate_command(
    baseline_dir: Annotated[
        Path | None,
        typer.Argument(help="the baseline run directory (or baseline: in the rules file)"),
    ] = None,
    candidate_dir: Annotated[
        Path | None,
        typer.Argument(help="the candidate run directory (or candidate: in the rules file)"),
    ] = None,
    rules: Annotated[
        str,
        typer.Option(
            "--rules",
            help="a rules file (YAML/JSON), or the rules inline, e.g. "
            "'{overall: {max_drop: 0.02}, validity: {min: 0.99}}'",
        ),
    ] = "gate.yaml",
    baseline_model: Annotated[
        str | None, typer.Option(help="the baseline run's model (when it has several)")
    ] = None,
    candidate_model: Annotated[
        str | None, typer.Option(help="the candidate run's model (when it has several)")
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="decide on the point estimates, not the paired bootstrap intervals"
        ),
    ] = False,
    output_format: Annotated[
        GateFormat,
        typer.Option(
            "--format",
            help="table for people, json for programs, junit (XML) for CI test reports, "
            "github for GitHub Actions annotations",
        ),
    ] = GateFormat.table,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="also write the output to FILE (the JSON record for --format table)"
        ),
    ] = None,
) -> None:
    """Compare a candidate run with a baseline run rule by rule, on the paired bootstrap
    difference: a drop fails only when the whole interval is below the allowance. Exit 0: every
    rule passed; 1: a rule failed; 2: a usage error (a missing run, runs on different chunks).

    Exit 3: no rule failed but one is undecided — too few conversations or items for an
    interval, so the data cannot say (never a silent pass)."""
    from chatledger.core import atomic_write_text
    from chatledger.gating import (
        evaluate_gate,
        github_annotations,
        junit_xml,
        load_gate_rules,
        markdown_summary,
    )

    started = time.perf_counter()
    loaded = load_gate_rules(rules)
    result = evaluate_gate(
        loaded,
        baseline_dir,
        candidate_dir,
        baseline_model=baseline_model,
        candidate_model=candidate_model,
        strict=True if strict else None,
    )
    text: str | None = None
    if output_format is GateFormat.json:
        emit_json(result.model_dump(mode="json"))
    elif output_format is GateFormat.junit:
        text = junit_xml(result, time_s=time.perf_counter() - started)
    elif output_format is GateFormat.github:
        text = github_annotations(result)
        summary = os.environ.get(SUMMARY_ENV)
        if summary:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(markdown_summary(result))
    else:
        print_gate_table(result)
    if text is not None:
        import sys

        sys.stdout.write(text)
    if out is not None:
        from chatledger.core import dumps_json

        written = text if text is not None else dumps_json(result.model_dump(mode="json")) + "\n"
        atomic_write_text(out, written)
    if result.failures:
        raise typer.Exit(EXIT_FAILED)
    if result.undecided:
        stderr_note = "; ".join(f"{o.name}: {o.reason}" for o in result.undecided)
        typer.echo(f"gate undecided ({len(result.undecided)} rule(s)): {stderr_note}", err=True)
        raise typer.Exit(EXIT_UNDECIDED)
