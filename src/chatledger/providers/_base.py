"""The provider interface, and the machinery every real provider shares.

:class:`Provider` is all a caller needs: ``await provider.complete(request)``. Test doubles and
future back-ends can implement it directly. :class:`ManagedProvider` is the base of the real
ones (Anthropic, OpenAI, OpenAI-compatible, the ``claude`` CLI): a subclass only says how to send
one request over the wire (:meth:`ManagedProvider._send`), and the base adds the cache, the
budget, the concurrency and rate limits, retries, price accounting and structured output.

One ``complete`` may make several model calls ("wire calls"): a structured-output request whose
reply does not validate is re-asked with the validation error, up to ``max_reasks`` times. Each
wire call is cached under its own content address, so re-running finished work replays the same
conversation from disk without a single request.

What a live call is billed never exceeds what was reserved for it: output tokens are billed at
most ``max_tokens`` (the request's own limit), input tokens at most :func:`input_token_bound`
(one token per byte sent plus a fixed allowance), and a count the server did not report is
billed at its bound. Every replaced count is named in ``usage_warnings`` and logged.
"""

from __future__ import annotations

import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from pydantic import JsonValue

from chatledger.core import EnvironmentFault
from chatledger.providers._budget import Budget, Reservation
from chatledger.providers._cache import CompletionCache, EncodedJson, cache_key
from chatledger.providers._errors import (
    BudgetExceeded,
    PriceUnknownError,
    ProviderError,
    SchemaRejectedError,
    UnreadableReplyError,
)
from chatledger.providers._lease import HeldLease
from chatledger.providers._limits import CallGate
from chatledger.providers._model_id import ModelId, parse_model_id
from chatledger.providers._pricing import ModelPrice, PriceTable
from chatledger.providers._reply import RawReply
from chatledger.providers._retry import call_with_retries
from chatledger.providers._settings import BatchSettings, CallSettings
from chatledger.providers._structured import (
    check_reply,
    reask_text,
    schema_facts,
    schema_instruction,
)
from chatledger.providers._types import (
    BudgetStop,
    ChatMessage,
    Completion,
    CompletionRequest,
    OutputSchema,
    StructuredMode,
)

if TYPE_CHECKING:
    from chatledger.providers._batch import BatchBackend, Batcher

log = logging.getLogger("chatledger.providers")

# Input tokens are not known until the server counts them, and cannot be checked afterwards.
# The estimate is one token per 3 bytes of UTF-8 (English text runs near 4). The bound — what a
# call may be billed for input, and what the budget reserves — is three times that (one token
# per byte, which no tokenizer exceeds on text) plus an allowance for what a server adds on its
# side: chat templates, and the system prompt Anthropic adds for tool use (a few hundred).
BYTES_PER_TOKEN_ESTIMATE = 3
INPUT_BOUND_FACTOR = 3
INPUT_BOUND_ALLOWANCE_TOKENS = 1024


class Provider(ABC):
    """Anything that answers a :class:`CompletionRequest`."""

    @abstractmethod
    async def complete(self, request: CompletionRequest) -> Completion:
        """Answer one request. A model's bad output never raises: it comes back as
        ``Completion.error``. Raises :class:`ProviderError` when the call itself fails and
        :class:`BudgetExceeded` when it may not start."""

    async def aclose(self) -> None:
        """Release network clients; the provider can still be used afterwards."""
        return None

    async def __aenter__(self) -> Provider:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@dataclass(frozen=True)
class WireCall:
    """One request as a provider sends it."""

    model: ModelId
    system: str
    turns: tuple[ChatMessage, ...]
    max_tokens: int
    temperature: float | None
    options: Mapping[str, JsonValue]
    # Set only when the provider should enforce the schema with its own mechanism.
    schema: OutputSchema | None
    timeout_s: float


