"""The ``chatledger`` command line (Typer) and the one place its errors become exit codes.

Exit codes: 0 done; 1 the environment stopped the work (a full disk, a read-only folder, a
server that kept failing, the spending cap) — rerunning resumes; 2 a user mistake (a bad
option, a missing file, a bad line in a config), with one line naming file, line and field and
at most one hint line; 130 interrupted (Ctrl-C; 143 after SIGTERM); 70 a bug in ChatLedger
(one line; set ``CHATLEDGER_DEBUG=1`` for the traceback).

This module is imported for ``chatledger --help``, so it imports nothing heavy: commands import
what they use inside their bodies, and names for annotations come from ``TYPE_CHECKING``. The
command modules themselves are imported only when their command runs (:class:`LazyGroup`):
``chatledger --help`` lists them from :data:`LAZY_COMMANDS` and ``chatledger score`` builds one
command, not twenty.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from difflib import get_close_matches
from enum import StrEnum
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text
    from typer._click import Command, Context, HelpFormatter

    from chatledger.core import Chunk
    from chatledger.scoring import ScoreReport

# The commands registered by other modules of this package, in the order ``--help`` lists them
# (after ``schema`` and ``score``, defined here): name → (module, first paragraph of its help).
# ``--help`` shows the summaries without importing the modules; running a command imports its
# module only. tests/test_cli_lazy.py checks this table against the commands themselves.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "annotate": (
        "_annotate_cmd",
        "Human gold for your own chats: an annotation page on 127.0.0.1 (chatledger annotate "
        "CHUNKS.jsonl --out GOLD.jsonl), and agreement between annotators.",
    ),
    "demo": (
        "_demo_cmd",
        "Run the benchmark on the bundled corpus, offline: gold vs the offline extractor,\n"
        "three simulated models and three recorded local models (Qwen2.5-Coder 1.5B and 0.5B,\n"
        "SmolLM2-135M); the switch run (the recorded 1.5B as reference); then the offline\n"
        "extractor vs human gold.",
    ),
    "examples": (
        "_examples_cmd",
        "Write the files the README's examples use (chunks, gold, two simulated challengers, a\n"
        "partial human gold) into a folder, offline.",
    ),
    "downstream": (
        "_downstream_cmd",
        "Layer 3: run the downstream consumers on both models' extractions and compare them.",
    ),
    "pipeline": (
        "_downstream_cmd",
        "Print, as Markdown, what the downstream consumers make of one model's extractions\n"
        "(with --format json: every consumer's events as JSON).",
    ),
    "extract": (
        "_extract_cmd",
        "Extract schema v3 from every chunk with a model; re-run the same command to resume.",
    ),
    "report": (
        "_report_cmd",
        "Rebuild the run's self-contained report.html (conversation or structbench run) and\n"
        "print its path.",
    ),
    "report-day": (
        "_report_day_cmd",
        "The daily report built from one model's extractions: decisions, new action items,\n"
        "drifts, escalations and open loops of one day, per conversation.",
    ),
    "export": (
        "_export_cmd",
        "Write a run's results for other evaluation tools: inspect (an inspect_ai .eval log).",
    ),
    "run": (
        "_run_cmd",
        "Score every challenger of a run config on every configured layer; write the run "
        "directory.",
    ),
    "compare": ("_run_cmd", "Show what changed between two runs, per model, layer and field."),
    "gate": (
        "_gate_cmd",
        "Compare a candidate run with a baseline run rule by rule, on the paired bootstrap\n"
        "difference: a drop fails only when the whole interval is below the allowance. Exit 0: "
        "every\nrule passed; 1: a rule failed; 2: a usage error (a missing run, runs on "
        "different chunks).",
    ),
    "decide": (
        "_decide_cmd",
        "Run the config's conversations in a seeded random order, a batch at a time, until "
        "every\ngate rule is decided on an anytime-valid confidence sequence (or the budget or "
        "the\nconversations run out). Exit 0: every rule passed; 1: a rule failed; 3: undecided.",
    ),
    "serve-local": (
        "_serve_cmd",
        "Serve a local GGUF model on 127.0.0.1 with an OpenAI-compatible /v1/chat/completions.",
    ),
    "stats": (
        "_stats_cmd",
        "Intervals, paired differences, rank probabilities and weight sensitivity of a run.",
    ),
    "coverage": (
        "_coverage_cmd",
        "Do the intervals hold? Their empirical coverage on subsets of whole conversations of a\n"
        "finished run (its figures taken as the truth).",
    ),
    "plan": (
        "_coverage_cmd",
        "How many conversations to tell a drop of a given size, from a pilot run's\n"
        "per-conversation variance (80 % power).",
    ),
    "audit": (
        "_stats_cmd",
        "Apply every corruption operator at rising severity; show each field's score curve.",
    ),
    "judges": (
        "_judges_cmd",
        "Judges: audit each against extractions of known truth (the corruption ladder, one "
        "corruption at a time, a copier, keywords only, empty).",
    ),
    "budget": (
        "_budget_cmd",
        "The spend ledgers a budget cap bounds: show what was spent, reset it.",
    ),
    "corpus": (
        "_corpus_cmd",
        "Import chat exports and human-annotated corpora as chunks; reveal pseudonyms.",
    ),
    "select": (
        "_select_cmd",
        "Schema selection: screen candidate fields, search prompt variants, run a tournament "
        "of schemas, validate the winner, derive weights.",
    ),
    "structbench": (
        "_structbench_cmd",
        "Email → JSON extraction benchmark (LLMStructBench-style): generate, run, score.",
    ),
}
_OWN_COMMANDS = ("schema", "score")


# Called once when a command starts running (not for --help or a usage error): the entry
# point sets it to configure logging (chatledger.cli.main).
on_command_start: Callable[[], None] | None = None
# True in the ``chatledger`` process itself (set by chatledger.cli.main), which ends after
# the command; False for a caller of :func:`main` that goes on running.
ENTRY_POINT = False


class LazyGroup(TyperGroup):
    """The top-level group: a command's module is imported when the command is looked up.

    While the group's own help is written, the commands of modules not imported yet are stubs
    holding the summary from :data:`LAZY_COMMANDS` (all the help listing reads).
    """

    _listing = False

    def list_commands(self, ctx: Context) -> list[str]:
        order = [*_OWN_COMMANDS, *LAZY_COMMANDS]
        return order + [name for name in self.commands if name not in order]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = self.commands.get(cmd_name)
        if command is not None or cmd_name not in LAZY_COMMANDS:
            return command
        module, summary = LAZY_COMMANDS[cmd_name]
        if self._listing:
            return TyperCommand(cmd_name, help=summary)
        import_module(f"chatledger.cli.{module}")  # registers its commands on ``app``
        command = _build_registered(cmd_name)
        if command is not None:
            self.commands[cmd_name] = command
        return command

    def invoke(self, ctx: Context) -> Any:
        global on_command_start
        # The group runs before its command parses its options: a command's --help is not
        # a command starting.
        if "--help" not in ctx.args and "--help" not in ctx._protected_args:
            start, on_command_start = on_command_start, None
            if start is not None:
                start()
        if ENTRY_POINT and ctx._protected_args[:1] in (["gate"], ["stats"]):
            with _collector_paused():
                return super().invoke(ctx)
        return super().invoke(ctx)

    def get_help_option(self, ctx: Context) -> Any:
        option = super().get_help_option(ctx)
        # Typer leaves a help flag that was not given as None and coerces None through a
        # pydantic adapter (importing pydantic: ~0.1 s of ``chatledger score --help``) before
        # finding nothing to do; a False default skips that and means the same.
        if option is not None and option.default is None:
            option.default = False
        return option

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        _import_rich_help()
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        # Typer suggests near names among the commands built so far; suggest among all.
        from typer._click.exceptions import UsageError

        if "--help" in args:  # the command's help is next: see _import_rich_help
            _import_rich_help()
        suggest, self.suggest_commands = self.suggest_commands, False
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if suggest and matches:
                shown = ", ".join(f"{m!r}" for m in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {shown}?"
            raise
        finally:
            self.suggest_commands = suggest


class _Deferred(type):
    """A stand-in for a rich class that Typer's help module imports but help never uses:
    any use (a call, an attribute) imports the real class and defers to it."""

    _target: tuple[str, str]

    def _real(cls) -> Any:
        module, name = cls._target
        return getattr(import_module(module), name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, attr: str) -> Any:
        return getattr(cls._real(), attr)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off while a reader of a finished run (``gate``, ``stats``) runs,
    and what exists when it ends frozen out of the collector's final walk at exit.

    Such a command imports its modules (pydantic's and the record's classes, pyarrow, numpy)
    and reads a few files: hundreds of thousands of objects, none of them garbage, which each
    full collection walked again (~5 % of a gate on a 1,000-chunk run). What it allocates
    afterwards (resamples, the stage columns) is freed by reference counting. Only in the
    ``chatledger`` process itself, which ends after the command.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _import_rich_help() -> None:
    """Import ``typer.rich_utils`` without the two rich modules it imports for other things.

    It imports ``rich.markdown`` (markdown-it) for markdown help and ``rich.traceback``
    (pygments, attrs) for pretty tracebacks; this CLI's help is rich markup and its
    tracebacks are off, yet the two cost ~40 % of ``chatledger --help``. While rich_utils is
    imported they are stand-ins (:class:`_Deferred`) that load the real class if ever used;
    afterwards they are removed, so any other import gets the real modules.
    """
    # The process ends once the help is printed: what exists now (every module) is left out
    # of the collector's final walk at exit, a third of the run of ``chatledger --help``.
    if ENTRY_POINT:
        gc.freeze()
    if "typer.rich_utils" in sys.modules:
        return
    from types import ModuleType

    stand_ins: dict[str, ModuleType] = {}
    for module, name in (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback")):
        if module in sys.modules:
            continue
        stand_in = ModuleType(module)
        setattr(stand_in, name, _Deferred(name, (), {"_target": (module, name)}))
        stand_ins[module] = stand_in
    sys.modules.update(stand_ins)
    try:
        import_module("typer.rich_utils")
    finally:
        for module, stand_in in stand_ins.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]


def _build_registered(name: str) -> Command | None:
    """The click command (or group) that a command module registered on ``app`` as ``name``."""
    from typer.main import get_command_from_info, get_group_from_info

    for info in app.registered_commands:
        if info.name == name:
            return get_command_from_info(
                info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
    for group in app.registered_groups:
        if group.name == name:
            return get_group_from_info(
                group,
                pretty_exceptions_short=app.pretty_exceptions_short,
                suggest_commands=app.suggest_commands,
                rich_markup_mode=app.rich_markup_mode,
            )
    return None


app = typer.Typer(
    name="chatledger",
    help="Measure what breaks when you swap the model that extracts data from conversations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
)

# Data (model names, file names, texts) is printed as written: rich markup, emoji codes and
# highlighting are off, so "[/bold]evil" in a file is text, not a crash. Our own styling is
# built with Text objects (see ``styled``). The two consoles are made on first use (``stdout``
# and ``stderr`` of this module, PEP 562): ``score --format json`` never imports rich.
# Piped or redirected (no terminal, no COLUMNS), rich would fit tables to 80 columns and cut
# their values ("extrac…", "0.8…"): a file or a pipe gets each table as wide as its content.
PIPED_WIDTH = 400
_consoles: dict[str, Console] = {}

if TYPE_CHECKING:
    stdout: Console
    stderr: Console


def console(name: str) -> Console:
    """The ``stdout`` or ``stderr`` console, made on first use."""
    made = _consoles.get(name)
    if made is None:
        from rich.console import Console

        made = Console(
            stderr=name == "stderr", soft_wrap=True, markup=False, emoji=False, highlight=False
        )
        if not made.is_terminal and not os.environ.get("COLUMNS", "").strip():
            made.width = PIPED_WIDTH
        made = _consoles.setdefault(name, made)
    return made


def __getattr__(name: str) -> Any:
    if name in ("stdout", "stderr"):
        return console(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


class AggregateName(StrEnum):
    macro = "macro"
    micro = "micro"


FormatOption = Annotated[
    OutputFormat, typer.Option("--format", help="table for people, json for programs")
]


def styled(text: str, style: str) -> Text:
    """``text`` in ``style``, never read as markup."""
    from rich.text import Text

    return Text(text, style=style)


def note(message: str, *, label: str = "note", style: str = "yellow", err: bool = False) -> None:
    """One labelled line (``note: …``) with the message printed as written."""
    from rich.text import Text

    line = Text.assemble((f"{label}:", style), " ", one_line(message))
    console("stderr" if err else "stdout").print(line)


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
    from rich.text import Text

    stderr = console("stderr")
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
    aggregate: str | None = None,
) -> ScoreReport:
    """Layer 1 from the files, streamed chunk by chunk (:func:`chatledger.scoring.score_files`):
    memory stays flat however many chunks the files hold."""
    import gc

    from chatledger.scoring import ScoringConfig, load_scoring_config, score_files

    if weights is not None:
        config = load_scoring_config(weights, schema_version=schema, matcher=matcher)
    else:
        config = ScoringConfig.default(schema, matcher or "token_set")
    if aggregate is not None:
        config = config.model_copy(update={"aggregate": aggregate})
    # Everything imported so far lives on: the collector need not walk it again on every full
    # collection while the files are read and scored.
    gc.freeze()
    try:
        return score_files(reference, challenger, chunks, config, on_long_chunks=warn_long_chunks)
    finally:
        gc.unfreeze()


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
    aggregate: Annotated[
        AggregateName | None,
        typer.Option(
            help="field figure the composite uses: macro (per-chunk mean) or micro (pooled "
            "items); default micro when the reference has covers (human gold), else macro"
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Layer 1: score a challenger's extractions against a reference, field by field."""
    report = run_score(
        reference,
        challenger,
        chunks,
        schema.value,
        weights,
        matcher.value if matcher else None,
        aggregate.value if aggregate else None,
    )
    if output_format is OutputFormat.json:
        emit_json(report.to_dict())
    else:
        from chatledger.cli._render import print_score_report

        print_score_report(report, console("stdout"))


def main(argv: list[str] | None = None) -> int:
    """Run the app and return its exit code; every error is one line (see the module doc).
    An interruption exits 128 + its signal's number: 130 after Ctrl-C, 143 after SIGTERM."""
    from chatledger._signals import clear_interrupt, interrupt_exit_code

    clear_interrupt()
    code = _run(argv)
    return interrupt_exit_code() if code == EXIT_INTERRUPTED else code


def _run(argv: list[str] | None) -> int:
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

    from chatledger.core import ChatLedgerError, InputError, describe_os_error

    if isinstance(exc, ChatLedgerError):
        if isinstance(exc, InputError) and exc.line is None and exc.field and exc.path:
            # A config's field is named by its key path; find the key's line too.
            from chatledger.corpus import locate_config_field

            line = locate_config_field(exc.path, exc.field)
            if line is not None:
                exc.at_line(line)
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
