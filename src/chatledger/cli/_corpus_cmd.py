"""``chatledger corpus import [KIND] PATH --out DIR`` and ``chatledger corpus reveal``.

KIND is a chat app's export (whatsapp, telegram, slack, discord, imessage, messenger, signal,
csv — or auto, the default, which tells them apart from the content) or a human-annotated
corpus (ami, casino: chunks plus partial gold).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, note, stdout, styled

if TYPE_CHECKING:
    from rich.table import Table

    from chatledger.corpus.exports import ExportSummary, ImportOptions

corpus_app = typer.Typer(
    help="Import chat exports and human-annotated corpora as chunks; reveal pseudonyms.",
    no_args_is_help=True,
)
app.add_typer(corpus_app, name="corpus")

ANNOTATED_KINDS = ("ami", "casino")
# Spelled here so that --help needs no reader import; tests/test_cli_corpus.py checks the list.
CHAT_KINDS = (
    "whatsapp", "telegram", "slack", "discord", "imessage", "messenger", "instagram", "signal",
    "csv",
)  # fmt: skip
KIND_HELP = ", ".join(("auto", *CHAT_KINDS, *ANNOTATED_KINDS))


@corpus_app.command("import")
def import_command(
    arguments: Annotated[
        list[str],
        typer.Argument(metavar="[KIND] PATH", help=f"KIND: {KIND_HELP}; PATH: the export"),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="folder for chunks.jsonl (and gold.jsonl)")
    ] = None,
    kind_option: Annotated[
        str | None, typer.Option("--kind", help="the export's format (default: auto)")
    ] = None,
    gap: Annotated[
        str, typer.Option(help="a silence longer than this starts a new chunk (0: never)")
    ] = "6h",
    max_messages: Annotated[
        int | None, typer.Option(min=1, help="messages per chunk at most (default 40)")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(min=1, help="estimated tokens per chunk at most")
    ] = None,
    overlap: Annotated[
        int, typer.Option(min=0, help="messages a full chunk passes on to the next")
    ] = 0,
    alias: Annotated[
        list[str] | None,
        typer.Option(help="'Ness=Ness Alderton': show a name under another (repeatable)"),
    ] = None,
    aliases: Annotated[
        Path | None, typer.Option(help="YAML file of aliases: {alias: name} or {name: [aliases]}")
    ] = None,
    pseudonymise: Annotated[
        bool,
        typer.Option(
            "--pseudonymise/--no-pseudonymise",
            help="replace names, phone numbers, e-mails and URLs before anything sees them",
        ),
    ] = False,
    key: Annotated[
        Path | None,
        typer.Option(
            help="with --pseudonymise: the file for the map that undoes it (default: your "
            "data folder, never the import folder)"
        ),
    ] = None,
    key_beside_chunks: Annotated[
        bool,
        typer.Option(help="with --pseudonymise: keep the map in --out beside chunks.jsonl"),
    ] = False,
    names_from_text: Annotated[
        Path | None,
        typer.Option(
            help="write names found only in message text to this aliases file for review "
            "(imports nothing)"
        ),
    ] = None,
    encoding: Annotated[
        str | None,
        typer.Option(help="the text's encoding if not UTF-8/UTF-16, e.g. cp1252, latin-1"),
    ] = None,
    strict: Annotated[
        bool, typer.Option(help="stop at the first byte that does not decode (default: count it)")
    ] = False,
    phone_region: Annotated[
        str | None, typer.Option(help="country for national phone numbers, e.g. GB, US, DE")
    ] = None,
    date_order: Annotated[
        str,
        typer.Option(help="WhatsApp: auto, dmy, mdy, ymd or ydm (auto decides from the dates)"),
    ] = "auto",
    timezone: Annotated[
        str | None, typer.Option(help="zone of exports with local times, e.g. Europe/Berlin")
    ] = None,
    me: Annotated[str, typer.Option(help="iMessage: the name of the phone's owner")] = "me",
    csv_map: Annotated[
        Path | None,
        typer.Option(help="CSV: YAML with timestamp, speaker, text, conversation, date_format"),
    ] = None,
    timestamp_column: Annotated[str | None, typer.Option(help="CSV: the time column")] = None,
    speaker_column: Annotated[str | None, typer.Option(help="CSV: the sender column")] = None,
    text_column: Annotated[str | None, typer.Option(help="CSV: the message column")] = None,
    conversation_column: Annotated[
        str | None, typer.Option(help="CSV: the conversation column")
    ] = None,
    date_format: Annotated[
        str | None, typer.Option(help="CSV: strptime format of the time, e.g. '%d/%m/%Y %H:%M'")
    ] = None,
    annotated_only: Annotated[
        bool, typer.Option(help="CaSiNo: only dialogues with strategy labels")
    ] = False,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Read an export (or an annotated corpus) into DIR/chunks.jsonl, cut into chunks."""
    from chatledger.core import InputError

    kind, path = _kind_and_path(arguments, kind_option)
    if out is None and names_from_text is None:
        raise InputError("missing --out DIR (the folder for chunks.jsonl)", field="--out")
    if kind in ANNOTATED_KINDS:
        if out is None:
            raise InputError("missing --out DIR", field="--out")
        options: dict[str, object] = {}
        if kind == "ami" and max_messages is not None:
            options["max_messages"] = max_messages
        if kind == "casino" and annotated_only:
            options["annotated_only"] = True
        _import_annotated(kind, path, out, options, output_format)
        return
    from chatledger.corpus.exports import (
        EXPORT_READERS,
        ChunkingOptions,
        CsvMapping,
        Decoding,
        ImportOptions,
        import_chat_export,
        parse_duration,
    )

    # The registry knows the formats other packages add (entry-point group chatledger.importers).
    if kind != "auto" and kind not in EXPORT_READERS:
        known = ", ".join(("auto", *EXPORT_READERS.names(), *ANNOTATED_KINDS))
        raise InputError(f"unknown kind {kind!r} (known: {known})", field="KIND")
    Decoding(encoding, strict)  # an unknown --encoding is refused before anything is read

    chunking = ChunkingOptions(
        gap=parse_duration(gap),
        max_messages=max_messages if max_messages is not None else ChunkingOptions().max_messages,
        max_tokens=max_tokens,
        overlap=overlap,
    )
    if date_order not in ("auto", "dmy", "mdy", "ymd", "ydm"):
        raise InputError(
            f"expected auto, dmy, mdy, ymd or ydm, got {date_order!r}", field="--date-order"
        )
    csv = _csv_mapping(
        csv_map,
        CsvMapping(
            timestamp=timestamp_column,
            speaker=speaker_column,
            text=text_column,
            conversation=conversation_column,
            date_format=date_format,
        ),
    )
    import_options = ImportOptions(
        kind=kind,
        chunking=chunking,
        aliases=_aliases(alias or [], aliases),
        pseudonymise=pseudonymise,
        phone_region=_region(phone_region),
        date_order=date_order,  # type: ignore[arg-type]  # checked just above
        me=me,
        timezone=_zone(timezone),
        csv=csv,
        encoding=encoding,
        strict=strict,
        key=key,
        key_beside_chunks=key_beside_chunks,
    )
    if names_from_text is not None:
        from chatledger.core import require_extra

        require_extra("pseudonymise", "--names-from-text")
        _preview_names(path, names_from_text, import_options, output_format)
        return
    assert out is not None
    summary = import_chat_export(path, out, import_options)
    if output_format is OutputFormat.json:
        emit_json(summary.model_dump(mode="json"))
        return
    _print_summary(summary, import_options)


