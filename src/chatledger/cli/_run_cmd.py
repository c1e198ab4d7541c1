"""``chatledger run`` and ``chatledger compare``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stdout
from chatledger.cli._progress import progress_bar
from chatledger.report import build_report
from chatledger.runs import RunResult, compare_runs, execute_run, load_run_config


def leaderboard_table(result: RunResult) -> Table:
    table = Table(title=f"Leaderboard — {result.name} (reference: {result.reference_name})")
    table.add_column("#", justify="right")
    table.add_column("model", no_wrap=True, min_width=16)
    table.add_column("overall", justify="right")
    for layer in result.layers_run:
        table.add_column(layer, justify="right")
    table.add_column("valid", justify="right")
    table.add_column("$/chunk", justify="right")
    for rank, model in enumerate(result.leaderboard(), start=1):
        cost = model.usage.get("cost_per_chunk_usd", 0.0)
        table.add_row(
            str(rank),
            model.name,
            f"[bold]{model.overall:.3f}[/bold]",
            *(f"{model.layers[layer]:.3f}" for layer in result.layers_run),
            f"{model.validity_rate:.0%}",
            f"{cost:.4f}" if cost else "—",
        )
    return table


def print_run_result(result: RunResult) -> None:
    stdout.print(leaderboard_table(result))
    weights = ", ".join(f"{k} {v:.3f}" for k, v in result.layer_weights_used.items())
    stdout.print(f"layer weights: {weights}")
    if result.renormalisation_note:
        stdout.print(f"[yellow]note:[/yellow] {result.renormalisation_note}")
    stdout.print(f"run directory: {result.out_dir}")


def run_with_progress(config: Path, out: Path, show: bool) -> RunResult:
    loaded = load_run_config(config)
    if not show:
        return execute_run(loaded, out)
    with progress_bar("scoring") as update:
        return execute_run(loaded, out, on_progress=update)


DEFAULT_OUT = Path("runs/latest")


@app.command("run")
def run_command(
    config: Annotated[Path, typer.Argument(help="run config (YAML)")],
    out: Annotated[Path, typer.Option("--out", help="run directory to write")] = DEFAULT_OUT,
    report: Annotated[bool, typer.Option(help="write report.html into the run directory")] = True,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Score every challenger of a run config on every configured layer; write the run directory."""
    result = run_with_progress(config, out, show=output_format is OutputFormat.table)
    report_path = build_report(result.out_dir) if report else None
    if output_format is OutputFormat.json:
        emit_json(
            {
                "run": str(result.out_dir),
                "report": str(report_path) if report_path else None,
                "layers_run": result.layers_run,
                "layer_weights_used": result.layer_weights_used,
                "renormalisation": result.renormalisation_note,
                "leaderboard": [m.to_dict() for m in result.leaderboard()],
            }
        )
    else:
        print_run_result(result)
        if report_path is not None:
            stdout.print(f"report: {report_path}")


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def _fmt_delta(value: Any) -> str:
    if value is None:
        return "—"
    colour = "green" if value > 1e-9 else "red" if value < -1e-9 else "dim"
    return f"[{colour}]{value:+.3f}[/{colour}]"


@app.command("compare")
def compare_command(
    before: Annotated[Path, typer.Argument(help="earlier run directory")],
    after: Annotated[Path, typer.Argument(help="later run directory")],
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Show what changed between two runs, per model, layer and field."""
    diff = compare_runs(before, after)
    if output_format is OutputFormat.json:
        emit_json(diff)
        return
    for name, entry in diff["models"].items():
        table = Table(title=f"{name}: {before} → {after}", title_justify="left")
        table.add_column("score")
        table.add_column("before", justify="right")
        table.add_column("after", justify="right")
        table.add_column("Δ", justify="right")
        o = entry["overall"]
        table.add_row("overall", _fmt(o["before"]), _fmt(o["after"]), _fmt_delta(o["delta"]))
        for group in ("layers", "metrics", "consumers", "fields"):
            if entry[group]:
                table.add_section()
            for key, d in entry[group].items():
                label = key if group == "layers" else f"  {key}"
                table.add_row(label, _fmt(d["before"]), _fmt(d["after"]), _fmt_delta(d["delta"]))
        stdout.print(table)
    for name in diff["only_before"]:
        stdout.print(f"only in {before}: {name}")
    for name in diff["only_after"]:
        stdout.print(f"only in {after}: {name}")
