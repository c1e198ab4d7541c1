"""``chatledger report DIR``: (re)build a run directory's report.html."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stdout


@app.command("report")
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="a run directory (with run.json)")],
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Rebuild the run's self-contained report.html (conversation or structbench run) and
    print its path."""
    from chatledger.report import build_report, build_structbench_report, run_task

    structbench = run_task(run_dir) == "structbench"
    path = build_structbench_report(run_dir) if structbench else build_report(run_dir)
    if output_format is OutputFormat.json:
        emit_json({"report": str(path), "task": "structbench" if structbench else "conversations"})
        return
    stdout.print(str(path))
