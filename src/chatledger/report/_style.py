"""Colours, fonts and the shared look of every chart (one place, so every chart agrees)."""

from __future__ import annotations

import html
from typing import Any

# Tableau 10: distinct hues that stay readable for the common colour-vision deficiencies.
MODEL_COLOURS = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
REFERENCE_COLOUR = "#3b3b3b"
# Layers are shades of one slate hue, so they never read as models.
LAYER_COLOURS = {"extraction": "#23395d", "judge": "#5b7db1", "downstream": "#a9c1e0"}
LABEL_COLOURS = {
    "none": "#9bbf85",
    "partially_supported": "#f2d479",
    "weak_support": "#f0a94b",
    "over_interpreted": "#e8804a",
    "misattributed": "#d9534f",
    "fabricated": "#8b1e3f",
}
# structbench output kinds, by family: no answer (greys), unparseable (reds), wrapped but
# readable (yellows), a single JSON value that breaks the schema (purples).
OUTPUT_KIND_COLOURS = {
    "missing": "#7b8794",
    "empty": "#b8c2cc",
    "no_json": "#8b1e3f",
    "truncated": "#d9534f",
    "malformed": "#e8804a",
    "surrounding_prose": "#f0a94b",
    "fenced": "#f2d479",
    "think_block": "#e6e0a3",
    "wrong_type": "#3f2a6b",
    "extra_keys": "#6b3fa0",
    "missing_keys": "#8e6cc2",
    "bad_enum": "#b39ddb",
    "bad_format": "#d1c4e9",
    "other_schema": "#c7b8d8",
}
CLEAN_COLOUR = "#59a14f"
HOLDS_COLOUR = "#59a14f"
BREAKS_COLOUR = "#d9d9d9"
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
# Scores on 0–1: light (bad) to dark (good) in one hue, readable in greyscale too.
SCORE_SCALE = [
    [0.0, "#fff5eb"],
    [0.25, "#fdd0a2"],
    [0.5, "#a6bddb"],
    [0.75, "#3690c0"],
    [1.0, "#034e7b"],
]


def model_colours(models: list[str]) -> dict[str, str]:
    """A fixed colour per model, in leaderboard order (the same in every chart and table)."""
    return {m: MODEL_COLOURS[i % len(MODEL_COLOURS)] for i, m in enumerate(models)}


def plot_text(text: str) -> str:
    """Text for a Plotly label: Plotly reads a subset of HTML in labels, so data is escaped."""
    return html.escape(text, quote=False)


def base_layout(**overrides: Any) -> dict[str, Any]:
    """The common layout of every figure: no template (small files), system fonts, margins."""
    layout: dict[str, Any] = {
        "template": "none",
        "font": {"family": FONT, "size": 13, "color": "#1f2933"},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "#ffffff",
        "margin": {"l": 60, "r": 20, "t": 30, "b": 50},
        "hoverlabel": {"font": {"family": FONT, "size": 12}},
        "legend": {"orientation": "h", "y": -0.18, "x": 0},
    }
    layout.update(overrides)
    return layout


def axis(title: str = "", **overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "title": {"text": title},
        "gridcolor": "#e4e7eb",
        "zerolinecolor": "#cbd2d9",
        "linecolor": "#9aa5b1",
        "automargin": True,
    }
    spec.update(overrides)
    return spec
