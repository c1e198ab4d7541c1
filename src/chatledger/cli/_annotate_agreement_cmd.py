"""``chatledger annotate agreement`` (registered on the ``annotate`` group).

``agreement A.jsonl B.jsonl``: two annotators, per field (the layer-1 scorers) and on the
enumerated labels (Krippendorff's α), with bootstrap intervals; ``--run RUN_DIR`` adds the
run's judge against each file's decisions (Cohen's κ). ``agreement GOLD.jsonl --run RUN_DIR``:
the judge against one annotator only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from chatledger.cli._annotate_cmd import annotate_app
from chatledger.cli._app import (
    AggregateName,
    FormatOption,
    OutputFormat,
    emit_json,
    note,
    stdout,
    styled,
)

if TYPE_CHECKING:
    from rich.table import Table

    from chatledger.annotate._agreement import AgreementReport
    from chatledger.annotate._judge_agreement import AgreementInterval, JudgeAgreement


@annotate_app.command("agreement")
def agreement_command(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="A.jsonl [B.jsonl]",
            help="two annotators' gold files (or one, with --run: the judge against it)",
        ),
    ],
    chunks: Annotated[
        Path | None, typer.Option(help="chunks file (.jsonl): participants and message order")
    ] = None,
    run: Annotated[
        Path | None,
        typer.Option(help="a run directory with judgements: the judge against each person"),
    ] = None,
    judge: Annotated[
        str | None, typer.Option(help="the run's judge (default: the only one)")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="the model whose items were prefilled (default: the gold's prefill)"),
    ] = None,
    aggregate: Annotated[
        AggregateName | None,
        typer.Option(help="headline per field: micro (pooled items, the default) or macro"),
    ] = None,
    resamples: Annotated[int, typer.Option(min=1, help="bootstrap resamples (over chunks)")] = 2000,
    seed: Annotated[int, typer.Option(help="the bootstrap's seed")] = 0,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Agreement of two annotators, and of a run's judge with a person.

    Per field the layer-1 scorers (symmetric where they are), Krippendorff's α on the
    enumerated labels, with bootstrap intervals; with --run, Cohen's κ of the run's judge
    against each person's accept/edit/delete decisions."""
    from chatledger.annotate._agreement import annotator_agreement
    from chatledger.annotate._judge_agreement import judge_agreement, read_annotations
    from chatledger.core import InputError
    from chatledger.scoring import ScoringConfig

    if len(files) > 2:
        raise InputError(f"give one or two gold files, not {len(files)}")
    if len(files) == 1 and run is None:
        raise InputError(
            "one gold file: agreement needs a second annotator's file, or --run RUN_DIR for "
            "the judge against this one",
            path=files[0],
        )
    if run is None and (judge is not None or model is not None):
        raise InputError("--judge and --model need --run RUN_DIR")

    def judged(path: Path) -> JudgeAgreement:
        assert run is not None
        return judge_agreement(
            path, run, model=model, judge=judge, n_resamples=resamples, seed=seed
        )

    if len(files) == 1:
        result = judged(files[0])
        if output_format is OutputFormat.json:
            emit_json(result.model_dump(mode="json"))
        else:
            print_judge(result)
        return

    config = ScoringConfig.default()
    if aggregate is not None:
        config = config.model_copy(update={"aggregate": aggregate.value})
    report = annotator_agreement(
        files[0], files[1], chunks=chunks, n_resamples=resamples, seed=seed, config=config
    )
    skipped: list[str] = []
    if run is not None:
        judges = []
        for path in files:
            if read_annotations(path):
                judges.append(judged(path))
            else:
                skipped.append(str(path))
        if not judges:
            raise InputError(
                "neither file has annotation blocks (the decisions the annotation page "
                "records): the judge cannot be compared with them",
                path=files[0],
            )
        report = report.model_copy(update={"judges": judges})
    if output_format is OutputFormat.json:
        emit_json(report.model_dump(mode="json"))
        return
    print_agreement(report)
    for name in skipped:
        note(f"{name} has no annotation blocks: no judge agreement for it")
    for result in report.judges:
        print_judge(result)


def _interval(iv: AgreementInterval | None) -> str:
    return f"[{iv.low:.3f}, {iv.high:.3f}]" if iv is not None else "—"


def _table(title: str) -> Table:
    from rich import box
    from rich.table import Table

    return Table(
        title=title,
        title_justify="left",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
    )