def _preview_names(
    path: Path, target: Path, options: ImportOptions, output_format: OutputFormat
) -> None:
    import os

    from chatledger.core import atomic_write_text, check_output_file
    from chatledger.corpus.exports import aliases_file, preview_names

    check_output_file(target, option="--names-from-text")
    kind, candidates = preview_names(path, options)
    atomic_write_text(target, aliases_file(candidates, str(path), kind))
    os.chmod(target, 0o600)  # it quotes the chat
    if output_format is OutputFormat.json:
        emit_json({"kind": kind, "file": str(target),
                   "candidates": [vars(c) for c in candidates]})  # fmt: skip
        return
    from rich.table import Table

    table = Table(title=f"names in the text of {path} ({kind})", title_justify="left")
    for column in ("candidate", "count", "why", "example"):
        table.add_column(column, justify="right" if column == "count" else "left")
    for candidate in candidates[:40]:
        table.add_row(candidate.text, str(candidate.count), candidate.why, candidate.example)
    stdout.print(table)
    more = f" ({len(candidates) - 40} more in the file)" if len(candidates) > 40 else ""
    note(
        f"{len(candidates)} candidate(s) written to {target}{more}: keep the real people, delete "
        "the rest, then import with --pseudonymise --aliases " + str(target),
        label="review",
    )


def _kind_and_path(arguments: list[str], kind_option: str | None) -> tuple[str, Path]:
    from chatledger.core import InputError

    if len(arguments) == 1:
        return (kind_option or "auto"), Path(arguments[0])
    if len(arguments) == 2:
        kind, raw = arguments
        if kind_option is not None and kind_option != kind:
            raise InputError(f"KIND {kind!r} and --kind {kind_option!r} disagree", field="--kind")
        return kind, Path(raw)
    raise InputError(f"expected [KIND] PATH, got {len(arguments)} arguments", field="KIND")


def _import_annotated(
    kind: str, path: Path, out: Path, options: dict[str, object], output_format: OutputFormat
) -> None:
    from rich.table import Table

    from chatledger.corpus import import_corpus

    summary = import_corpus(kind, path, out, **options)
    data = summary.to_dict()
    if output_format is OutputFormat.json:
        emit_json(data)
        return
    table = Table(title=f"{kind} → {out}", title_justify="left")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key in ("chunks", "messages", "gold_records"):
        table.add_row(key, str(data[key]))
    for field, count in sorted(data.get("gold_items", {}).items()):
        table.add_row(f"gold {field}", str(count))
    for reason, count in sorted(data.get("dropped", {}).items()):
        table.add_row(styled(f"dropped: {reason}", "dim"), str(count))
    stdout.print(table)


