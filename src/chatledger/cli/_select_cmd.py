"""``chatledger select …``: schema selection, the pipeline that chose v3 (DESIGN.md §9).

Each phase command runs the phases before it too: their units are found in the selection
directory, so a finished phase costs nothing the second time.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, note, stdout, styled

if TYPE_CHECKING:
    from chatledger.select import Phase, SelectionRecord

select_app = typer.Typer(
    help="Schema selection: screen candidate fields, search prompt variants, run a tournament "
    "of schemas, validate the winner, derive weights.",
    no_args_is_help=True,
)
app.add_typer(select_app, name="select")

ConfigArgument = Annotated[Path, typer.Argument(help="selection config (.yaml or .json)")]
OutOption = Annotated[
    Path, typer.Option("--out", help="the selection directory (created; resumed when present)")
]


def _run(config: Path, out: Path, until: Phase) -> SelectionRecord:
    from chatledger.cli._progress import progress_bar
    from chatledger.core import Interrupted
    from chatledger.select import load_select_config, run_selection

    loaded = load_select_config(config)
    try:
        with progress_bar("schema selection") as update:
            return run_selection(loaded, out, until=until, on_progress=update)
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted: the finished units are kept in {out / 'units.jsonl'}",
            hint="run the same command again to resume",
        ) from None


def _show(record: SelectionRecord, out: Path, output_format: OutputFormat) -> None:
    from chatledger.report import build_selection_report

    page = build_selection_report(out, record)
    if output_format is OutputFormat.json:
        emit_json({**record.model_dump(mode="json"), "directory": str(out), "report": str(page)})
        return
    if record.simulated:
        note(f"extractor {record.extractor}: simulated, not a real model")
    for line in record.notes:
        note(line)
    _screening_table(record)
    _variants_table(record)
    _tournament_table(record)
    _validation_lines(record)
    _weights_table(record)
    stdout.print(f"wrote {out} (report: {page})")


def _screening_table(record: SelectionRecord) -> None:
    from rich.table import Table

    if not record.screening:
        return
    from rich import box

    # Compact enough for 80 columns: the page and --format json have every column.
    table = Table(title=f"Phase 1: screening ({len(record.screen_chunks)} chunks)", box=box.SIMPLE)
    table.add_column("field", no_wrap=True)
    for name in ("cons", "gain", "disc", "red", "comp"):
        table.add_column(name, justify="right")
    table.add_column("result", no_wrap=True)
    for row in sorted(record.screening, key=lambda r: -r.composite):
        # The reason's figures are the columns beside it: the verdict says which rule failed.
        short = "redundant" if row.reason.startswith("redundant") else "below mark"
        verdict = styled("pass", "green") if row.passed else styled(short, "red")
        table.add_row(
            row.name,
            f"{row.consistency:.2f}",
            f"{row.information_gain:.2f}",
            f"{row.discrimination:.2f}",
            f"{row.redundancy:.2f}",
            f"{row.composite:.2f}",
            verdict,
        )
    stdout.print(table)


def _variants_table(record: SelectionRecord) -> None:
    from rich.table import Table

    if "variants" not in record.phases:
        return
    if not record.variants:
        stdout.print("Phase 1.5: no passed field had consistency below the floor")
        return
    table = Table(title="Phase 1.5: prompt variants (consistency)")
    table.add_column("field")
    table.add_column("before", justify="right")
    names = list(record.variants[0].consistency)
    for name in names:
        table.add_column(name, justify="right")
    table.add_column("kept")
    for row in record.variants:
        table.add_row(
            row.field,
            f"{row.before:.2f}",
            *(f"{row.consistency[n]:.2f}" for n in names),
            row.best,
        )
    stdout.print(table)


def _tournament_table(record: SelectionRecord) -> None:
    from rich.table import Table

    tour = record.tournament
    if tour is None:
        return
    table = Table(title="Phase 2: tournament")
    for name in ("rank", "schema", "style", "fields", "chunks", "mean", "pruned"):
        table.add_column(
            name, justify="right" if name in ("rank", "fields", "chunks", "mean") else "left"
        )
    for row in tour.rows:
        table.add_row(
            str(row.rank),
            row.schema_name,
            row.style,
            str(len(row.fields)),
            str(len(row.scores)),
            f"{row.mean:.3f}",
            "yes" if row.pruned else "",
        )
    stdout.print(table)
    stdout.print(
        f"winner {tour.winner} (runner-up {tour.runner_up or '—'}); {tour.calls} extractions, "
        f"{tour.pruned_share:.0%} of the others pruned early"
        + ("; stopped by max_calls" if tour.budget_stopped else "")
    )


def _validation_lines(record: SelectionRecord) -> None:
    found = record.validation
    if found is None:
        return
    level = f"{found.confidence:.0%}"
    stdout.print(
        f"Phase 3 on {found.chunks} chunks: {found.winner} {found.winner_mean:.3f} "
        f"[{found.winner_low:.3f}, {found.winner_high:.3f}]"
    )
    if found.difference is not None:
        stdout.print(
            f"  runner-up {found.runner_up} {found.runner_up_mean:.3f}; paired difference "
            f"{found.difference:+.3f} [{found.difference_low:+.3f}, {found.difference_high:+.3f}] "
            f"({level}), p = {found.p_value:.3f}: "
            + ("the winner is better" if found.winner_better else "not distinguishable")
        )


def _weights_table(record: SelectionRecord) -> None:
    from rich.table import Table

    weights = record.weights
    if weights is None:
        return
    table = Table(title=f"Weights (v1 fields {weights.v1_share:.0%}); weights.json: v3 fields")
    table.add_column("field")
    table.add_column("weight", justify="right")
    table.add_column("weights.json", justify="right")
    for name, value in weights.weights.items():
        scorer = weights.scorer_weights.get(name)
        table.add_row(name, f"{value:.3f}", f"{scorer:.3f}" if scorer is not None else "—")
    stdout.print(table)
    if weights.left_out:
        note(f"not in a v3 weights file (no v3 scorer): {', '.join(weights.left_out)}")


def _phase_command(phase: Phase, name: str, summary: str) -> None:
    def command(
        config: ConfigArgument,
        out: OutOption = Path("select"),
        output_format: FormatOption = OutputFormat.table,
    ) -> None:
        record = _run(config, out, phase)
        _show(record, out, output_format)

    command.__doc__ = summary
    select_app.command(name)(command)


_phase_command(
    "variants",
    "screen",
    "Phase 1 (and 1.5): k repeated extractions per chunk; each candidate's consistency, "
    "information gain, discrimination and redundancy; pass or fail; prompt variants for the "
    "inconsistent survivors.",
)
_phase_command(
    "tournament",
    "tournament",
    "Phase 2: candidate schemas × prompt styles over chunks, scored against the reference, "
    "weak ones pruned by successive halving (runs Phase 1 first when needed).",
)
_phase_command(
    "validate",
    "validate",
    "Phase 3: the winner and the runner-up on the full set, bootstrap intervals and their "
    "paired difference (runs the earlier phases when needed).",
)
_phase_command(
    "weights",
    "run",
    "Every phase, then the derived weights (weights.json) and the report page.",
)


@select_app.command("report")
def report_command(
    directory: Annotated[Path, typer.Argument(help="a selection directory")],
) -> None:
    """Rebuild the selection's self-contained report.html and print its path."""
    from chatledger.report import build_selection_report
    from chatledger.select import SelectionRecord

    record = SelectionRecord.read(directory)
    stdout.print(str(build_selection_report(directory, record)))


@select_app.command("candidates")
def candidates_command(output_format: FormatOption = OutputFormat.table) -> None:
    """The 25 candidate fields: tier, whether schema v3 has it, its instruction."""
    from rich.table import Table

    from chatledger.select import candidates

    found = candidates()
    if output_format is OutputFormat.json:
        emit_json(
            [
                {"name": c.name, "tier": c.tier, "in_v3": c.in_v3, "instruction": c.instruction}
                for c in found
            ]
        )
        return
    table = Table(title=f"{len(found)} candidate fields")
    for name in ("field", "tier", "v3", "instruction"):
        table.add_column(name)
    for c in found:
        table.add_row(c.name, c.tier, "yes" if c.in_v3 else "", c.instruction)
    stdout.print(table)
