"""Batch mode: model calls gathered into the provider's batch API, at its batch price.

:class:`Batcher` sits behind ``ManagedProvider.complete`` (in ``_cached_call``, after the cache
missed and the budget reserved the call's worst case). Callers already send many requests at
once; the batcher holds each one until no new request has come for ``window_s`` (or
``max_requests`` are waiting, or ``max_gather_s`` has passed), then submits them together —
one batch per model, as OpenAI requires — and polls each batch with a doubling wait
(``poll_initial_s`` up to ``poll_max_s``) until it ends. Every caller's future is then resolved
from the results: a reply (billed at the batch price and stored under the call's cache key
before the batch is marked ended, so a later per-call run replays it), or an error.

The ``custom_id`` of a request is its cache key. A key asked twice at once is sent once; the
second caller shares the reply, billed nothing (as a cache hit would be).

Resuming: with a cache, every submitted batch and the keys of its requests are recorded
(:mod:`chatledger.providers._batch_store`). A request whose key is in a batch still open on the
same endpoint is not submitted again: that batch is polled — so a run killed while polling,
started again, fetches the results of the batch it had paid for.

What fails inside a batch fails that request only: an errored, expired or cancelled request
raises :class:`ProviderError` for its caller (the extraction writes no line, and a rerun sends
it in a new batch); a reply that is not a reply of the API is an :class:`UnreadableReplyError`
(written as an invalid line, as in per-call mode); the refusal of the structured-output
mechanism is a :class:`SchemaRejectedError` (the provider asks again with the schema in the
prompt, in the next batch). None is retried per call: a request the batch API could not answer
is not silently sent at twice the price.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from chatledger.providers._base import WireCall
from chatledger.providers._batch_store import BatchStore
from chatledger.providers._errors import ProviderError
from chatledger.providers._limits import CallGate
from chatledger.providers._reply import RawReply
from chatledger.providers._retry import call_with_retries
from chatledger.providers._settings import BatchSettings, CallSettings

log = logging.getLogger("chatledger.providers")
T = TypeVar("T")

# What one request of a batch came to: its reply, or the error its caller gets.
Outcome = RawReply | BaseException


class Retried(Protocol):
    """``send()`` under the provider's retry policy (for each request of a batch API)."""

    async def __call__(self, send: Callable[[], Awaitable[T]]) -> T: ...


@dataclass(frozen=True)
class BatchItem:
    """One request of a batch: its cache key (the ``custom_id``) and the call."""

    key: str
    call: WireCall


@dataclass(frozen=True)
class BatchStatus:
    """What a poll said."""

    ended: bool
    # The provider's word for it (in_progress, completed, expired, ended, …).
    status: str
    counts: Mapping[str, int] = field(default_factory=dict)
    # Why a batch failed as a whole (OpenAI's ``errors``), for every request's error.
    failure: str | None = None


class BatchBackend(Protocol):
    """A provider's batch API. Methods raise :class:`RetryableError` for transient faults
    (they are retried with the provider's settings) and :class:`ProviderError` otherwise."""

    async def submit(self, model: str, items: Sequence[BatchItem], retried: Retried) -> str:
        """Submit ``items`` (all for ``model``) as one batch, each step through ``retried``;
        the batch's id."""
        ...

    async def status(self, batch_id: str) -> BatchStatus: ...

    async def results(
        self, batch_id: str, status: BatchStatus, calls: Mapping[str, WireCall]
    ) -> dict[str, Outcome]:
        """The outcome of every key of ``calls`` the batch holds a result for."""
        ...


