"""Run a coroutine to completion from synchronous code, even inside a running event loop.

``asyncio.run`` refuses to start when the calling thread already runs a loop (a Jupyter
notebook, an async web handler). Then the coroutine runs on a fresh loop in a worker thread and
this call waits for it, so library functions such as ``execute_run`` work from both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="chatledger-sync") as pool:
        return pool.submit(asyncio.run, coroutine).result()