def _print_summary(summary: ExportSummary, options: ImportOptions) -> None:
    table = _counts_table(summary)
    stdout.print(table)
    if summary.first_message and summary.last_message:
        stdout.print(f"messages from {summary.first_message} to {summary.last_message}")
    for text in summary.notes:
        note(text)
    for problem, count in summary.problems.items():
        note(f"{problem}: {count:,}", label="problems")
    if summary.pseudonyms_path:
        note(
            "names, numbers, addresses, e-mails and URLs replaced; the map that undoes it is "
            f"{summary.pseudonyms_path} (readable by you only) — keep it private; "
            f"chatledger corpus reveal FILE --map {summary.pseudonyms_path} --out FILE uses it",
            label="pseudonymised",
        )
    stdout.print(f"chunks: {summary.chunks_path}")


def _counts_table(summary: ExportSummary) -> Table:
    from rich.table import Table

    table = Table(title=f"{summary.kind} → {summary.chunks_path}", title_justify="left")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key in ("conversations", "messages", "participants", "chunks"):
        table.add_row(key, f"{getattr(summary, key):,}")
    for kind, count in summary.kinds.items():
        if kind != "text":
            table.add_row(f"  of which {kind}", f"{count:,}")
    for reason, count in summary.skipped.items():
        table.add_row(styled(f"skipped: {reason}", "dim"), f"{count:,}")
    return table


def _aliases(pairs: list[str], path: Path | None) -> dict[str, str]:
    """``alias → name`` from ``--alias A=B`` and an aliases file."""
    from chatledger.core import InputError

    found: dict[str, str] = {}
    if path is not None:
        from chatledger.corpus import read_config_file

        data: Any = read_config_file(path)
        if not isinstance(data, dict):
            raise InputError("expected a mapping of alias to name (or name to aliases)", path=path)
        for key, value in data.items():
            if isinstance(value, str):
                found[str(key)] = value
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                found.update({v: str(key) for v in value})
            else:
                raise InputError("expected a name or a list of aliases", path=path, field=str(key))
    for pair in pairs:
        written, sep, name = pair.partition("=")
        if not sep or not written.strip() or not name.strip():
            raise InputError(f"expected ALIAS=NAME, got {pair!r}", field="--alias")
        found[written.strip()] = name.strip()
    return found


def _csv_mapping(path: Path | None, flags: Any) -> Any:
    from chatledger.core import InputError
    from chatledger.corpus.exports import CsvMapping

    if path is None:
        return flags
    from chatledger.corpus import read_config_file

    data: Any = read_config_file(path)
    keys = ("timestamp", "speaker", "text", "conversation", "date_format")
    if not isinstance(data, dict) or not all(
        k in keys and isinstance(v, str) for k, v in data.items()
    ):
        raise InputError(f"expected a mapping with string values for {', '.join(keys)}", path=path)
    given = {k: v for k, v in vars(flags).items() if v is not None}
    return CsvMapping(**{**data, **given})


def _zone(name: str | None) -> Any:
    if name is None:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from chatledger.core import InputError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InputError(
            f"unknown time zone {name!r} (e.g. Europe/Berlin, UTC)", field="--timezone"
        ) from None


def _region(code: str | None) -> str | None:
    if code is None:
        return None
    from chatledger.core import InputError, require_extra

    require_extra("pseudonymise", "--phone-region")
    import phonenumbers

    region = code.strip().upper()
    if region not in phonenumbers.SUPPORTED_REGIONS:
        raise InputError(f"unknown phone region {code!r} (a country code like GB, US, DE)",
                         field="--phone-region")  # fmt: skip
    return region


@corpus_app.command("reveal")
def reveal_command(
    extractions: Annotated[Path, typer.Argument(help="an extraction file of pseudonymised chunks")],
    map_file: Annotated[
        Path, typer.Option("--map", help="the pseudonym map the import wrote (its --key)")
    ],
    out: Annotated[Path, typer.Option("--out", help="the extraction file with the originals")],
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Put the real names, numbers, e-mails and URLs back into an extraction."""
    from chatledger.core import check_output_file
    from chatledger.corpus.exports import reveal_file

    check_output_file(out)
    summary = reveal_file(extractions, map_file, out)
    if output_format is OutputFormat.json:
        emit_json({**summary.to_dict(), "out": str(out)})
        return
    stdout.print(
        f"revealed {summary.revealed} of {summary.lines} line(s) into {out}"
        + (
            f" ({summary.unreadable} unreadable line(s) copied as they were)"
            if summary.unreadable
            else ""
        )
    )