@dataclass
class BatchStats:
    """What batch mode did in this process (shown in the extraction summary)."""

    batches_submitted: int = 0
    batches_resumed: int = 0
    requests: int = 0  # requests of this process's callers answered from a batch, or failed
    succeeded: int = 0
    failed: int = 0
    polls: int = 0

    @property
    def batches(self) -> int:
        return self.batches_submitted + self.batches_resumed

    def add(self, other: BatchStats) -> None:
        for name in ("batches_submitted", "batches_resumed", "requests", "succeeded", "failed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.polls += other.polls


# Called with each reply a batch returned, before the batch is marked ended: prices the reply
# and stores it in the cache. What it returns is what the caller gets.
Finish = Callable[[str, WireCall, RawReply, float], RawReply]


@dataclass
class _LoopState:
    """The batcher's asyncio objects, which belong to one event loop."""

    loop: asyncio.AbstractEventLoop
    waiters: dict[str, list[asyncio.Future[tuple[RawReply, bool]]]] = field(default_factory=dict)
    pending: dict[str, WireCall] = field(default_factory=dict)
    last_arrival: float = 0.0
    full: asyncio.Event = field(default_factory=asyncio.Event)
    gatherer: asyncio.Task[None] | None = None
    # Batches this process polls, and the calls of its callers waiting in each.
    following: dict[str, dict[str, WireCall]] = field(default_factory=dict)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class Batcher:
    """Gathers one endpoint's calls into batches; see the module doc."""

    def __init__(
        self,
        backend: BatchBackend,
        *,
        endpoint: str,
        settings: BatchSettings,
        call_settings: CallSettings,
        gate: CallGate,
        store: BatchStore | None,
        finish: Finish,
    ) -> None:
        self.backend = backend
        self.endpoint = endpoint
        self.settings = settings
        self.call_settings = call_settings
        self.gate = gate
        self.store = store
        self.finish = finish
        self.stats = BatchStats()
        self._state: _LoopState | None = None

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            self._state = _LoopState(loop=loop)
        return self._state

    async def call(self, key: str, call: WireCall) -> tuple[RawReply, bool]:
        """The reply to ``call`` from a batch, and whether this caller is the one it is billed
        to (False for a second caller of the same key, which shares it)."""
        state = self._loop_state()
        future: asyncio.Future[tuple[RawReply, bool]] = state.loop.create_future()
        waiting = state.waiters.setdefault(key, [])
        waiting.append(future)
        if len(waiting) == 1:  # the first caller of this key: the request is sent
            state.pending[key] = call
            state.last_arrival = time.monotonic()
            if len(state.pending) >= self.settings.max_requests:
                state.full.set()
            if state.gatherer is None:
                state.gatherer = self._spawn(state, self._gather(state))
        return await future

    def _spawn(self, state: _LoopState, work: Awaitable[None]) -> asyncio.Task[None]:
        async def run() -> None:
            await work

        task = state.loop.create_task(run())
        state.tasks.add(task)  # a reference, so the task is not collected while it runs
        task.add_done_callback(state.tasks.discard)
        return task

    async def _gather(self, state: _LoopState) -> None:
        s = self.settings
        try:
            while state.pending:
                first = time.monotonic()
                while len(state.pending) < s.max_requests:
                    now = time.monotonic()
                    wake = min(state.last_arrival + s.window_s, first + s.max_gather_s)
                    if now >= wake:
                        break
                    state.full.clear()
                    with contextlib.suppress(TimeoutError):  # quiet long enough
                        await asyncio.wait_for(state.full.wait(), wake - now)
                keys = list(state.pending)[: s.max_requests]
                items = {key: state.pending.pop(key) for key in keys}
                self._spawn(state, self._dispatch(state, items))
        finally:
            state.gatherer = None

    async def _dispatch(self, state: _LoopState, items: dict[str, WireCall]) -> None:
        """Poll the open batches that hold some of ``items`` already; submit the rest."""
        try:
            found = self.store.open_batches_for(self.endpoint, items) if self.store else {}
        except BaseException as exc:
            self._fail(state, items, exc)
            if isinstance(exc, Exception):
                return
            raise
        resumed: dict[str, dict[str, WireCall]] = {}
        fresh: dict[str, dict[str, WireCall]] = {}
        for key, call in items.items():
            batch_id = found.get(key)
            if batch_id is not None:
                resumed.setdefault(batch_id, {})[key] = call
            else:
                fresh.setdefault(str(call.model), {})[key] = call
        for batch_id, calls in resumed.items():
            log.info(
                "%s: %d request(s) are in batch %s, submitted before: polling it",
                self.endpoint,
                len(calls),
                batch_id,
            )
            self._follow(state, batch_id, calls, resumed=True)
        for model, calls in fresh.items():
            await self._submit(state, model, calls)

    async def _submit(self, state: _LoopState, model: str, calls: dict[str, WireCall]) -> None:
        items = [BatchItem(key, call) for key, call in calls.items()]
        try:
            batch_id = await self.backend.submit(model, items, _Retry(self, f"{model} (submit)"))
            if self.store is not None:
                self.store.record(batch_id, endpoint=self.endpoint, model=model, keys=list(calls))
        except BaseException as exc:
            self._fail(state, calls, exc)
            if isinstance(exc, Exception):
                return
            raise
        log.info("%s: batch %s submitted: %d request(s)", model, batch_id, len(items))
        self.stats.batches_submitted += 1
        self._follow(state, batch_id, calls, resumed=False)

    def _follow(
        self, state: _LoopState, batch_id: str, calls: dict[str, WireCall], *, resumed: bool
    ) -> None:
        following = state.following.get(batch_id)
        if following is not None:  # polled already: its results answer these too
            following.update(calls)
            return
        if resumed:
            self.stats.batches_resumed += 1
        state.following[batch_id] = dict(calls)
        self._spawn(state, self._poll(state, batch_id))

    async def _poll(self, state: _LoopState, batch_id: str) -> None:
        s = self.settings
        started = time.monotonic()
        delay = s.poll_initial_s
        try:
            while True:
                status = await self._retried(
                    lambda: self.backend.status(batch_id), f"batch {batch_id} (poll)"
                )
                self.stats.polls += 1
                if status.ended:
                    break
                if time.monotonic() - started + delay > s.max_wait_s:
                    raise ProviderError(
                        f"batch {batch_id} is still {status.status} after {s.max_wait_s:g} s; "
                        "run again to keep polling it"
                    )
                log.debug("batch %s: %s %s", batch_id, status.status, dict(status.counts))
                await asyncio.sleep(delay)
                delay = min(delay * 2, s.poll_max_s)
            calls = state.following[batch_id]
            outcomes = await self._retried(
                lambda: self.backend.results(batch_id, status, calls), f"batch {batch_id} (results)"
            )
            elapsed = time.monotonic() - started
            finished: dict[str, Outcome] = {}
            for key, call in state.following[batch_id].items():
                outcome = outcomes.get(key)
                if outcome is None:
                    why = status.failure or f"the batch ended {status.status} without it"
                    outcome = ProviderError(f"{call.model}: batch {batch_id}: {why}")
                elif isinstance(outcome, RawReply):
                    outcome = self.finish(key, call, outcome, elapsed)
                finished[key] = outcome
            if self.store is not None:
                self.store.mark_ended(batch_id)
        except BaseException as exc:
            self._fail(state, state.following.pop(batch_id, {}), exc)
            if isinstance(exc, Exception):
                return
            raise
        del state.following[batch_id]
        failed = sum(1 for o in finished.values() if not isinstance(o, RawReply))
        log.info(
            "batch %s %s: %d answered, %d failed",
            batch_id,
            status.status,
            len(finished) - failed,
            failed,
        )
        for key, outcome in finished.items():
            self._resolve(state, key, outcome)

    def _resolve(self, state: _LoopState, key: str, outcome: Outcome) -> None:
        self.stats.requests += 1
        if isinstance(outcome, RawReply):
            self.stats.succeeded += 1
        else:
            self.stats.failed += 1
        first = True
        for future in state.waiters.pop(key, []):
            if future.done():
                continue  # its caller was cancelled
            if isinstance(outcome, RawReply):
                future.set_result((outcome, first))
                first = False
            else:
                future.set_exception(outcome)

    def _fail(self, state: _LoopState, calls: Mapping[str, WireCall], exc: BaseException) -> None:
        """Every caller of ``calls`` gets ``exc`` (a cancellation cancels them)."""
        for key in calls:
            self.stats.requests += 1
            self.stats.failed += 1
            for future in state.waiters.pop(key, []):
                if future.done():
                    continue
                if isinstance(exc, asyncio.CancelledError):
                    future.cancel()
                else:
                    future.set_exception(exc)

    async def _retried(self, send: Callable[[], Awaitable[T]], label: str) -> T:
        return await call_with_retries(
            send, settings=self.call_settings, gate=self.gate, label=label
        )


class _Retry:
    """:class:`Retried` for one step of a batcher's work."""

    def __init__(self, batcher: Batcher, label: str) -> None:
        self._batcher = batcher
        self._label = label

    async def __call__(self, send: Callable[[], Awaitable[T]]) -> T:
        return await self._batcher._retried(send, self._label)
