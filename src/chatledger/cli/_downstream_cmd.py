"""``chatledger downstream`` (layer-3 agreement) and ``chatledger pipeline`` (one model's view)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import (
    FormatOption,
    OutputFormat,
    app,
    emit_json,
    note,
    stdout,
    styled,
    warn_long_chunks,
)

if TYPE_CHECKING:
    from rich.table import Table

    from chatledger.core import Problem
    from chatledger.downstream import DownstreamEvent, DownstreamReport

_EVENTS_SHOWN = 10  # per consumer and side in the table view; --format json has them all


def _parse_inline(spec: str) -> dict[str, Any]:
    from chatledger.core import InputError

    weights: dict[str, Any] = {}
    for part in spec.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise InputError(f"expected name=weight pairs separated by commas, got {part!r}")
        weights[name.strip()] = value.strip()
    return weights


def load_downstream_weights(spec: str) -> dict[str, float]:
    """Consumer weights from a YAML/JSON file (a mapping, optionally under ``downstream``) or
    inline ``drift=0.3,daily_report=0.1``, merged into the defaults (0.2 each) by the one weight
    rule: the merged weights must sum to 1."""
    from chatledger.core import InputError
    from chatledger.corpus import read_config_file
    from chatledger.downstream import resolve_weights

    path = Path(spec)
    try:
        is_file = path.is_file()
    except OSError as exc:  # a name too long
        raise InputError(f"cannot use path: {exc.strerror or exc}", path=path) from None
    if is_file:
        data = read_config_file(path)
        prefix = ""
        if isinstance(data, dict) and isinstance(data.get("downstream"), dict):
            data, prefix = data["downstream"], "downstream."
        if not isinstance(data, dict):
            raise InputError("expected a mapping of consumer name to weight", path=path)
        try:
            return resolve_weights(data)
        except InputError as exc:
            field = f"{prefix}{exc.field}" if exc.field else None
            raise InputError(exc.detail, path=path, field=field) from None
    if "=" not in spec:
        raise InputError(
            "weights file not found (or give inline weights: drift=0.3,daily_report=0.1)",
            path=path,
        )
    return resolve_weights(_parse_inline(spec))


def _note_problems(problems: list[Problem], source: str) -> None:
    if problems:
        note(
            f"{len(problems)} unusable line(s) in {source} are read as empty extractions "
            f"(first: {problems[0]})",
            err=True,
        )


_DETAIL_LABELS = {
    "n_reference": "ref",
    "n_challenger": "chal",
    "matched": "matched",
    "agreeing_chunks": "agreeing chunks",
    "n_chunks": "chunks",
    "n_days": "days",
    "kappa": "κ",
    "kappa_argument": "κ argument",
    "kappa_emotional_peak": "κ peak",
    "valence_agreement": "valence",
    "trajectory_agreement": "trajectory",
}


def _details_text(details: dict[str, Any], n_missed: int, n_invented: int) -> str:
    parts: list[str] = []
    for name, label in _DETAIL_LABELS.items():
        value = details.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        parts.append(f"{label} {value:.3f}" if isinstance(value, float) else f"{label} {value}")
    parts.append(f"missed {n_missed}")
    parts.append(f"invented {n_invented}")
    return " · ".join(parts)


def _event_line(event: DownstreamEvent) -> str:
    where = ", ".join(event.about())
    return f"[{where}] {event.describe()}" if where else event.describe()


def downstream_table(report: DownstreamReport) -> Table:
    from rich.table import Table

    table = Table(title="Layer 3 — downstream consumers", title_justify="left")
    table.add_column("consumer")
    table.add_column("weight", justify="right")
    table.add_column("agreement", justify="right")
    table.add_column("details")
    for name, result in report.consumers.items():
        outcome = result.result
        if name in report.left_out:  # no event on either side: no evidence, not agreement
            table.add_row(name, "—", report.left_out[name], "left out, weights renormalised")
            continue
        table.add_row(
            name,
            f"{result.weight:.3f}",
            f"{result.agreement:.3f}",
            _details_text(outcome.details, len(outcome.missed), len(outcome.invented)),
        )
    for name in report.skipped:  # the missing fields are listed under the table
        table.add_row(name, "—", "skipped", "the reference does not cover what it reads")
    table.add_section()
    composite = report.downstream_composite
    table.add_row(
        "downstream composite",
        "1.000" if composite is not None else "—",
        styled(f"{composite:.3f}" if composite is not None else "none", "bold"),
        ""
        if composite is not None
        else "no consumer with events"
        if report.left_out
        else "no consumer with a weight above 0 ran",
    )
    return table


def print_downstream_report(report: DownstreamReport) -> None:
    stdout.print(downstream_table(report))
    if report.renormalisation:
        stdout.print(report.renormalisation)
    if report.skipped:
        ran = ", ".join(report.consumers) or "none"
        stdout.print(
            f"skipped {len(report.skipped)} consumer(s): the reference is partial (its lines' "
            "covers) and lacks fields they read; the composite is over the others "
            f"({ran}), weights renormalised"
        )
        for name, missing in report.skipped.items():
            stdout.print(f"{name} skipped: missing {', '.join(missing)}")
    for name, result in report.consumers.items():
        for label, events in (
            ("missed", result.result.missed),
            ("invented", result.result.invented),
        ):
            for event in events[:_EVENTS_SHOWN]:
                stdout.print(f"{name} {label}: {_event_line(event)}")
            if len(events) > _EVENTS_SHOWN:
                more = len(events) - _EVENTS_SHOWN
                stdout.print(f"{name} {label}: … {more} more (see --format json)")


@app.command("downstream")
def downstream_command(
    reference: Annotated[Path, typer.Option(help="reference extraction file (.jsonl)")],
    challenger: Annotated[Path, typer.Option(help="challenger extraction file (.jsonl)")],
    chunks: Annotated[Path, typer.Option(help="chunks file (.jsonl): conversations and times")],
    weights: Annotated[
        str | None,
        typer.Option(help="consumer weights: YAML/JSON file or inline drift=0.3,daily_report=0.1"),
    ] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Layer 3: run the downstream consumers on both models' extractions and compare them.

    Against partial human gold (reference lines with ``covers``) a consumer runs only when the
    gold covers every field it reads; the others are listed as skipped with the missing fields.
    """
    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.downstream import reference_coverage, run_downstream

    weight_map = load_downstream_weights(weights) if weights is not None else None
    chunk_list = read_chunks(chunks)
    warn_long_chunks(chunk_list)
    ref = read_extractions(reference)
    chal = read_extractions(challenger)
    covered = reference_coverage(ref.records, chunk_list)
    report = run_downstream(chunk_list, ref.records, chal.records, weight_map, covered)
    if output_format is OutputFormat.json:
        emit_json(report.to_dict())
        return
    _note_problems(ref.problems, str(reference))
    _note_problems(chal.problems, str(challenger))
    print_downstream_report(report)


@app.command("pipeline")
def pipeline_command(
    extractions: Annotated[Path, typer.Option(help="one model's extraction file (.jsonl)")],
    chunks: Annotated[Path, typer.Option(help="chunks file (.jsonl): conversations and times")],
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Print, as Markdown, what the downstream consumers make of one model's extractions
    (with --format json: every consumer's events as JSON)."""
    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.downstream import (
        CONSUMER_NAMES,
        build_conversations,
        get_consumer,
        render_pipeline_markdown,
    )

    chunk_list = read_chunks(chunks)
    loaded = read_extractions(extractions)
    if output_format is OutputFormat.json:
        conversations = build_conversations(chunk_list, loaded.records)
        emit_json(
            {
                "consumers": {
                    name: get_consumer(name).build(conversations).to_dict()
                    for name in CONSUMER_NAMES
                },
                "problems": [str(p) for p in loaded.problems],
            }
        )
        return
    _note_problems(loaded.problems, str(extractions))
    sys.stdout.write(render_pipeline_markdown(chunk_list, loaded.records))
