"""``chatledger stats DIR`` and ``chatledger audit``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, console, emit_json, styled

if TYPE_CHECKING:
    from chatledger.record import HumanGold, Interval, RunStats


WIDENED_MARK = "†"


def _widened(entry: Interval | None) -> bool:
    return entry is not None and "widened" in (entry.method or "")


def _interval(entry: Interval | None, why: str | None = None, value: float | None = None) -> str:
    """The estimate (the leaderboard's figure) over its interval; † when it was widened;
    without one, the figure over why ("too few conversations to tell (k = 3)", "few items
    (n = 5)")."""
    if entry is None:
        if value is None:
            return why or "—"
        return f"{value:.3f}\n{why}" if why else f"{value:.3f}"
    mark = f" {WIDENED_MARK}" if _widened(entry) else ""
    return f"{entry.estimate:.3f}\n[{entry.low:.3f}, {entry.high:.3f}]{mark}"


_FIGURES = (
    ("overall", "overall"),
    ("extraction", "extraction"),
    ("judge", "judge"),
    ("downstream", "downstream"),
    ("fields", "each field"),
)


def _resampling(stats: RunStats, layers: list[str]) -> str:
    """What each kind of interval resamples, with the number of units."""
    if not stats.resampling:
        return (
            "resampled units — not recorded (a run written before they were: its intervals "
            "are of per-chunk means and may differ slightly from the leaderboard's figures)"
        )
    shown = {"overall", *layers, *(["fields"] if "extraction" in layers else [])}
    parts = []
    for kind, label in _FIGURES:
        if kind not in shown:
            continue
        unit = stats.resampling.get(kind)
        if unit is None:
            parts.append(f"{label}: not recorded")
            continue
        n = stats.n_conversations if unit == "conversations" else stats.n_chunks
        parts.append(f"{label}: {n} {unit}" if n is not None else f"{label}: {unit}")
    return "resampled units — " + "; ".join(parts)


def _interval_label(key: str) -> str:
    return f"field {key.split('.', 1)[1]}" if key.startswith("extraction.") else key


@app.command("stats")
def stats_command(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Intervals, paired differences, rank probabilities and weight sensitivity of a run."""
    from rich.table import Table

    from chatledger.record import ConversationRun, read_run_record

    record = read_run_record(run_dir)
    # A structbench run keeps its intervals per row (its report shows them): no run statistics.
    run = record if isinstance(record, ConversationRun) else None
    stats = run.stats if run is not None else None
    if output_format is OutputFormat.json:
        gold = run.human_gold if run is not None else None
        emit_json(
            {
                "stats": _as_json(stats),
                "human_gold": _as_json(gold) if gold is not None else None,
            }
        )
        return
    if run is None or stats is None:
        console("stdout").print("this run has no statistics (it was written by an older version)")
        return
    layers = run.layers_run
    conversations = (
        f" in {stats.n_conversations} conversations" if stats.n_conversations is not None else ""
    )
    unit = f"; unit: {stats.unit_label()}" if stats.unit is not None else ""
    table = Table(
        title=f"{stats.confidence:.0%} intervals over {stats.n_chunks} chunks"
        f"{conversations} ({stats.bootstrap_resamples} resamples{unit})"
        + ("; each estimate is the leaderboard's figure" if stats.resampling else ""),
        title_justify="left",
    )
    # Intervals wrap at their comma in a narrow terminal rather than being cut.
    table.add_column("model", no_wrap=True)
    table.add_column("overall")
    for layer in layers:
        table.add_column(layer)
    for model in run.leaderboard:
        result = run.model(model)
        table.add_row(
            model,
            _interval(
                stats.interval(model, "overall"),
                stats.why_no_interval(model, "overall"),
                result.overall,
            ),
            *(
                _interval(
                    stats.interval(model, x), stats.why_no_interval(model, x), result.layers.get(x)
                )
                for x in layers
            ),
        )
    console("stdout").print(table)
    console("stdout").print(_resampling(stats, layers))
    if stats.interval_method:
        console("stdout").print(
            f"interval method: {stats.interval_method}; none below {stats.min_units} units"
        )
    if stats.unit == "chunk":
        console("stdout").print(
            "unit: chunks, as the run's config asked (stats: {unit: chunk}): chunks of one "
            "conversation are not independent, so these intervals are narrower than the data "
            "supports"
        )
    if stats.too_few:
        console("stdout").print(f"{stats.too_few}: figures are shown without intervals")
    for model in run.leaderboard:
        few = stats.few_items.get(model, {})
        if few:
            shown = ", ".join(f"{name} few items (n = {n})" for name, n in few.items())
            console("stdout").print(
                f"{model}: no interval for fields with fewer than "
                f"{stats.few_items_threshold} reference items — {shown}"
            )
        concentrated = stats.concentrated.get(model, {})
        if concentrated:
            shown = ", ".join(f"{name} ({note})" for name, note in concentrated.items())
            console("stdout").print(
                f"{model}: no interval for fields whose matches or misses lie in one "
                f"{stats.unit or 'conversation'} — {shown}"
            )
    widened = [
        (model, key, entry)
        for model in run.leaderboard
        for key, entry in stats.intervals.get(model, {}).items()
        if _widened(entry)
    ]
    if widened:
        marked = Table(
            title=f"{WIDENED_MARK} Intervals widened to their estimate (the bootstrap interval "
            "missed it; the method says so)",
            title_justify="left",
        )
        for col in ("model", "figure", "estimate", "interval", "method"):
            marked.add_column(col)
        for model, key, entry in widened:
            marked.add_row(
                model,
                _interval_label(key),
                f"{entry.estimate:.3f}",
                f"[{entry.low:.3f}, {entry.high:.3f}]",
                entry.method or "",
            )
        console("stdout").print(marked)
    else:
        console("stdout").print("no interval was widened: each contains its estimate as drawn")
    ranks = Table(title="Probability of holding each rank (overall)", title_justify="left")
    ranks.add_column("model", no_wrap=True)
    n_models = len(stats.rank_probabilities)
    for rank in range(1, n_models + 1):
        ranks.add_column(f"#{rank}", justify="right")
    for model in run.leaderboard:
        probs = stats.rank_probabilities.get(model, [])
        ranks.add_row(model, *(f"{p:.2f}" for p in probs))
    console("stdout").print(ranks)
    overall_unit = stats.resampling.get("overall")
    diffs = Table(
        title="Paired differences (overall, a − b"
        + (f"; the same resamples of {overall_unit}" if overall_unit else "")
        + ")",
        title_justify="left",
    )
    for col in ("a | b", "difference", "interval", "p-value", "test"):
        diffs.add_column(col)
    for pair, d in stats.paired_differences.items():
        diffs.add_row(
            pair.replace("|", " | "),
            f"{d.difference:+.3f}",
            f"[{d.low:+.3f}, {d.high:+.3f}]"
            if d.low is not None and d.high is not None
            else (d.note or "—"),
            f"{d.p_value:.4f}",
            d.test or "paired bootstrap (1/(B + 1) floor)",
        )
    console("stdout").print(diffs)
    sensitivity = stats.weight_sensitivity
    for kind, s in (("fields", sensitivity.fields), ("layers", sensitivity.layers)):
        if s is None:
            continue
        worst = max(s.swap_probability.items(), key=lambda kv: kv[1], default=("—", 0.0))
        console("stdout").print(
            f"{kind} weights (Dirichlet, concentration {s.concentration:g}): "
            f"Kendall τ mean {s.kendall_tau_mean:.3f}, P(same ranking) "
            f"{s.p_same_ranking:.3f}, most likely swap {worst[0]} ({worst[1]:.3f})"
        )
    simplex = sensitivity.layer_simplex
    if simplex is not None:
        console("stdout").print(
            f"layer-weight simplex (step {simplex.step}): the configured ranking holds on "
            f"{simplex.share_holding:.0%} of the grid"
        )
    gold = run.human_gold
    if gold is not None:
        console("stdout").print(
            f"reference vs human gold ({gold.gold}): composite "
            f"{gold.reference.composite:.3f} on the fields the gold covers"
        )


def _as_json(part: RunStats | HumanGold | None) -> dict[str, Any]:
    """A part of the record as run.json holds it (only what the file set: no added defaults)."""
    return part.model_dump(mode="json", exclude_unset=True) if part is not None else {}


@app.command("audit")
def audit_command(
    reference: Annotated[
        Path | None, typer.Option(help="reference extractions (default: bundled gold)")
    ] = None,
    chunks: Annotated[Path | None, typer.Option(help="chunks file (with --reference)")] = None,
    seed: Annotated[int, typer.Option(help="corruption seed")] = 0,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Apply every corruption operator at rising severity; show each field's score curve.

    Then two constructed cases under the matching rules before and after issue 15: subjects
    compared whole vs on content words, entities paired count-first vs credit-first.
    """
    from rich.table import Table

    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.demo import write_bundled_corpus
    from chatledger.runs import DEFAULT_SEVERITIES, audit_cases, audit_metrics, pitfall_summary

    if (reference is None) != (chunks is None):
        from chatledger.core import InputError

        raise InputError("give both --reference and --chunks, or neither", field="--chunks")
    with tempfile.TemporaryDirectory() as tmp:
        if reference is None or chunks is None:
            chunks, reference = write_bundled_corpus(Path(tmp))
        curves = audit_metrics(read_extractions(reference).records, read_chunks(chunks), seed=seed)
    pitfall = pitfall_summary(curves)
    cases = audit_cases()
    if output_format is OutputFormat.json:
        emit_json(
            {
                "curves": [c.to_dict() for c in curves],
                "keyword_pitfall": pitfall,
                "cases": [c.to_dict() for c in cases],
            }
        )
        return
    table = Table(title="Metric audit: score vs corruption severity", title_justify="left")
    table.add_column("operator")
    table.add_column("matcher")
    table.add_column("field")
    table.add_column(" → ".join(f"{s:g}" for s in DEFAULT_SEVERITIES), no_wrap=True)
    table.add_column("monotone")
    table.add_column("sensitivity", justify="right")
    for c in curves:
        table.add_row(
            c.operator,
            c.matcher,
            c.field,
            " ".join(f"{x:.2f}" for x in c.scores),
            "yes" if c.monotone else styled("NO", "red"),
            f"{c.sensitivity:.3f}",
        )
    console("stdout").print(table)
    shown = ", ".join(f"{m}: {v:.3f}" for m, v in pitfall.items())
    console("stdout").print(
        f"one-keyword pitfall — mean score lost when texts collapse to one word: {shown}"
    )
    for case in cases:
        table_case = Table(
            title=f"Matching case {case.name}: {case.description}", title_justify="left"
        )
        table_case.add_column("measure")
        table_case.add_column(f"before: {case.before_rule}", justify="right")
        table_case.add_column(f"after: {case.after_rule}", justify="right")
        for measure, old, new in case.measures:
            table_case.add_row(measure, _case_value(old), _case_value(new))
        console("stdout").print(table_case)


def _case_value(value: float | int | bool) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}"
