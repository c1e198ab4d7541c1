"""The ``chatledger`` command line (Typer) and the one place its errors become exit codes.

Exit codes: 0 done; 1 the environment stopped the work (a full disk, a read-only folder, a
server that kept failing, the spending cap) — rerunning resumes; 2 a user mistake (a bad
option, a missing file, a bad line in a config), with one line naming file, line and field and
at most one hint line; 130 interrupted (Ctrl-C); 70 a bug in ChatLedger (one line; set
``CHATLEDGER_DEBUG=1`` for the traceback).

This module is imported for ``chatledger --help``, so it imports nothing heavy: commands import
what they use inside their bodies, and names for annotations come from ``TYPE_CHECKING``.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from chatledger.core import Chunk
    from chatledger.score import ScoreReport

app = typer.Typer(
    name="chatledger",
    help="Measure what breaks when you swap the model that extracts data from conversations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Data (model names, file names, texts) is printed as written: rich markup, emoji codes and
# highlighting are off, so "[/bold]evil" in a file is text, not a crash. Our own styling is
# built with Text objects (see ``styled``).
stdout = Console(soft_wrap=True, markup=False, emoji=False, highlight=False)
stderr = Console(stderr=True, soft_wrap=True, markup=False, emoji=False, highlight=False)

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BUG = 70
DEBUG_ENV = "CHATLEDGER_DEBUG"


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


class SchemaVersion(StrEnum):
    v1 = "v1"
    v3 = "v3"


class MatcherName(StrEnum):
    token_set = "token_set"
    guarded = "guarded"


FormatOption = Annotated[
    OutputFormat, typer.Option("--format", help="table for people, json for programs")
]


def styled(text: str, style: str) -> Text:
    """``text`` in ``style``, never read as markup."""
    return Text(text, style=style)


def note(message: str, *, label: str = "note", style: str = "yellow", err: bool = False) -> None:
    """One labelled line (``note: …``) with the message printed as written."""
    (stderr if err else stdout).print(Text.assemble((f"{label}:", style), " ", one_line(message)))


def emit_json(data: Any) -> None:
    """Print ``data`` as strict JSON: NaN and infinities become null (they are not JSON)."""
    from chatledger.core import dumps_json

    sys.stdout.write(dumps_json(data) + "\n")


# C0/C1 controls, DEL, line/paragraph separators and bidirectional overrides: a file name or a
# value quoted in a message must not break the one-line promise or rewrite the terminal.
_UNSAFE = {
    **{c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]},
    **{c: f"\\u{c:04x}" for c in [0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]},
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): " ",
}


def one_line(text: str) -> str:
    """``text`` made safe for one terminal line: controls shown as escapes, lone surrogates
    (undecodable bytes in a file name) as ``\\udcxx``."""
    safe = text.translate(_UNSAFE)
    return safe.encode("utf-8", "backslashreplace").decode("utf-8")


def warn_long_chunks(chunks: list[Chunk]) -> None:
    """A note on stderr (so JSON on stdout stays clean) when chunks are too long to score fast."""
    from chatledger.core import long_chunk_note

    text = long_chunk_note(chunks)
    if text is not None:
        note(text, err=True)


def print_error(message: str, hint: str | None = None) -> None:
    """``error: message`` and at most one ``hint:`` line, on stderr."""
    stderr.print(Text.assemble(("error:", "bold red"), " ", one_line(message)))
    if hint:
        stderr.print(Text.assemble(("hint:", "dim"), " ", one_line(hint)))


@app.command("schema")
def schema_command(
    version: Annotated[SchemaVersion, typer.Argument(help="schema version")] = SchemaVersion.v3,
) -> None:
    """Print the JSON Schema (Draft 2020-12) of an extraction."""
    from chatledger.core import extraction_json_schema

    emit_json(extraction_json_schema(version.value))


def run_score(
    reference: Path,
    challenger: Path,
    chunks: Path | None,
    schema: str,
    weights: Path | None,
    matcher: str | None,
) -> ScoreReport:
    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.score import ScoringConfig, load_scoring_config, score_records

    if weights is not None:
        config = load_scoring_config(weights, schema_version=schema, matcher=matcher)
    else:
        config = ScoringConfig.default(schema, matcher or "token_set")
    chunk_list = read_chunks(chunks) if chunks is not None else None
    if chunk_list is not None:
        warn_long_chunks(chunk_list)
    ref = read_extractions(reference)
    chal = read_extractions(challenger)
    return score_records(
        ref.records,
        chal.records,
        chunk_list,
        config,
        reference_model=ref.model,
        challenger_model=chal.model,
        problems=[*ref.problems, *chal.problems],
    )


@app.command("score")
def score_command(
    reference: Annotated[Path, typer.Option(help="reference extraction file (.jsonl)")],
    challenger: Annotated[Path, typer.Option(help="challenger extraction file (.jsonl)")],
    chunks: Annotated[
        Path | None, typer.Option(help="chunks file (.jsonl): participants and message order")
    ] = None,
    schema: Annotated[SchemaVersion, typer.Option(help="which fields and weights")] = (
        SchemaVersion.v3
    ),
    weights: Annotated[
        Path | None, typer.Option(help="YAML/JSON overriding weights, thresholds, matcher")
    ] = None,
    matcher: Annotated[
        MatcherName | None, typer.Option(help="text matcher (default: token_set)")
    ] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Layer 1: score a challenger's extractions against a reference, field by field."""
    report = run_score(
        reference, challenger, chunks, schema.value, weights, matcher.value if matcher else None
    )
    if output_format is OutputFormat.json:
        emit_json(report.to_dict())
    else:
        from chatledger.cli._render import print_score_report

        print_score_report(report, stdout)


