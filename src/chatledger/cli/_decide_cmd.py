"""``chatledger decide``: run a comparison only until every gate rule is decided."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, note, stdout, styled

if TYPE_CHECKING:
    from chatledger.gating._sequential import SequentialResult

EXIT_FAILED = 1
EXIT_UNDECIDED = 3
_STYLE = {"pass": "green", "fail": "bold red", "undecided": "yellow"}


def print_decision(result: SequentialResult) -> None:
    from rich.table import Table

    table = Table(
        title=(
            f"Decide — {result.baseline_model} → {result.candidate_model} "
            f"(anytime-valid, α {result.alpha:g})"
        )
    )
    table.add_column("figure / rule", no_wrap=True)
    table.add_column("estimate [sequence]", justify="right", no_wrap=True)
    table.add_column("decision", no_wrap=True)
    table.add_column("after", justify="right")
    table.add_column("calls", justify="right")
    for r in result.rules:
        if r.estimate is None:
            shown = "—"
        elif r.decided_on == "point estimate":
            shown = f"{r.estimate:.4g}\n(point estimate)"
        else:
            shown = f"{r.estimate:+.3f}\n[{r.lower:+.3f}, {r.upper:+.3f}]"
        share = f" (α {r.alpha:.2g})" if r.alpha is not None and r.expanded_from is not None else ""
        table.add_row(
            f"{r.rule.figure}\n  {r.rule.kind} {r.rule.value:g}{share}",
            shown,
            styled(r.decision, _STYLE[r.decision]),
            "—" if r.decided_after is None else str(r.decided_after),
            "—" if r.spent is None else str(r.spent.calls),
        )
    stdout.print(table)
    stdout.print(
        f"stopped ({result.stopped}) after {result.conversations_used} of "
        f"{result.conversations_available} conversations: {result.used.chunks} of "
        f"{result.chunks_available} chunks, {result.used.calls} model calls, "
        f"{result.used.input_tokens + result.used.output_tokens:,.0f} tokens, "
        f"${result.used.cost_usd:.4f}"
    )
    full = result.full_run
    stdout.print(
        f"the full run would have cost about {full.calls} model calls, "
        f"{full.input_tokens + full.output_tokens:,.0f} tokens, ${full.cost_usd:.4f}"
    )
    for r in result.rules:
        if r.decision == "undecided" and r.expected_if_real is not None:
            note(
                f"{r.rule.name}: were the observed {r.estimate:+.3f} real, a run over all "
                f"{result.conversations_available} conversations would decide it after about "
                f"{r.expected_if_real} (median of simulated runs)"
            )
    for text in result.notes:
        note(text)


@app.command("decide")
def decide_command(
    config: Annotated[Path, typer.Argument(help="run config (YAML) holding both models")],
    rules: Annotated[
        str, typer.Argument(help="gate rules (YAML/JSON) naming baseline_model and candidate_model")
    ],
    out: Annotated[Path, typer.Option("--out", help="folder to write")] = Path("runs/decide"),
    batch: Annotated[int, typer.Option("--batch", help="conversations per batch")] = 5,
    seed: Annotated[int, typer.Option(help="seed of the conversations' order")] = 0,
    alpha: Annotated[
        float | None,
        typer.Option(help="error of each decision (default 1 − the rules' confidence, or 0.05)"),
    ] = None,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", help="stop once this much is spent")
    ] = None,
    max_conversations: Annotated[
        int | None, typer.Option("--max-conversations", help="stop after this many")
    ] = None,
    baseline_model: Annotated[str | None, typer.Option(help="the baseline model")] = None,
    candidate_model: Annotated[str | None, typer.Option(help="the candidate model")] = None,
    plan: Annotated[
        float | None,
        typer.Option(
            "--plan",
            help="run nothing: from OUT/decision.json as a pilot, the conversations each rule "
            "would need were its true mean this (a difference for max_drop rules)",
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Run the config's conversations in a seeded random order, a batch at a time, until every
    gate rule is decided on an anytime-valid confidence sequence (or the budget or the
    conversations run out). Exit 0: every rule passed; 1: a rule failed; 3: undecided."""
    from chatledger.gating import load_gate_rules
    from chatledger.gating._sequential import run_until_decided

    if plan is not None:
        _print_plan(out, plan, batch, output_format)
        return

    def progress(ran: int, available: int, decisions: list[str]) -> None:
        done = sum(d != "undecided" for d in decisions)
        note(f"{ran}/{available} conversations: {done} of {len(decisions)} rules decided", err=True)

    result = run_until_decided(
        config,
        load_gate_rules(rules),
        out,
        baseline_model=baseline_model,
        candidate_model=candidate_model,
        batch_size=batch,
        seed=seed,
        alpha=alpha,
        budget_usd=budget_usd,
        max_conversations=max_conversations,
        on_batch=progress,
    )
    if output_format is OutputFormat.json:
        emit_json(result.model_dump(mode="json"))
    else:
        print_decision(result)
        stdout.print(f"decision: {out / 'decision.json'}; sequences: {out / 'decision.html'}")
    if result.failed:
        raise typer.Exit(EXIT_FAILED)
    if not result.passed:
        raise typer.Exit(EXIT_UNDECIDED)


def _print_plan(out: Path, effect: float, batch: int, output_format: OutputFormat) -> None:
    """Expected conversations per rule, from a finished (or stopped) decide as the pilot."""
    from chatledger.gating._sequential import SequentialResult
    from chatledger.stats import expected_conversations

    pilot = SequentialResult.read(out)
    rows: list[dict[str, Any]] = []
    for r in pilot.rules:
        if r.decided_on == "point estimate":
            continue  # a cost is read, not sampled: nothing to plan
        if len(r.values) < 2:
            rows.append({"rule": r.rule.name, "median": None, "p90": None, "decided_share": None})
            continue
        found = expected_conversations(
            r.values,
            effect=effect,
            threshold=r.threshold,
            population=pilot.conversations_available,
            low=-1.0 if r.measured == "difference" else 0.0,
            batch=batch,
            alpha=r.alpha if r.alpha is not None else pilot.alpha,
        )
        rows.append(
            {
                "rule": r.rule.name,
                "median": found.median,
                "p90": found.p90,
                "decided_share": found.decided_share,
            }
        )
    if output_format is OutputFormat.json:
        emit_json({"effect": effect, "conversations": pilot.conversations_available, "rules": rows})
        return
    for row in rows:
        if row["median"] is None:
            stdout.print(
                f"{row['rule']}: at {effect:+g} a run over {pilot.conversations_available} "
                "conversations would not decide it in most runs"
            )
        else:
            stdout.print(
                f"{row['rule']}: at {effect:+g} about {row['median']} of "
                f"{pilot.conversations_available} conversations (90 % of runs within "
                f"{row['p90'] if row['p90'] is not None else 'all'}; decided in "
                f"{row['decided_share']:.0%} of simulated runs)"
            )