@dataclass
class _Tally:
    """Totals over the wire calls of one completion."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    live_calls: int = 0
    finish_reasons: list[str | None] = field(default_factory=list)
    usage_warnings: list[str] = field(default_factory=list)

    def add(self, reply: RawReply, *, cached: bool) -> None:
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        self.calls += 1
        self.finish_reasons.append(reply.finish_reason)
        self.usage_warnings += reply.usage_warnings
        if not cached:
            self.live_calls += 1
            self.cost_usd += reply.cost_usd or 0.0

    def add_unreadable(self) -> None:
        """A call whose every attempt got an unreadable 200: sent, answered, billed nothing."""
        self.calls += 1
        self.live_calls += 1
        self.finish_reasons.append(None)


class ManagedProvider(Provider):
    """Cache, budget, limits, retries, accounting and structured output around ``_send``."""

    kind: ClassVar[str]
    # Whether the back-end has its own schema mechanism (tool / response_format).
    native_schema: ClassVar[bool] = False
    # Whether the back-end has a batch API (see _batch_backend); without one, batch mode
    # sends calls one by one, as without it.
    supports_batch: ClassVar[bool] = False

    def __init__(
        self,
        *,
        settings: CallSettings | None = None,
        cache: CompletionCache | None = None,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
        gate: CallGate | None = None,
        batch: BatchSettings | None = None,
    ) -> None:
        """``batch``: send calls through the back-end's batch API (when it has one)."""
        self.settings = settings or CallSettings()
        self.cache = cache
        self.budget = budget
        if budget is not None and cache is not None:
            # A budget next to a cache bounds the spend of every process using that cache.
            budget.bind(cache)
        self.prices = prices if prices is not None else PriceTable.default()
        self.gate = gate or CallGate(self.settings.concurrency, self.settings.requests_per_second)
        # Models whose server refused the native schema mechanism: ask in the prompt from then on.
        self._schema_refused: set[str] = set()
        self._unpriced_warned: set[str] = set()
        self.batcher: Batcher | None = None
        # Batch mode was asked for, but this back-end has no batch API: calls go one by one.
        backend = self._batch_backend() if batch is not None and self.supports_batch else None
        self.batch_fallback = batch is not None and backend is None
        if batch is not None and backend is not None:
            from chatledger.providers._batch import Batcher

            self.batcher = Batcher(
                backend,
                endpoint=self.batch_endpoint(),
                settings=batch,
                call_settings=self.settings,
                gate=self.gate,
                store=cache.batches() if cache is not None else None,
                finish=self._finish_batch_reply,
            )
        elif self.batch_fallback:
            log.warning(
                "%s has no batch API: batch mode is off for it, its calls are sent one by one "
                "at the list price",
                self.kind,
            )

    def _batch_backend(self) -> BatchBackend | None:
        """The back-end's batch API; None: it has none (batch mode then calls one by one)."""
        return None

    def batch_endpoint(self) -> str:
        """Where this provider's batches live (batch ids are unique per endpoint)."""
        return self.kind

    def requests_at_once(self) -> int:
        """How many requests callers should send at once: the concurrency limit, or in batch
        mode the size of a batch (the limit then holds for the batch API's own requests)."""
        if self.batcher is not None:
            return self.batcher.settings.max_requests
        return self.gate.concurrency

    async def _prepare(self) -> None:
        """Get ready to send (import the SDK, build its client): done before a call's first
        attempt, so that one-off work is not counted against the attempt's deadline."""
        return None

    @abstractmethod
    async def _send(self, call: WireCall) -> RawReply:
        """Send one request. Raise :class:`RetryableError` for transient failures,
        :class:`SchemaRejectedError` when the server refuses ``call.schema``'s mechanism, and
        :class:`ProviderError` for anything else. Never put a key in a message."""

    def accepts(self, model: ModelId) -> bool:
        return model.provider == self.kind

    async def complete(self, request: CompletionRequest) -> Completion:
        model = parse_model_id(request.model)
        if not self.accepts(model):
            raise ProviderError(f"the {self.kind} provider cannot call {request.model!r}")
        started = time.perf_counter()
        schema = request.output_schema
        turns = list(request.turns)
        tally = _Tally()
        reply: RawReply | None = None
        parsed: JsonValue | None = None
        error: str | None = None
        mode: StructuredMode | None = None
        stop: BudgetExceeded | None = None
        unreadable: UnreadableReplyError | None = None
        rounds = 1 + (self.settings.max_reasks if schema is not None else 0)
        for _ in range(rounds):
            try:
                reply, mode = await self._call(model, request, tuple(turns), tally)
            except BudgetExceeded as exc:
                if reply is None:
                    raise  # nothing was paid for yet: the caller just stops
                # A re-ask may not start, but the reply before it was paid for: keep it.
                stop = exc
                break
            except UnreadableReplyError as exc:
                tally.add_unreadable()
                unreadable = exc
                break
            if schema is None:
                break
            parsed, error = check_reply(reply.text, reply.structured, schema)
            if error is None:
                break
            turns += [
                ChatMessage(role="assistant", content=reply.text),
                ChatMessage(role="user", content=reask_text(error)),
            ]
        answered = tally.calls - (1 if unreadable is not None else 0)
        if unreadable is not None:
            parsed = None
            before = f" (after {answered} invalid replies; last: {error})" if error else ""
            error = f"{unreadable}{before}"
            log.warning("%s", error)  # the error names the model already
        elif error is not None:
            error = f"no valid JSON after {answered} replies; last: {error}"
            if stop is not None:
                error += f"; no re-ask: {stop}"
            log.info("%s: structured output failed: %s", model, error)
        if reply is not None:
            text = reply.text
        else:
            assert unreadable is not None
            text = f"[unreadable reply] {unreadable.reason}"
        completion = Completion(
            model=str(model),
            text=text,
            error=error,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            latency_s=time.perf_counter() - started,
            cost_usd=tally.cost_usd,
            cached=tally.live_calls == 0,
            finish_reason=tally.finish_reasons[-1],
            calls=tally.calls,
            structured_mode=mode if schema is not None else None,
            sample_index=request.sample_index,
            usage_warnings=tuple(tally.usage_warnings),
            budget_stop=BudgetStop.of(stop) if stop is not None else None,
        )
        if parsed is None:
            return completion
        # The parsed value is decoded JSON that passed the schema: it is set without walking it
        # again as a JsonValue (for an extraction, a fifth of the provider layer's own CPU).
        return completion.model_copy(update={"parsed": parsed})

    async def _call(
        self,
        model: ModelId,
        request: CompletionRequest,
        turns: tuple[ChatMessage, ...],
        tally: _Tally,
    ) -> tuple[RawReply, StructuredMode | None]:
        schema = request.output_schema
        system = request.system_text
        if schema is not None and self.native_schema and str(model) not in self._schema_refused:
            try:
                reply = await self._cached_call(model, request, system, turns, "native", tally)
                return reply, "native"
            except SchemaRejectedError as exc:
                self._schema_refused.add(str(model))
                log.warning(
                    "%s: the server refused structured output (%s); asking for the schema "
                    "in the prompt instead",
                    model,
                    exc,
                )
        if schema is None:
            return await self._cached_call(model, request, system, turns, None, tally), None
        instruction = schema_instruction(schema)
        system = f"{system}\n\n{instruction}" if system else instruction
        return await self._cached_call(model, request, system, turns, "prompt", tally), "prompt"

    async def _cached_call(
        self,
        model: ModelId,
        request: CompletionRequest,
        system: str,
        turns: tuple[ChatMessage, ...],
        mode: StructuredMode | None,
        tally: _Tally,
    ) -> RawReply:
        call = WireCall(
            model=model,
            system=system,
            turns=turns,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            options=request.options,
            schema=request.output_schema if mode == "native" else None,
            timeout_s=self.settings.timeout_s,
        )
        key = cache_key(self._key_parts(call, request, mode))
        if self.cache is not None:
            reply = self.cache.get(key)
            if reply is not None:
                if self.budget is not None:
                    self.budget.record_cached()
                tally.add(reply, cached=True)
                return reply
        if self.batcher is not None:
            return await self._batched_call(key, call, tally)
        if self.cache is None:
            return await self._live_call(key, call, tally)
        # The call is paid once across the processes sharing the cache: one takes its lease and
        # asks, the others wait for its reply (see providers/_lease.py).
        stored, token = await self.cache.leases.acquire(key, str(model))
        if stored is not None:
            reply = stored
            self.cache.misses -= 1  # counted by get() above: the reply came after all
            self.cache.hits += 1
            if self.budget is not None:
                self.budget.record_cached()
            tally.add(reply, cached=True)
            return reply
        assert token is not None
        async with self.cache.leases.holding(key, token) as lease:
            return await self._live_call(key, call, tally, lease)

    async def _live_call(
        self, key: str, call: WireCall, tally: _Tally, lease: HeldLease | None = None
    ) -> RawReply:
        """``call`` sent now: reserved, sent with retries, priced, cached and settled; the
        reply, the spend and the end of ``lease`` written in one transaction of the cache."""
        model = call.model
        # Reserve the budget only once a concurrency slot is ours: reserving for every queued
        # call at once would refuse calls far below the cap.
        await self._prepare()
        reservation: Reservation | None = None
        started = time.perf_counter()
        try:
            async with self.gate.slot():
                reservation = self._reserve(call)
                started = time.perf_counter()
                reply = await call_with_retries(
                    lambda: self._send(call),
                    settings=self.settings,
                    gate=self.gate,
                    label=str(model),
                )
        except BaseException:
            if reservation is not None and self.budget is not None:
                self.budget.release(reservation)
            raise
        if reply.usage_warnings:
            log.warning("%s: %s", model, "; ".join(reply.usage_warnings))
        cost = reply.cost_usd if reply.cost_usd is not None else self._cost(model, reply)
        reply = reply.model_copy(
            update={"cost_usd": cost, "latency_s": time.perf_counter() - started}
        )
        settle = (
            self.budget.book(
                reservation,
                cost,
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
            )
            if reservation is not None and self.budget is not None
            else None
        )
        if self.cache is not None:
            try:
                # One commit a call: the reply, the spend and the lease's end together.
                with self.cache.transaction():
                    self.cache.put(key, str(model), reply)
                    if settle is not None:
                        settle()
                    if lease is not None:
                        lease.release()
            except EnvironmentFault:
                # Were the spend's write to fail (a full disk), the paid answer is still kept
                # when it can be: on its own, as before the spend was written with it.
                self.cache.put(key, str(model), reply)
                raise
        elif settle is not None:
            settle()
        tally.add(reply, cached=False)
        return reply

    async def _batched_call(self, key: str, call: WireCall, tally: _Tally) -> RawReply:
        """``call`` answered from a batch: reserved at the batch price before it is submitted,
        settled when its result comes (the batcher has priced and cached the reply by then),
        released if it fails. No concurrency slot is taken: the batch API's own requests keep
        to the endpoint's limits."""
        assert self.batcher is not None
        await self._prepare()
        reservation = self._reserve(call)
        try:
            reply, billed = await self.batcher.call(key, call)
        except BaseException:
            if reservation is not None and self.budget is not None:
                self.budget.release(reservation)
            raise
        if not billed:
            # The same request asked twice at once was sent once: the second caller shares
            # the reply, billed nothing, as a cache hit.
            if reservation is not None and self.budget is not None:
                self.budget.release(reservation)
                self.budget.record_cached()
            tally.add(reply, cached=True)
            return reply
        tally.add(reply, cached=False)
        if reservation is not None and self.budget is not None:
            self.budget.settle(
                reservation,
                reply.cost_usd or 0.0,
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
            )
        return reply

    def _finish_batch_reply(
        self, key: str, call: WireCall, reply: RawReply, elapsed_s: float
    ) -> RawReply:
        """A reply from a batch priced at the batch price and stored in the cache, under the
        key the per-call reply would have, so a later run (batch or not) replays it."""
        if reply.usage_warnings:
            log.warning("%s: %s", call.model, "; ".join(reply.usage_warnings))
        cost = reply.cost_usd if reply.cost_usd is not None else self._cost(call.model, reply)
        reply = reply.model_copy(update={"cost_usd": cost, "latency_s": elapsed_s})
        if self.cache is not None:
            self.cache.put(key, str(call.model), reply)
        return reply

    def _price(self, model: str) -> ModelPrice | None:
        """The price a call of ``model`` pays: the batch price in batch mode."""
        if self.batcher is not None:
            return self.prices.batch_price(model)
        return self.prices.price(model)

    def _key_parts(
        self, call: WireCall, request: CompletionRequest, mode: StructuredMode | None
    ) -> dict[str, Any]:
        schema = request.output_schema
        return {
            "provider": self.kind,
            "model": str(call.model),
            "parameters": {
                "max_tokens": call.max_tokens,
                "temperature": call.temperature,
                "options": dict(call.options),
            },
            "system": call.system,
            "messages": [{"role": m.role, "content": m.content} for m in call.turns],
            # The schema's canonical JSON, worked out once per schema (the same key).
            "schema": EncodedJson(schema_facts(schema).key_text) if schema is not None else None,
            "schema_mode": mode,
            "sample_index": request.sample_index,
        }

    def _reserve(self, call: WireCall) -> Reservation | None:
        if self.budget is None:
            return None
        model = str(call.model)
        hold_s = self._longest_call_s()
        price = self._price(model)
        if price is None:
            if self.budget.cap_usd is not None:
                raise PriceUnknownError(model)
            return self.budget.reserve(model, 0.0, hold_s=hold_s)
        # The most this call can be billed (see billed_usage), so the settled cost never
        # exceeds what was held for it and the cap holds.
        worst = price.cost(input_token_bound(call), call.max_tokens)
        return self.budget.reserve(model, worst, hold_s=hold_s)

    def _longest_call_s(self) -> float:
        """How long one call may hold its reservation, waits between attempts included; a
        shared ledger treats an older hold as left behind by a crashed process."""
        s = self.settings
        per_attempt = s.timeout_s + max(s.backoff_max_s, s.max_retry_after_s)
        longest = 2 * s.max_attempts * per_attempt + 600.0
        if self.batcher is not None:
            # A batch call waits for its batch to end (up to a day) before it settles.
            b = self.batcher.settings
            longest += b.max_gather_s + b.max_wait_s + b.poll_max_s
        return longest

    def _cost(self, model: ModelId, reply: RawReply) -> float:
        price = self._price(str(model))
        if price is None:
            if str(model) not in self._unpriced_warned:
                self._unpriced_warned.add(str(model))
                log.warning(
                    "%s has no entry in the price table: its calls are counted as $0", model
                )
            return 0.0
        return price.cost(reply.input_tokens, reply.output_tokens)


