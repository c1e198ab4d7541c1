"""Run a coroutine to completion from synchronous code, even inside a running event loop.

``asyncio.run`` refuses to start when the calling thread already runs a loop (a Jupyter
notebook, an async web handler). Then the coroutine runs on a fresh loop in a worker thread and
this call waits for it, so library functions such as ``execute_run`` work from both.

On the main thread a Ctrl-C or SIGTERM whose handler raises ``KeyboardInterrupt`` (Python's own,
or a command's that notes the exit code) is not let loose inside the loop. Raised wherever the
loop happens to be, it ends one task, then surfaces again from every task gathered on it while
``asyncio.run`` cancels the rest — escaping that clean-up, closing the loop under pending tasks
and printing their tracebacks ("Task was destroyed but it is pending!", a client closed with no
loop; once in a CI run). The signal instead cancels the coroutine, which unwinds through its own
``finally`` blocks on its loop, and the handler that was in place runs once the loop is shut:
the caller sees the same ``KeyboardInterrupt``, at a point where nothing is half-done. A second
signal raises at once (the user means it).
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

Handler = Callable[[int, FrameType | None], Any]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if threading.current_thread() is threading.main_thread():
            return _run_cancelled_by_signals(coroutine)
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="chatledger-sync") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _run_cancelled_by_signals(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)``, with the signals whose handlers raise turned into a
    cancellation of the coroutine, and those handlers run after the loop is shut."""
    caught: list[int] = []
    running: list[asyncio.Task[T]] = []
    loop_box: list[asyncio.AbstractEventLoop] = []

    def cancel(signum: int, frame: FrameType | None) -> None:
        if caught:
            raise KeyboardInterrupt  # asked twice
        caught.append(signum)
        if running and loop_box:
            loop_box[0].call_soon_threadsafe(running[0].cancel)

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None  # a coroutine run by asyncio runs in a task
        running.append(task)
        if caught:  # the signal came while the loop was starting
            raise asyncio.CancelledError
        return await coroutine

    previous: dict[int, Handler] = {}
    for signum in _SIGNALS:
        handler = signal.getsignal(signum)
        if callable(handler):  # one that raises; SIG_DFL/SIG_IGN stay as they are
            previous[signum] = handler
            signal.signal(signum, cancel)
    result: list[T] = []
    try:
        with asyncio.Runner() as runner:
            loop_box.append(runner.get_loop())
            try:
                result.append(runner.run(main()))
            except asyncio.CancelledError:
                if not caught:
                    raise  # cancelled from inside, not by a signal
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if not result:
            coroutine.close()  # never started when the signal came first: no "never awaited"
    if caught:
        previous[caught[0]](caught[0], None)  # raises KeyboardInterrupt as it would have
        raise KeyboardInterrupt
    return result[0]
