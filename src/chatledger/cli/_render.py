"""Terminal rendering of results (rich tables); JSON output never goes through here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.table import Table

from chatledger.cli._app import styled

if TYPE_CHECKING:
    from rich.console import Console

    from chatledger.scoring import ScoreReport


def _count(value: float) -> str:
    return f"{value:g}"


def score_table(report: ScoreReport) -> Table:
    """Per field: the headline score, both aggregates, the pooled F1 and the item counts
    (pooled precision and recall and the components are in ``--format json``)."""
    title = (
        f"Layer 1 — {report.challenger_model} vs {report.reference_model} "
        f"(schema {report.schema_version}, matcher {report.matcher})"
    )
    table = Table(
        title=title,
        title_justify="left",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
    )
    table.add_column("field", no_wrap=True, min_width=20)
    table.add_column("score", justify="right", no_wrap=True, min_width=5)
    table.add_column("macro", justify="right", no_wrap=True, min_width=5)
    table.add_column("micro", justify="right", no_wrap=True, min_width=5)
    table.add_column("F1", justify="right", no_wrap=True, min_width=5)
    table.add_column("m/ref/pred", justify="right", no_wrap=True, min_width=10)
    table.add_column("empty", justify="right", no_wrap=True, min_width=5)
    table.add_column("weight", justify="right", no_wrap=True)
    for name, s in report.fields.items():
        micro = s.micro
        pooled = "f1" in micro
        prf = f"{micro['f1']:.3f}" if pooled else "—"
        matched = _count(s.n_matched) if pooled and s.n_matched is not None else "—"
        table.add_row(
            name,
            styled(f"{s.score:.3f}", "bold"),
            f"{s.macro:.3f}",
            f"{micro.get('score', s.score):.3f}",
            prf,
            f"{matched}/{s.n_reference}/{s.n_predicted}",
            f"{s.both_empty}/{s.chunks}",
            f"{s.weight:.3f}",
        )
    table.add_section()
    composite = styled(f"{report.extraction_composite:.3f}", "bold")
    table.add_row("extraction composite", composite, "", "", "", "", "", "1.000")
    table.caption = "\n".join(
        [
            f"{aggregate_note(report.aggregate)}",
            "F1: pooled over all chunks' items; m/ref/pred: items matched (entities: credit) / "
            "in the reference / predicted; empty: usable chunks where both sides are empty, "
            "of the chunks that score the field",
            *(
                counted_note(name, s.counted_as, s.n_reference_items, s.n_predicted_items)
                for name, s in report.fields.items()
                if s.counted_as is not None
                and (s.n_reference_items, s.n_predicted_items) != (s.n_reference, s.n_predicted)
            ),
        ]
    )
    return table


def counted_note(
    name: str, counted_as: str | None, reference_items: int | None, predicted_items: int | None
) -> str:
    """What a set field's counts count, beside the items each side listed."""
    return (
        f"{name}: m/ref/pred count {counted_as} ({reference_items} listed in the reference, "
        f"{predicted_items} predicted; repeats of a key count once)"
    )


def aggregate_note(aggregate: str) -> str:
    """Which per-field figure the composite used, in words."""
    if aggregate == "micro":
        return (
            "score = micro: items pooled over all chunks (the default against a reference with "
            "covers, where both-empty chunks would dominate a per-chunk mean)"
        )
    return "score = macro: the mean of per-chunk scores (DESIGN.md §3; both-empty chunks = 1.0)"


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
