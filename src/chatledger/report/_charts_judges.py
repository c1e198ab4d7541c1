"""Charts of the judge layer: per-chunk score distributions and issue labels."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go  # type: ignore[import-untyped, unused-ignore]

from chatledger.judge import ISSUE_LABELS
from chatledger.report._charts import Chart, figure_json
from chatledger.report._load import RunFiles
from chatledger.report._select import DrillSelection
from chatledger.report._style import LABEL_COLOURS, axis, base_layout, plot_text


def _box_stats(values: list[float]) -> dict[str, list[float]]:
    """The box of ``values`` as plotly draws one (quartiles, fences at 1.5 IQR), precomputed so
    the page carries five numbers per model instead of every chunk."""
    data = np.asarray(values, dtype=float)
    q1, median, q3 = (float(x) for x in np.percentile(data, [25, 50, 75]))
    reach = 1.5 * (q3 - q1)
    inside = data[(data >= q1 - reach) & (data <= q3 + reach)]
    return {
        "q1": [q1],
        "median": [median],
        "q3": [q3],
        "lowerfence": [float(inside.min())],
        "upperfence": [float(inside.max())],
        "mean": [float(data.mean())],
    }


def judge_distribution(
    files: RunFiles, colours: dict[str, str], selection: DrillSelection | None = None
) -> Chart:
    """Per-chunk judge composites per model: a box with every chunk as a point; when the
    drill-down shows a selection, the box is computed over every chunk and the points are the
    chunks shown (a click opens one)."""
    if "judge" not in files.run.layers_run:
        return Chart(note="No judge layer in this run.")
    index = {c.chunk_id: i for i, c in enumerate(files.chunks or [])}
    sampled = selection is not None and selection.sampled
    fig = go.Figure()
    counted = 0
    for model_index, name in enumerate(files.model_names):
        every = files.scores.composite("judge", name)
        if not every:
            continue
        counted = max(counted, len(every))
        values = list(every.items())
        if sampled:
            values = [(c, v) for c, v in values if c in index]
        label = plot_text(name)
        if sampled:
            fig.add_trace(
                go.Box(
                    x=[label],
                    name=label,
                    **_box_stats(list(every.values())),
                    boxpoints=False,
                    line={"color": colours[name]},
                    fillcolor="rgba(0,0,0,0)",
                    hoverinfo="y",
                    showlegend=False,
                )
            )
        fig.add_trace(
            go.Box(
                x=[label] * len(values) if sampled else None,
                y=[v for _, v in values],
                name=label,
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker={"color": colours[name], "size": 5, "opacity": 0.7},
                line={"color": colours[name], "width": 0} if sampled else {"color": colours[name]},
                fillcolor="rgba(0,0,0,0)",
                hoveron="points" if sampled else None,
                text=[plot_text(c) for c, _ in values],
                customdata=[[index.get(c, -1), model_index] for c, _ in values],
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
    note = None
    if sampled and selection is not None:
        note = (
            f"Each box summarises all {counted:,} judged chunks of its model; the dots are the "
            f"{len(index):,} chunks shown in the drill-down."
        )
    return Chart(figure_json(fig), note)


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
