"""``build_report``: one self-contained HTML file from a run directory."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import plotly  # type: ignore[import-untyped, unused-ignore]
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from plotly.offline import get_plotlyjs  # type: ignore[import-untyped, unused-ignore]

from chatledger.core import atomic_write_text
from chatledger.record import Sensitivity, WeightSensitivity, WhatBreaks
from chatledger.report import _charts as charts
from chatledger.report import _charts_judges as judge_charts
from chatledger.report import _charts_trust as trust_charts
from chatledger.report import _context as ctx
from chatledger.report import _counts as counts
from chatledger.report import _select
from chatledger.report._drill import StringTable, drill_payload, events_payload
from chatledger.report._embed import packed_json, script_json
from chatledger.report._load import RunFiles, load_run_files
from chatledger.report._select import DrillSelection, select_chunks
from chatledger.report._style import LABEL_COLOURS, LAYER_COLOURS, model_colours

REPORT_FILE = "report.html"


def _environment() -> Environment:
    # autoescape=True (not select_autoescape): every template and every value is escaped;
    # the only unescaped inserts are our own static CSS/JS and JSON made safe by script_json.
    env = Environment(
        loader=PackageLoader("chatledger.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.filters["usd"] = _usd
    env.filters["count"] = _count
    return env


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _count(value: float | None) -> str:
    """A count: whole numbers as such, entity credit (may be x.5) with one decimal."""
    if value is None:
        return "—"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _pct(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f}%"


def _usd(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _static(*names: str) -> Markup:
    """Our own CSS or JavaScript from the templates folder, inserted as is (several files are
    joined in order: one style or script element for all of them)."""
    folder = resources.files("chatledger.report").joinpath("templates")
    return Markup("\n".join(folder.joinpath(name).read_text("utf-8") for name in names))


def _plotly_bundle() -> Markup:
    """plotly.js, inlined once. It never contains "</script" (checked, since a future bundle
    that did would end our script element early and break the page)."""
    bundle = get_plotlyjs()
    if "</script" in bundle.lower():
        raise RuntimeError("plotly.js contains '</script' and cannot be inlined safely")
    return Markup(bundle)


def report_context(files: RunFiles) -> dict[str, Any]:
    """Everything the template needs (charts as figure dicts, tables as plain data)."""
    run = files.run
    models = files.model_names
    colours = model_colours(models)
    fields = charts.schema_fields(files)
    selection = choose_chunks(files)
    cost_chart, frontier = charts.cost_quality(files, colours)
    figures = {
        "fingerprint": charts.fingerprint(files),
        "layer-gap": charts.layer_gap(files),
        "cost-quality": cost_chart,
        "swaps": trust_charts.swap_probabilities(files),
        "simplex": trust_charts.layer_simplex(files),
        "calibration": trust_charts.calibration(files, colours),
        "judge-distribution": judge_charts.judge_distribution(files, colours, selection),
        "judge-labels": judge_charts.label_breakdown(files),
    }
    strings = StringTable()
    drill = drill_payload(files, fields, strings)
    downstream = ctx.downstream_views(files)
    bulk = {"drill": drill, "events": events_payload(downstream, strings), "s": strings.strings}
    data = {
        "figures": {k: c.figure for k, c in figures.items() if c.figure is not None},
        "models": models,
        "colours": [colours[m] for m in models],
        "labelColours": LABEL_COLOURS,
    }
    stats = run.stats
    sensitivity = stats.weight_sensitivity if stats is not None else None
    settings = run.scoring_settings()
    meta = {
        "name": run.name,
        "version": run.chatledger_version or "?",
        "python": run.python or "?",
        "config_path": run.config_path or "—",
        "chunks_file": run.chunks_file or "—",
        "chunks": run.chunks,
        "timings": run.timings,
        "schema": settings.extraction_schema,
        "matcher": settings.matcher,
        "reference_name": run.reference.name or "reference",
        "reference_file": run.reference.file or "—",
        "weights": run.layer_weights_used,
    }
    return {
        "meta": meta,
        "models": models,
        "colours": colours,
        "layer_colours": LAYER_COLOURS,
        "label_colours": LABEL_COLOURS,
        "layers": [x for x in charts.LAYERS if x in run.layers_run],
        "leaderboard": ctx.leaderboard(files, colours),
        "lacks": ctx.missing_parts(files),
        "gap_finding": ctx.gap_finding(files),
        "differences": ctx.adjacent_differences(files),
        "power_sentence": ctx.power_sentence(files),
        "what_breaks": WhatBreaks.read(files.run_dir),
        "ppi": _ppi(files.run_dir),
        "human_gold": run.human_gold,
        "reference_is_human": run.reference_is_human,
        "human_reference": counts.human_reference(files),
        "gold_blocks": counts.gold_blocks(files),
        "sample_blocks": counts.sample_blocks(files),
        "field_tables": counts.model_tables(files, fields),
        "intervals": counts.intervals_view(files),
        "frontier": frontier,
        "stats": stats,
        "sensitivity": _sensitivity(sensitivity),
        "simplex": sensitivity.layer_simplex if sensitivity is not None else None,
        "charts": {k: c for k, c in figures.items()},
        "judge": ctx.judge_tables(files),
        "consumers": ctx.consumer_names(files),
        "downstream": downstream,
        "downstream_skipped": ctx.downstream_skipped(files),
        "skipped_groups": ctx.skipped_groups(files),
        "downstream_composites": ctx.downstream_composites(files),
        "downstream_configured": ctx.downstream_configured(files),
        "chunk_groups": ctx.chunk_index(files, selection) if drill is not None else [],
        "has_drill": drill is not None,
        "selection": selection,
        "fields": fields,
        "is_simulated": ctx.is_simulated,
        "is_recorded": ctx.is_recorded,
        "degenerate": ctx.degenerate_rows(files),
        "plotly_version": plotly.__version__,
        "data_json": script_json(data),
        "bulk": packed_json(bulk),
        "css": _static("report.css"),
        "js": _static("common.js", "report.js"),
        "plotly_js": _plotly_bundle(),
    }


def _sensitivity(found: WeightSensitivity | None) -> dict[str, Sensitivity]:
    """The re-drawn weight kinds the run has (``fields``, ``layers``), for the stat cards."""
    if found is None:
        return {}
    kinds = {"fields": found.fields, "layers": found.layers}
    return {kind: s for kind, s in kinds.items() if s is not None}


def choose_chunks(files: RunFiles) -> DrillSelection | None:
    """The drill-down's chunks (all of a small run, a bounded selection of a large one), read
    from the chunk and extraction files; None when the chunks file cannot be read."""
    if files.chunk_ids is None:
        return None
    composites = {m: files.scores.composite("extraction", m) for m in files.model_names}
    selection = select_chunks(
        files.chunk_ids, composites, cap=_select.DRILL_CAP, per_model=_select.WORST_PER_MODEL
    )
    files.load_chunks(selection.chunk_ids)
    return selection


def _ppi(run_dir: Path) -> object:
    """The run's prediction-powered agreement with humans (``ppi.json``, issue 33), if any."""
    from chatledger.runs._ppi import PPIRecord

    return PPIRecord.read(run_dir)


def render_report(run_dir: Path) -> str:
    """The report's HTML for a run directory (nothing is written)."""
    files = load_run_files(Path(run_dir))
    template = _environment().get_template("report.html.j2")
    return template.render(**report_context(files))


def build_report(run_dir: str | Path) -> Path:
    """Write ``run_dir/report.html`` — one self-contained file that opens offline — and return
    its path."""
    path = Path(run_dir) / REPORT_FILE
    html = render_report(Path(run_dir))
    atomic_write_text(path, html)
    return path
