"""``chatledger extract``: run a model over a chunks file, resumably, within a budget."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, stderr, stdout
from chatledger.core import ChatLedgerError, InputError
from chatledger.corpus import read_chunks
from chatledger.extraction import (
    DEFAULT_MAX_TOKENS,
    PROMPT_STYLES,
    ExtractionProgress,
    ExtractionSummary,
    extract_chunks,
    load_prices,
)
from chatledger.providers import Budget, CallSettings, CompletionCache, ProviderHub


def _summary_table(summary: ExtractionSummary) -> Table:
    p = summary.progress
    table = Table(
        title=f"extract — {p.model} ({summary.prompt_style})",
        title_justify="left",
        show_header=False,
    )
    table.add_column("")
    table.add_column("", justify="right")
    rows = [
        ("chunk × sample pairs", str(p.planned)),
        ("already in the file", str(p.already_done)),
        ("written now", str(p.written)),
        ("  of which invalid", str(p.invalid)),
        ("failed (not written)", str(p.failed)),
        ("model calls live / cached", f"{p.live_calls} / {p.cached_calls}"),
        ("tokens in / out", f"{p.input_tokens} / {p.output_tokens}"),
        ("paid now (USD)", f"{p.billed_usd:.4f}"),
        ("list cost of the lines (USD)", f"{p.cost_usd:.4f}"),
    ]
    for label, value in rows:
        table.add_row(label, value)
    return table


def _progress_columns() -> tuple[ProgressColumn, ...]:
    return (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("calls {task.fields[calls]}"),
        TextColumn("tokens {task.fields[tokens]}"),
        TextColumn("${task.fields[dollars]}"),
        TimeElapsedColumn(),
    )


def _show(bar: Progress, task: TaskID, p: ExtractionProgress) -> None:
    bar.update(
        task,
        total=p.to_do,
        completed=p.finished,
        calls=f"{p.live_calls}+{p.cached_calls} cached",
        tokens=f"{p.input_tokens + p.output_tokens:,}",
        dollars=f"{p.billed_usd:.4f}",
    )


@app.command("extract")
def extract_command(
    model: Annotated[str, typer.Option(help="model id, e.g. anthropic:claude-opus-4-6")],
    chunks: Annotated[Path, typer.Option(help="chunks file (.jsonl)")],
    out: Annotated[Path, typer.Option(help="extraction file to write or resume (.jsonl)")],
    prompt_style: Annotated[
        str, typer.Option(help=f"one of: {', '.join(PROMPT_STYLES.names())}")
    ] = "plain",
    samples: Annotated[int, typer.Option(min=1, help="extractions per chunk")] = 1,
    budget_usd: Annotated[
        float | None, typer.Option(min=0.0, help="stop before spending more than this")
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="cache of model calls (default: $CHATLEDGER_CACHE_DIR or user cache)"),
    ] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="calls in flight")] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="output tokens per call")] = (
        DEFAULT_MAX_TOKENS
    ),
    temperature: Annotated[
        float | None, typer.Option(min=0.0, max=2.0, help="default: the provider's")
    ] = None,
    prices: Annotated[
        Path | None, typer.Option(help="price file (USD per Mtok) adding to the built-in one")
    ] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Extract schema v3 from every chunk with a model; re-run the same command to resume.

    API keys are read from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY,
    OPENAI_COMPATIBLE_API_KEY) and never written anywhere.
    """
    if prompt_style not in PROMPT_STYLES:
        known = ", ".join(PROMPT_STYLES.names())
        raise InputError(f"unknown prompt style {prompt_style!r} (known: {known})")
    chunk_list = read_chunks(chunks)
    settings = CallSettings(concurrency=concurrency) if concurrency else CallSettings()
    budget = Budget(cap_usd=budget_usd)
    hub = ProviderHub(
        settings=settings,
        cache=CompletionCache(cache_dir),
        budget=budget,
        prices=load_prices(prices),
    )
    kwargs = {
        "prompt_style": prompt_style,
        "samples": samples,
        "hub": hub,
        "max_tokens": max_tokens,
        "temperature": temperature,
    }
    try:
        if output_format is OutputFormat.json:
            summary = extract_chunks(model, chunk_list, out, **kwargs)
        else:
            with Progress(*_progress_columns(), console=stderr, transient=True) as bar:
                task: TaskID = bar.add_task(
                    f"extract {model}", total=None, calls="0", tokens="0", dollars="0.0000"
                )

                def update(p: ExtractionProgress) -> None:
                    _show(bar, task, p)

                summary = extract_chunks(model, chunk_list, out, on_progress=update, **kwargs)
    finally:
        if hub.cache is not None:
            hub.cache.close()
    if output_format is OutputFormat.json:
        emit_json(summary.to_dict())
    else:
        stdout.print(_summary_table(summary))
        stdout.print(f"extractions: {summary.out_path}")
    if summary.stopped is not None:
        raise ChatLedgerError(
            f"stopped by the budget: {summary.stopped}. {summary.progress.written} line(s) "
            f"written to {summary.out_path}; run again with a higher --budget-usd to continue"
        )
    summary.raise_if_incomplete()
