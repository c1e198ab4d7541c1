"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp, OpenRouter) through the
official ``openai`` SDK (an optional extra), on the Chat Completions API.

Structured output is ``response_format`` ``json_schema`` (strict when the schema says so); a
server that refuses it gets the schema in the prompt instead (see ManagedProvider).

The reply is read from its JSON here, not through the SDK's response model: the SDK hands back
a bare string for a non-JSON body (a proxy's HTML page) and half-built objects for JSON of
another shape. Anything that is not a chat completion is a :class:`MalformedReplyError`.

The SDK client is built (from the key, the base URL and the environment, as always), but by
default a request does not go through its machinery: the SDK's URL and headers are taken once
as a template and each call is posted on a keep-alive pool of chatledger's own
(:mod:`chatledger.providers._http`), about 0.15 ms of CPU a call instead of 2–3 ms. Replies
are read exactly as the SDK's would be (a non-JSON content type is text; a status of 400 or
more is the SDK's error message). A redirect, and every request when a proxy applies or
``CallSettings.http_client`` is ``"sdk"``, goes through the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from chatledger.providers._base import ManagedProvider, WireCall, billed_usage, reported_count
from chatledger.providers._clients import LoopBoundClient
from chatledger.providers._errors import (
    ConnectionRefusedRetry,
    MissingSdkError,
    ReplyTooLargeError,
    RetryableError,
    connection_refused,
)
from chatledger.providers._http import (
    HttpBodyTooLarge,
    HttpConnectionError,
    HttpResponse,
    SdkRoute,
    body_too_large,
    bounded_sdk_hooks,
)
from chatledger.providers._http_status import error_for_status, malformed_reply
from chatledger.providers._model_id import OPENAI, OPENAI_COMPATIBLE, ModelId
from chatledger.providers._reply import RawReply
from chatledger.providers._secrets import read_api_key
from chatledger.providers._structured import schema_facts

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from chatledger.providers._batch import BatchBackend

OPENAI_KEY_ENV = "OPENAI_API_KEY"
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
# Local servers take no key, but the SDK insists on one; this placeholder is sent instead.
_NO_KEY = "no-key"
_PATH = "/chat/completions"


class OpenAIProvider(ManagedProvider):
    kind = OPENAI
    native_schema = True
    supports_batch = True  # the Batch API (providers/_batch_openai.py)
    key_variable: ClassVar[str] = OPENAI_KEY_ENV
    key_required: ClassVar[bool] = True
    # OpenAI's reasoning models only take max_completion_tokens; other servers know max_tokens.
    max_tokens_field: ClassVar[str] = "max_completion_tokens"

    def __init__(self, *, base_url: str | None = None, **shared: Any) -> None:
        """``base_url`` points at another server speaking the same API (a proxy, a test
        server); ``shared`` is passed to :class:`ManagedProvider`."""
        self.base_url = base_url  # before the base's __init__, which names the batch endpoint
        super().__init__(**shared)
        self._client = LoopBoundClient(self._new_client, _close)

    def _new_client(self) -> SdkRoute:
        try:
            import openai
            import openai._models
        except ImportError:
            raise MissingSdkError("openai", self.kind) from None
        key = read_api_key(self.key_variable, self.kind, required=self.key_required)
        kwargs: dict[str, Any] = {
            "api_key": key or _NO_KEY,
            "max_retries": 0,  # tenacity is the one retry policy
            "timeout": self.settings.timeout_s,
            # The SDK's own client (proxies, limits), with the reply's body bounded as on the
            # lean path.
            "http_client": openai.DefaultAsyncHttpxClient(
                event_hooks=bounded_sdk_hooks(self.settings.max_reply_bytes)
            ),
        }
        if self.base_url is not None:
            kwargs["base_url"] = self.base_url
        return SdkRoute(
            openai.AsyncOpenAI(**kwargs),
            models=openai._models,
            path=_PATH,
            options={"timeout": self.settings.timeout_s, "security": {"bearer_auth": True}},
            lean=self.settings.http_client == "lean",
            max_body_bytes=self.settings.max_reply_bytes,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def _batch_backend(self) -> BatchBackend:
        from chatledger.providers._batch_openai import OpenAIBatches

        return OpenAIBatches(self)

    def batch_endpoint(self) -> str:
        return self.kind if self.base_url is None else f"{self.kind}:{self.base_url}"

    async def _prepare(self) -> None:
        # Raises a clear error when the SDK or the key is missing; builds the lean route.
        route = await self._client.get()
        await route.ready()

    async def _send(self, call: WireCall) -> RawReply:
        route = await self._client.get()  # raises a clear error when the SDK is missing
        await route.ready()
        body = self._body(call)
        secrets = [route.sdk.api_key]
        if route.lean:
            payload = self._payload(call, body)
            try:
                response = await route.post(payload)
            except HttpBodyTooLarge as exc:
                raise ReplyTooLargeError(f"{call.model}: {exc}", reason=str(exc)) from None
            except HttpConnectionError as exc:
                if exc.refused:
                    raise ConnectionRefusedRetry(self._server_url(call)) from None
                raise RetryableError("connection failed") from None
            if not 300 <= response.status < 400:
                return self._read(call, response, secrets)
            # A redirect: the SDK follows it as it always has.
        return await self._send_with_sdk(route.sdk, call, body, secrets)

    def _server_url(self, call: WireCall) -> str:
        """The server the call went to, as the person wrote it."""
        return call.model.base_url or self.base_url or "https://api.openai.com/v1"

    def _body(self, call: WireCall) -> dict[str, Any]:
        """The Chat Completions request body, in the wire format."""
        messages: list[dict[str, str]] = []
        if call.system:
            messages.append({"role": "system", "content": call.system})
        messages += [{"role": m.role, "content": m.content} for m in call.turns]
        kwargs: dict[str, Any] = {
            "model": call.model.model,
            "messages": messages,
            self.max_tokens_field: call.max_tokens,
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
        return {**kwargs, **dict(call.options)} if call.options else kwargs

    def _payload(self, call: WireCall, body: dict[str, Any]) -> bytes:
        """``body`` as JSON bytes: ASCII (a lone surrogate in a prompt cannot make the encoding
        fail), with the schema's JSON, encoded once per schema, put in as it is."""
        fmt = body.get("response_format")
        schema = call.schema
        if schema is None or "response_format" in call.options or not isinstance(fmt, dict):
            return json.dumps(body, separators=(",", ":")).encode("ascii")
        others = {k: v for k, v in body.items() if k != "response_format"}
        rest = json.dumps(others, separators=(",", ":"))
        spec = fmt["json_schema"]
        head = json.dumps({k: v for k, v in spec.items() if k != "schema"}, separators=(",", ":"))
        response_format = (
            '{"type":"json_schema","json_schema":'
            + head[:-1]
            + ',"schema":'
            + schema_facts(schema).wire
            + "}}"
        )
        return f'{rest[:-1]},"response_format":{response_format}}}'.encode("ascii")

    def _read(self, call: WireCall, response: HttpResponse, secrets: list[str]) -> RawReply:
        """A reply of the lean path, read as the SDK reads one (``cast_to=object``)."""
        if response.status >= 400:
            raise error_for_status(
                response.status,
                response.headers,
                sdk_error_message(response),
                secrets=secrets,
                key_variable=self.key_variable,
                schema_sent=call.schema is not None,
            )
        data: object
        # The SDK's test: a media type ending in "json" is decoded, anything else is text.
        if not response.headers.get("content-type", "*").split(";")[0].endswith("json"):
            data = response.text()
        else:
            try:
                data = json.loads(response.body)
            except json.JSONDecodeError as exc:
                raise malformed_reply("the reply is not JSON", exc.doc, secrets=secrets) from None
            except UnicodeDecodeError as exc:
                raise malformed_reply(
                    "the reply is not UTF-8 text", bytes(exc.object), secrets=secrets
                ) from None
        return read_chat_completion(call, data, secrets=secrets)

    async def _send_with_sdk(
        self, client: AsyncOpenAI, call: WireCall, body: dict[str, Any], secrets: list[str]
    ) -> RawReply:
        import openai

        timeout = call.timeout_s
        try:
            # The plain POST of what chat.completions.create sends: the body is already the
            # wire format, so the SDK's per-call parameter transform (about 1 ms of CPU,
            # most of a call's cost at high concurrency) is skipped. ``cast_to=object`` gets
            # the decoded JSON as it is (or the text of a non-JSON body), read below.
            data: object = await client.post(
                _PATH,
                body=body,
                cast_to=object,
                options={"timeout": timeout, "security": {"bearer_auth": True}},
            )
        except openai.APIStatusError as exc:
            raise error_for_status(
                exc.status_code,
                exc.response.headers,
                str(exc.message),
                secrets=secrets,
                key_variable=self.key_variable,
                schema_sent=call.schema is not None,
            ) from None
        except HttpBodyTooLarge as exc:  # from bounded_sdk_hooks, as the SDK let it through
            raise ReplyTooLargeError(f"{call.model}: {exc}", reason=str(exc)) from None
        except openai.APITimeoutError:
            raise RetryableError(f"timed out after {call.timeout_s:g} s") from None
        except openai.APIConnectionError as exc:
            cut = body_too_large(exc)
            if cut is not None:
                raise ReplyTooLargeError(f"{call.model}: {cut}", reason=str(cut)) from None
            if connection_refused(exc):
                raise ConnectionRefusedRetry(self._server_url(call)) from None
            raise RetryableError("connection failed") from None
        # A body labelled JSON that is not JSON, or not text at all (the SDK decodes it).
        except json.JSONDecodeError as exc:
            raise malformed_reply("the reply is not JSON", exc.doc, secrets=secrets) from None
        except UnicodeDecodeError as exc:
            raise malformed_reply(
                "the reply is not UTF-8 text", bytes(exc.object), secrets=secrets
            ) from None
        return read_chat_completion(call, data, secrets=secrets)


def read_chat_completion(
    call: WireCall, data: object, *, secrets: Iterable[str | None]
) -> RawReply:
    """The reply in a decoded chat.completion body, or :class:`MalformedReplyError`."""
    if isinstance(data, str):  # the SDK's answer for a body whose content-type is not JSON
        raise malformed_reply("the reply is not JSON", data, secrets=secrets)
    if not isinstance(data, dict):
        raise malformed_reply("the reply is not a JSON object", data, secrets=secrets)
    choices = data.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        raise malformed_reply("the reply has no choices[0].message", data, secrets=secrets)
    text = _content_text(message.get("content"))
    if text is None:
        raise malformed_reply("the reply's message content is not text", data, secrets=secrets)
    finish_reason = choice.get("finish_reason")
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    return RawReply(
        text=text,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        **billed_usage(
            call,
            reported_count(usage.get("prompt_tokens")),
            reported_count(usage.get("completion_tokens")),
        ),
    )


def _content_text(content: object) -> str | None:
    """A message's text: a string, nothing (a refusal, an empty reply), or a list of text
    parts as some compatible servers send; None for anything else."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("text"), str) for part in content
    ):
        return "".join(part["text"] for part in content)
    return None


def sdk_error_message(response: HttpResponse) -> str:
    """The message the openai SDK gives an error reply: "Error code: N", and " - " plus the
    body's ``error.message`` when it has one."""
    try:
        body = json.loads(response.text().strip())
    except (ValueError, RecursionError):
        return f"Error code: {response.status}"
    return sdk_error_message_of(response.status, body)


def sdk_error_message_of(status: object, body: object) -> str:
    """:func:`sdk_error_message` for a decoded body (a batch result's)."""
    message = f"Error code: {status}"
    error = body.get("error", body) if isinstance(body, dict) else None
    detail = error.get("message") if isinstance(error, dict) else None
    if isinstance(detail, str) and detail:
        message += f" - {detail}"
    return message


async def _close(route: SdkRoute) -> None:
    await route.aclose()


class OpenAICompatibleProvider(OpenAIProvider):
    """One OpenAI-compatible server; its URL is part of each model id it serves."""

    kind = OPENAI_COMPATIBLE
    # Compatible servers (vLLM, Ollama, llama.cpp, gateways) have no Batch API to rely on.
    supports_batch = False
    key_variable = COMPATIBLE_KEY_ENV
    key_required = False
    max_tokens_field = "max_tokens"

    def __init__(self, *, base_url: str, **shared: Any) -> None:
        super().__init__(base_url=base_url, **shared)

    def accepts(self, model: ModelId) -> bool:
        return model.provider == self.kind and model.base_url == self.base_url
