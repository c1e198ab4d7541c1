"""Command line interface. Importing it loads none of the commands' machinery, nor their
modules: a command's module is imported when the command runs (``_app.LazyGroup``), and each
command imports what it uses inside its body."""

import os
import signal
import sys
from types import FrameType

from chatledger._signals import note_interrupt
from chatledger.cli import _app
from chatledger.cli._app import app
from chatledger.cli._app import main as _main

__all__ = ["app", "main"]


def _terminate(signum: int, frame: FrameType | None) -> None:
    # SIGTERM (kill, a CI timeout) ends a command like Ctrl-C does: files are closed whole and
    # the command says what it finished; it exits 143 (128 + 15), not Ctrl-C's 130.
    note_interrupt(signum)
    raise KeyboardInterrupt


LOG_ENV = "CHATLEDGER_LOG"


def _configure_logging() -> None:
    """The library's log lines (retries, a refused schema, an unpriced model) go to stderr
    when it is a terminal, at warning level; elsewhere (a pipe, CI) only when CHATLEDGER_LOG
    names a level, so a script reading stderr sees the one error line and nothing else.

    Called when a command starts (``--help`` logs nothing and does not import ``logging``)."""
    import logging

    class LowerCaseLevel(logging.Formatter):
        """``warning: …`` like the CLI's own ``error: …`` and ``note: …`` lines."""

        def format(self, record: logging.LogRecord) -> str:
            return f"{record.levelname.lower()}: {record.getMessage()}"

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
    handler.setFormatter(LowerCaseLevel())
    logger.addHandler(handler)
    logger.setLevel(level)


# pydantic looks for plugins of its own (entry points of every installed distribution) when the
# first model class is built: ~0.03 s of CPU scanning package metadata, plus importing
# importlib.metadata, in every command. The CLI uses no pydantic plugin; a user who wants one
# observing ChatLedger's models sets PYDANTIC_DISABLE_PLUGINS (to "" to allow them all), and
# that setting is kept. The library, imported by a program, is left to that program's setting.
PYDANTIC_PLUGINS_ENV = "PYDANTIC_DISABLE_PLUGINS"


def _no_pydantic_plugins() -> None:
    os.environ.setdefault(PYDANTIC_PLUGINS_ENV, "__all__")


# numpy and scipy start OpenBLAS's thread pool (a thread a core) as they are imported: ~0.06 s
# of CPU a process on a 2-core machine, a fifth of a gate's, spent for matrix products that
# ChatLedger keeps small (a batch of resampled counts times the units' statistics). A run's
# parallelism is its executor's processes, each of which would start a pool of its own. The
# CLI asks for one BLAS thread unless OPENBLAS_NUM_THREADS is set (any value set is kept).
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def _one_blas_thread() -> None:
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def main() -> None:
    _no_pydantic_plugins()
    _one_blas_thread()
    signal.signal(signal.SIGTERM, _terminate)
    _app.on_command_start = _configure_logging
    _app.ENTRY_POINT = True
    sys.exit(_main())
