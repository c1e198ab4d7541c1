"""``chatledger run`` and ``chatledger compare``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, note, stdout, styled

if TYPE_CHECKING:
    from rich.table import Table

    from chatledger.runs import LoadedRunConfig, RunResult


def leaderboard_table(result: RunResult) -> Table:
    from rich.table import Table

    table = Table(title=f"Leaderboard — {result.name} (reference: {result.reference_name})")
    table.add_column("#", justify="right")
    table.add_column("model", no_wrap=True, min_width=16)
    table.add_column("overall", justify="right")
    for layer in result.layers_run:
        table.add_column(layer, justify="right")
    table.add_column("valid", justify="right")
    table.add_column("$/chunk", justify="right")
    for rank, model in enumerate(result.leaderboard(), start=1):
        cost = model.usage.cost_per_chunk_usd
        table.add_row(
            str(rank),
            model.name,
            styled(f"{model.overall:.3f}", "bold"),
            *(
                f"{model.layers[layer]:.3f}" + (" (left out)" if layer in model.left_out else "")
                for layer in result.layers_run
            ),
            f"{model.validity_rate:.0%}",
            f"{cost:.4f}" if cost else "—",
        )
    return table


def print_run_result(result: RunResult) -> None:
    stdout.print(leaderboard_table(result))
    weights = ", ".join(f"{k} {v:.3f}" for k, v in result.layer_weights_used.items())
    stdout.print(f"layer weights: {weights}")
    aggregates = {m.aggregate for m in result.models if "extraction" in m.layers}
    if aggregates:
        from chatledger.cli._render import aggregate_note

        stdout.print(
            f"extraction fields: {'; '.join(aggregate_note(a) for a in sorted(aggregates))}"
        )
    if result.renormalisation_note:
        note(result.renormalisation_note)
    for model in result.leaderboard():  # parts without evidence, left out and renormalised
        for text in (model.downstream_renormalisation, model.renormalisation):
            if text:
                note(f"{model.name}: {text}")
    for text in result.notes:
        note(text)
    record = result.record
    for audit in record.judge_audits if record is not None else []:
        if audit.skipped is not None:
            note(f"judge {audit.judge} not audited: {audit.skipped}")
        elif not audit.passed:
            left = record.judges_left_out if record is not None else {}
            layer_out = any("judge" in m.left_out for m in result.models)
            how = (
                "left out of the panel"
                if audit.judge in left
                else "the judge layer leaves overall"
                if layer_out
                else "marked; it still counts"
            )
            note(f"judge {audit.judge} failed its audit ({how}): {'; '.join(audit.failures)}")
    from chatledger.runs._ppi import PPIRecord

    ppi = PPIRecord.read(result.out_dir)
    for m in ppi.models if ppi is not None else []:
        stdout.print(
            f"agreement with humans, prediction-powered ({m.annotated} of "
            f"{m.annotated + m.others} conversations annotated): {m.model} {m.estimate:.3f} "
            f"[{m.low:.3f}, {m.high:.3f}]; humans alone {m.human_estimate:.3f} "
            f"[{m.human_low:.3f}, {m.human_high:.3f}]; the model's figure was worth "
            f"{m.labels_worth:.1f} human-annotated conversations"
        )
        if m.plan_width is not None:
            with_ppi = "no number of" if m.needed_ppi is None else f"about {m.needed_ppi}"
            stdout.print(
                f"  an interval {m.plan_width:g} wide needs {with_ppi} annotated conversations "
                f"with PPI, about {m.needed_humans_only} with humans alone"
            )
    stdout.print(f"run directory: {result.out_dir}")


def run_with_progress(
    config: Path, out: Path, show: bool, executor: str | None = None, batch: bool = False
) -> RunResult:
    """Load the config and execute the run; Ctrl-C says which stage it stopped in. ``batch``
    turns batch mode on whatever the config says."""
    from chatledger.core import prepare_output_dir
    from chatledger.runs import load_run_config

    loaded = load_run_config(config)
    if batch and not loaded.config.batch:
        loaded = loaded.model_copy(
            update={"config": loaded.config.model_copy(update={"batch": True})}
        )
    created = not out.exists()
    prepare_output_dir(out)
    try:
        return _execute(loaded, out, show, executor)
    except BaseException:
        # A run that stopped before writing anything (no key, a refused server) leaves no empty
        # folder behind it, as extract leaves no empty file.
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        raise


def _execute(loaded: LoadedRunConfig, out: Path, show: bool, executor: str | None) -> RunResult:
    from chatledger.cli._progress import progress_bar
    from chatledger.core import Interrupted
    from chatledger.runs import execute_run

    stage = ["loading"]

    def track(description: str, done: int, total: int) -> None:
        stage[0] = f"{description} ({done}/{total})" if total else description

    try:
        if not show:
            return execute_run(loaded, out, on_progress=track, executor=executor)
        with progress_bar("scoring") as update:

            def both(description: str, done: int, total: int) -> None:
                track(description, done, total)
                update(description, done, total)

            return execute_run(loaded, out, on_progress=both, executor=executor)
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted while {stage[0]}; {out} is incomplete (every file in it is whole)",
            hint="run the same command again to finish: extractions and model calls are reused",
        ) from None


DEFAULT_OUT = Path("runs/latest")


@app.command("run")
def run_command(
    config: Annotated[Path, typer.Argument(help="run config (YAML)")],
    out: Annotated[Path, typer.Option("--out", help="run directory to write")] = DEFAULT_OUT,
    report: Annotated[bool, typer.Option(help="write report.html into the run directory")] = True,
    executor: Annotated[
        str | None,
        typer.Option(
            "--executor",
            help="where scoring runs: local, processes[:N] or dask[:ADDRESS] (default: the "
            "config's 'executor', else local); the results are the same bytes",
        ),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="model calls through the OpenAI / Anthropic batch APIs at half price (as "
            "'batch: true' in the config); see docs/batch.md",
        ),
    ] = False,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Score every challenger of a run config on every configured layer; write the run directory.

    A rerun into the same --out reuses every finished stage whose inputs are unchanged."""
    result = run_with_progress(
        config, out, show=output_format is OutputFormat.table, executor=executor, batch=batch
    )
    report_path = None
    if report:  # imported after the run, not in series before it (~0.2 s)
        from chatledger.report import build_report

        report_path = build_report(result.out_dir)
    if output_format is OutputFormat.json:
        emit_json(
            {
                "run": str(result.out_dir),
                "report": str(report_path) if report_path else None,
                "layers_run": result.layers_run,
                "layer_weights_used": result.layer_weights_used,
                "renormalisation": result.renormalisation_note,
                "notes": result.notes,
                "leaderboard": [m.to_dict() for m in result.leaderboard()],
            }
        )
    else:
        print_run_result(result)
        if report_path is not None:
            stdout.print(f"report: {report_path}")


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def _fmt_delta(value: Any) -> Any:
    if value is None:
        return "—"
    colour = "green" if value > 1e-9 else "red" if value < -1e-9 else "dim"
    return styled(f"{value:+.3f}", colour)


