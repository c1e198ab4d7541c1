"""Per-provider limits: how many calls may be in flight, and how many may start per second.

asyncio primitives belong to the event loop that first waits on them, while a provider object
may outlive one ``asyncio.run`` (a CLI command, a test); the gate therefore rebuilds its
semaphore whenever it finds itself on a different running loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class TokenBucket:
    """At most ``rate`` starts per second on average, with bursts of up to ``burst``."""

    def __init__(self, rate: float, burst: float = 1.0) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._tokens = burst
        self._updated = time.monotonic()

    def _refill(self, now: float) -> None:
        self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate)
        self._updated = now

    async def acquire(self) -> None:
        while True:
            now = time.monotonic()
            self._refill(now)
            # No await between the check and the take: the loop runs one coroutine at a time.
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return
            await asyncio.sleep((1.0 - self._tokens) / self.rate)


class CallGate:
    """The concurrency limit, the rate limit and any server-requested pause of one endpoint."""

    def __init__(self, concurrency: int, requests_per_second: float | None = None) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.concurrency = concurrency
        self.bucket = TokenBucket(requests_per_second) if requests_per_second else None
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._paused_until = 0.0

    def _current_semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._semaphore = asyncio.Semaphore(self.concurrency)
            self._loop = loop
        return self._semaphore

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Held for a whole call, retries and their back-off included."""
        async with self._current_semaphore():
            yield

    async def before_request(self) -> None:
        """Wait out any pause a server asked for, then take a rate-limit token."""
        delay = self._paused_until - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        if self.bucket is not None:
            await self.bucket.acquire()

    def pause_for(self, seconds: float) -> None:
        """A 429/503 said 'retry after N s': hold every request to this endpoint till then."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)
