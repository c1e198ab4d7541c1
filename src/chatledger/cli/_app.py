"""The ``chatledger`` command line (Typer). User mistakes exit 2 with one readable line."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.console import Console
from rich.markup import escape

from chatledger.core import ChatLedgerError, extraction_json_schema
from chatledger.corpus import read_chunks, read_extractions
from chatledger.score import ScoreReport, ScoringConfig, load_scoring_config, score_records

app = typer.Typer(
    name="chatledger",
    help="Measure what breaks when you swap the model that extracts data from conversations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

stdout = Console(soft_wrap=True)
stderr = Console(stderr=True, soft_wrap=True)  # one error = one line, never wrapped


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


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


@app.command("schema")
def schema_command(
    version: Annotated[SchemaVersion, typer.Argument(help="schema version")] = SchemaVersion.v3,
) -> None:
    """Print the JSON Schema (Draft 2020-12) of an extraction."""
    emit_json(extraction_json_schema(version.value))


def run_score(
    reference: Path,
    challenger: Path,
    chunks: Path | None,
    schema: str,
    weights: Path | None,
    matcher: str | None,
) -> ScoreReport:
    if weights is not None:
        config = load_scoring_config(weights, schema_version=schema, matcher=matcher)
    else:
        config = ScoringConfig.default(schema, matcher or "token_set")
    chunk_list = read_chunks(chunks) if chunks is not None else None
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
    """Entry point: run the app; a ChatLedgerError becomes one line on stderr and exit code 2."""
    try:
        app(args=argv, standalone_mode=False)
    except ChatLedgerError as exc:
        # Escape: an error names its field in [brackets], which rich would read as markup.
        stderr.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False)
        return 2
    except click.exceptions.Abort:
        stderr.print("aborted")
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    return 0
