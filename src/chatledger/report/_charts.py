"""The report's Plotly figures, as JSON-ready dicts; a chart the run cannot support is a note.

This module: the shared pieces and the charts of scores (fingerprint, layer gap, cost–quality).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go  # type: ignore[import-untyped, unused-ignore]
import plotly.io as pio  # type: ignore[import-untyped, unused-ignore]

from chatledger.core import SCHEMA_FIELDS
from chatledger.record import FieldCounts, Interval
from chatledger.report._load import RunFiles
from chatledger.report._style import LAYER_COLOURS, SCORE_SCALE, axis, base_layout, plot_text

LAYERS = ("extraction", "judge", "downstream")


@dataclass(frozen=True)
class Chart:
    """A figure to draw, or the reason there is none (shown in its place)."""

    figure: dict[str, Any] | None = None
    note: str | None = None


def figure_json(fig: go.Figure) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(pio.to_json(fig, engine="json"))
    return data


def interval(files: RunFiles, model: str, key: str) -> Interval | None:
    """The bootstrap interval of ``key`` (``overall``, a layer, ``extraction.<field>``)."""
    stats = files.run.stats
    return stats.interval(model, key) if stats is not None else None


def no_interval(files: RunFiles, model: str, key: str) -> str | None:
    """Why ``key`` has no interval ("too few conversations to tell (k = 3)", "few items
    (n = 5)"), None when it has one or the run says nothing."""
    stats = files.run.stats
    return stats.why_no_interval(model, key) if stats is not None else None


def _fmt_components(components: dict[str, float]) -> str:
    return "<br>".join(f"  {plot_text(k)}: {v:.3f}" for k, v in components.items())


def _fmt_counts(aggregate: str, counts: FieldCounts) -> str:
    """The headline's aggregate and the counts behind it, for a hover label."""
    micro = counts.micro.get("score")
    lines = [
        f"{aggregate} (macro {counts.macro:.3f}"
        + (f", micro {micro:.3f})" if micro is not None else ")")
    ]
    if "f1" in counts.micro:
        matched = f"{counts.n_matched:g}"
        lines.append(f"matched {matched} / ref {counts.n_reference} / pred {counts.n_predicted}")
    lines.append(f"both empty {counts.both_empty} of {counts.chunks} chunks")
    return "<br>".join(lines)


def schema_fields(files: RunFiles) -> list[str]:
    schema = files.run.scoring_settings().extraction_schema
    fields = list(SCHEMA_FIELDS.get(schema, SCHEMA_FIELDS["v3"]))
    present = {f for m in files.run.models for f in m.fields}
    return [f for f in fields if f in present]


def fingerprint(files: RunFiles) -> Chart:
    """Models × fields heatmap of layer-1 scores; components and interval on hover."""
    fields = schema_fields(files)
    if not fields:
        return Chart(note="No extraction layer in this run: there are no field scores to show.")
    models = files.model_names
    z, hover = [], []
    for name in models:
        model = files.model(name)
        row, texts = [], []
        for f in fields:
            value = model.fields.get(f)
            row.append(value)
            parts = [_fmt_components(model.field_components.get(f, {}))]
            counts = model.field_counts.get(f)
            if counts is not None:
                parts.insert(0, _fmt_counts(model.aggregate, counts))
            ci = interval(files, name, f"extraction.{f}")
            if ci:
                widened = " (widened to the estimate)" if "widened" in (ci.method or "") else ""
                parts.insert(0, f"interval [{ci.low:.3f}, {ci.high:.3f}]{widened}")
            elif (why := no_interval(files, name, f"extraction.{f}")) is not None:
                parts.insert(0, f"no interval: {why}")
            texts.append("<br>".join(p for p in parts if p))
        z.append(row)
        hover.append(texts)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=fields,
            y=[plot_text(m) for m in models],
            customdata=hover,
            zmin=0.0,
            zmax=1.0,
            colorscale=SCORE_SCALE,
            texttemplate="%{z:.2f}",
            textfont={"size": 11},
            xgap=2,
            ygap=2,
            colorbar={"title": {"text": "score"}, "thickness": 12, "len": 0.9},
            hovertemplate="<b>%{y}</b> · %{x}: %{z:.3f}<br>%{customdata}<extra></extra>",
        )
    )
    fig.update_layout(
        base_layout(
            height=150 + 46 * len(models),
            margin={"l": 10, "r": 10, "t": 10, "b": 110},
            xaxis=axis("", tickangle=-40, showgrid=False),
            yaxis=axis("", autorange="reversed", showgrid=False),
        )
    )
    return Chart(figure_json(fig))


def layer_gap(files: RunFiles) -> Chart:
    """Grouped bars: each layer's composite per model, with its bootstrap interval."""
    layers = [x for x in LAYERS if x in files.run.layers_run]
    if len(layers) < 2:
        only = layers[0] if layers else "none"
        return Chart(note=f"Only one layer ran ({only}): there is no gap between layers to show.")
    models = files.model_names
    fig = go.Figure()
    for layer in layers:
        values, plus, minus = [], [], []
        for name in models:
            value = files.model(name).layers.get(layer)
            ci = interval(files, name, layer)
            values.append(value)
            plus.append(max(0.0, ci.high - value) if ci and value is not None else 0.0)
            minus.append(max(0.0, value - ci.low) if ci and value is not None else 0.0)
        fig.add_trace(
            go.Bar(
                name=layer,
                x=[plot_text(m) for m in models],
                y=values,
                marker_color=LAYER_COLOURS[layer],
                error_y={
                    "type": "data",
                    "array": plus,
                    "arrayminus": minus,
                    "color": "#52606d",
                    "thickness": 1.2,
                    "width": 4,
                },
                hovertemplate=f"<b>%{{x}}</b><br>{layer}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        base_layout(
            barmode="group",
            height=380,
            yaxis=axis("composite (0–1)", range=[0, 1.05]),
            xaxis=axis("", showgrid=False),
            legend={"orientation": "h", "y": 1.08, "x": 0},
            margin={"l": 60, "r": 20, "t": 40, "b": 60},
        )
    )
    return Chart(figure_json(fig))


