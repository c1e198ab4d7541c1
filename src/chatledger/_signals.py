"""Which signal ended a command: exit 130 after Ctrl-C (SIGINT), 143 after SIGTERM.

Both signals stop a command the same way — raised as ``KeyboardInterrupt``, so files are closed
whole and the command says what it finished — but a caller (a shell, CI, a supervisor) tells
them apart by the exit status, 128 + the signal's number, as a process killed by the signal
would have. Every handler that turns a signal into ``KeyboardInterrupt`` notes it here first;
the CLI's ``main`` asks :func:`interrupt_exit_code` at the end. A ``KeyboardInterrupt`` no
handler noted is Python's own Ctrl-C: 130.

Kept apart from ``chatledger.core`` so that the CLI's entry point can import it without the
schema models (``chatledger --help`` stays light).
"""

from __future__ import annotations

import signal

EXIT_SIGINT = 128 + signal.SIGINT  # 130
EXIT_SIGTERM = 128 + signal.SIGTERM  # 143

# The first signal noted since the command started (a second one only hurries the same stop).
_noted: list[int] = []


def note_interrupt(signum: int) -> None:
    """``signum`` is about to be raised as ``KeyboardInterrupt``: the exit code follows it."""
    if not _noted:
        _noted.append(int(signum))


def clear_interrupt() -> None:
    """Forget a noted signal (a command starts)."""
    _noted.clear()


def interrupt_exit_code() -> int:
    """128 + the number of the signal that stopped the command: 143 after SIGTERM, else 130."""
    return EXIT_SIGTERM if _noted and _noted[0] == signal.SIGTERM else EXIT_SIGINT
