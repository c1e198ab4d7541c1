"""The structbench report's Plotly figures (JSON-ready dicts); a chart the run cannot support is
a note, as in the conversation report. Row names come from prediction files, so every label
passes through ``plot_text``."""

from __future__ import annotations

import plotly.graph_objects as go  # type: ignore[import-untyped, unused-ignore]
from plotly.subplots import make_subplots  # type: ignore[import-untyped, unused-ignore]

from chatledger.record import Interval, PairRow, StrategyCell, StructbenchRow
from chatledger.report._charts import Chart, figure_json, pareto_frontier, pareto_scatter
from chatledger.report._style import (
    CLEAN_COLOUR,
    OUTPUT_KIND_COLOURS,
    axis,
    base_layout,
    model_colours,
    plot_text,
)

METRICS = ("DOC", "MK", "MV", "WV", "micro_f1")
METRIC_LABELS = {
    "DOC": "DOC",
    "MK": "MK",
    "MV": "MV",
    "WV": "WV",
    "micro_f1": "micro F1",
}
DEPTH_METRICS = ("DOC", "MK", "MV", "WV")
_ERROR_BAR = {"color": "#52606d", "thickness": 1.2, "width": 4}


def _interval(row: StructbenchRow, metric: str) -> Interval | None:
    return row.intervals.get(metric)


def _whiskers(rows: list[StructbenchRow], metric: str) -> tuple[list[float], list[float]]:
    plus, minus = [], []
    for row in rows:
        ci, value = _interval(row, metric), row.metric(metric)
        plus.append(max(0.0, ci.high - value) if ci else 0.0)
        minus.append(max(0.0, value - ci.low) if ci else 0.0)
    return plus, minus


def metric_bars(rows: list[StructbenchRow], colours: dict[str, str]) -> Chart:
    """Grouped bars: the five metrics, one bar per row, with bootstrap whiskers."""
    fig = go.Figure()
    labels = [METRIC_LABELS[m] for m in METRICS]
    for row in rows:
        plus, minus = zip(*(_whiskers([row], m) for m in METRICS), strict=True)
        fig.add_trace(
            go.Bar(
                name=plot_text(row.name),
                x=labels,
                y=[row.metric(m) for m in METRICS],
                marker_color=colours[row.name],
                error_y={
                    "type": "data",
                    "array": [p[0] for p in plus],
                    "arrayminus": [m[0] for m in minus],
                    **_ERROR_BAR,
                },
                hovertemplate=f"<b>{plot_text(row.name)}</b><br>%{{x}}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        base_layout(
            barmode="group",
            height=380,
            yaxis=axis("score (0–1)", range=[0, 1.05]),
            xaxis=axis("", showgrid=False),
            legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
            margin={"l": 60, "r": 20, "t": 40, "b": 40},
        )
    )
    return Chart(figure_json(fig))


def _grid(titles: tuple[str, ...]) -> go.Figure:
    return make_subplots(
        rows=2,
        cols=2,
        subplot_titles=list(titles),
        horizontal_spacing=0.09,
        vertical_spacing=0.16,
        shared_xaxes=True,
    )


def _finish_grid(fig: go.Figure, xtitle: str, height: int = 560) -> None:
    fig.update_layout(
        base_layout(
            height=height,
            legend={"orientation": "h", "y": 1.06, "yanchor": "bottom", "x": 0},
            margin={"l": 55, "r": 20, "t": 60, "b": 50},
        )
    )
    for k in range(1, 5):
        suffix = "" if k == 1 else str(k)
        fig.layout[f"yaxis{suffix}"].update(axis("", range=[0, 1.05]))
        fig.layout[f"xaxis{suffix}"].update(axis(xtitle if k > 2 else "", showgrid=False))


def by_depth(rows: list[StructbenchRow], colours: dict[str, str]) -> Chart:
    """DOC, MK, MV and WV against nesting depth: one line per row in each of four panels."""
    depths = sorted({int(d) for row in rows for d in row.by_depth})
    if not depths:
        return Chart(note="No documents were scored, so there is nothing to show by depth.")
    fig = _grid(DEPTH_METRICS)
    for row in rows:
        blocks = row.by_depth
        name = plot_text(row.name)
        xs = [d for d in depths if str(d) in blocks]
        for k, metric in enumerate(DEPTH_METRICS):
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=[getattr(blocks[str(d)], metric) for d in xs],
                    customdata=[blocks[str(d)].n for d in xs],
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=k == 0,
                    line={"color": colours[row.name], "width": 2},
                    marker={"size": 7},
                    hovertemplate=f"<b>{name}</b><br>depth %{{x}} · {metric}: %{{y:.3f}}"
                    "<br>%{customdata} documents<extra></extra>",
                ),
                row=1 + k // 2,
                col=1 + k % 2,
            )
    _finish_grid(fig, "nesting depth")
    fig.update_xaxes(tickmode="array", tickvals=depths)
    return Chart(figure_json(fig))


