"""Ctrl-C during ``run_sync``: the coroutine unwinds on its loop, and the caller sees one
``KeyboardInterrupt`` with nothing printed (providers/_sync.py says why).

The fault it replaces was seen once in CI (test_cli_faults, ``run`` interrupted mid-extraction):
the handler's ``KeyboardInterrupt`` raised inside one worker task surfaced again from the task
gathered on it while ``asyncio.run`` cancelled the rest, the loop closed under the pending main
task, and its ``finally`` (closing the HTTP client) failed with "no running event loop". Here the
workers spin, so the signal lands inside a task step every time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent(
    """
    import asyncio, signal, sys
    from chatledger.providers import run_sync

    noted = []

    def note(signum, frame):  # like the run's handler: note the exit code, then raise
        noted.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, note)
    signal.signal(signal.SIGTERM, note)

    async def worker(i):
        if i == 0:
            print("ready", flush=True)
        while True:
            sum(range(20000))  # busy inside the task's step: the signal lands here
            await asyncio.sleep(0)

    async def everything():
        try:
            await asyncio.gather(*(worker(i) for i in range(3)))
        finally:
            await asyncio.sleep(0.05)  # awaits on its own loop, as closing a client does
            asyncio.get_running_loop()
            print("unwound on the loop", flush=True)

    try:
        run_sync(everything())
    except KeyboardInterrupt:
        print("interrupted", noted, flush=True)
        sys.exit(130)
    """
)


def _interrupt(signum: int) -> tuple[int, str, str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    time.sleep(0.2)  # the workers are spinning
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def test_ctrl_c_cancels_the_coroutine_which_unwinds_on_its_loop() -> None:
    code, out, err = _interrupt(signal.SIGINT)
    assert code == 130, err
    assert out.splitlines() == ["unwound on the loop", f"interrupted [{int(signal.SIGINT)}]"]
    assert err == ""  # no traceback, no "Task was destroyed but it is pending!"


def test_sigterm_reaches_its_handler_once_the_loop_is_shut() -> None:
    code, out, err = _interrupt(signal.SIGTERM)
    assert code == 130, err
    assert out.splitlines() == ["unwound on the loop", f"interrupted [{int(signal.SIGTERM)}]"]
    assert err == ""
