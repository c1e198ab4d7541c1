"""Command line interface. Importing it registers every command but loads none of their
machinery: each command imports what it uses when it runs."""

import signal
import sys
from types import FrameType

from chatledger.cli import _budget_cmd as _budget_cmd  # registers budget show, reset
from chatledger.cli import _corpus_cmd as _corpus_cmd  # registers corpus import
from chatledger.cli import _demo_cmd as _demo_cmd  # registers demo
from chatledger.cli import _downstream_cmd as _downstream_cmd  # registers commands
from chatledger.cli import _extract_cmd as _extract_cmd  # registers extract
from chatledger.cli import _report_cmd as _report_cmd  # registers report
from chatledger.cli import _report_day_cmd as _report_day_cmd  # registers report-day
from chatledger.cli import _run_cmd as _run_cmd  # registers run, compare
from chatledger.cli import _stats_cmd as _stats_cmd  # registers stats, audit
from chatledger.cli import _structbench_cmd as _structbench_cmd  # registers structbench
from chatledger.cli._app import app
from chatledger.cli._app import main as _main

__all__ = ["app", "main"]


def _terminate(signum: int, frame: FrameType | None) -> None:
    # SIGTERM (kill, a CI timeout) ends a command like Ctrl-C does: files are closed whole and
    # the command says what it finished.
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    sys.exit(_main())
