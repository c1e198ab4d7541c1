"""``chatledger extract``: run a model over a chunks file, resumably, within a budget."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, note, stderr, stdout
from chatledger.cli._model_options import (
    BatchOption,
    BatchPollOption,
    BoundedListsOption,
    BudgetNameOption,
    BudgetUsdOption,
    ChunkIdsOption,
    MaxAttemptsOption,
    RepeatPenaltyOption,
    SeedOption,
    StrictSchemaOption,
    TimeoutOption,
    batch_report,
    batch_rows,
    batch_settings,
    call_settings,
    sampling_options,
)

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn, TaskID
    from rich.table import Table

    from chatledger.extraction import ExtractionProgress, ExtractionSummary

# The help text names the prompt styles without importing the registry (``--help`` stays
# instant); tests/test_cli_errors.py checks it against PROMPT_STYLES.
PROMPT_STYLE_HELP = "plain, field-guide or example"
DEFAULT_MAX_TOKENS_HELP = 4096


def _summary_table(
    summary: ExtractionSummary, batch_lines: list[tuple[str, str]] | None = None
) -> Table:
    from rich.table import Table

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
    rows += batch_lines or []
    for label, value in rows:
        table.add_row(label, value)
    return table


def _progress_columns() -> tuple[ProgressColumn, ...]:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    return (
        # markup=False: the description holds the model id, which is data ("…:[/x]").
        TextColumn("{task.description}", markup=False),
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
    model: Annotated[
        str, typer.Option(help="model id, e.g. anthropic:claude-opus-4-6 or offline:rules")
    ],
    chunks: Annotated[Path, typer.Option(help="chunks file (.jsonl)")],
    out: Annotated[Path, typer.Option(help="extraction file to write or resume (.jsonl)")],
    prompt_style: Annotated[str, typer.Option(help=f"one of: {PROMPT_STYLE_HELP}")] = "plain",
    samples: Annotated[int, typer.Option(min=1, help="extractions per chunk")] = 1,
    budget_usd: BudgetUsdOption = None,
    budget_name: BudgetNameOption = "default",
    cache_dir: Annotated[
        Path | None,
        typer.Option(help="cache of model calls (default: $CHATLEDGER_CACHE_DIR or user cache)"),
    ] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="calls in flight")] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(min=1, help=f"output tokens per call (default {DEFAULT_MAX_TOKENS_HELP})"),
    ] = None,
    temperature: Annotated[
        float | None, typer.Option(min=0.0, max=2.0, help="default: the provider's")
    ] = None,
    timeout: TimeoutOption = None,
    max_attempts: MaxAttemptsOption = None,
    seed: SeedOption = None,
    repeat_penalty: RepeatPenaltyOption = None,
    strict_schema: StrictSchemaOption = None,
    bounded_lists: BoundedListsOption = None,
    chunk_ids: ChunkIdsOption = None,
    prices: Annotated[
        Path | None, typer.Option(help="price file (USD per Mtok) adding to the built-in one")
    ] = None,
    batch: BatchOption = False,
    batch_poll: BatchPollOption = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Extract schema v3 from every chunk with a model; re-run the same command to resume.

    API keys are read from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY,
    OPENAI_COMPATIBLE_API_KEY) and never written anywhere.
    """
    from chatledger.core import EnvironmentFault, InputError, Interrupted, check_output_file
    from chatledger.corpus import read_chunks
    from chatledger.extraction import (
        DEFAULT_MAX_TOKENS,
        PROMPT_STYLES,
        extract_chunks,
        is_offline_model,
        load_prices,
        schema_constraints_for,
        validate_model_id,
    )
    from chatledger.providers import (
        LOCAL_CALL_SETTINGS,
        Budget,
        CallSettings,
        CompletionCache,
        ProviderHub,
    )

    if prompt_style not in PROMPT_STYLES:
        known = ", ".join(PROMPT_STYLES.names())
        raise InputError(
            f"unknown prompt style {prompt_style!r} (known: {known})", field="--prompt-style"
        )
    validate_model_id(model)  # a bad id is one line before any file is read
    if batch and is_offline_model(model):
        note(f"{model} makes no model calls: --batch changes nothing", err=True)
    chunk_list = read_chunks(chunks)
    check_output_file(out)
    hub = ProviderHub(
        settings=call_settings(
            CallSettings(), concurrency=concurrency, timeout=timeout, max_attempts=max_attempts
        ),
        local_settings=call_settings(
            LOCAL_CALL_SETTINGS, concurrency=concurrency, timeout=timeout, max_attempts=max_attempts
        ),
        # An offline extractor makes no calls: it needs no cache (nor a writable cache folder).
        cache=None if is_offline_model(model) else CompletionCache(cache_dir),
        budget=Budget(cap_usd=budget_usd, name=budget_name),
        prices=load_prices(prices),
        batch=batch_settings(batch and not is_offline_model(model), batch_poll),
    )
    latest: list[ExtractionProgress] = []
    kwargs = {
        "prompt_style": prompt_style,
        "samples": samples,
        "hub": hub,
        "max_tokens": max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS,
        "temperature": temperature,
        "options": sampling_options(seed, repeat_penalty),
        "constraints": schema_constraints_for(
            model, strict_schema, bounded=bounded_lists, chunk_ids=chunk_ids
        ),
    }
    try:
        if output_format is OutputFormat.json:
            summary = extract_chunks(model, chunk_list, out, on_progress=latest.append, **kwargs)
        else:
            from rich.progress import Progress

            with Progress(
                *_progress_columns(), console=stderr, transient=True, disable=not stderr.is_terminal
            ) as bar:
                task: TaskID = bar.add_task(
                    f"extract {model}", total=None, calls="0", tokens="0", dollars="0.0000"
                )

                def update(p: ExtractionProgress) -> None:
                    latest.append(p)
                    _show(bar, task, p)

                summary = extract_chunks(model, chunk_list, out, on_progress=update, **kwargs)
    except KeyboardInterrupt:
        done = latest[-1] if latest else None
        written = done.written if done is not None else 0
        # A failed chunk is still to do (a rerun asks it again): only written lines are done.
        left = ""
        if done is not None:
            failed = f", {done.failed} of them failed" if done.failed else ""
            left = f" ({done.to_do - done.written} of {done.to_do} still to do{failed})"
        raise Interrupted(
            f"interrupted: {written} new line(s) written to {out}{left}",
            hint="run the same command again to resume; finished calls are cached",
        ) from None
    finally:
        if hub.cache is not None:
            hub.cache.close()
    batched = batch_report(hub, model)
    if output_format is OutputFormat.json:
        emit_json({**summary.to_dict(), "batch": batched})
    else:
        stdout.print(_summary_table(summary, batch_rows(batched)))
        stdout.print(f"extractions: {summary.out_path}")
    if summary.stopped is not None:
        raise EnvironmentFault(
            f"stopped by the budget: {summary.stopped}. {summary.progress.written} line(s) "
            f"written to {summary.out_path}",
            hint=f"the cap covers all spend of ledger {budget_name!r} in this cache: raise "
            "--budget-usd, or start a new period with 'chatledger budget reset', then rerun",
        )
    summary.raise_if_incomplete()
