"""The report: one self-contained HTML page per run directory (charts, tables, drill-down).

``build_report`` is the conversation benchmark's page; ``build_structbench_report`` the email →
JSON task's (DESIGN §8); ``build_selection_report`` a schema selection's (DESIGN §9).
``run_task`` says which kind a run directory is.
"""

from chatledger.report._build import REPORT_FILE, build_report, render_report
from chatledger.report._select_page import build_selection_report, render_selection_report
from chatledger.report._structbench import (
    build_structbench_report,
    render_structbench_report,
    run_task,
)

__all__ = [
    "REPORT_FILE",
    "build_report",
    "build_selection_report",
    "build_structbench_report",
    "render_report",
    "render_selection_report",
    "render_structbench_report",
    "run_task",
]