def by_strategy(pivot: dict[str, dict[str, StrategyCell]]) -> tuple[Chart, dict[str, str]]:
    """Grouped bars per strategy (x), one bar per model, in four metric panels. Colours are per
    model here (a model keeps its colour across its strategies)."""
    strategies = list(pivot)
    models: list[str] = []
    for by_model in pivot.values():
        models += [m for m in by_model if m not in models]
    colours = model_colours(models)
    if not strategies:
        return Chart(note="No row names a prompting strategy (the predictions carry none)."), {}
    if len(strategies) == 1 and len(models) == 1:
        only = f"{models[0]} with {strategies[0]}"
        return (
            Chart(note=f"One model with one strategy ({only}): nothing to compare by strategy."),
            colours,
        )
    fig = _grid(DEPTH_METRICS)
    labels = [plot_text(s) for s in strategies]
    for model in models:
        name = plot_text(model)
        for k, metric in enumerate(DEPTH_METRICS):
            cells = [pivot[s].get(model) for s in strategies]
            fig.add_trace(
                go.Bar(
                    x=labels,
                    y=[getattr(c, metric) if c else None for c in cells],
                    name=name,
                    legendgroup=name,
                    showlegend=k == 0,
                    marker_color=colours[model],
                    hovertemplate=f"<b>{name}</b><br>%{{x}} · {metric}: %{{y:.3f}}<extra></extra>",
                ),
                row=1 + k // 2,
                col=1 + k % 2,
            )
    fig.update_layout(barmode="group")
    _finish_grid(fig, "strategy")
    return Chart(figure_json(fig)), colours


def output_kinds(rows: list[StructbenchRow], kinds: list[str]) -> Chart:
    """Stacked horizontal bars: per row, how many documents showed each kind of bad output,
    and how many were clean."""
    present = [k for k in kinds if any(row.bad_output_counts.get(k) for row in rows)]
    fig = go.Figure()
    names = [plot_text(row.name) for row in rows]
    fig.add_trace(
        go.Bar(
            y=names,
            x=[row.clean_outputs for row in rows],
            orientation="h",
            name="clean",
            marker_color=CLEAN_COLOUR,
            hovertemplate="<b>%{y}</b><br>clean: %{x}<extra></extra>",
        )
    )
    for kind in present:
        fig.add_trace(
            go.Bar(
                y=names,
                x=[row.bad_output_counts.get(kind, 0) for row in rows],
                orientation="h",
                name=kind.replace("_", " "),
                marker_color=OUTPUT_KIND_COLOURS.get(kind, "#9aa5b1"),
                hovertemplate=f"<b>%{{y}}</b><br>{kind}: %{{x}}<extra></extra>",
            )
        )
    fig.update_layout(
        base_layout(
            barmode="stack",
            height=140 + 44 * len(rows),
            xaxis=axis("documents"),
            yaxis=axis("", autorange="reversed"),
            legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
            margin={"l": 10, "r": 20, "t": 50, "b": 50},
        )
    )
    note = None if present else "Every output was a clean single JSON value."
    return Chart(figure_json(fig), note)


def cost_quality(rows: list[StructbenchRow], colours: dict[str, str]) -> tuple[Chart, list[str]]:
    """WV against cost per document (Pareto frontier marked); latency when no row has a cost."""
    usage = {row.name: row.usage for row in rows}
    cost = {n: u.cost_per_document_usd if u else 0.0 for n, u in usage.items()}
    latency = {n: u.latency_per_document_s if u else 0.0 for n, u in usage.items()}
    if any(v > 0 for v in cost.values()):
        known = {n: cost[n] for n, u in usage.items() if u}
        label, unit, lead = "cost per document (USD)", "$", ""
    elif any(v > 0 for v in latency.values()):
        known = {n: v for n, v in latency.items() if v > 0}
        label, unit = "latency per document (s)", "s"
        lead = "No row reports a cost, so quality is plotted against latency. "
    else:
        return (
            Chart(
                note="No row reports a cost or a latency (offline baselines, or predictions "
                "without usage), so there is no cost–quality trade-off to plot."
            ),
            [],
        )
    wv = {row.name: row.WV for row in rows}
    points = [(n, known[n], wv[n]) for n in wv if n in known]
    if len(points) < 2:
        return Chart(note=lead + f"Only one row reports a {label}: a trade-off needs two."), []
    frontier = pareto_frontier(points)
    by_name = {row.name: row for row in rows}
    intervals = {name: _interval(by_name[name], "WV") for name, _, _ in points}
    fig = pareto_scatter(points, frontier, intervals, colours, label, unit, "WV")
    left_out = [n for n in wv if n not in known]
    note = lead + (f"Not plotted (no {label} reported): {', '.join(left_out)}." if left_out else "")
    return Chart(figure_json(fig), note.strip() or None), frontier


def paired_forest(pairs: list[PairRow]) -> Chart:
    """Each pair's WV difference with its paired-bootstrap interval; the line at 0 is 'no
    difference'."""
    shown = [p for p in pairs if p.low is not None and p.high is not None]
    if not shown:
        if pairs:
            return Chart(note="Intervals are off (--resamples 0): differences are listed only.")
        return Chart(note="Paired differences need at least two rows.")
    labels = [f"{plot_text(p.a)} − {plot_text(p.b)}" for p in shown]
    fig = go.Figure(
        go.Scatter(
            x=[p.difference for p in shown],
            y=labels,
            mode="markers",
            marker={"size": 10, "color": "#23395d"},
            error_x={
                "type": "data",
                "array": [(p.high or 0.0) - p.difference for p in shown],
                "arrayminus": [p.difference - (p.low or 0.0) for p in shown],
                **_ERROR_BAR,
            },
            customdata=[p.p_value for p in shown],
            hovertemplate="%{y}<br>ΔWV %{x:+.3f} · p = %{customdata:.4f}<extra></extra>",
        )
    )
    fig.add_vline(x=0, line={"color": "#9aa5b1", "dash": "dot"})
    fig.update_layout(
        base_layout(
            height=120 + 34 * len(shown),
            xaxis=axis("difference in WV (higher-ranked − lower-ranked)"),
            yaxis=axis("", autorange="reversed"),
            margin={"l": 10, "r": 20, "t": 20, "b": 50},
            showlegend=False,
        )
    )
    return Chart(figure_json(fig))
