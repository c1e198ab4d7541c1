"""``chatledger examples DIR``: the inputs of the README's and the docs' examples."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stdout


@app.command("examples")
def examples_command(
    out: Annotated[Path, typer.Argument(help="folder to write the files into (made if missing)")],
    overwrite: Annotated[
        bool, typer.Option(help="replace files of the same names that hold something else")
    ] = False,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Write the files the README's examples use (chunks, gold, two simulated challengers, a
    partial human gold) into a folder, offline."""
    from chatledger.demo import write_examples

    written = write_examples(out, overwrite=overwrite)
    if output_format is OutputFormat.json:
        emit_json({"files": [str(path) for path in written]})
        return
    for path in written:
        stdout.print(str(path), highlight=False)
