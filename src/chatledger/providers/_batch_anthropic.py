"""Anthropic's Message Batches through the ``anthropic`` SDK: ``messages.batches.create`` with
``{custom_id, params}`` per request (the params the per-call path sends), ``retrieve`` until
``processing_status`` is ``ended``, then ``results`` — JSONL of ``{custom_id, result: {type:
succeeded | errored | canceled | expired, message | error}}``. A succeeded message is read as
the per-call reply is (:func:`read_message`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from chatledger.providers._base import WireCall
from chatledger.providers._batch import BatchItem, BatchStatus, Outcome, Retried
from chatledger.providers._errors import (
    MalformedReplyError,
    ProviderError,
    RetryableError,
    UnreadableReplyError,
)
from chatledger.providers._http_status import error_for_status

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from chatledger.providers._anthropic import AnthropicProvider

T = TypeVar("T")

# The HTTP status an errored request's error type stands for (Anthropic's error types).
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicBatches:
    """The :class:`BatchBackend` of an :class:`AnthropicProvider`."""

    def __init__(self, provider: AnthropicProvider) -> None:
        self.provider = provider

    async def _sdk(self, op: Callable[[AsyncAnthropic], Awaitable[T]]) -> T:
        """``op(client)`` with the SDK's errors as the provider layer's."""
        import anthropic

        from chatledger.providers._anthropic import API_KEY_ENV

        client = await self.provider._client.get()
        try:
            return await op(client)
        except anthropic.APIStatusError as exc:
            raise error_for_status(
                exc.status_code,
                exc.response.headers,
                str(exc.message),
                secrets=[client.api_key],
                key_variable=API_KEY_ENV,
                schema_sent=False,
            ) from None
        except anthropic.APITimeoutError:
            raise RetryableError("timed out") from None
        except anthropic.APIConnectionError:
            raise RetryableError("connection failed") from None

    async def submit(self, model: str, items: Sequence[BatchItem], retried: Retried) -> str:
        requests: list[dict[str, Any]] = []
        for item in items:
            params, extra = self.provider.params(item.call)
            requests.append({"custom_id": item.key, "params": {**params, **extra}})

        async def create(client: AsyncAnthropic) -> str:
            batch = await client.messages.batches.create(requests=requests)  # type: ignore[arg-type]
            return batch.id

        batch_id: str = await retried(lambda: self._sdk(create))
        return batch_id

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._sdk(lambda client: client.messages.batches.retrieve(batch_id))
        counts = batch.request_counts.model_dump()
        return BatchStatus(
            ended=batch.processing_status == "ended",
            status=batch.processing_status,
            counts={k: int(v) for k, v in counts.items() if isinstance(v, int)},
        )

    async def results(
        self, batch_id: str, status: BatchStatus, calls: Mapping[str, WireCall]
    ) -> dict[str, Outcome]:
        from chatledger.providers._anthropic import API_KEY_ENV, read_message

        client = await self.provider._client.get()
        secrets = [client.api_key]

        async def read(client: AsyncAnthropic) -> list[dict[str, Any]]:
            decoder = await client.messages.batches.results(batch_id)
            return [entry.to_dict() async for entry in decoder]

        entries = await self._sdk(read)
        outcomes: dict[str, Outcome] = {}
        for entry in entries:
            key = entry.get("custom_id")
            if not isinstance(key, str) or key not in calls or key in outcomes:
                continue
            call = calls[key]
            where = f"{call.model}: batch {batch_id}"
            result = entry.get("result")
            kind = result.get("type") if isinstance(result, dict) else None
            if kind == "succeeded" and isinstance(result, dict):
                body = json.dumps(result.get("message")).encode("utf-8")
                try:
                    outcomes[key] = read_message(call, body, secrets=secrets)
                except MalformedReplyError as exc:
                    outcomes[key] = UnreadableReplyError(
                        f"{where}: {exc.reason}", reason=exc.reason
                    )
            elif kind == "errored" and isinstance(result, dict):
                outer = result.get("error")
                error = outer.get("error", outer) if isinstance(outer, dict) else {}
                error = error if isinstance(error, dict) else {}
                found = error_for_status(
                    _ERROR_STATUS.get(str(error.get("type")), 500),
                    {},
                    f"{error.get('type')}: {error.get('message')}",
                    secrets=secrets,
                    key_variable=API_KEY_ENV,
                    schema_sent=call.schema is not None,
                )
                if isinstance(found, RetryableError):  # not retried: the batch is over
                    found = ProviderError(
                        f"{where}: request errored ({found.reason}, {error.get('type')}: "
                        f"{error.get('message')})"
                    )
                outcomes[key] = found
            else:
                outcomes[key] = ProviderError(f"{where}: request {kind or 'without a result'}")
        return outcomes
