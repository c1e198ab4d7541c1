"""Charts of the judge layer: per-chunk score distributions and issue labels."""

from __future__ import annotations

import plotly.graph_objects as go  # type: ignore[import-untyped, unused-ignore]

from chatledger.judge import ISSUE_LABELS
from chatledger.report._charts import Chart, figure_json
from chatledger.report._load import RunFiles
from chatledger.report._style import LABEL_COLOURS, axis, base_layout, plot_text
from chatledger.runs import RUN_LEVEL


def judge_distribution(files: RunFiles, colours: dict[str, str]) -> Chart:
    """Per-chunk judge composites per model (box with every chunk as a point)."""
    if "judge" not in files.run.layers_run:
        return Chart(note="No judge layer in this run.")
    chunk_ids = [c.chunk_id for c in files.chunks] if files.chunks else []
    index = {cid: i for i, cid in enumerate(chunk_ids)}
    fig = go.Figure()
    for name in files.model_names:
        values = [
            (chunk, value)
            for (model, chunk, layer, fname, comp), value in files.scores.items()
            if model == name
            and layer == "judge"
            and fname == "composite"
            and comp == "score"
            and chunk != RUN_LEVEL
        ]
        if not values:
            continue
        fig.add_trace(
            go.Box(
                y=[v for _, v in values],
                name=plot_text(name),
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker={"color": colours[name], "size": 5, "opacity": 0.7},
                line={"color": colours[name]},
                fillcolor="rgba(0,0,0,0)",
                text=[plot_text(c) for c, _ in values],
                customdata=[index.get(c, -1) for c, _ in values],
                hovertemplate="chunk %{text}<br>judge composite %{y:.3f}<extra></extra>",
                showlegend=False,
            )
        )
    if not fig.data:
        return Chart(note="The judge layer ran but no per-chunk judge scores were recorded.")
    fig.update_layout(
        base_layout(
            height=360,
            yaxis=axis("judge composite per chunk", range=[0, 1.05]),
            xaxis=axis("", showgrid=False),
        )
    )
    return Chart(figure_json(fig))


def label_breakdown(files: RunFiles) -> Chart:
    """Stacked bars: the share of each model's judged items under each issue label."""
    models = [
        m for m in files.model_names if (judge := files.model(m).judge) and judge.label_counts
    ]
    if not models:
        return Chart(note="No issue labels: there is no judge layer, or no item was judged.")
    fig = go.Figure()
    order = [x for x in LABEL_COLOURS if x in ISSUE_LABELS]
    order += [x for x in ISSUE_LABELS if x not in order]
    for label in order:
        counts = [_label_counts(files, m).get(label, 0) for m in models]
        totals = [sum(_label_counts(files, m).values()) or 1 for m in models]
        fig.add_trace(
            go.Bar(
                name=label.replace("_", " "),
                y=[plot_text(m) for m in models],
                x=[c / t for c, t in zip(counts, totals, strict=True)],
                customdata=counts,
                orientation="h",
                marker_color=LABEL_COLOURS.get(label, "#cbd2d9"),
                hovertemplate=(
                    "<b>%{y}</b><br>" + label + ": %{customdata} items (%{x:.1%})<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        base_layout(
            barmode="stack",
            height=140 + 44 * len(models),
            xaxis=axis("share of judged items", range=[0, 1], tickformat=".0%"),
            yaxis=axis("", autorange="reversed"),
            legend={"orientation": "h", "y": -0.3, "x": 0, "traceorder": "normal"},
            margin={"l": 10, "r": 20, "t": 10, "b": 90},
        )
    )
    return Chart(figure_json(fig))


def _label_counts(files: RunFiles, model: str) -> dict[str, int]:
    judge = files.model(model).judge
    return judge.label_counts if judge is not None else {}
