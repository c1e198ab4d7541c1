"""The one retry policy of every provider (the SDKs' own retries are switched off).

Transient failures (:class:`RetryableError`) are tried again up to ``max_attempts`` times. When
the server said how long to wait (``retry-after`` on a 429/503), that wait is used — and the whole
endpoint pauses for it, not just this call; otherwise the wait grows exponentially with jitter.

Each attempt has a deadline of ``timeout_s`` for the whole exchange. The SDKs' own timeout
bounds each network read, not the reply: a server that sends a byte now and then would keep an
attempt alive for ever. With the deadline, a call ends within ``max_attempts`` × ``timeout_s``
plus the waits between attempts, whatever the server does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

from chatledger.providers._errors import (
    ConnectionRefusedRetry,
    MalformedReplyError,
    ProviderError,
    RetryableError,
    ServerUnreachableError,
    UnreadableReplyError,
)
from chatledger.providers._limits import CallGate
from chatledger.providers._settings import CallSettings

T = TypeVar("T")
log = logging.getLogger("chatledger.providers")

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def parse_retry_after(headers: object) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    millis = get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class _Wait:
    """Tenacity wait: the server's retry-after when given, else exponential back-off."""

    def __init__(self, settings: CallSettings) -> None:
        self._settings = settings
        self._backoff = wait_exponential_jitter(
            multiplier=settings.backoff_initial_s,
            max=settings.backoff_max_s,
            jitter=settings.backoff_initial_s,
        )

    def __call__(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        if isinstance(error, RetryableError) and error.retry_after_s is not None:
            return min(error.retry_after_s, self._settings.max_retry_after_s)
        return float(self._backoff(state))


async def call_with_retries(
    send: Callable[[], Awaitable[T]], *, settings: CallSettings, gate: CallGate, label: str
) -> T:
    """Run ``send`` under the endpoint's rate limit, retrying transient failures."""

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        if isinstance(error, RetryableError) and error.retry_after_s is not None:
            gate.pause_for(delay)
        log.warning(
            "%s: %s; retrying in %.2f s (attempt %d of %d)",
            label,
            error,
            delay,
            state.attempt_number + 1,
            settings.max_attempts,
        )

    # The first attempt runs on its own: most calls need no retry, and tenacity's machinery
    # costs about 45 µs a call. A failure is then replayed as tenacity's first attempt, so the
    # waits, the log lines and the count of attempts are tenacity's, as if it had run it.
    try:
        await gate.before_request()
        return await _within_deadline(send, settings.timeout_s)
    except RetryableError as exc:
        first: RetryableError | None = exc

    retrying = AsyncRetrying(
        stop=stop_after_attempt(settings.max_attempts) | _RefusedTwice(),
        wait=_Wait(settings),
        retry=retry_if_exception_type(RetryableError),
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                if first is not None:
                    failed, first = first, None
                    raise failed
                await gate.before_request()
                return await _within_deadline(send, settings.timeout_s)
    except ConnectionRefusedRetry as exc:
        raise ServerUnreachableError(label, exc.url) from None
    except RetryableError as exc:
        message = (
            f"{label}: gave up after {settings.max_attempts} attempts; last error: {exc.reason}"
        )
        if isinstance(exc, MalformedReplyError):
            raise UnreadableReplyError(message, reason=exc.reason) from None
        raise ProviderError(message) from None
    raise AssertionError("tenacity ended without a result or an error")  # pragma: no cover


class _RefusedTwice(stop_base):
    """A refused connection is not an overloaded server: one more try, then stop."""

    def __call__(self, retry_state: RetryCallState) -> bool:
        outcome = retry_state.outcome
        error = outcome.exception() if outcome is not None else None
        return isinstance(error, ConnectionRefusedRetry) and retry_state.attempt_number >= 2


async def _within_deadline(send: Callable[[], Awaitable[T]], timeout_s: float) -> T:
    """``send()``, abandoned (and retryable) once ``timeout_s`` have passed."""
    deadline = asyncio.timeout(timeout_s)
    try:
        async with deadline:
            return await send()
    except TimeoutError:
        if not deadline.expired():
            raise  # a timeout of send's own making, not this deadline
        # The same words as the SDKs' own timeout: to the user it is one thing.
        raise RetryableError(f"timed out after {timeout_s:g} s") from None
