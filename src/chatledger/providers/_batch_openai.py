"""OpenAI's Batch API through the ``openai`` SDK: upload a JSONL of Chat Completions requests
(``files.create``, purpose ``batch``), create the batch (``batches.create``, window 24 h), poll
it (``batches.retrieve``), read the output and error files (``files.content``).

Each input line is ``{custom_id, method: POST, url: /v1/chat/completions, body}`` with the body
the per-call path would post. An output line is ``{id, custom_id, response: {status_code,
request_id, body}, error}``; a request that did not run (an expired batch's unfinished part,
code ``batch_expired``) is in the error file with ``response`` null. A reply body is read as
the per-call reply is (:func:`read_chat_completion`), an error status as the per-call error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

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
    from openai import AsyncOpenAI

    from chatledger.providers._openai import OpenAIProvider

log = logging.getLogger("chatledger.providers")
T = TypeVar("T")

ENDPOINT: Final = "/v1/chat/completions"
# Statuses after which a batch changes no more.
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


class OpenAIBatches:
    """The :class:`BatchBackend` of an :class:`OpenAIProvider`."""

    def __init__(self, provider: OpenAIProvider) -> None:
        self.provider = provider
        # Output and error file ids by batch id, from the poll that saw it end.
        self._files: dict[str, tuple[str | None, str | None]] = {}

    async def _client(self) -> AsyncOpenAI:
        route = await self.provider._client.get()
        client: AsyncOpenAI = route.sdk
        return client

    async def _sdk(self, op: Callable[[AsyncOpenAI], Awaitable[T]]) -> T:
        """``op(client)`` with the SDK's errors as the provider layer's."""
        import openai

        client = await self._client()
        try:
            return await op(client)
        except openai.APIStatusError as exc:
            raise error_for_status(
                exc.status_code,
                exc.response.headers,
                str(exc.message),
                secrets=[client.api_key],
                key_variable=self.provider.key_variable,
                schema_sent=False,
            ) from None
        except openai.APITimeoutError:
            raise RetryableError("timed out") from None
        except openai.APIConnectionError:
            raise RetryableError("connection failed") from None

    async def submit(self, model: str, items: Sequence[BatchItem], retried: Retried) -> str:
        lines = [
            json.dumps(
                {
                    "custom_id": item.key,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": self.provider._body(item.call),
                },
                separators=(",", ":"),
            )
            for item in items
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")

        async def upload(client: AsyncOpenAI) -> str:
            made = await client.files.create(
                file=("chatledger-batch.jsonl", data, "application/jsonl"), purpose="batch"
            )
            return made.id

        file_id: str = await retried(lambda: self._sdk(upload))

        async def create(client: AsyncOpenAI) -> str:
            batch = await client.batches.create(
                input_file_id=file_id, endpoint=ENDPOINT, completion_window="24h"
            )
            return batch.id

        batch_id: str = await retried(lambda: self._sdk(create))
        return batch_id

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._sdk(lambda client: client.batches.retrieve(batch_id))
        counts = batch.request_counts.model_dump() if batch.request_counts is not None else {}
        failure = None
        if batch.status == "failed":
            errors = batch.errors.data if batch.errors is not None and batch.errors.data else []
            said = "; ".join(f"{e.code}: {e.message}" for e in errors if e.message)
            failure = f"the batch failed ({said or 'no reason given'})"
        elif batch.status == "cancelled":
            failure = "the batch was cancelled"
        if batch.status in _ENDED:
            self._files[batch_id] = (batch.output_file_id, batch.error_file_id)
        return BatchStatus(
            ended=batch.status in _ENDED,
            status=batch.status,
            counts={k: int(v) for k, v in counts.items() if isinstance(v, int)},
            failure=failure,
        )

    async def results(
        self, batch_id: str, status: BatchStatus, calls: Mapping[str, WireCall]
    ) -> dict[str, Outcome]:
        output_id, error_id = self._files.get(batch_id, (None, None))
        client = await self._client()
        secrets = [client.api_key]
        outcomes: dict[str, Outcome] = {}
        for file_id in (output_id, error_id):
            if file_id is None:
                continue
            text = await self._download(file_id)
            for number, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    log.warning(
                        "batch %s: line %d of file %s is not JSON", batch_id, number, file_id
                    )
                    continue
                key = entry.get("custom_id") if isinstance(entry, dict) else None
                if not isinstance(key, str) or key not in calls or key in outcomes:
                    continue
                outcomes[key] = self._outcome(batch_id, calls[key], entry, secrets)
        return outcomes

    async def _download(self, file_id: str) -> str:
        async def read(client: AsyncOpenAI) -> str:
            content = await client.files.content(file_id)
            return content.content.decode("utf-8")

        return await self._sdk(read)

    def _outcome(
        self, batch_id: str, call: WireCall, entry: dict[str, Any], secrets: list[str]
    ) -> Outcome:
        from chatledger.providers._openai import read_chat_completion, sdk_error_message_of

        where = f"{call.model}: batch {batch_id}"
        error = entry.get("error")
        response = entry.get("response")
        if isinstance(error, dict) and not isinstance(response, dict):
            code = error.get("code") or "error"
            return ProviderError(f"{where}: request {code}: {error.get('message') or ''}".strip())
        if not isinstance(response, dict):
            return ProviderError(f"{where}: a result without a response")
        status_code = response.get("status_code")
        body = response.get("body")
        if status_code != 200:
            found = error_for_status(
                status_code if isinstance(status_code, int) else 500,
                {},
                sdk_error_message_of(status_code, body),
                secrets=secrets,
                key_variable=self.provider.key_variable,
                schema_sent=call.schema is not None,
            )
            if isinstance(found, RetryableError):  # not retried: the batch is over
                detail = sdk_error_message_of(status_code, body).split(" - ", 1)[-1]
                return ProviderError(f"{where}: request failed ({found.reason}: {detail})")
            return found
        try:
            return read_chat_completion(call, body, secrets=secrets)
        except MalformedReplyError as exc:
            return UnreadableReplyError(f"{where}: {exc.reason}", reason=exc.reason)
