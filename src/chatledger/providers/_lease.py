"""Call leases: a paid call is made once across the processes sharing a cache.

Before a live call, a process takes a lease on the call's cache key (a row in ``call_leases``,
in the cache's SQLite file). The check for a stored reply and the taking of the lease are one
``BEGIN IMMEDIATE`` transaction, so of several processes missing the same key at once exactly
one takes the lease; the others wait — polling for the reply, holding no concurrency slot and
no budget — and read the reply from the cache once the holder has stored it (a cache hit for
them, billed nothing). While its call is in flight the holder writes a heartbeat every
``heartbeat_s``; a lease whose heartbeat is older than ``stale_after_s``, or whose process is
gone on this host (its pid no longer runs, or runs another process), was left by a crash and is
taken over by the next process that wants the call. A holder whose call fails releases the
lease without a reply: a waiter then takes it and asks itself (a failure is not cached).

Leases are for calls sent one by one; batch mode has its own record of submitted requests
(:mod:`chatledger.providers._batch_store`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chatledger.providers._ledger import _HOST, _PROCESS_TOKEN, _pid_alive

if TYPE_CHECKING:
    from chatledger.providers._cache import CompletionCache
    from chatledger.providers._reply import RawReply

log = logging.getLogger("chatledger.providers")

LEASE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS call_leases ("
    " key TEXT PRIMARY KEY, token TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,"
    " process TEXT NOT NULL, taken_at REAL NOT NULL, heartbeat_at REAL NOT NULL)",
)


@dataclass(frozen=True)
class LeaseSettings:
    """How often a holder says it is alive, when a silent lease is taken over, and how often
    a waiter looks for the reply (its waits grow from ``poll_initial_s`` to ``poll_max_s``)."""

    heartbeat_s: float = 2.0
    stale_after_s: float = 30.0
    poll_initial_s: float = 0.05
    poll_max_s: float = 0.5

    def __post_init__(self) -> None:
        if not 0 < self.heartbeat_s < self.stale_after_s:
            raise ValueError("0 < heartbeat_s < stale_after_s is required")
        if not 0 < self.poll_initial_s <= self.poll_max_s:
            raise ValueError("0 < poll_initial_s <= poll_max_s is required")


def _holder_alive(
    host: str, pid: int, process: str, heartbeat_at: float, now: float, stale_after_s: float
) -> bool:
    if now - heartbeat_at > stale_after_s:
        return False
    if host != _HOST:
        return True  # another machine's process cannot be asked: its lease ends by age
    if pid == os.getpid():
        return process == _PROCESS_TOKEN
    return _pid_alive(pid)


@dataclass
class HeldLease:
    """A lease this caller holds, released once."""

    leases: CallLeases
    key: str
    token: str
    released: bool = False

    def release(self) -> None:
        if not self.released:
            self.leases.release(self.key, self.token)
            self.released = True


class CallLeases:
    """The leases of one :class:`CompletionCache` (get them with ``cache.leases``)."""

    def __init__(self, cache: CompletionCache, settings: LeaseSettings | None = None) -> None:
        self.cache = cache
        self.settings = settings or LeaseSettings()
        # Leases taken over from processes that were gone, and calls waited for (for tests).
        self.taken_over = 0
        self.waited = 0

    def claim(self, key: str) -> tuple[RawReply | None, str | None]:
        """In one transaction: ``(reply, None)`` when the reply is stored; ``(None, token)``
        when this caller now holds the lease (it must make the call, then :meth:`release`);
        ``(None, None)`` when a live holder elsewhere is making the call."""
        now = time.time()
        with self.cache._immediate() as conn:
            # The stored reply and the lease in one statement (one row, NULLs for what is not
            # there).
            stored, host, pid, process, beat = conn.execute(
                "SELECT (SELECT reply FROM completions WHERE key = ?1),"
                " lease.host, lease.pid, lease.process, lease.heartbeat_at"
                " FROM (SELECT 1) LEFT JOIN call_leases AS lease ON lease.key = ?1",
                (key,),
            ).fetchone()
            if stored is not None:
                reply = self.cache._decode(stored)
                if reply is not None:
                    return reply, None
            if host is not None:
                if _holder_alive(host, pid, process, beat, now, self.settings.stale_after_s):
                    return None, None
                self.taken_over += 1
                log.info("taking over a call left by process %s on %s", pid, host)
            token = uuid.uuid4().hex
            conn.execute(
                "INSERT OR REPLACE INTO call_leases (key, token, host, pid, process, taken_at,"
                " heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, token, _HOST, os.getpid(), _PROCESS_TOKEN, now, now),
            )
            return None, token

    def beat(self, key: str, token: str) -> None:
        with self.cache._lock, self.cache._guard("write to"):
            self.cache._conn.execute(
                "UPDATE call_leases SET heartbeat_at = ? WHERE key = ? AND token = ?",
                (time.time(), key, token),
            )

    def release(self, key: str, token: str) -> None:
        """Drop the lease (only if it is still this caller's: a taken-over one is left)."""
        with self.cache._lock, self.cache._guard("write to"):
            self.cache._conn.execute(
                "DELETE FROM call_leases WHERE key = ? AND token = ?", (key, token)
            )

    async def acquire(self, key: str, label: str) -> tuple[RawReply | None, str | None]:
        """Wait until the reply is stored (``(reply, None)``) or the call is this caller's to
        make (``(None, token)``)."""
        wait = self.settings.poll_initial_s
        waited = False
        while True:
            reply, token = self.claim(key)
            if reply is not None or token is not None:
                return reply, token
            if not waited:
                waited = True
                self.waited += 1
                log.info("%s: the same call is in flight in another process: waiting for it", label)
            await asyncio.sleep(wait)
            wait = min(wait * 2, self.settings.poll_max_s)

    @asynccontextmanager
    async def holding(self, key: str, token: str) -> AsyncIterator[HeldLease]:
        """Heartbeats while the body runs; the lease is released when it ends, however (or
        earlier by the body, :meth:`HeldLease.release`: in the transaction storing the reply)."""
        held = HeldLease(self, key, token)

        async def heartbeat() -> None:
            while True:
                await asyncio.sleep(self.settings.heartbeat_s)
                self.beat(key, token)

        task = asyncio.create_task(heartbeat())
        try:
            yield held
        finally:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            except Exception as exc:  # a failed heartbeat must not hide the call's outcome
                log.debug("lease heartbeat failed: %s", exc)
            held.release()

    def held(self) -> int:
        """How many leases are recorded (live or not)."""
        with self.cache._lock:
            (count,) = self.cache._conn.execute("SELECT COUNT(*) FROM call_leases").fetchone()
        return int(count)
