"""Terminal rendering of results (rich tables); JSON output never goes through here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from chatledger.cli._app import styled

if TYPE_CHECKING:
    from rich.console import Console

    from chatledger.score import ScoreReport


def _fmt_components(components: dict[str, float]) -> str:
    parts = []
    for name, value in components.items():
        if name.startswith("n_"):
            parts.append(f"{name}={int(value)}")
        else:
            parts.append(f"{name}={value:.3f}")
    return " ".join(parts)


def score_table(report: ScoreReport) -> Table:
    title = (
        f"Layer 1 — {report.challenger_model} vs {report.reference_model} "
        f"(schema {report.schema_version}, matcher {report.matcher})"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("field")
    table.add_column("score", justify="right")
    table.add_column("weight", justify="right")
    table.add_column("components")
    table.add_column("n ref/pred", justify="right")
    for name, s in report.fields.items():
        table.add_row(
            name,
            f"{s.score:.3f}",
            f"{s.weight:.3f}",
            _fmt_components(s.components),
            f"{s.n_reference}/{s.n_predicted}",
        )
    table.add_section()
    table.add_row(
        "extraction composite", styled(f"{report.extraction_composite:.3f}", "bold"), "1.000"
    )
    return table


def print_score_report(report: ScoreReport, console: Console) -> None:
    console.print(score_table(report))
    console.print(
        f"chunks {report.n_chunks}  invalid {report.invalid}  missing {report.missing}"
        f"  excluded (reference unusable) {len(report.excluded_chunks)}"
        f"  not in the chunks file {len(report.unknown_chunks)}"
        f"  unknown message ids {report.unknown_message_ids}"
    )
    for problem in report.problems[:20]:
        console.print(styled("problem", "yellow"), str(problem))
    if len(report.problems) > 20:
        console.print(f"… and {len(report.problems) - 20} more problems (see --format json)")
