"""``chatledger budget show|reset``: the spend ledgers that ``--budget-usd`` caps.

A cap bounds everything spent under its ledger name in one call cache, across processes and
invocations (see ``chatledger.providers._ledger``): these commands show what is spent and clear
it when a new budget period starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stdout

if TYPE_CHECKING:
    from chatledger.providers import LedgerTotals

budget_app = typer.Typer(
    help="The spend ledgers a budget cap bounds: show what was spent, reset it.",
    no_args_is_help=True,
)
app.add_typer(budget_app, name="budget")

CacheDirOption = Annotated[
    Path | None,
    typer.Option(help="cache of model calls (default: $CHATLEDGER_CACHE_DIR or user cache)"),
]
NameOption = Annotated[
    str | None, typer.Option("--name", help="ledger name (default: every ledger / 'default')")
]


def _row(totals: LedgerTotals) -> dict[str, Any]:
    return {
        "name": totals.name,
        "spent_usd": totals.spent_usd,
        "calls": totals.calls,
        "input_tokens": totals.input_tokens,
        "output_tokens": totals.output_tokens,
        "reserved_usd": totals.reserved_usd,
        "calls_in_flight": totals.reservations,
    }


@budget_app.command("show")
def show_command(
    name: NameOption = None,
    cache_dir: CacheDirOption = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """What each spend ledger of the cache has spent (and holds for calls in flight)."""
    from rich.table import Table

    from chatledger.providers import CompletionCache

    with CompletionCache(cache_dir) as cache:
        rows = [cache.ledger(name).totals()] if name is not None else cache.ledgers()
        where = str(cache.path)
    if output_format is OutputFormat.json:
        emit_json({"cache": where, "ledgers": [_row(t) for t in rows]})
        return
    if not rows:
        stdout.print(f"no spend recorded in {where}")
        return
    table = Table(title=f"spend ledgers in {where}", title_justify="left")
    for column in ("ledger", "spent (USD)", "calls", "tokens in / out", "in flight (USD)"):
        table.add_column(column, justify="left" if column == "ledger" else "right")
    for t in rows:
        table.add_row(
            t.name,
            f"{t.spent_usd:.4f}",
            str(t.calls),
            f"{t.input_tokens:,} / {t.output_tokens:,}",
            f"{t.reserved_usd:.4f}",
        )
    stdout.print(table)


@budget_app.command("reset")
def reset_command(
    name: Annotated[str, typer.Option("--name", help="ledger to clear")] = "default",
    cache_dir: CacheDirOption = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Clear a ledger's spend (a new budget period); calls in flight keep their holds. A
    ledger that does not exist is named as such (nothing is created)."""
    from chatledger.providers import CompletionCache, default_cache_dir
    from chatledger.providers._cache import CACHE_FILE
    from chatledger.providers._ledger import check_ledger_name

    check_ledger_name(name)
    where = (cache_dir if cache_dir is not None else default_cache_dir()) / CACHE_FILE
    before: LedgerTotals | None = None
    others: list[str] = []
    if where.is_file():  # no database: no ledger, and none is made by asking
        with CompletionCache(cache_dir) as cache:
            others = [t.name for t in cache.ledgers()]
            if name in others:
                before = cache.ledger(name).reset()
            where = cache.path
    if output_format is OutputFormat.json:
        emit_json(
            {"cache": str(where), "reset": _row(before) if before is not None else None}
            | ({} if before is not None else {"ledgers": others})
        )
        return
    if before is None:
        there = (
            f"ledgers there: {', '.join(others)}"
            if others
            else "no spend is recorded there"
            if where.is_file()
            else "no call cache there"
        )
        stdout.print(f"no ledger {name!r} in {where} ({there}): nothing to reset")
        return
    stdout.print(
        f"ledger {before.name}: cleared ${before.spent_usd:.4f} over {before.calls} call(s)"
    )
