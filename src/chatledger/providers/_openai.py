"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp, OpenRouter) through the
official ``openai`` SDK (an optional extra), on the Chat Completions API.

Structured output is ``response_format`` ``json_schema`` (strict when the schema says so); a
server that refuses it gets the schema in the prompt instead (see ManagedProvider).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from chatledger.providers._base import ManagedProvider, RawReply, WireCall
from chatledger.providers._clients import LoopBoundClient
from chatledger.providers._errors import ProviderError, RetryableError
from chatledger.providers._http_status import error_for_status
from chatledger.providers._model_id import OPENAI, OPENAI_COMPATIBLE, ModelId
from chatledger.providers._secrets import read_api_key

if TYPE_CHECKING:
    from openai import AsyncOpenAI

OPENAI_KEY_ENV = "OPENAI_API_KEY"
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
# Local servers take no key, but the SDK insists on one; this placeholder is sent instead.
_NO_KEY = "no-key"


class OpenAIProvider(ManagedProvider):
    kind = OPENAI
    native_schema = True
    key_variable: ClassVar[str] = OPENAI_KEY_ENV
    key_required: ClassVar[bool] = True
    # OpenAI's reasoning models only take max_completion_tokens; other servers know max_tokens.
    max_tokens_field: ClassVar[str] = "max_completion_tokens"

    def __init__(self, *, base_url: str | None = None, **shared: Any) -> None:
        """``base_url`` points at another server speaking the same API (a proxy, a test
        server); ``shared`` is passed to :class:`ManagedProvider`."""
        super().__init__(**shared)
        self.base_url = base_url
        self._client = LoopBoundClient(self._new_client, _close)

    def _new_client(self) -> AsyncOpenAI:
        try:
            import openai
        except ImportError:
            raise ProviderError(
                "the openai SDK is not installed: pip install 'chatledger[openai]'"
            ) from None
        key = read_api_key(self.key_variable, self.kind, required=self.key_required)
        kwargs: dict[str, Any] = {
            "api_key": key or _NO_KEY,
            "max_retries": 0,  # tenacity is the one retry policy
            "timeout": self.settings.timeout_s,
        }
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        return openai.AsyncOpenAI(**kwargs)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _send(self, call: WireCall) -> RawReply:
        client = await self._client.get()  # raises a clear error when the SDK is missing
        import openai
        from openai.types.chat import ChatCompletion

        messages: list[dict[str, str]] = []
        if call.system:
            messages.append({"role": "system", "content": call.system})
        messages += [{"role": m.role, "content": m.content} for m in call.turns]
        kwargs: dict[str, Any] = {
            "model": call.model.model,
            "messages": messages,
            self.max_tokens_field: call.max_tokens,
            "timeout": call.timeout_s,
        }
        if call.temperature is not None:
            kwargs["temperature"] = call.temperature
        if call.schema is not None:
            json_schema: dict[str, Any] = {
                "name": call.schema.name,
                "schema": call.schema.json_schema,
                "strict": call.schema.strict,
            }
            if call.schema.description:
                json_schema["description"] = call.schema.description
            kwargs["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        timeout = kwargs.pop("timeout")
        body = {**kwargs, **dict(call.options)} if call.options else kwargs
        try:
            # The plain POST of what chat.completions.create sends: the body is already the
            # wire format, so the SDK's per-call parameter transform (about 1 ms of CPU,
            # most of a call's cost at high concurrency) is skipped.
            completion = await client.post(
                "/chat/completions",
                body=body,
                cast_to=ChatCompletion,
                options={"timeout": timeout, "security": {"bearer_auth": True}},
            )
        except openai.APIStatusError as exc:
            raise error_for_status(
                exc.status_code,
                exc.response.headers,
                str(exc.message),
                secrets=[client.api_key],
                key_variable=self.key_variable,
                schema_sent=call.schema is not None,
            ) from None
        except openai.APITimeoutError:
            raise RetryableError(f"timed out after {call.timeout_s:g} s") from None
        except openai.APIConnectionError:
            raise RetryableError("connection failed") from None

        if not completion.choices:
            raise ProviderError(f"{call.model}: the server returned no choices")
        choice = completion.choices[0]
        usage = completion.usage
        return RawReply(
            text=choice.message.content or "",
            input_tokens=usage.prompt_tokens if usage is not None else 0,
            output_tokens=usage.completion_tokens if usage is not None else 0,
            finish_reason=choice.finish_reason,
        )


async def _close(client: AsyncOpenAI) -> None:
    await client.close()


class OpenAICompatibleProvider(OpenAIProvider):
    """One OpenAI-compatible server; its URL is part of each model id it serves."""

    kind = OPENAI_COMPATIBLE
    key_variable = COMPATIBLE_KEY_ENV
    key_required = False
    max_tokens_field = "max_tokens"

    def __init__(self, *, base_url: str, **shared: Any) -> None:
        super().__init__(base_url=base_url, **shared)

    def accepts(self, model: ModelId) -> bool:
        return model.provider == self.kind and model.base_url == self.base_url
