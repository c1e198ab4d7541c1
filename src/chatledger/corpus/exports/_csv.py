"""CSV exports: one message per row, columns named in the header.

Which column is which comes from ``--csv-map FILE`` (YAML: ``timestamp``, ``speaker``, ``text``,
optional ``conversation`` and ``date_format``) or the ``--*-column`` flags; without them the
common header names are recognised (case and spaces ignored): timestamp / date / time / datetime /
sent / created_at, sender / speaker / author / from / name / user, message / text / content /
body, and conversation / chat / thread / channel. A timestamp is read with ``date_format``
(:func:`datetime.strptime`) when given, else as ISO 8601 or as epoch seconds (or milliseconds).
Quoted fields may hold line breaks (the csv module keeps them whole). The file may be UTF-8 with
or without a BOM; its dialect (comma, semicolon, tab) is sniffed from the header line.

Rows with no text are skipped (counted as "empty message"); a row whose timestamp cannot be read
is an error naming the line and column, since a wrong format would otherwise drop every row.
Conversations are the distinct values of the conversation column (one conversation, named
after the file, without one); messages are sorted by time within each.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import ClassVar

from chatledger.core import InputError
from chatledger.corpus.exports._model import (
    Conversation,
    CsvMapping,
    ExportMessage,
    ReadContext,
    in_time_order,
)
from chatledger.corpus.exports._reader import EXPORT_READERS, ExportReader
from chatledger.corpus.exports._source import ExportSource

_HEADERS = {
    "timestamp": ("timestamp", "date", "time", "datetime", "sent", "createdat", "sentat"),
    "speaker": ("sender", "speaker", "author", "from", "name", "user", "username"),
    "text": ("message", "text", "content", "body", "msg"),
    "conversation": ("conversation", "chat", "thread", "channel", "conversationid", "chatid"),
}


def _norm(header: str) -> str:
    return "".join(ch for ch in header.casefold() if ch.isalnum())


@EXPORT_READERS.register("csv")
class CsvReader(ExportReader):
    kind: ClassVar[str] = "csv"
    label: ClassVar[str] = "a CSV file"
    how_to_export = "any spreadsheet or tool that writes one message per row with a header"

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        names = source.names()
        return len(names) == 1 and names[0].lower().endswith((".csv", ".tsv"))

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        (name,) = [n for n in source.names() if n.lower().endswith((".csv", ".tsv"))][:1] or [
            source.names()[0]
        ]
        text = source.read_text(name)
        try:
            dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(
                text.split("\n", 1)[0], delimiters=",;\t|"
            )
        except csv.Error:
            dialect = csv.excel
        rows = csv.reader(io.StringIO(text, newline=""), dialect)
        header = next(rows, None)
        if header is None:
            raise InputError("the CSV file is empty", path=source.describe(name))
        columns = _columns(header, context.csv, source.describe(name))
        groups: dict[str, list[ExportMessage]] = {}
        for row in rows:
            line = rows.line_num
            if not any(cell.strip() for cell in row):
                continue
            cells = dict(zip(header, row, strict=False))
            body = cells.get(columns["text"], "")
            if not body.strip():
                context.log.skip("empty message")
                continue
            stamp = cells.get(columns["timestamp"], "")
            moment = _timestamp(stamp, context.csv.date_format)
            if moment is None:
                raise InputError(
                    f"cannot read {stamp!r} as a time"
                    + (f" with format {context.csv.date_format!r}" if context.csv.date_format
                       else " (give --date-format, e.g. '%d/%m/%Y %H:%M')"),
                    path=source.describe(name),
                    line=line,
                    field=columns["timestamp"],
                )  # fmt: skip
            speaker = cells.get(columns["speaker"], "").strip() or "unknown"
            group = cells.get(columns["conversation"], "") if columns["conversation"] else ""
            groups.setdefault(group.strip(), []).append(ExportMessage(moment, speaker, body))
        stem = PurePosixPath(name).stem
        for key, messages in groups.items():
            yield Conversation(key=key or stem, title=key or stem, messages=in_time_order(messages))


def _columns(header: list[str], mapping: CsvMapping, where: str) -> dict[str, str]:
    by_norm = {_norm(h): h for h in header}
    found: dict[str, str] = {}
    for role in ("timestamp", "speaker", "text", "conversation"):
        given = getattr(mapping, role)
        if given is not None:
            if given not in header:
                raise InputError(
                    f"no column {given!r} (columns: {', '.join(header)})",
                    path=where,
                    line=1,
                    field=f"--{role}-column",
                )
            found[role] = given
            continue
        match = next((by_norm[c] for c in _HEADERS[role] if c in by_norm), "")
        if not match and role != "conversation":
            raise InputError(
                f"no {role} column found among {', '.join(header)}: name it with "
                f"--{role}-column (or a --csv-map file)",
                path=where,
                line=1,
            )
        found[role] = match
    return found


def _timestamp(text: str, date_format: str | None) -> datetime | None:
    value = text.strip()
    if not value:
        return None
    if date_format:
        try:
            return datetime.strptime(value, date_format)
        except ValueError:
            return None
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is not None:
        seconds = number / 1000.0 if number > 1e11 else number
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
