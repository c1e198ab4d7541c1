"""``chatledger structbench …``: the LLMStructBench-style email → JSON task (DESIGN §8)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import (
    FormatOption,
    OutputFormat,
    app,
    emit_json,
    note,
    stderr,
    stdout,
    styled,
)
from chatledger.cli._model_options import (
    BatchOption,
    BatchPollOption,
    BudgetNameOption,
    BudgetUsdOption,
    MaxAttemptsOption,
    TimeoutOption,
    batch_note,
    batch_report,
    batch_settings,
    call_settings,
)

if TYPE_CHECKING:
    from pydantic import JsonValue

    from chatledger.structbench import (
        Document,
        Prediction,
        PredictionFile,
        RunOutcome,
        StructReport,
        StructRun,
    )

# The generator's default seed, spelled here so that ``--help`` needs no structbench import;
# tests/test_cli_errors.py checks it against chatledger.structbench.DEFAULT_SEED.
DEFAULT_SEED_HELP = 20260304

structbench_app = typer.Typer(
    help="Email → JSON extraction benchmark (LLMStructBench-style): generate, run, score.",
    no_args_is_help=True,
)
app.add_typer(structbench_app, name="structbench")


class DatasetFormat(StrEnum):
    chatledger = "chatledger"
    llmstructbench = "llmstructbench"


DatasetOption = Annotated[
    Path | None,
    typer.Option("--dataset", help="dataset (.jsonl); default: the shipped emails-v1 set"),
]
DatasetFormatOption = Annotated[
    DatasetFormat,
    typer.Option("--dataset-format", help="chatledger (our JSONL) or llmstructbench (original)"),
]
ResamplesOption = Annotated[
    int, typer.Option("--resamples", min=0, help="bootstrap resamples for intervals (0: none)")
]
RunDirOption = Annotated[
    Path | None,
    typer.Option(
        "--run-dir", help="also write a run directory: run.json, scores.parquet, report.html"
    ),
]


def load_documents(dataset: Path | None, dataset_format: DatasetFormat) -> list[Document]:
    from chatledger.structbench import read_dataset, read_original, shipped_dataset_path

    path = dataset if dataset is not None else shipped_dataset_path()
    if dataset_format is DatasetFormat.llmstructbench:
        return read_original(path)
    return read_dataset(path)


def _interval(block: dict[str, Any], name: str) -> str:
    interval = (block.get("intervals") or {}).get(name)
    if not isinstance(interval, dict):
        return ""
    return f"{interval['low']:.2f}–{interval['high']:.2f}"


def print_report(summary: dict[str, Any]) -> None:
    from rich.table import Table

    metrics = ("DOC", "MK", "MV", "WV")
    table = Table(
        title="structbench (95% bootstrap intervals below each group)", title_justify="left"
    )
    table.add_column("group", no_wrap=True)
    table.add_column("n", justify="right")
    for metric in metrics:
        table.add_column(metric, justify="right", min_width=9, no_wrap=True)
    table.add_column("paper F1", justify="right")
    groups: list[tuple[str, dict[str, Any]]] = [("all", summary)]
    groups += [(str(k), v) for k, v in (summary.get("by_strategy") or {}).items()]
    for label, block in groups:
        row = [f"{block[m]:.3f}" for m in metrics]
        table.add_row(label, str(block["n"]), *row, f"{block['micro_f1']:.3f}")
        if block.get("intervals"):
            table.add_row("", "", *(styled(_interval(block, m), "dim") for m in metrics), "")
    table.add_section()
    for depth, block in summary["by_depth"].items():
        row = [f"{block[m]:.3f}" for m in metrics]
        table.add_row(f"depth {depth}", str(block["n"]), *row, "")
    stdout.print(table)
    bad = {k: v for k, v in summary["bad_output_counts"].items() if v}
    listed = ", ".join(f"{k} {v}" for k, v in bad.items()) or "none"
    stdout.print(f"outputs by kind: {listed}; clean {summary['clean_outputs']}")
    if summary.get("unknown_ids"):
        note(f"{summary['unknown_ids']} prediction(s) with ids not in the dataset")
    problems = summary.get("problems") or []
    if problems:
        note(f"{len(problems)} unusable line(s), scored as missing; first: {problems[0]}")


def show(report: StructReport, output_format: OutputFormat) -> None:
    summary = report.to_dict()
    if output_format is OutputFormat.json:
        emit_json(summary)
    else:
        print_report(summary)


def show_files(
    files: list[PredictionFile], reports: list[StructReport], output_format: OutputFormat
) -> None:
    """One file: exactly what ``score`` always printed. Several: a JSON list of
    ``{"predictions": path, "summary": …}`` (or one table per file)."""
    if len(reports) == 1:
        show(reports[0], output_format)
    elif output_format is OutputFormat.json:
        emit_json(
            [
                {"predictions": str(f.path), "summary": r.to_dict()}
                for f, r in zip(files, reports, strict=True)
            ]
        )
    else:
        for f, r in zip(files, reports, strict=True):
            stdout.print(styled(str(f.path), "bold"))
            print_report(r.to_dict())


def write_run_dir(
    run_dir: Path,
    documents: list[Document],
    files: list[PredictionFile],
    *,
    dataset: Path | None,
    dataset_format: DatasetFormat,
    resamples: int,
    seed: int,
) -> StructRun:
    """Score into a run directory and build its report."""
    from chatledger.report import build_structbench_report
    from chatledger.structbench import ValidatorCache, shipped_dataset_path, write_structbench_run

    run = write_structbench_run(
        run_dir,
        documents,
        files,
        dataset_path=dataset if dataset is not None else shipped_dataset_path(),
        dataset_format=dataset_format.value,
        n_resamples=resamples,
        seed=seed,
        validators=ValidatorCache(),
    )
    build_structbench_report(run_dir)
    return run


def announce(run_dir: Path | None, output_format: OutputFormat) -> None:
    """Where the run directory went, after the scores (on stderr when stdout is JSON)."""
    if run_dir is None:
        return
    from chatledger.report import REPORT_FILE

    console = stderr if output_format is OutputFormat.json else stdout
    console.print(f"run directory: {run_dir}\nreport: {run_dir / REPORT_FILE}")


@structbench_app.command("score")
def score_command(
    predictions: Annotated[
        list[Path],
        typer.Option(help="predictions (.jsonl): id, output, …; repeat for a leaderboard"),
    ],
    dataset: DatasetOption = None,
    dataset_format: DatasetFormatOption = DatasetFormat.chatledger,
    resamples: ResamplesOption = 1000,
    seed: Annotated[int, typer.Option(help="bootstrap seed")] = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "--run-dir",
            help="write a run directory (run.json, scores.parquet, report.html): one row per "
            "model × strategy",
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Score raw model outputs: DOC, MK, MV, WV (+ paper F1), by depth and strategy."""
    from chatledger.structbench import ValidatorCache, load_prediction_file, score_predictions

    documents = load_documents(dataset, dataset_format)
    files = [load_prediction_file(p) for p in predictions]
    if out is not None:
        run = write_run_dir(
            out,
            documents,
            files,
            dataset=dataset,
            dataset_format=dataset_format,
            resamples=resamples,
            seed=seed,
        )
        reports = [f.report for f in run.files]
    else:
        validators = ValidatorCache()
        reports = [
            score_predictions(
                documents, f.predictions, validators=validators, n_resamples=resamples, seed=seed
            )
            for f in files
        ]
    show_files(files, reports, output_format)
    announce(out, output_format)


