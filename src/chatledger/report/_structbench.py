"""``build_structbench_report``: the self-contained HTML page of a structbench run directory.

It reads only the run directory (``run.json`` and ``drilldown.json``), so a directory moved or
shared keeps a rebuildable report. It shares the conversation report's look and machinery: the
CSS, the chart/tab/contents script (common.js), plotly.js inlined once, the safe JSON embedding
and the per-row colours. Everything from emails and model outputs reaches the page through
Jinja's autoescaping (HTML) or ``script_json`` / ``plot_text`` (data and chart labels).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import plotly  # type: ignore[import-untyped, unused-ignore]

from chatledger.core import InputError, atomic_write_text
from chatledger.record import StructbenchRow, StructbenchRun, read_run_record
from chatledger.report import _structbench_charts as charts
from chatledger.report._build import REPORT_FILE, _environment, _plotly_bundle, _static
from chatledger.report._context import Estimate
from chatledger.report._embed import script_json
from chatledger.report._style import OUTPUT_KIND_COLOURS, model_colours

STRUCTBENCH_TASK = "structbench"
DRILLDOWN_FILE = "drilldown.json"
# Output kinds in the order structbench counts them (OUTPUT_KINDS there); the report cannot
# import structbench (it sits above the report), so it takes the order from the colour table.
KIND_ORDER = tuple(OUTPUT_KIND_COLOURS)


def run_task(run_dir: str | Path) -> str:
    """``"structbench"`` or ``"conversation"`` (a run.json without ``task`` is a conversation
    run, as every run directory was before structbench had one)."""
    return read_run_record(run_dir).task


@dataclass
class StructRunFiles:
    run_dir: Path
    run: StructbenchRun
    drill: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[StructbenchRow]:
        """Rows in leaderboard order (run.json keeps them so)."""
        return self.run.models


def load_structbench_run(run_dir: Path) -> StructRunFiles:
    run = read_run_record(run_dir)
    if not isinstance(run, StructbenchRun):
        raise InputError("not a structbench run directory (run.json task)", path=run_dir)
    files = StructRunFiles(run_dir=run_dir, run=run)
    drill_path = run_dir / DRILLDOWN_FILE
    if drill_path.is_file():
        files.drill = json.loads(drill_path.read_text(encoding="utf-8"))
    else:
        files.notes.append(f"{DRILLDOWN_FILE} is missing: the per-document drill-down is empty.")
    return files


def _estimate(row: StructbenchRow, metric: str) -> Estimate:
    ci = row.intervals.get(metric)
    if ci is None:
        return Estimate(row.metric(metric))
    return Estimate(row.metric(metric), ci.low, ci.high)


def _cost(row: StructbenchRow) -> float:
    return row.usage.cost_usd if row.usage is not None else 0.0


def leaderboard(files: StructRunFiles, colours: dict[str, str]) -> list[dict[str, Any]]:
    ranks = files.run.rank_probabilities.rows
    priced = any(_cost(r) > 0 for r in files.rows)
    out = []
    for rank, row in enumerate(files.rows, start=1):
        usage = row.usage
        probs = ranks.get(row.name)
        latency = usage.latency_per_document_s if usage is not None else 0.0
        n = row.n
        out.append(
            {
                "rank": rank,
                "name": row.name,
                "colour": colours[row.name],
                "metrics": {m: _estimate(row, m) for m in charts.METRICS},
                "rank_probability": probs[rank - 1] if probs and len(probs) >= rank else None,
                "n": n,
                "missing": row.bad_output_counts.get("missing", 0),
                "clean_share": row.clean_outputs / n if n else None,
                "cost_per_document": (
                    usage.cost_per_document_usd if priced and usage is not None else None
                ),
                "latency_per_document": latency if latency > 0 else None,
                "tokens_per_document": (usage.tokens_per_document or None) if usage else None,
            }
        )
    return out


def missing_parts(files: StructRunFiles) -> list[str]:
    run, rows = files.run, files.rows
    out = []
    if not run.settings.resamples:
        out.append("No statistics: intervals, paired differences and ranks were turned off.")
    if len(rows) < 2:
        out.append("One row only: paired differences and rank probabilities need two or more.")
    if not any(_cost(r) > 0 for r in rows):
        out.append("No cost data: no prediction reports a cost (offline baselines or no usage).")
    for f in run.prediction_files:
        if f.unknown_ids:
            out.append(
                f"{f.unknown_ids} prediction(s) in {Path(f.path).name} name documents "
                "that are not in the dataset; they were ignored."
            )
    out.extend(files.notes)
    return out


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _drill_view(view: dict[str, Any], texts: dict[str, Any]) -> dict[str, Any]:
    doc = texts.get(view["id"]) or {}
    parsed_state = (
        "no output (missing)"
        if view["output"] is None
        else "one JSON value"
        if view["single_value"]
        else "a JSON object inside other text"
        if view["parsed_ok"]
        else "unparseable"
    )
    return {
        "id": view["id"],
        "depth": doc.get("depth"),
        "scores": view["scores"],
        "kinds": view["kinds"],
        "input": doc.get("input", ""),
        "schema": _pretty(doc.get("schema")),
        "ground_truth": _pretty(doc.get("ground_truth")),
        "output": view["output"],
        "output_cut": view["output"] is not None and view["output_chars"] > len(view["output"]),
        "output_chars": view["output_chars"],
        "parsed": _pretty(view["parsed"]) if view["parsed_ok"] else None,
        "parsed_state": parsed_state,
        "schema_errors": view["schema_errors"],
        "missed": [{**m, "expected": _compact(m["expected"])} for m in view["missed"]],
        "wrong": [
            {**w, "expected": _compact(w["expected"]), "got": _compact(w["got"])}
            for w in view["wrong"]
        ],
        "extra": [{**e, "got": _compact(e["got"])} for e in view["extra"]],
        "extra_count": view["extra_count"],
    }


def drill_rows(files: StructRunFiles) -> list[dict[str, Any]]:
    if files.drill is None:
        return []
    texts = files.drill.get("documents") or {}
    return [
        {"name": r["name"], "documents": [_drill_view(v, texts) for v in r["documents"]]}
        for r in files.drill.get("rows") or []
    ]


def structbench_context(files: StructRunFiles) -> dict[str, Any]:
    """Everything the template needs (charts as figure dicts, tables as plain data)."""
    run, rows = files.run, files.rows
    names = [r.name for r in rows]
    colours = model_colours(names)
    cost_chart, frontier = charts.cost_quality(rows, colours)
    strategy_chart, strategy_colours = charts.by_strategy(run.by_strategy)
    pairs = run.paired_differences.pairs
    figures = {
        "metrics": charts.metric_bars(rows, colours),
        "depth": charts.by_depth(rows, colours),
        "strategy": strategy_chart,
        "kinds": charts.output_kinds(rows, list(KIND_ORDER)),
        "cost-quality": cost_chart,
        "pairs": charts.paired_forest(pairs),
    }
    kinds_present = [k for k in KIND_ORDER if any(r.bad_output_counts.get(k) for r in rows)]
    data = {
        "figures": {k: c.figure for k, c in figures.items() if c.figure is not None},
        "models": names,
        "colours": [colours[n] for n in names],
    }
    board = leaderboard(files, colours)
    return {
        "meta": {
            "name": run.name,
            "version": run.chatledger_version or "?",
            "python": run.python or "?",
            "dataset": run.dataset,
            "n": run.n,
            "settings": run.settings,
            "prediction_files": run.prediction_files,
            "timings": run.timings,
        },
        "rows": rows,
        "names": names,
        "colours": colours,
        "leaderboard": board,
        "usage_columns": {
            "cost": any(r["cost_per_document"] is not None for r in board),
            "latency": any(r["latency_per_document"] is not None for r in board),
            "tokens": any(r["tokens_per_document"] is not None for r in board),
        },
        "lacks": missing_parts(files),
        "charts": figures,
        "frontier": frontier,
        "depths": sorted({int(d) for r in rows for d in r.by_depth}),
        "by_strategy": run.by_strategy,
        "effects": run.strategy_vs_model,
        "grid": run.grid_pairs,
        "strategy_colours": strategy_colours,
        "kinds": kinds_present,
        "kind_colours": OUTPUT_KIND_COLOURS,
        "pairs": [
            {
                **p.model_dump(),
                "clear": p.low is not None and p.high is not None and (p.low > 0 or p.high < 0),
            }
            for p in pairs
        ],
        "drill": drill_rows(files),
        "plotly_version": plotly.__version__,
        "data_json": script_json(data),
        "css": _static("report.css", "structbench.css"),
        "js": _static("common.js"),
        "plotly_js": _plotly_bundle(),
    }


def render_structbench_report(run_dir: Path) -> str:
    files = load_structbench_run(Path(run_dir))
    template = _environment().get_template("structbench.html.j2")
    return template.render(**structbench_context(files))


def build_structbench_report(run_dir: str | Path) -> Path:
    """Write ``run_dir/report.html`` for a structbench run directory and return its path."""
    path = Path(run_dir) / REPORT_FILE
    atomic_write_text(path, render_structbench_report(Path(run_dir)))
    return path