def print_agreement(report: AgreementReport) -> None:
    """Per field and per enumerated part, in 80 columns."""
    pct = f"{round(100 * report.confidence)} %"
    fields = _table(
        f"Agreement — {report.annotator_a} and {report.annotator_b}, "
        f"{report.chunks} chunks in common"
    )
    fields.add_column("field", no_wrap=True, min_width=20)
    fields.add_column("chunks", justify="right", no_wrap=True)
    fields.add_column("A", justify="right", no_wrap=True)
    fields.add_column("B", justify="right", no_wrap=True)
    fields.add_column("paired", justify="right", no_wrap=True)
    fields.add_column(report.aggregate, justify="right", no_wrap=True)
    fields.add_column(pct, no_wrap=True)
    fields.add_column("macro" if report.aggregate == "micro" else "micro", justify="right")
    for name, f in report.fields.items():
        other = f.macro if report.aggregate == "micro" else f.micro
        fields.add_row(
            name + ("" if f.symmetric else " *"),
            str(f.chunks),
            str(f.items_a),
            str(f.items_b),
            "—" if f.matched is None else f"{f.matched:g}",
            styled(f"{f.agreement:.3f}", "bold"),
            _interval(f.intervals[report.aggregate]),
            f"{other:.3f}",
        )
    caption = [
        "the layer-1 scorer of each field, the mean of both directions (A as the",
        "reference, then B), over the chunks where both cover the field;",
        "A, B: items each wrote; paired: items the matching paired",
    ]
    if any(not f.symmetric for f in report.fields.values()):
        caption.append("* not symmetric: the two directions can differ (a_vs_b, b_vs_a in json)")
    fields.caption = "\n".join(caption)
    stdout.print(fields)
    if report.alpha:
        labels = _table("Krippendorff's α (nominal) on the labels of items both wrote")
        # Fits 80 columns: the longest label is 28 characters.
        labels.add_column("label", no_wrap=True, min_width=24)
        labels.add_column("units", justify="right", no_wrap=True)
        labels.add_column("same", justify="right", no_wrap=True)
        labels.add_column("A+", justify="right", no_wrap=True)
        labels.add_column("B+", justify="right", no_wrap=True)
        labels.add_column("α", justify="right", no_wrap=True)
        labels.add_column(pct, no_wrap=True)
        for part, a in report.alpha.items():
            labels.add_row(
                part,
                str(a.units),
                str(a.agreeing),
                str(a.only_a),
                str(a.only_b),
                styled(f"{a.alpha:.3f}", "bold") if a.alpha is not None else "—",
                _interval(a.interval),
            )
        labels.caption = (
            "units: items both annotators wrote (paired as docs/annotate.md says); same: of\n"
            "them, the same label; A+, B+: items only A or only B wrote;\n"
            "α —: undefined (fewer than two labels among the units)"
        )
        stdout.print(labels)
    if report.only_a or report.only_b or report.unknown_chunks:
        stdout.print(
            f"chunks only in A {len(report.only_a)}  only in B {len(report.only_b)}  "
            f"not in the chunks file {len(report.unknown_chunks)}"
        )
    for problem in report.problems[:10]:
        stdout.print(styled("problem", "yellow"), problem)


def print_judge(result: JudgeAgreement) -> None:
    """κ of both readings with their 2×2 tables."""
    table = _table(
        f"Judge {result.judge} vs {result.annotator} on {result.model}: "
        f"{result.items} items, {result.chunks} chunks"
    )
    table.add_column("person", no_wrap=True, min_width=18)
    table.add_column("κ", justify="right", no_wrap=True)
    table.add_column(f"{round(100 * result.confidence)} %", no_wrap=True)
    table.add_column("flagged c/k", justify="right", no_wrap=True)
    table.add_column("none c/k", justify="right", no_wrap=True)
    for reading in (result.deleted, result.deleted_or_edited):
        t = reading.table
        table.add_row(
            reading.reading.replace("_", " "),
            styled(f"{reading.kappa:.3f}", "bold"),
            _interval(reading.interval),
            f"{t.flagged_changed}/{t.flagged_kept}",
            f"{t.clean_changed}/{t.clean_kept}",
        )
    table.caption = (
        "flagged: the judge gave an issue label; none: it said none; c/k: items the\n"
        "person changed (deleted; or deleted or edited) / kept"
    )
    stdout.print(table)
    if result.mismatched:
        note(
            f"{len(result.mismatched)} chunk field(s) left out: the run's items differ "
            "from the prefill's"
        )
