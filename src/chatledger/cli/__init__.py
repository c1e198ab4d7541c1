"""Command line interface. Importing it registers every command but loads none of their
machinery: each command imports what it uses when it runs."""

import logging
import os
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
from chatledger.cli import _serve_cmd as _serve_cmd  # registers serve-local
from chatledger.cli import _stats_cmd as _stats_cmd  # registers stats, audit
from chatledger.cli import _structbench_cmd as _structbench_cmd  # registers structbench
from chatledger.cli._app import app
from chatledger.cli._app import main as _main

__all__ = ["app", "main"]


def _terminate(signum: int, frame: FrameType | None) -> None:
    # SIGTERM (kill, a CI timeout) ends a command like Ctrl-C does: files are closed whole and
    # the command says what it finished.
    raise KeyboardInterrupt


LOG_ENV = "CHATLEDGER_LOG"


class _LowerCaseLevel(logging.Formatter):
    """``warning: …`` like the CLI's own ``error: …`` and ``note: …`` lines."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def _configure_logging() -> None:
    """The library's log lines (retries, a refused schema, an unpriced model) go to stderr
    when it is a terminal, at warning level; elsewhere (a pipe, CI) only when CHATLEDGER_LOG
    names a level, so a script reading stderr sees the one error line and nothing else."""
    logger = logging.getLogger("chatledger")
    logger.propagate = False
    wanted = os.environ.get(LOG_ENV, "").strip().upper()
    level = logging.getLevelNamesMapping().get(wanted)
    if level is None:
        if not sys.stderr.isatty():
            logger.addHandler(logging.NullHandler())
            return
        level = logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_LowerCaseLevel())
    logger.addHandler(handler)
    logger.setLevel(level)


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    _configure_logging()
    sys.exit(_main())
