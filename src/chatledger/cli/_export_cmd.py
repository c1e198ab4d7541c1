"""``chatledger export inspect RUN_DIR``: a run's results in the formats other tools read."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stderr, stdout, styled

export_app = typer.Typer(
    help="Write a run's results for other evaluation tools: inspect (an inspect_ai .eval log).",
    no_args_is_help=True,
)
app.add_typer(export_app, name="export")


@export_app.command("inspect")
def inspect_command(
    run_dir: Annotated[Path, typer.Argument(help="a conversation run directory (with run.json)")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="the .eval log to write (default RUN_DIR/inspect.eval)"),
    ] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Write a conversation run as an inspect_ai .eval log that `inspect view` opens.

    One sample per chunk and model with its field scores; per model and field inspect's mean
    and stderr beside run.json's own figures (docs/inspect.md). Needs the optional extra
    inspect: pip install 'chatledger\\[inspect]'."""
    from chatledger.interop import export_inspect_log

    result = export_inspect_log(run_dir, out)
    for note in result.notes:
        stderr.print(styled(f"note: {note}", "dim"))
    if output_format is OutputFormat.json:
        emit_json(
            {
                "log": str(result.path),
                "samples": result.samples,
                "chunks": result.chunks,
                "models": result.models,
                "notes": result.notes,
            }
        )
        return
    stdout.print(str(result.path))
    summary = (
        f"{result.samples} samples ({result.chunks} chunks × {len(result.models)} models); "
        f"open with: inspect view --log-dir {result.path.parent}"
    )
    stderr.print(styled(summary, "dim"))