def main(argv: list[str] | None = None) -> int:
    """Run the app and return its exit code; every error is one line (see the module doc)."""
    try:
        result = app(args=argv, standalone_mode=False, prog_name="chatledger")
    except KeyboardInterrupt:
        # Typer turns Ctrl-C inside a command into exit 130; this catches one between them.
        print_error("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:  # every exception ends here as one line (the CLI's promise)
        if os.environ.get(DEBUG_ENV, "").strip() not in ("", "0"):
            raise
        return report_exception(exc)
    if result == EXIT_INTERRUPTED:
        # A command interrupted outside its own handling (Typer's Exit(130) says no more).
        print_error("interrupted", "nothing is lost: finished files are complete")
    return result if isinstance(result, int) else 0


def report_exception(exc: BaseException) -> int:
    """Print ``exc`` as one error line (+ hint) and return the exit code it stands for."""
    from typer._click import exceptions as click_errors

    from chatledger.core import ChatLedgerError, describe_os_error

    if isinstance(exc, ChatLedgerError):
        print_error(str(exc), exc.hint)
        return exc.exit_code
    if isinstance(exc, click_errors.UsageError):
        return _report_usage_error(exc)
    if isinstance(exc, click_errors.ClickException):
        print_error(exc.format_message())
        return exc.exit_code
    if isinstance(exc, typer.Abort):
        print_error("aborted")
        return 1
    if isinstance(exc, OSError):
        fault = describe_os_error(exc)
        print_error(str(fault), fault.hint)
        return fault.exit_code
    if isinstance(exc, MemoryError):
        print_error("out of memory", "try a smaller input, or a machine with more memory")
        return 1
    where = _innermost_frame(exc)
    print_error(
        f"internal error: {type(exc).__name__}: {exc}{where}",
        f"this is a bug in ChatLedger; {DEBUG_ENV}=1 shows the traceback",
    )
    return EXIT_BUG


def _report_usage_error(exc: Any) -> int:
    ctx = exc.ctx
    command = ctx.command_path if ctx is not None else "chatledger"
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        names = (
            ", ".join(ctx.command.list_commands(ctx)) if hasattr(ctx.command, "commands") else ""
        )
        message = f"{command}: missing command" + (f" (one of: {names})" if names else "")
    else:
        message = str(exc.format_message()).replace("Value error, ", "")
    print_error(message, f"try '{command} --help'")
    return EXIT_USAGE


def _innermost_frame(exc: BaseException) -> str:
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return f" (at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno})"
