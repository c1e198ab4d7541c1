"""Charts of how far to trust a ranking: weight sensitivity, the layer-weight map, calibration."""

from __future__ import annotations

import math

import plotly.graph_objects as go  # type: ignore[import-untyped, unused-ignore]
from plotly.subplots import make_subplots  # type: ignore[import-untyped, unused-ignore]

from chatledger.record import SimplexPoint, WeightSensitivity
from chatledger.report._charts import Chart, figure_json
from chatledger.report._load import RunFiles
from chatledger.report._style import BREAKS_COLOUR, HOLDS_COLOUR, axis, base_layout, plot_text


def _pair_label(pair: str) -> str:
    a, _, b = pair.partition("|")
    return f"{plot_text(a)} ↔ {plot_text(b)}"


def swap_probabilities(files: RunFiles) -> Chart:
    """Horizontal bars: the probability that two models swap under re-drawn weights."""
    stats = files.run.stats
    sensitivity = stats.weight_sensitivity if stats is not None else WeightSensitivity()
    found = (("fields", sensitivity.fields), ("layers", sensitivity.layers))
    kinds = [(k, s) for k, s in found if s is not None]
    if not kinds:
        return Chart(note="No weight sensitivity in this run (it needs at least two models).")
    every = {p for _, s in kinds for p in s.swap_probability}
    worst = {p: max(s.swap_probability.get(p, 0.0) for _, s in kinds) for p in every}
    pairs = sorted((p for p in every if worst[p] > 0), key=lambda p: (worst[p], p))
    steady = len(every) - len(pairs)
    draws = max(s.n_draws for _, s in kinds)
    if not pairs:
        return Chart(note=f"No pair of models swapped places in any of the {draws} draws.")
    note = (
        f"{steady} other pair{'s' if steady != 1 else ''} never swapped in {draws} draws."
        if steady
        else None
    )
    fig = go.Figure()
    colours = {"fields": "#5b7db1", "layers": "#f28e2b"}
    for kind, s in kinds:
        fig.add_trace(
            go.Bar(
                name=f"{kind[:-1]} weights re-drawn",
                y=[_pair_label(p) for p in pairs],
                x=[s.swap_probability.get(p, 0.0) for p in pairs],
                orientation="h",
                marker_color=colours[kind],
                hovertemplate="%{y}: P(swap) = %{x:.3f}<extra>" + kind + "</extra>",
            )
        )
    fig.update_layout(
        base_layout(
            barmode="group",
            height=130 + 26 * len(pairs) * len(kinds),
            xaxis=axis("probability that the pair swaps places", range=[0, 1]),
            yaxis=axis(""),
            legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
            margin={"l": 10, "r": 20, "t": 40, "b": 50},
        )
    )
    return Chart(figure_json(fig), note)


def _ranking_text(ranking: list[str]) -> str:
    return " > ".join(plot_text(m) for m in ranking)


