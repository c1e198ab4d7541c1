"""``chatledger demo``: the whole benchmark on the bundled corpus, offline."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stdout, styled

if TYPE_CHECKING:
    from rich.table import Table

    from chatledger.demo import DemoResult

DEFAULT_DEMO_OUT = Path("runs/demo")


def human_table(result: DemoResult) -> Table:
    from rich.table import Table

    table = Table(
        title="Offline extractor vs human gold (covered fields only)", title_justify="left"
    )
    table.add_column("corpus")
    table.add_column("chunks", justify="right")
    table.add_column("composite", justify="right")
    table.add_column("fields")
    for h in result.human:
        fields = "  ".join(f"{k} {v:.2f}" for k, v in h.fields.items())
        table.add_row(h.corpus, str(h.chunks), f"{h.composite:.3f}", fields)
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
    return lines


@app.command("demo")
def demo_command(
    out: Annotated[Path, typer.Option("--out", help="folder for the demo's files")] = (
        DEFAULT_DEMO_OUT
    ),
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Run the benchmark on the bundled corpus, offline: gold vs the offline extractor and
    three simulated models of rising corruption; then the offline extractor vs human gold."""
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
    stdout.print(structbench_line(result.structbench))
    for line in local_structbench_lines(result.structbench_local):
        stdout.print(line)
    stdout.print(f"demo finished in {time.perf_counter() - started:.1f} s")
