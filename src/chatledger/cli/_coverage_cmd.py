"""``chatledger coverage RUN_DIR`` and ``chatledger plan RUN_DIR --detect 0.02``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, note, stdout


@app.command("coverage")
def coverage_command(
    run_dir: Annotated[Path, typer.Argument(help="a finished run: the population")],
    subsets: Annotated[int, typer.Option(min=10, help="subsets drawn")] = 200,
    size: Annotated[
        int | None,
        typer.Option(
            min=2,
            help="conversations (chunks with --unit chunk) in each subset; default 8, or one "
            "fewer than the run has",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the draws")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="bootstrap resamples per subset")] = 500,
    unit: Annotated[
        str,
        typer.Option(
            help="conversation: subsets of whole conversations, intervals resampling them; "
            "chunk: subsets of random chunks, intervals resampling chunks"
        ),
    ] = "conversation",
    draw: Annotated[
        str | None,
        typer.Option(
            help="what a subset is made of, if not the unit: conversation or chunk (e.g. "
            "random chunks with conversation-level intervals: --draw chunk)"
        ),
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option(help="only this challenger (repeatable)")
    ] = None,
    ppi_keep: Annotated[
        int | None,
        typer.Option(
            "--ppi-keep",
            help="instead: hide the human gold of all but this many conversations per draw and "
            "check the prediction-powered interval (and the human-only one on those kept) "
            "against the full-gold figure; --subsets draws, one --model",
        ),
    ] = None,
    ppi_predictor: Annotated[
        str | None,
        typer.Option(
            "--ppi-predictor",
            help="the human-free layer PPI leans on (default: judge when the run's reference "
            "is the human gold, extraction when it is a model with human_gold: beside it)",
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Do the intervals hold? Their empirical coverage on subsets of whole conversations of a
    finished run (its figures taken as the truth).

    Each subset of SIZE conversations is scored as a run of those conversations would be, with
    its intervals; the share of intervals containing the whole run's figure is the coverage,
    shown with its Wilson interval beside the nominal level. Figures without an interval on a
    subset (too few conversations, few items, no value) are counted apart. With --unit chunk
    a subset is SIZE chunks drawn at random from all the run's chunks and its intervals
    resample chunks (what `stats: {unit: chunk}` gives such a sample); --draw chunk alone
    keeps conversation-level intervals on random chunks."""
    from rich.table import Table

    from chatledger.core import InputError
    from chatledger.runs._coverage import run_coverage

    if unit not in ("conversation", "chunk"):
        raise InputError(f"unit must be conversation or chunk, not {unit!r}", field="unit")
    if ppi_keep is not None:
        if not model or len(model) != 1:
            raise InputError("--ppi-keep checks one model: name it with --model", field="model")
        _print_ppi_coverage(
            run_dir, model[0], ppi_keep, ppi_predictor, subsets, seed, output_format
        )
        return
    result = run_coverage(
        run_dir,
        subsets=subsets,
        size=size,
        seed=seed,
        resamples=resamples,
        unit=unit,
        models=model,
        draw=draw,
    )
    if output_format is OutputFormat.json:
        emit_json(result.to_dict())
        return
    table = Table(
        title=f"Coverage of {result.nominal:.0%} intervals: {result.subsets} subsets of "
        f"{result.size} of {_population(result)} (intervals resample: {result.unit}s)",
        title_justify="left",
    )
    for col in (
        "model",
        "figure",
        "truth",
        "coverage",
        "[Wilson 95 %]",
        "with interval",
        "without",
    ):
        table.add_column(col)
    for row in result.to_dict()["figures"]:
        coverage = row["coverage"]
        shown = "—" if coverage is None else f"{coverage:.3f}"
        span = (
            "—"
            if row["coverage_low"] is None
            else f"[{row['coverage_low']:.3f}, {row['coverage_high']:.3f}]"
        )
        without = ", ".join(f"{k} {v}" for k, v in row["without_interval"].items()) or "—"
        low = coverage is not None and row["coverage_high"] < result.nominal
        table.add_row(
            row["model"],
            row["figure"],
            f"{row['truth']:.3f}",
            f"[red]{shown}[/red]" if low else shown,
            span,
            str(row["with_interval"]),
            without,
        )
    stdout.print(table)
    stdout.print(
        f"nominal {result.nominal:.0%}; a coverage whose Wilson interval lies below it (red) "
        "means those intervals are too narrow on this data"
    )
    if result.repeats_note is not None:
        note(result.repeats_note)


def _print_ppi_coverage(
    run_dir: Path,
    model: str,
    keep: int,
    predictor: str | None,
    hidings: int,
    seed: int,
    output_format: OutputFormat,
) -> None:
    from chatledger.runs._coverage import run_ppi_coverage

    result = run_ppi_coverage(
        run_dir, model=model, keep=keep, predictor=predictor, hidings=hidings, seed=seed
    )
    data = result.to_dict()
    if output_format is OutputFormat.json:
        emit_json(data)
        return
    stdout.print(
        f"{model}: human gold kept on {keep} of {result.n_conversations} conversations, "
        f"{hidings} hidings; full-gold figure {result.truth:.4f}; {result.predictor} correlates "
        f"{result.correlation:.2f} with the human figure"
    )
    for key, label in (("ppi", "PPI (Student t)"), ("human", "humans only (Student t)")):
        row = data[key]
        stdout.print(
            f"  {label}: covers {row['coverage']:.3f} [Wilson {row['coverage_low']:.3f}, "
            f"{row['coverage_high']:.3f}], median width {data['median_width'][key]:.4f}"
        )
    stdout.print(
        f"  PPI width / humans-only width: median {data['median_width_ratio']:.3f}, at most "
        f"{data['max_width_ratio']:.3f}; narrower in {data['narrower_share']:.1%} of hidings"
    )


def _population(result: Any) -> str:
    if result.draw == "chunk":
        return f"{result.n_chunks} chunks, drawn at random ({result.n_conversations} conversations)"
    return f"{result.n_conversations} conversations"


@app.command("plan")
def plan_command(
    run_dir: Annotated[Path, typer.Argument(help="a finished run: the pilot")],
    detect: Annotated[float, typer.Option(help="the drop to detect, e.g. 0.02")] = 0.02,
    power: Annotated[float, typer.Option(help="the power wanted")] = 0.8,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """How many conversations to tell a drop of a given size, from a pilot run's
    per-conversation variance (80 % power).

    For each figure of each challenger: the conversations a paired comparison needs to show a
    drop of DETECT with the given power at the run's level, from the spread of the figure's
    per-conversation contributions (its leave-one-conversation-out pseudo-values)."""
    from rich.table import Table

    from chatledger.runs._plan import plan_run

    result = plan_run(run_dir, detect=detect, power=power)
    if output_format is OutputFormat.json:
        emit_json(result)
        return
    table = Table(
        title=f"Conversations needed to detect a drop of {detect:g} ({power:.0%} power, "
        f"level {1 - result['confidence']:.2g}); this run has k = {result['k']}",
        title_justify="left",
    )
    for col in ("model", "figure", "value", "sd per conversation", "needed"):
        table.add_column(col)
    for row in result["figures"]:
        needed = row["needed"]
        table.add_row(
            row["model"],
            row["figure"],
            f"{row['value']:.3f}",
            f"{row['sd']:.3f}",
            "—" if needed is None else f"≈ {needed:,}",
        )
    stdout.print(table)
