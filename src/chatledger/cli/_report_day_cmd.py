"""``chatledger report-day``: the daily report of one day, read on its own (DESIGN.md §5)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stdout


@app.command("report-day")
def report_day_command(
    extractions: Annotated[Path, typer.Option(help="one model's extraction file (.jsonl)")],
    chunks: Annotated[Path, typer.Option(help="chunks file (.jsonl): conversations and times")],
    day: Annotated[
        str | None, typer.Option(help="YYYY-MM-DD (default: the latest day with a report)")
    ] = None,
    conversation: Annotated[str | None, typer.Option(help="only this conversation id")] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """The daily report built from one model's extractions: decisions, new action items,
    drifts, escalations and open loops of one day, per conversation."""
    from chatledger.core import InputError
    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.downstream import DailyReportConsumer, build_conversations

    if day is not None:
        import datetime as dt

        try:
            dt.date.fromisoformat(day)
            valid = len(day) == 10  # fromisoformat also takes 20261203 and 2026-W49-4
        except ValueError:
            valid = False
        if not valid:
            raise typer.BadParameter(
                f"{day!r} is not a date: write YYYY-MM-DD", param_hint="'--day'"
            )
    conversations = build_conversations(read_chunks(chunks), read_extractions(extractions).records)
    if conversation is not None:
        conversations = tuple(c for c in conversations if c.conversation_id == conversation)
        if not conversations:
            raise InputError(f"no conversation {conversation!r}", path=chunks)
    lines = DailyReportConsumer().build(conversations).events
    days = sorted({h.day for h in lines})
    if not days:
        raise InputError("no day has anything to report in these extractions", path=extractions)
    chosen = day or days[-1]
    if chosen not in days:
        raise InputError(f"nothing to report on {chosen}; days with a report: {', '.join(days)}")
    today = [h for h in lines if h.day == chosen]
    if output_format is OutputFormat.json:
        emit_json({"day": chosen, "days": days, "highlights": [h.to_dict() for h in today]})
        return
    out = [f"# Daily report — {chosen}"]
    for conv in dict.fromkeys(h.conversation_id for h in today):
        out += ["", f"## {conv}", ""]
        out += [f"- {h.line}" for h in today if h.conversation_id == conv]
    stdout.print("\n".join(out))
