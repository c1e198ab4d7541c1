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
"""

from __future__ import annotations

import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from chatledger.providers._budget import Budget, Reservation
from chatledger.providers._cache import CompletionCache, cache_key, canonical_json
from chatledger.providers._errors import PriceUnknownError, ProviderError, SchemaRejectedError
from chatledger.providers._limits import CallGate
from chatledger.providers._model_id import ModelId, parse_model_id
from chatledger.providers._pricing import PriceTable
from chatledger.providers._retry import call_with_retries
from chatledger.providers._settings import CallSettings
from chatledger.providers._structured import check_reply, reask_text, schema_instruction
from chatledger.providers._types import (
    ChatMessage,
    Completion,
    CompletionRequest,
    OutputSchema,
    StructuredMode,
)

log = logging.getLogger("chatledger.providers")

# Budget worst case before a call: input tokens are not known until the server counts them, so
# they are over-estimated at one token per 3 bytes of UTF-8 (English text runs near 4).
BYTES_PER_TOKEN_ESTIMATE = 3


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


class RawReply(BaseModel):
    """What one wire call returned; this is what the cache stores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    # The value a schema mechanism handed back directly (a tool call's input).
    structured: JsonValue | None = None
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    finish_reason: str | None = None
    # Filled by the provider when the back-end reports the cost itself (the claude CLI does),
    # otherwise computed from the price table.
    cost_usd: float | None = None
    latency_s: float = 0.0


@dataclass
class _Tally:
    """Totals over the wire calls of one completion."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    live_calls: int = 0
    finish_reasons: list[str | None] = field(default_factory=list)

    def add(self, reply: RawReply, *, cached: bool) -> None:
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        self.calls += 1
        self.finish_reasons.append(reply.finish_reason)
        if not cached:
            self.live_calls += 1
            self.cost_usd += reply.cost_usd or 0.0


class ManagedProvider(Provider):
    """Cache, budget, limits, retries, accounting and structured output around ``_send``."""

    kind: ClassVar[str]
    # Whether the back-end has its own schema mechanism (tool / response_format).
    native_schema: ClassVar[bool] = False

    def __init__(
        self,
        *,
        settings: CallSettings | None = None,
        cache: CompletionCache | None = None,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
        gate: CallGate | None = None,
    ) -> None:
        self.settings = settings or CallSettings()
        self.cache = cache
        self.budget = budget
        self.prices = prices if prices is not None else PriceTable.default()
        self.gate = gate or CallGate(self.settings.concurrency, self.settings.requests_per_second)
        # Models whose server refused the native schema mechanism: ask in the prompt from then on.
        self._schema_refused: set[str] = set()
        self._unpriced_warned: set[str] = set()

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
        parsed: JsonValue | None = None
        error: str | None = None
        mode: StructuredMode | None = None
        rounds = 1 + (self.settings.max_reasks if schema is not None else 0)
        for _ in range(rounds):
            reply, mode = await self._call(model, request, tuple(turns), tally)
            if schema is None:
                break
            parsed, error = check_reply(reply.text, reply.structured, schema)
            if error is None:
                break
            turns += [
                ChatMessage(role="assistant", content=reply.text),
                ChatMessage(role="user", content=reask_text(error)),
            ]
        if error is not None:
            error = f"no valid JSON after {rounds} replies; last: {error}"
            log.info("%s: structured output failed: %s", model, error)
        return Completion(
            model=str(model),
            text=reply.text,
            parsed=parsed,
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
        )

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
            stored = self.cache.get(key)
            if stored is not None:
                reply = RawReply.model_validate(stored)
                if self.budget is not None:
                    self.budget.record_cached()
                tally.add(reply, cached=True)
                return reply
        # Reserve the budget only once a concurrency slot is ours: reserving for every queued
        # call at once would refuse calls far below the cap.
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
        cost = reply.cost_usd if reply.cost_usd is not None else self._cost(model, reply)
        reply = reply.model_copy(
            update={"cost_usd": cost, "latency_s": time.perf_counter() - started}
        )
        if reservation is not None and self.budget is not None:
            self.budget.settle(reservation, cost)
        if self.cache is not None:
            self.cache.put(key, str(model), reply.model_dump(mode="json"))
        tally.add(reply, cached=False)
        return reply

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
            "messages": [m.model_dump() for m in call.turns],
            "schema": schema.model_dump(by_alias=True) if schema is not None else None,
            "schema_mode": mode,
            "sample_index": request.sample_index,
        }

    def _reserve(self, call: WireCall) -> Reservation | None:
        if self.budget is None:
            return None
        model = str(call.model)
        price = self.prices.price(model)
        if price is None:
            if self.budget.cap_usd is not None:
                raise PriceUnknownError(model)
            return self.budget.reserve(model, 0.0)
        return self.budget.reserve(model, price.cost(_input_estimate(call), call.max_tokens))

    def _cost(self, model: ModelId, reply: RawReply) -> float:
        price = self.prices.price(str(model))
        if price is None:
            if str(model) not in self._unpriced_warned:
                self._unpriced_warned.add(str(model))
                log.warning(
                    "%s has no entry in the price table: its calls are counted as $0", model
                )
            return 0.0
        return price.cost(reply.input_tokens, reply.output_tokens)


def _input_estimate(call: WireCall) -> int:
    """An over-estimate of the input tokens of ``call`` (see BYTES_PER_TOKEN_ESTIMATE)."""
    size = len(call.system.encode("utf-8"))
    size += sum(len(m.content.encode("utf-8")) for m in call.turns)
    if call.schema is not None:
        size += len(canonical_json(call.schema.json_schema).encode("utf-8"))
    return math.ceil(size / BYTES_PER_TOKEN_ESTIMATE)