def pareto_frontier(points: list[tuple[str, float, float]]) -> list[str]:
    """Models on the cost–quality frontier, cheapest first, of ``(name, cost, quality)`` points:
    a model is on it when no other is at most as dear and strictly better, or strictly cheaper
    and at least as good."""
    frontier = []
    for name, cost, quality in points:
        dominated = any(
            (c <= cost and q > quality) or (c < cost and q >= quality)
            for other, c, q in points
            if other != name
        )
        if not dominated:
            frontier.append((cost, -quality, name))
    return [name for _, _, name in sorted(frontier)]


def pareto_scatter(
    points: list[tuple[str, float, float]],
    frontier: list[str],
    intervals: dict[str, Interval | None],
    colours: dict[str, str],
    label: str,
    unit: str,
    quality: str,
) -> go.Figure:
    """Cost (or latency) against quality, one marker per model with its interval; the Pareto
    frontier drawn as a step line and its members filled. Shared by both report pages."""
    fig = go.Figure()
    position = {name: (x, y) for name, x, y in points}
    if len(frontier) >= 2:
        fig.add_trace(
            go.Scatter(
                x=[position[m][0] for m in frontier],
                y=[position[m][1] for m in frontier],
                mode="lines",
                line={"shape": "hv", "dash": "dash", "color": "#7b8794", "width": 1.5},
                name="Pareto frontier",
                hoverinfo="skip",
                showlegend=False,
            )
        )
    top = max(x for _, x, _ in points)
    for name, x, y in points:
        ci = intervals.get(name)
        on = name in frontier
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers+text",
                name=plot_text(name),
                text=[plot_text(name)],
                # Labels grow away from the nearer edge of the plot.
                textposition="top right" if x <= top / 2 else "top left",
                marker={
                    "size": 14 if on else 10,
                    "color": colours[name],
                    "line": {"width": 2 if on else 0, "color": "#1f2933"},
                    "symbol": "circle" if on else "circle-open",
                },
                error_y={
                    "type": "data",
                    "array": [max(0.0, ci.high - y)] if ci else [0.0],
                    "arrayminus": [max(0.0, y - ci.low)] if ci else [0.0],
                    "color": colours[name],
                    "thickness": 1,
                },
                hovertemplate=(
                    f"<b>{plot_text(name)}</b><br>{label}: %{{x:.4g}} {unit}"
                    f"<br>{quality}: %{{y:.3f}}"
                    + ("<br>on the frontier" if on else "<br>dominated")
                    + "<extra></extra>"
                ),
                showlegend=False,
                cliponaxis=False,
            )
        )
    fig.update_layout(
        base_layout(
            height=400,
            # Room around the points so their labels never sit on the plot's edge.
            xaxis=axis(label, range=[-0.08 * top, 1.12 * top]),
            yaxis=axis(quality, range=[0, 1.1]),
            margin={"l": 60, "r": 30, "t": 30, "b": 50},
        )
    )
    return fig


def cost_quality(files: RunFiles, colours: dict[str, str]) -> tuple[Chart, list[str]]:
    """Overall composite against cost per chunk (or latency when no model has a cost)."""
    models = files.model_names
    usage = {m: files.model(m).usage for m in models}
    costs = {m: u.cost_per_chunk_usd for m, u in usage.items()}
    latency = {m: u.latency_per_chunk_s for m, u in usage.items()}
    if any(v > 0 for v in costs.values()):
        label, unit = "cost per chunk (USD)", "$"
        known = dict(costs)  # a cost of 0 next to priced models is a free model: plot it
        lead = ""
    elif any(v > 0 for v in latency.values()):
        label, unit = "latency per chunk (s)", "s"
        known = {m: v for m, v in latency.items() if v > 0}
        lead = "No model in this run reports a cost, so quality is plotted against latency. "
    else:
        return (
            Chart(
                note="No cost data and no latency data in this run: every model reports cost 0 "
                "and latency 0 (offline or simulated models), so there is no trade-off to plot."
            ),
            [],
        )
    left_out = [m for m in models if m not in known]
    points = [(m, known[m], files.model(m).overall) for m in models if m in known]
    if len(points) < 2:
        only = ", ".join(f"{m}: {v:.4g} {unit}" for m, v, _ in points) or "none"
        return (
            Chart(
                note=lead
                + f"Only one model reports a {label.split(' per')[0]} ({only}): a trade-off needs "
                "at least two."
            ),
            [],
        )
    frontier = pareto_frontier(points)
    intervals = {name: interval(files, name, "overall") for name, _, _ in points}
    fig = pareto_scatter(points, frontier, intervals, colours, label, unit, "overall composite")
    note = lead
    if left_out:
        note += f"Not plotted (no {label.split(' per')[0]} reported): {', '.join(left_out)}."
    return Chart(figure_json(fig), note.strip() or None), frontier
