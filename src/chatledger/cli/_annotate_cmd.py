"""``chatledger annotate CHUNKS --out GOLD`` (the page) and ``chatledger annotate agreement``.

``annotate`` is a group whose default command is the page: ``chatledger annotate CHUNKS.jsonl
--out GOLD.jsonl`` runs ``annotate page CHUNKS.jsonl …``, and the group's other commands
(``agreement``) are named as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from chatledger.cli._app import app, note, stdout

DEFAULT_COMMAND = "page"


class DefaultCommandGroup(TyperGroup):
    """A group that runs :data:`DEFAULT_COMMAND` when its first argument names no command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = [DEFAULT_COMMAND, *args]
        return list(super().parse_args(ctx, args))


annotate_app = typer.Typer(
    cls=DefaultCommandGroup,
    help="Human gold for your own chats: an annotation page on 127.0.0.1 "
    "(chatledger annotate CHUNKS.jsonl --out GOLD.jsonl), and agreement between annotators.",
    no_args_is_help=True,
)
app.add_typer(annotate_app, name="annotate")


def _fields(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [f.strip() for f in value.split(",") if f.strip()]


@annotate_app.command(DEFAULT_COMMAND)
def page_command(
    chunks: Annotated[Path, typer.Argument(help="the chunks to annotate (.jsonl)")],
    out: Annotated[
        Path, typer.Option("--out", help="the gold file to write (resumed when it exists)")
    ],
    prefill: Annotated[
        Path | None,
        typer.Option(help="a model's extraction file whose items the page starts from"),
    ] = None,
    fields: Annotated[
        str | None,
        typer.Option(help="the fields to annotate, comma-separated (default: all of schema v3)"),
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option(help="annotate N chunks, drawn stratified by conversation (with --seed)"),
    ] = None,
    seed: Annotated[int, typer.Option(help="the seed of --sample")] = 0,
    annotator: Annotated[
        str | None, typer.Option(help="your name in the gold file (default: the login name)")
    ] = None,
    port: Annotated[int, typer.Option(help="the port on 127.0.0.1 (0: any free one)")] = 0,
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="open the page in the browser")
    ] = True,
) -> None:
    """Open the annotation page: one chunk at a time, its messages beside the fields, every
    change saved at once into --out. Stop with Ctrl-C; the same command resumes."""
    from chatledger.annotate import AnnotationSession, serve
    from chatledger.core import require_extra

    require_extra("annotate", "chatledger annotate")
    session = AnnotationSession.open(
        chunks,
        out,
        prefill_path=prefill,
        fields=_fields(fields),
        sample=sample,
        seed=seed,
        annotator=annotator,
    )
    stdout.print(
        f"{len(session.chunks)} chunks ({session.done} done), {len(session.fields)} fields; "
        f"gold: {out}"
    )

    def ready(url: str) -> None:
        # The address holds the session's token: it is printed here, and nowhere else.
        stdout.print(f"annotation page: {url}", highlight=False)
        stdout.print("stop with Ctrl-C; every change is already saved")
        if browser:
            import webbrowser

            if not webbrowser.open(url):
                note("no browser found: open the address above")

    from chatledger.core import Interrupted

    try:
        serve(session, port=port, on_ready=ready)
    except KeyboardInterrupt:
        # uvicorn stops on Ctrl-C (and SIGTERM): every save is on disk already.
        raise Interrupted(
            f"annotation stopped: {session.done} of {len(session.chunks)} chunks done; "
            f"every save is in {out}",
            hint="run the same command again to go on where you left off",
        ) from None
    stdout.print(f"{session.done} of {len(session.chunks)} chunks done; gold: {out}")


# The agreement command lives in its own module; it registers on ``annotate_app``.
from chatledger.cli import _annotate_agreement_cmd as _agreement  # noqa: E402, F401