@app.command("compare")
def compare_command(
    before: Annotated[Path, typer.Argument(help="earlier run directory")],
    after: Annotated[Path, typer.Argument(help="later run directory")],
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Show what changed between two runs, per model, layer and field."""
    from rich.table import Table

    from chatledger.runs import compare_runs

    diff = compare_runs(before, after)
    if output_format is OutputFormat.json:
        emit_json(diff.model_dump(mode="python"))
        return
    for name, entry in diff.models.items():
        table = Table(title=f"{name}: {before} → {after}", title_justify="left")
        table.add_column("score")
        table.add_column("before", justify="right")
        table.add_column("after", justify="right")
        table.add_column("Δ", justify="right")
        o = entry.overall
        table.add_row("overall", _fmt(o.before), _fmt(o.after), _fmt_delta(o.delta))
        for group in ("layers", "metrics", "consumers", "fields"):
            scores = entry.group(group)
            if scores:
                table.add_section()
            for key, d in scores.items():
                label = key if group == "layers" else f"  {key}"
                table.add_row(label, _fmt(d.before), _fmt(d.after), _fmt_delta(d.delta))
        stdout.print(table)
    chunks = diff.chunks
    if chunks is not None and not chunks.same:
        note(
            f"the runs did not score the same chunks ({chunks.before} before, "
            f"{chunks.after} after; {chunks.only_before} only before, "
            f"{chunks.only_after} only after): each Δ mixes the change with the change of "
            "data (chatledger gate pairs two runs on the same chunks)"
        )
    for name in diff.only_before:
        stdout.print(f"only in {before}: {name}")
    for name in diff.only_after:
        stdout.print(f"only in {after}: {name}")
