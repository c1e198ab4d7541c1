"""SDK clients bound to the event loop they were made in.

An SDK client's connection pool belongs to one event loop, while a provider may serve several
(one ``asyncio.run`` per CLI command or test). The holder makes one client per loop, and ties
the client's shutdown to its loop's: next to each client it parks an async generator whose
``finally`` closes the client. ``asyncio.run`` (like any loop shut down with
``loop.shutdown_asyncgens()``) closes every open async generator before the loop goes away, so a
forgotten client is closed on its own loop instead of leaking sockets into the next one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import suppress
from typing import Generic, TypeVar

C = TypeVar("C")


class LoopBoundClient(Generic[C]):
    def __init__(self, factory: Callable[[], C], closer: Callable[[C], Awaitable[None]]) -> None:
        self._factory = factory
        self._closer = closer
        self._client: C | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: AsyncGenerator[None, None] | None = None

    async def get(self) -> C:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is not loop:
            await self.aclose()
        if self._client is None:
            client = self._factory()
            keeper = self._close_with_loop(client)
            await anext(keeper)  # parked: runs its finally when closed or when the loop shuts
            self._client, self._loop, self._keeper = client, loop, keeper
        return self._client

    async def _close_with_loop(self, client: C) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await self._closer(client)

    async def aclose(self) -> None:
        keeper, self._keeper = self._keeper, None
        same_loop = self._loop is asyncio.get_running_loop()
        self._client = self._loop = None
        if keeper is None:
            return
        if same_loop:
            await keeper.aclose()
            return
        # Its loop was stopped without shutting down async generators: the sockets cannot be
        # closed cleanly from here ("Event loop is closed"), but the client is marked closed.
        with suppress(RuntimeError):
            await keeper.aclose()
