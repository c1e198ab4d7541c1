"""Anthropic's Messages API through the official ``anthropic`` SDK (an optional extra).

Structured output uses a tool whose ``input_schema`` is the schema, forced with ``tool_choice``;
the tool call's input is the answer. ``temperature`` is sent only when a request sets one: the
SDK no longer has the parameter (newer models reject it), so it goes in the request body as is.

The reply is read from its raw body here (``with_raw_response``), not through the SDK's
response model, which hands back a bare string for a non-JSON body and half-built objects for
JSON of another shape: anything that is not a Message is a :class:`MalformedReplyError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from chatledger.providers._base import ManagedProvider, WireCall, billed_usage, reported_count
from chatledger.providers._clients import LoopBoundClient
from chatledger.providers._errors import (
    ConnectionRefusedRetry,
    MissingSdkError,
    ReplyTooLargeError,
    RetryableError,
    connection_refused,
)
from chatledger.providers._http import HttpBodyTooLarge, body_too_large, bounded_sdk_hooks
from chatledger.providers._http_status import error_for_status, malformed_reply
from chatledger.providers._model_id import ANTHROPIC
from chatledger.providers._reply import RawReply
from chatledger.providers._secrets import read_api_key

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from chatledger.providers._batch import BatchBackend

API_KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicProvider(ManagedProvider):
    kind = ANTHROPIC
    native_schema = True
    supports_batch = True  # Message Batches (providers/_batch_anthropic.py)

    def __init__(self, *, base_url: str | None = None, **shared: Any) -> None:
        """``base_url`` points at another server speaking the Messages API (a proxy, a test
        server); ``shared`` is passed to :class:`ManagedProvider`."""
        self.base_url = base_url  # before the base's __init__, which names the batch endpoint
        super().__init__(**shared)
        self._client = LoopBoundClient(self._new_client, _close)

    def _new_client(self) -> AsyncAnthropic:
        try:
            import anthropic
        except ImportError:
            raise MissingSdkError("anthropic", "anthropic") from None
        return anthropic.AsyncAnthropic(
            api_key=read_api_key(API_KEY_ENV, "Anthropic"),
            base_url=self.base_url,
            max_retries=0,  # tenacity is the one retry policy
            timeout=self.settings.timeout_s,
            # The SDK's own client (proxies, limits), with the reply's body bounded.
            http_client=anthropic.DefaultAsyncHttpxClient(
                event_hooks=bounded_sdk_hooks(self.settings.max_reply_bytes)
            ),
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _prepare(self) -> None:
        await self._client.get()  # raises a clear error when the SDK or the key is missing

    def _batch_backend(self) -> BatchBackend:
        from chatledger.providers._batch_anthropic import AnthropicBatches

        return AnthropicBatches(self)

    def batch_endpoint(self) -> str:
        return self.kind if self.base_url is None else f"{self.kind}:{self.base_url}"

    def params(self, call: WireCall) -> tuple[dict[str, Any], dict[str, Any]]:
        """The ``messages.create`` arguments for ``call``, and what goes in the body beside
        them (temperature, options)."""
        kwargs: dict[str, Any] = {
            "model": call.model.model,
            "max_tokens": call.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in call.turns],
        }
        if call.system:
            kwargs["system"] = call.system
        if call.schema is not None:
            kwargs["tools"] = [
                {
                    "name": call.schema.name,
                    "description": call.schema.description or "Record the answer.",
                    "input_schema": call.schema.json_schema,
                }
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": call.schema.name}
        extra_body: dict[str, Any] = dict(call.options)
        if call.temperature is not None:
            extra_body["temperature"] = call.temperature
        return kwargs, extra_body

    async def _send(self, call: WireCall) -> RawReply:
        client = await self._client.get()  # raises a clear error when the SDK is missing
        import anthropic

        kwargs, extra_body = self.params(call)
        kwargs["timeout"] = call.timeout_s
        if extra_body:
            kwargs["extra_body"] = extra_body
        secrets = [client.api_key]
        try:
            raw = await client.messages.with_raw_response.create(**kwargs)
            body = await raw.read()
        except anthropic.APIStatusError as exc:
            raise error_for_status(
                exc.status_code,
                exc.response.headers,
                str(exc.message),
                secrets=secrets,
                key_variable=API_KEY_ENV,
                schema_sent=call.schema is not None,
            ) from None
        except HttpBodyTooLarge as exc:  # from bounded_sdk_hooks, should the SDK let it through
            raise ReplyTooLargeError(f"{call.model}: {exc}", reason=str(exc)) from None
        except anthropic.APITimeoutError:
            raise RetryableError(f"timed out after {call.timeout_s:g} s") from None
        except anthropic.APIConnectionError as exc:
            cut = body_too_large(exc)
            if cut is not None:
                raise ReplyTooLargeError(f"{call.model}: {cut}", reason=str(cut)) from None
            if connection_refused(exc):
                raise ConnectionRefusedRetry(None) from None
            raise RetryableError("connection failed") from None
        return read_message(call, body, secrets=secrets)


def read_message(call: WireCall, body: bytes, *, secrets: Iterable[str | None]) -> RawReply:
    """The reply in a Messages API body, or :class:`MalformedReplyError`."""
    try:
        # JSON over HTTP is UTF-8 (RFC 8259); json.loads would guess UTF-16 from a stray BOM.
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise malformed_reply("the reply is not UTF-8 text", body, secrets=secrets) from None
    except json.JSONDecodeError:
        raise malformed_reply("the reply is not JSON", body, secrets=secrets) from None
    if not isinstance(data, dict):
        raise malformed_reply("the reply is not a JSON object", data, secrets=secrets)
    blocks = data.get("content")
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise malformed_reply("the reply has no content blocks", data, secrets=secrets)
    texts: list[str] = []
    structured: JsonValue | None = None
    for block in blocks:
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif (
            block.get("type") == "tool_use"
            and call.schema is not None
            and block.get("name") == call.schema.name
        ):
            structured = block.get("input")
    text = "".join(texts)
    if structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    stop_reason = data.get("stop_reason")
    return RawReply(
        text=text,
        structured=structured,
        finish_reason=stop_reason if isinstance(stop_reason, str) else None,
        **billed_usage(call, _input_tokens(usage), reported_count(usage.get("output_tokens"))),
    )


def _input_tokens(usage: dict[str, Any]) -> int | None:
    """Input tokens, prompt-cache writes and reads included; None if any count is unreadable."""
    total = reported_count(usage.get("input_tokens"))
    for name in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        value = usage.get(name)
        if value is None:
            continue  # not every reply has them
        count = reported_count(value)
        if total is None or count is None:
            return None
        total += count
    return total


async def _close(client: AsyncAnthropic) -> None:
    await client.close()
