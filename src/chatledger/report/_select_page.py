"""``build_selection_report``: the self-contained page of a schema selection directory (issue 16).

It reads only ``selection.json`` and shares the run report's machinery: the CSS, the chart
script (common.js), plotly.js inlined once, the safe JSON embedding. Field names, chunk ids,
notes and instructions reach the page through Jinja's autoescaping or ``plot_text``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import plotly  # type: ignore[import-untyped, unused-ignore]
import plotly.graph_objects as go  # type: ignore[import-untyped, unused-ignore]

from chatledger.core import atomic_write_text
from chatledger.report._build import REPORT_FILE, _environment, _plotly_bundle, _static
from chatledger.report._charts import figure_json
from chatledger.report._embed import script_json
from chatledger.report._style import base_layout, plot_text
from chatledger.select import SelectionRecord

PASS_COLOUR = "#59a14f"
FAIL_COLOUR = "#e15759"


def _screening_chart(record: SelectionRecord) -> dict[str, Any] | None:
    rows = sorted(record.screening, key=lambda r: r.composite)
    if not rows:
        return None
    mark = float(record.config.get("screen", {}).get("pass_mark", 0.45))
    fig = go.Figure(
        go.Bar(
            x=[r.composite for r in rows],
            y=[plot_text(r.name) for r in rows],
            orientation="h",
            marker={"color": [PASS_COLOUR if r.passed else FAIL_COLOUR for r in rows]},
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    )
    fig.add_vline(x=mark, line_dash="dash", annotation_text=f"pass mark {mark:.2f}")
    fig.update_layout(
        **base_layout(height=max(260, 24 * len(rows) + 80)),
        xaxis={"title": "screening composite", "range": [0, 1]},
    )
    fig.update_layout(margin={"l": 180})  # room for the field names
    return figure_json(fig)


def _pruning_chart(record: SelectionRecord) -> dict[str, Any] | None:
    tour = record.tournament
    if tour is None or not tour.rows:
        return None
    fig = go.Figure()
    for row in tour.rows:
        means = [sum(row.scores[:i]) / i for i in range(1, len(row.scores) + 1)]
        fig.add_trace(
            go.Scatter(
                x=list(range(1, len(means) + 1)),
                y=means,
                mode="lines+markers",
                name=plot_text(f"{row.schema_name} / {row.style}"),
                line={"dash": "dot" if row.pruned else "solid", "width": 3 if row.rank == 1 else 1},
                hovertemplate=plot_text(f"{row.schema_name} / {row.style}")
                + " after %{x} chunks: %{y:.3f}<extra></extra>",
            )
        )
    fig.update_layout(
        **base_layout(height=420),
        xaxis={"title": "chunks evaluated (the resource)", "dtick": 1},
        yaxis={"title": "running mean score"},
        showlegend=False,
    )
    return figure_json(fig)


def selection_context(record: SelectionRecord) -> dict[str, Any]:
    figures = {
        key: fig
        for key, fig in (
            ("screening", _screening_chart(record)),
            ("pruning", _pruning_chart(record)),
        )
        if fig is not None
    }
    screen = record.config.get("screen", {})
    tour = record.tournament
    winner = next((r for r in tour.rows if r.rank == 1), None) if tour else None
    return {
        "record": record,
        "screen_config": screen,
        "screening": sorted(record.screening, key=lambda r: -r.composite),
        "winner_row": winner,
        "figures": figures,
        "plotly_version": plotly.__version__,
        "data_json": script_json({"figures": figures}),
        "css": _static("report.css"),
        "js": _static("common.js"),
        "plotly_js": _plotly_bundle(),
    }


def render_selection_report(record: SelectionRecord) -> str:
    template = _environment().get_template("select.html.j2")
    return template.render(**selection_context(record))


def build_selection_report(out_dir: str | Path, record: SelectionRecord | None = None) -> Path:
    """Write ``out_dir/report.html`` for a selection directory and return its path."""
    folder = Path(out_dir)
    found = record if record is not None else SelectionRecord.read(folder)
    path = folder / REPORT_FILE
    atomic_write_text(path, render_selection_report(found))
    return path
