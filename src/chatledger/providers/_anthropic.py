"""Anthropic's Messages API through the official ``anthropic`` SDK (an optional extra).

Structured output uses a tool whose ``input_schema`` is the schema, forced with ``tool_choice``;
the tool call's input is the answer. ``temperature`` is sent only when a request sets one: the
SDK no longer has the parameter (newer models reject it), so it goes in the request body as is.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from chatledger.providers._base import ManagedProvider, RawReply, WireCall
from chatledger.providers._clients import LoopBoundClient
from chatledger.providers._errors import ProviderError, RetryableError
from chatledger.providers._http_status import error_for_status
from chatledger.providers._model_id import ANTHROPIC
from chatledger.providers._secrets import read_api_key

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

API_KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicProvider(ManagedProvider):
    kind = ANTHROPIC
    native_schema = True

    def __init__(self, *, base_url: str | None = None, **shared: Any) -> None:
        """``base_url`` points at another server speaking the Messages API (a proxy, a test
        server); ``shared`` is passed to :class:`ManagedProvider`."""
        super().__init__(**shared)
        self.base_url = base_url
        self._client = LoopBoundClient(self._new_client, _close)

    def _new_client(self) -> AsyncAnthropic:
        try:
            import anthropic
        except ImportError:
            raise ProviderError(
                "the anthropic SDK is not installed: pip install 'chatledger[anthropic]'"
            ) from None
        return anthropic.AsyncAnthropic(
            api_key=read_api_key(API_KEY_ENV, "Anthropic"),
            base_url=self.base_url,
            max_retries=0,  # tenacity is the one retry policy
            timeout=self.settings.timeout_s,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _send(self, call: WireCall) -> RawReply:
        client = await self._client.get()  # raises a clear error when the SDK is missing
        import anthropic

        kwargs: dict[str, Any] = {
            "model": call.model.model,
            "max_tokens": call.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in call.turns],
            "timeout": call.timeout_s,
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
        if extra_body:
            kwargs["extra_body"] = extra_body
        try:
            message = await client.messages.create(**kwargs)
        except anthropic.APIStatusError as exc:
            raise error_for_status(
                exc.status_code,
                exc.response.headers,
                str(exc.message),
                secrets=[client.api_key],
                key_variable=API_KEY_ENV,
                schema_sent=call.schema is not None,
            ) from None
        except anthropic.APITimeoutError:
            raise RetryableError(f"timed out after {call.timeout_s:g} s") from None
        except anthropic.APIConnectionError:
            raise RetryableError("connection failed") from None

        texts: list[str] = []
        structured: JsonValue | None = None
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif (
                block.type == "tool_use"
                and call.schema is not None
                and block.name == call.schema.name
            ):
                structured = block.input
        text = "".join(texts)
        if structured is not None:
            text = json.dumps(structured, ensure_ascii=False)
        usage = message.usage
        input_tokens = (
            usage.input_tokens
            + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0)
        )
        return RawReply(
            text=text,
            structured=structured,
            input_tokens=input_tokens,
            output_tokens=usage.output_tokens,
            finish_reason=message.stop_reason,
        )


async def _close(client: AsyncAnthropic) -> None:
    await client.close()