def input_token_estimate(call: WireCall) -> int:
    """About how many input tokens ``call`` sends (see BYTES_PER_TOKEN_ESTIMATE)."""
    size = len(call.system.encode("utf-8"))
    size += sum(len(m.content.encode("utf-8")) for m in call.turns)
    if call.schema is not None:
        size += schema_facts(call.schema).size
    return math.ceil(size / BYTES_PER_TOKEN_ESTIMATE)


def input_token_bound(call: WireCall) -> int:
    """The most input tokens ``call`` is billed for, whatever the server reports."""
    return INPUT_BOUND_FACTOR * input_token_estimate(call) + INPUT_BOUND_ALLOWANCE_TOKENS


def reported_count(value: object) -> int | None:
    """A token count as a server reported it, or None when it is not a count (missing,
    negative, fractional, not a number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


class BilledUsage(TypedDict):
    """The token fields of a :class:`RawReply` (:func:`billed_usage`)."""

    input_tokens: int
    output_tokens: int
    usage_warnings: tuple[str, ...]


def billed_usage(
    call: WireCall, input_tokens: int | None, output_tokens: int | None
) -> BilledUsage:
    """The token fields of a :class:`RawReply` for what the server reported (None: no count).

    Output is billed at most ``max_tokens``, the limit the request set, and input at most
    :func:`input_token_bound`; a missing count is billed at its bound. Each replacement is
    said in ``usage_warnings``, so a server over-reporting usage is flagged, never paid.
    """
    warnings: list[str] = []
    bound = input_token_bound(call)
    if input_tokens is None:
        warnings.append(f"no input token count in the reply: billed the bound, {bound}")
        input_tokens = bound
    elif input_tokens > bound:
        warnings.append(
            f"{input_tokens} input tokens reported for about {input_token_estimate(call)} sent: "
            f"billed the bound, {bound}"
        )
        input_tokens = bound
    if output_tokens is None:
        warnings.append(f"no output token count in the reply: billed max_tokens, {call.max_tokens}")
        output_tokens = call.max_tokens
    elif output_tokens > call.max_tokens:
        warnings.append(
            f"{output_tokens} output tokens reported under max_tokens {call.max_tokens}: "
            f"billed {call.max_tokens}"
        )
        output_tokens = call.max_tokens
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "usage_warnings": tuple(warnings),
    }
