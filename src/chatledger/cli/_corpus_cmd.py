"""``chatledger corpus import ami|casino PATH --out DIR``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stdout, styled

corpus_app = typer.Typer(help="Import human-annotated corpora as chunks + partial gold.")
app.add_typer(corpus_app, name="corpus")


class CorpusKindName(StrEnum):
    ami = "ami"
    casino = "casino"


@corpus_app.command("import")
def import_command(
    kind: Annotated[CorpusKindName, typer.Argument(help="which corpus format")],
    path: Annotated[Path, typer.Argument(help="the corpus folder (or CaSiNo file)")],
    out: Annotated[Path, typer.Option("--out", help="folder for chunks.jsonl and gold.jsonl")],
    max_messages: Annotated[
        int | None, typer.Option(help="AMI: split topic segments longer than this")
    ] = None,
    annotated_only: Annotated[
        bool, typer.Option(help="CaSiNo: only dialogues with strategy labels")
    ] = False,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Write DIR/chunks.jsonl and DIR/gold.jsonl (gold records say which fields they cover)."""
    from rich.table import Table

    from chatledger.corpus import import_corpus

    options: dict[str, object] = {}
    if kind is CorpusKindName.ami and max_messages is not None:
        options["max_messages"] = max_messages
    if kind is CorpusKindName.casino and annotated_only:
        options["annotated_only"] = True
    summary = import_corpus(kind.value, path, out, **options)
    data = summary.to_dict()
    if output_format is OutputFormat.json:
        emit_json(data)
        return
    table = Table(title=f"{kind.value} → {out}", title_justify="left")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key in ("chunks", "messages", "gold_records"):
        table.add_row(key, str(data[key]))
    for field, count in sorted(data.get("gold_items", {}).items()):
        table.add_row(f"gold {field}", str(count))
    for reason, count in sorted(data.get("dropped", {}).items()):
        table.add_row(styled(f"dropped: {reason}", "dim"), str(count))
    stdout.print(table)