def layer_simplex(files: RunFiles) -> Chart:
    """Where on the layer-weight simplex the configured ranking holds (ternary or line)."""
    stats = files.run.stats
    grid = stats.weight_sensitivity.layer_simplex if stats is not None else None
    if grid is None:
        return Chart(
            note="No layer-weight map: it needs at least two layers and two models in the run."
        )
    layers = grid.layers
    configured = files.run.layer_weights_used
    points = grid.points
    groups = [
        ("configured ranking holds", HOLDS_COLOUR, [p for p in points if p.holds]),
        ("ranking changes", BREAKS_COLOUR, [p for p in points if not p.holds]),
    ]

    def hover(group: list[SimplexPoint]) -> list[str]:
        return [
            "<br>".join(f"{k} {v:.2f}" for k, v in p.weights.items())
            + "<br>"
            + _ranking_text(p.ranking)
            for p in group
        ]

    fig = go.Figure()
    if len(layers) == 3:
        a, b, c = layers
        for name, colour, group in groups:
            fig.add_trace(
                go.Scatterternary(
                    a=[p.weights[a] for p in group],
                    b=[p.weights[b] for p in group],
                    c=[p.weights[c] for p in group],
                    mode="markers",
                    name=name,
                    marker={"color": colour, "size": 9, "symbol": "hexagon"},
                    text=hover(group),
                    hovertemplate="%{text}<extra></extra>",
                )
            )
        fig.add_trace(
            go.Scatterternary(
                a=[configured.get(a, 0.0)],
                b=[configured.get(b, 0.0)],
                c=[configured.get(c, 0.0)],
                mode="markers",
                name="configured weights",
                marker={"symbol": "star", "size": 18, "color": "#1f2933"},
                hovertemplate="configured weights<extra></extra>",
            )
        )
        fig.update_layout(
            base_layout(
                height=460,
                ternary={
                    "sum": 1,
                    "aaxis": {"title": {"text": a}, "gridcolor": "#e4e7eb"},
                    "baxis": {"title": {"text": b}, "gridcolor": "#e4e7eb"},
                    "caxis": {"title": {"text": c}, "gridcolor": "#e4e7eb"},
                    "bgcolor": "#ffffff",
                },
                margin={"l": 60, "r": 60, "t": 50, "b": 40},
                legend={"orientation": "v", "y": 1.0, "x": 0.0},
            )
        )
    else:
        first = layers[0]
        for name, colour, group in groups:
            fig.add_trace(
                go.Scatter(
                    x=[p.weights[first] for p in group],
                    y=[1] * len(group),
                    mode="markers",
                    name=name,
                    marker={"color": colour, "size": 14, "symbol": "square"},
                    text=hover(group),
                    hovertemplate="%{text}<extra></extra>",
                )
            )
        fig.add_trace(
            go.Scatter(
                x=[configured.get(first, 0.0)],
                y=[1],
                mode="markers",
                name="configured weights",
                marker={"symbol": "star", "size": 18, "color": "#1f2933"},
            )
        )
        fig.update_layout(
            base_layout(
                height=240,
                legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
                margin={"l": 30, "r": 30, "t": 40, "b": 60},
                xaxis=axis(
                    f"weight of {first} (the rest goes to {layers[1]})", range=[-0.03, 1.03]
                ),
                yaxis={"visible": False, "range": [0.5, 1.5]},
            )
        )
    return Chart(figure_json(fig))


def calibration(files: RunFiles, colours: dict[str, str]) -> Chart:
    """Reliability diagram per model: accuracy per confidence bin, n above each bar."""
    models = [m for m in files.model_names if files.model(m).calibration]
    if not models:
        return Chart(
            note="No calibration data: no model stated item confidences, or there was no "
            "extraction layer."
        )
    cols = min(4, len(models))
    rows = math.ceil(len(models) / cols)
    titles = []
    for m in models:
        conf = files.model(m).field_components.get("confidence", {})
        ece, n = conf.get("ece"), conf.get("n_items")
        extra = f" — ECE {ece:.3f}, n = {int(n)}" if ece is not None and n is not None else ""
        titles.append(f"{plot_text(m)}{extra}")
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=titles,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        vertical_spacing=0.18 if rows > 1 else 0.1,
    )
    for k, name in enumerate(models):
        r, c = k // cols + 1, k % cols + 1
        bins = files.model(name).calibration
        fig.add_trace(
            go.Scatter(
                x=[0, 1],
                y=[0, 1],
                mode="lines",
                line={"dash": "dot", "color": "#9aa5b1", "width": 1},
                hoverinfo="skip",
                showlegend=False,
            ),
            row=r,
            col=c,
        )
        fig.add_trace(
            go.Bar(
                x=[(b.low + b.high) / 2 for b in bins],
                y=[b.accuracy for b in bins],
                width=[b.high - b.low for b in bins],
                marker={"color": colours[name], "line": {"color": "#ffffff", "width": 1}},
                text=[str(int(b.n)) for b in bins],
                textposition="outside",
                textfont={"size": 10, "color": "#52606d"},
                constraintext="none",
                customdata=[[b.low, b.high, b.confidence, int(b.n)] for b in bins],
                hovertemplate=(
                    "confidence (%{customdata[0]:.1f}, %{customdata[1]:.1f}]<br>"
                    "mean confidence %{customdata[2]:.2f}<br>accuracy %{y:.2f}"
                    "<br>n = %{customdata[3]}<extra>" + plot_text(name) + "</extra>"
                ),
                showlegend=False,
                cliponaxis=False,
            ),
            row=r,
            col=c,
        )
        fig.update_xaxes(axis("stated confidence", range=[0, 1], dtick=0.2), row=r, col=c)
        fig.update_yaxes(axis("accuracy" if c == 1 else "", range=[0, 1.15]), row=r, col=c)
    layout = base_layout(height=320 * rows + 40, margin={"l": 60, "r": 20, "t": 50, "b": 50})
    layout.pop("template")
    fig.update_layout(template="none", **layout)
    fig.update_annotations(font={"size": 12})
    return Chart(figure_json(fig))