@structbench_app.command("generate")
def generate_command(
    out: Annotated[Path, typer.Option(help="dataset file to write (.jsonl)")],
    n: Annotated[int, typer.Option("--n", min=1, help="number of documents")] = 1000,
    seed: Annotated[int, typer.Option(help="generator seed")] = DEFAULT_SEED_HELP,
    examples: Annotated[
        bool, typer.Option("--examples/--no-examples", help="add a one-shot example per email")
    ] = True,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Render n emails (7 kinds × depths 1–4) with schemas and ground truth, deterministically."""
    from chatledger.core import check_output_file
    from chatledger.structbench import generate_documents, write_dataset

    check_output_file(out)
    documents = generate_documents(n, seed, with_example=examples)
    write_dataset(documents, out)
    depths: dict[str, int] = {}
    for d in documents:
        depths[str(d.depth)] = depths.get(str(d.depth), 0) + 1
    info = {"out": str(out), "n": len(documents), "seed": seed, "bytes": out.stat().st_size,
            "by_depth": depths}  # fmt: skip
    if output_format is OutputFormat.json:
        emit_json(info)
    else:
        stdout.print(f"wrote {len(documents)} documents ({info['bytes']:,} bytes) to {out}")


@structbench_app.command("baseline")
def baseline_command(
    out: Annotated[Path, typer.Option(help="predictions file to write (.jsonl)")],
    dataset: DatasetOption = None,
    dataset_format: DatasetFormatOption = DatasetFormat.chatledger,
    resamples: ResamplesOption = 1000,
    run_dir: RunDirOption = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """The no-model row: a rule-based extractor's predictions, written and scored."""
    from chatledger.core import check_output_file
    from chatledger.structbench import baseline_predictions, write_predictions

    check_output_file(out)
    documents = load_documents(dataset, dataset_format)
    predictions = baseline_predictions(documents)
    write_predictions(predictions, out)
    where = RunDirRequest(run_dir, dataset, dataset_format, resamples)
    show(_scored(documents, out, predictions, where), output_format)
    announce(run_dir, output_format)


@dataclass(frozen=True)
class RunDirRequest:
    """``--run-dir`` of ``baseline`` and ``run``, and what writing it needs."""

    run_dir: Path | None
    dataset: Path | None
    dataset_format: DatasetFormat
    resamples: int


def _scored(
    documents: list[Document], written: Path, predictions: list[Prediction], where: RunDirRequest
) -> StructReport:
    """The predictions just written, scored — into a run directory when one is asked for."""
    from chatledger.structbench import load_prediction_file, score_predictions

    if where.run_dir is None:
        return score_predictions(documents, predictions, n_resamples=where.resamples)
    run = write_run_dir(
        where.run_dir,
        documents,
        [load_prediction_file(written)],
        dataset=where.dataset,
        dataset_format=where.dataset_format,
        resamples=where.resamples,
        seed=0,
    )
    return run.files[0].report


@structbench_app.command("run")
def run_command(
    model: Annotated[str, typer.Option(help="model id, e.g. openai:gpt-5.2")],
    strategy: Annotated[
        str,
        typer.Option(help="zero_shot, schema_in_prompt, one_shot, provider_schema or two_step"),
    ],
    out: Annotated[Path, typer.Option(help="predictions file to write (.jsonl)")],
    dataset: DatasetOption = None,
    dataset_format: DatasetFormatOption = DatasetFormat.chatledger,
    limit: Annotated[int | None, typer.Option(min=1, help="only the first n documents")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="documents in flight")] = 4,
    max_tokens: Annotated[int, typer.Option(min=1, help="per call")] = 2048,
    temperature: Annotated[float | None, typer.Option(min=0.0, max=2.0)] = None,
    budget_usd: BudgetUsdOption = None,
    budget_name: BudgetNameOption = "default",
    reasks: Annotated[
        int, typer.Option(min=0, help="schema re-asks per call (0 scores the first reply)")
    ] = 0,
    cache: Annotated[bool, typer.Option("--cache/--no-cache", help="on-disk call cache")] = True,
    timeout: TimeoutOption = None,
    max_attempts: MaxAttemptsOption = None,
    resamples: ResamplesOption = 1000,
    run_dir: RunDirOption = None,
    batch: BatchOption = False,
    batch_poll: BatchPollOption = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Prompt a model with one strategy over the dataset; write raw outputs, then score them."""
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from chatledger.core import EnvironmentFault, Interrupted, check_output_file
    from chatledger.providers import (
        Budget,
        CallSettings,
        CompletionCache,
        ProviderHub,
        parse_model_id,
    )
    from chatledger.structbench import CallOptions, run_strategy, strategy_named, write_predictions

    chosen = strategy_named(strategy)
    check_output_file(out)
    documents = load_documents(dataset, dataset_format)
    if limit is not None:
        documents = documents[:limit]
    parse_model_id(model)  # a bad id is one readable error before any work starts
    options = CallOptions(model=model, max_tokens=max_tokens, temperature=temperature)
    settings = call_settings(
        CallSettings(concurrency=concurrency, max_reasks=reasks),
        timeout=timeout,
        max_attempts=max_attempts,
    )
    call_cache = CompletionCache() if cache else None
    batch_mode = batch_settings(batch, batch_poll)
    batched: list[dict[str, JsonValue] | None] = [None]

    async def go(on_done: Callable[[], None]) -> RunOutcome:
        budget = Budget(cap_usd=budget_usd, name=budget_name)
        hub = ProviderHub(settings=settings, cache=call_cache, budget=budget, batch=batch_mode)
        # In batch mode every document is in flight at once: they wait for one batch.
        in_flight = hub.provider_for(model).requests_at_once() if batch_mode else concurrency
        async with hub:
            try:
                return await run_strategy(
                    documents, chosen, hub, options, concurrency=in_flight, on_done=on_done
                )
            finally:
                batched[0] = batch_report(hub, model)

    columns = (TextColumn("{task.description}", markup=False), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn())  # fmt: skip
    try:
        with Progress(
            *columns, console=stderr, transient=True, disable=not stderr.is_terminal
        ) as progress:
            task = progress.add_task(f"{chosen.name} · {model}", total=len(documents))
            outcome = asyncio.run(go(lambda: progress.advance(task)))
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted: nothing written to {out}",
            hint="run the same command again: the calls that finished are cached",
        ) from None
    finally:
        if call_cache is not None:
            call_cache.close()
    write_predictions(outcome.predictions, out)
    said = batch_note(batched[0])
    if said is not None:
        note(said, err=output_format is OutputFormat.json)
    where = RunDirRequest(run_dir, dataset, dataset_format, resamples)
    show(_scored(documents, out, outcome.predictions, where), output_format)
    announce(run_dir, output_format)
    if outcome.budget_stop:
        raise EnvironmentFault(
            f"stopped by the budget: {outcome.budget_stop}; {len(outcome.predictions)} of "
            f"{len(documents)} document(s) written to {out}",
            hint=f"the cap covers all spend of ledger {budget_name!r}: raise --budget-usd or "
            "run 'chatledger budget reset'; finished calls are cached",
        )
    if outcome.failures:
        first_id, reason = next(iter(outcome.failures.items()))
        raise EnvironmentFault(
            f"{len(outcome.failures)} document(s) got no answer and score as missing "
            f"(first: {first_id}: {reason})",
            hint="run the same command again to retry them; finished calls are cached",
        )
