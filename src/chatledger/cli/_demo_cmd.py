"""``chatledger demo``: the whole benchmark on the bundled corpus, offline."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, note, stdout, styled

if TYPE_CHECKING:
    from rich.table import Table

    from chatledger.demo import DemoResult
    from chatledger.record import WhatBreaks

DEFAULT_DEMO_OUT = Path("runs/demo")


def human_table(result: DemoResult) -> Table:
    """Per corpus and covered field: the headline, the items matched / in the human gold /
    predicted, pooled F1 and macro, and which aggregate the composite used."""
    from rich import box
    from rich.table import Table

    from chatledger.cli._render import counted_note

    table = Table(
        title="Offline extractor vs human gold (covered fields only)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        caption_justify="left",
    )
    table.add_column("corpus", no_wrap=True)
    table.add_column("field", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("m/ref/pred", justify="right", no_wrap=True)
    table.add_column("F1", justify="right", no_wrap=True)
    table.add_column("macro", justify="right", no_wrap=True)
    table.add_column("empty", justify="right", no_wrap=True)
    aggregates = set()
    notes: list[str] = []
    for h in result.human:
        aggregates.add(h.aggregate)
        for name, value in h.fields.items():
            counts = h.field_counts[name]  # every field the report scored
            micro = counts.get("micro") or {}
            pooled = "f1" in micro and counts.get("n_matched") is not None
            matched = f"{counts['n_matched']:g}" if pooled else "—"
            listed = (counts.get("n_reference_items"), counts.get("n_predicted_items"))
            if counts.get("counted_as") and listed != (
                counts.get("n_reference"),
                counts.get("n_predicted"),
            ):
                notes.append(
                    counted_note(
                        f"{h.corpus} {name}",
                        counts["counted_as"],
                        counts.get("n_reference_items"),
                        counts.get("n_predicted_items"),
                    )
                )
            table.add_row(
                h.corpus,
                name,
                f"{value:.3f}",
                f"{matched}/{counts.get('n_reference', 0)}/{counts.get('n_predicted', 0)}",
                f"{micro['f1']:.3f}" if pooled else "—",
                f"{counts.get('macro', value):.3f}",
                f"{counts.get('both_empty', 0)}/{counts.get('chunks', 0)}",
            )
        table.add_row(h.corpus, styled("composite", "bold"), styled(f"{h.composite:.3f}", "bold"))
        table.add_section()
    used = ", ".join(sorted(aggregates)) or "micro"
    table.caption = (
        f"score: {used} (items pooled over all chunks — against human gold most chunks have "
        "nothing on either side, which a per-chunk mean would count as agreement); "
        "m/ref/pred: items matched / in the gold / predicted; empty: both-empty chunks"
        + "".join(f"\n{note}" for note in notes)
    )
    return table


def structbench_line(summary: dict[str, Any]) -> str:
    rows = summary.get("leaderboard") or []
    if not rows:
        return "structbench: no rows"
    top = rows[0]
    metrics = "  ".join(
        f"{k} {top[k]:.3f}" for k in ("DOC", "MK", "MV", "WV") if isinstance(top.get(k), float)
    )
    return (
        f"structbench (email → JSON, {summary.get('n', '?')} documents, offline rule baseline): "
        f"{metrics}; report: {summary.get('report')}"
    )


def local_structbench_lines(summary: dict[str, Any] | None) -> list[str]:
    """The recorded local models on structbench: does strategy or model move each metric more?"""
    if not summary:
        return []
    lines = [
        f"structbench, recorded local models × strategies on {summary['n']} emails: "
        f"report: {summary['report']}"
    ]
    effects = summary.get("strategy_vs_model") or {}
    for e in effects.get("metrics") or []:
        d = e["difference"]
        interval = f" [{d['low']:.3f}, {d['high']:.3f}]" if d["low"] is not None else ""
        verdict = {"strategy": "strategy matters more", "model": "the model matters more"}.get(
            e["verdict"], "unclear"
        )
        lines.append(
            f"  {e['metric']}: strategy effect {e['strategy']['estimate']:.3f}, model effect "
            f"{e['model']['estimate']:.3f}, difference {d['estimate']:+.3f}{interval}: {verdict}"
        )
    grid = summary.get("grid_pairs")
    if grid:
        lines.extend(grid_lines(grid))
    return lines


def grid_lines(grid: dict[str, Any]) -> list[str]:
    """Which strategy pairs and model-size differences are decided at the run's level, and
    how many documents the undecided ones would need."""
    level = f"{grid['confidence']:.0%}"
    lines = [f"  {grid['metric']} differences decided at {level} (paired over emails):"]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for pair in grid["pairs"]:
        groups.setdefault((pair["kind"], pair["within"]), []).append(pair)
    models = sorted({w for k, w in groups if k == "strategy"})
    for model in models:
        pairs = groups[("strategy", model)]
        lines.append(f"    strategies within {model}: {_decided(pairs, grid)}")
    sizes = [p for (kind, _), ps in groups.items() if kind == "model" for p in ps]
    if sizes:
        lines.append(f"    model size under each strategy: {_decided(sizes, grid)}")
    return lines


def _decided(pairs: list[dict[str, Any]], grid: dict[str, Any]) -> str:
    decided = sum(p["decided"] for p in pairs)
    needed = sorted(
        p["documents_needed"]
        for p in pairs
        if not p["decided"] and p["documents_needed"] is not None
    )
    text = f"{decided} of {len(pairs)} decided"
    if needed:
        span = f"{needed[0]}" if needed[0] == needed[-1] else f"{needed[0]}–{needed[-1]}"
        text += (
            f"; the undecided would need ≈ {span} emails for {grid['power']:.0%} power "
            f"(have {grid['documents']})"
        )
    return text


def selection_lines(runs: list[dict[str, Any]]) -> list[str]:
    """One paragraph per schema selection the demo ran."""
    lines = []
    for run in runs:
        label = "simulated extractor" if run["simulated"] else run["extractor"]
        failed = ", ".join(f"{name} ({why})" for name, why in run["failed"].items()) or "none"
        raised = "; ".join(
            f"{name} {before:.2f} → {after:.2f} ({best})"
            for name, (before, after, best) in run["variants"].items()
        )
        lines.append(
            f"schema selection ({label}): {len(run['passed'])} of {run['screened']} candidates "
            f"pass; failed: {failed}"
            + (f"; Phase 1.5: {raised}" if raised else "")
            + (f"; tournament winner {run['winner']}" if run["winner"] else "")
            + (f", {run['pruned_share']:.0%} of the others pruned" if run["winner"] else "")
            + f"; report: {run['report']}"
        )
    return lines


def what_breaks_lines(found: WhatBreaks) -> list[str]:
    """Per cheaper model, the figures that drop against the gold (largest first)."""
    lines = []
    for c in found.comparisons:
        drops = sorted(c.drops, key=lambda f: f.difference)
        head = (
            f"What breaks when you switch from {c.production} to {c.candidate} "
            f"(against {c.scored_against}, paired, {c.confidence:.0%}): "
        )
        if not drops:
            lines.append(head + "no figure drops beyond its interval")
            continue
        lines.append(head + f"{len(drops)} of {len(c.figures)} figures drop")
        for f in drops:
            interval = f" [{f.low:+.3f}, {f.high:+.3f}]" if f.low is not None else ""
            agreement = (
                f"; agrees with production {f.agreement:.3f}" if f.agreement is not None else ""
            )
            lines.append(
                f"  {f.figure}: {f.production:.3f} → {f.candidate:.3f}, "
                f"{f.difference:+.3f}{interval}{agreement}"
            )
    return lines


@app.command("demo")
def demo_command(
    out: Annotated[Path, typer.Option("--out", help="folder for the demo's files")] = (
        DEFAULT_DEMO_OUT
    ),
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Run the benchmark on the bundled corpus, offline: gold vs the offline extractor,
    three simulated models and three recorded local models (Qwen2.5-Coder 1.5B and 0.5B,
    SmolLM2-135M); the switch run (the recorded 1.5B as reference); then the offline
    extractor vs human gold."""
    from chatledger.cli._progress import progress_bar
    from chatledger.cli._run_cmd import print_run_result
    from chatledger.demo import run_demo

    started = time.perf_counter()
    if output_format is OutputFormat.json:
        result = run_demo(out)
        emit_json(result.to_dict() | {"seconds": time.perf_counter() - started})
        return
    with progress_bar("preparing corpus and challengers") as update:
        result = run_demo(out, on_progress=update)
    print_run_result(result.run)
    stdout.print(
        styled(
            "simulated:* rows are the gold passed through corruption operators "
            "(not real models); their order must follow severity. recorded:* rows are real "
            "local models, run once on a CPU and replayed (docs/local-models.md).",
            "dim",
        )
    )
    stdout.print(human_table(result))
    if result.report is not None:
        stdout.print(f"report: {result.report}")
    if result.switch is not None:
        stdout.print(
            f"\nThe switch your users make — {result.switch.reference_name} in production as the "
            "reference, the cheaper recorded models as challengers:"
        )
        print_run_result(result.switch)
        if result.what_breaks is not None:
            for line in what_breaks_lines(result.what_breaks):
                stdout.print(line)
        if result.switch_report is not None:
            stdout.print(f"report: {result.switch_report}")
    if result.spend_less is not None:
        from chatledger.demo._sequential import sequential_lines

        stdout.print("")
        for line in sequential_lines(result.spend_less):
            stdout.print(line)
    stdout.print(structbench_line(result.structbench))
    for line in local_structbench_lines(result.structbench_local):
        stdout.print(line)
    for line in selection_lines(result.selection):
        stdout.print(line)
    if result.selection_skipped:
        note(result.selection_skipped)
    stdout.print(f"demo finished in {time.perf_counter() - started:.1f} s")
