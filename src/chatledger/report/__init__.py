"""The report: one self-contained HTML page per run directory (charts, tables, drill-down)."""

from chatledger.report._build import REPORT_FILE, build_report, render_report

__all__ = ["REPORT_FILE", "build_report", "render_report"]
