"""The lean HTTP path of the providers (providers/_http.py) and the per-schema shortcuts.

- the keep-alive pool against a raw server on 127.0.0.1 that sends exactly the bytes a test
  wants (chunked bodies split byte by byte, gzip, ``connection: close``, HTTP/1.0, an interim
  100, an idle connection the server closed, a reply that never comes), and over TLS with the
  SDK's certificate store (``SSL_CERT_FILE`` included);
- the OpenAI provider over the lean path and over the SDK give the same answers, errors,
  retries and request bodies for every fault the scripted server can play, and send the same
  headers; a proxy in the environment, ``http_client="sdk"`` and a redirect go through the SDK;
- the compiled schema check says "valid" exactly when jsonschema does (generated replies);
- a cache key built from a schema's pre-encoded JSON is the key of the plain parts, and the
  request body with the schema's JSON put in decodes to the body.
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import hashlib
import json
import math
import shutil
import ssl
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from chatledger.extraction import bundled_example, extraction_output_schema, get_prompt_style
from chatledger.providers import (
    CallSettings,
    Completion,
    CompletionCache,
    CompletionRequest,
    OpenAIProvider,
    OutputSchema,
    ProviderError,
    cache_key,
    canonical_json,
)
from chatledger.providers._base import WireCall
from chatledger.providers._cache import KEY_VERSION, EncodedJson
from chatledger.providers._fastcheck import Unsupported, compile_check
from chatledger.providers._http import (
    HttpBodyTooLarge,
    HttpConnectionError,
    HttpPool,
    _sdk_ssl_context,
    build_template,
)
from chatledger.providers._model_id import parse_model_id
from chatledger.providers._structured import schema_facts, validation_error
from fakes.llm_server import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    FakeLLMServer,
    Reply,
    anthropic_body,
    error_body,
    openai_body,
    point_sdks_at,
)

OPENAI_KEY = "sk-openai-test-SECRET-lean-5e1d"
FAST = CallSettings(
    timeout_s=1.0, max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.02, max_reasks=1
)
SCHEMA = OutputSchema.model_validate(
    {
        "name": "verdict",
        "schema": {
            "type": "object",
            "properties": {
                "score": {"type": "integer", "minimum": 0, "maximum": 100},
                "label": {"type": "string", "enum": ["none", "fabricated"]},
            },
            "required": ["score", "label"],
            "additionalProperties": False,
        },
    }
)


# --- a raw server: the test says which bytes go back ----------------------------------------


Responder = Callable[[int], list[bytes] | None]


class RawServer:
    """Reads each request (head and content-length body) and answers with the byte pieces the
    responder gives for the request's number (each piece written on its own, with a pause);
    ``None`` closes the connection without a reply. Counts connections."""

    def __init__(self, responder: Responder, close_after: bool = False) -> None:
        self.responder = responder
        self.close_after = close_after
        self.connections = 0
        self.requests: list[bytes] = []
        self.writers: list[asyncio.StreamWriter] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                self.requests.append(head + body)
                pieces = self.responder(len(self.requests))
                if pieces is None:
                    writer.close()
                    return
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.001)
                if self.close_after:
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        for writer in self.writers:
            writer.close()
        self.server.close()


def reply(body: bytes, *headers: str, status: str = "200 OK", version: str = "1.1") -> bytes:
    lines = [f"HTTP/{version} {status}", *headers]
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def post(pool: HttpPool, url: str, body: bytes = b"{}") -> Any:
    template = build_template(url + "/v1/x", [("content-type", "application/json")])
    return pool.request(template.head(len(body)), body)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_sequential_requests_reuse_one_connection() -> None:
    async def go() -> tuple[list[bytes], int, int, int]:
        server = RawServer(lambda n: [reply(f'{{"n": {n}}}'.encode())])
        async with server as url:
            pool = HttpPool(url)
            bodies = [(await post(pool, url)).body for _ in range(3)]
            await pool.aclose()
        return bodies, server.connections, pool.opened, pool.reused

    bodies, connections, opened, reused = run(go())
    assert bodies == [b'{"n": 1}', b'{"n": 2}', b'{"n": 3}']
    assert (connections, opened, reused) == (1, 1, 2)


def test_the_request_goes_out_as_one_http_11_post_with_its_length() -> None:
    async def go() -> bytes:
        server = RawServer(lambda n: [reply(b"{}")])
        async with server as url:
            pool = HttpPool(url)
            template = build_template(url + "/v1/chat/completions?x=1", [("Authorization", "k")])
            await pool.request(template.head(3), b"abc")
            await pool.aclose()
        return server.requests[0]

    sent = run(go())
    head, _, body = sent.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat/completions?x=1 HTTP/1.1"
    assert lines[1].startswith(b"host: 127.0.0.1:")
    assert b"Authorization: k" in lines and b"content-length: 3" in lines
    assert body == b"abc"


def test_a_chunked_reply_split_byte_by_byte_is_read_whole() -> None:
    payload = b'{"choices": "long enough to span chunks"}'
    chunked = b"".join(
        f"{len(part):x};ext=1\r\n".encode() + part + b"\r\n"
        for part in (payload[:10], payload[10:25], payload[25:])
    )
    raw = reply(chunked + b"0\r\nx-trailer: 1\r\n\r\n", "transfer-encoding: chunked")

    async def go() -> tuple[bytes, bytes, int]:
        server = RawServer(lambda n: [raw[i : i + 1] for i in range(len(raw))])
        async with server as url:
            pool = HttpPool(url)
            first = (await post(pool, url)).body
            second = (await post(pool, url)).body
            await pool.aclose()
        return first, second, server.connections

    first, second, connections = run(go())
    assert first == second == payload
    assert connections == 1  # a complete chunked reply leaves the connection reusable


def test_a_large_reply_of_many_small_chunks_is_read_whole() -> None:
    parts = [f"{i:05d}".encode() * 10 for i in range(2000)]  # 100 kB in 2,000 chunks
    chunked = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts) + b"0\r\n\r\n"
    raw = reply(chunked, "transfer-encoding: chunked")

    async def go() -> bytes:
        server = RawServer(lambda n: [raw])
        async with server as url:
            pool = HttpPool(url)
            body = (await post(pool, url)).body
            await pool.aclose()
        return bytes(body)

    assert run(go()) == b"".join(parts)


def test_a_gzip_body_is_decoded() -> None:
    payload = json.dumps({"text": "é" * 50}).encode()
    raw = reply(gzip.compress(payload), "content-encoding: gzip")

    async def go() -> bytes:
        server = RawServer(lambda n: [raw])
        async with server as url:
            pool = HttpPool(url)
            body = (await post(pool, url)).body
            await pool.aclose()
        return bytes(body)

    assert run(go()) == payload


@pytest.mark.parametrize(
    "raw",
    [
        reply(b"{}", "connection: close"),
        reply(b"{}", version="1.0"),
        # HTTP/1.0 without a length: the body ends with the connection.
        b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n{}",
    ],
    ids=["connection-close", "http-1.0", "until-close"],
)
def test_a_connection_the_server_ends_is_not_reused(raw: bytes) -> None:
    async def go() -> tuple[list[bytes], int]:
        server = RawServer(lambda n: [raw], close_after=b"content-length" not in raw)
        async with server as url:
            pool = HttpPool(url)
            bodies = [(await post(pool, url)).body for _ in range(2)]
            await pool.aclose()
        return bodies, pool.opened

    bodies, opened = run(go())
    assert bodies == [b"{}", b"{}"]
    assert opened == 2


def test_an_interim_100_is_skipped() -> None:
    async def go() -> tuple[int, bytes]:
        server = RawServer(lambda n: [b"HTTP/1.1 100 Continue\r\n\r\n", reply(b"{}")])
        async with server as url:
            pool = HttpPool(url)
            response = await post(pool, url)
            await pool.aclose()
        return response.status, response.body

    assert run(go()) == (200, b"{}")


def test_an_idle_connection_the_server_closed_is_replaced_without_an_error() -> None:
    async def go() -> tuple[list[bytes], int]:
        server = RawServer(lambda n: [reply(b"{}")])
        async with server as url:
            pool = HttpPool(url)
            first = (await post(pool, url)).body
            for writer in server.writers:  # the server drops the idle connection
                writer.close()
            await asyncio.sleep(0.05)
            second = (await post(pool, url)).body
            await pool.aclose()
        return [first, second], server.connections

    bodies, connections = run(go())
    assert bodies == [b"{}", b"{}"] and connections == 2


def test_a_reused_connection_closed_as_the_request_went_out_is_retried_once() -> None:
    async def go() -> tuple[bytes, int, int]:
        # The second request is read and the connection closed without a reply.
        server = RawServer(lambda n: None if n == 2 else [reply(b"{}")])
        async with server as url:
            pool = HttpPool(url)
            await post(pool, url)
            body = (await post(pool, url)).body
            await pool.aclose()
        return body, len(server.requests), server.connections

    assert run(go()) == (b"{}", 3, 2)


def test_a_fresh_connection_closed_without_a_reply_is_an_error() -> None:
    async def go() -> None:
        server = RawServer(lambda n: None)
        async with server as url:
            pool = HttpPool(url)
            try:
                await post(pool, url)
            finally:
                await pool.aclose()

    with pytest.raises(HttpConnectionError, match="closed the connection"):
        run(go())


def test_a_reply_cut_off_mid_body_is_an_error_not_a_short_body() -> None:
    raw = reply(b'{"a": 1}')[:-3]

    async def go() -> None:
        server = RawServer(lambda n: [raw], close_after=True)
        async with server as url:
            pool = HttpPool(url)
            try:
                await post(pool, url)
            finally:
                await pool.aclose()

    with pytest.raises(HttpConnectionError):
        run(go())


def test_nothing_listening_is_a_connection_error() -> None:
    async def go() -> None:
        pool = HttpPool("http://127.0.0.1:9")
        await post(pool, "http://127.0.0.1:9")

    with pytest.raises(HttpConnectionError, match="cannot connect"):
        run(go())


def test_an_abandoned_request_closes_its_connection() -> None:
    async def go() -> tuple[bytes, int]:
        # No reply to the first request: the caller's deadline abandons it.
        server = RawServer(lambda n: [] if n == 1 else [reply(b"{}")])
        async with server as url:
            pool = HttpPool(url)
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await post(pool, url)
            body = (await post(pool, url)).body
            await pool.aclose()
        return body, server.connections

    body, connections = run(go())
    assert body == b"{}"
    assert connections == 2  # the abandoned connection was not reused


def test_idle_connections_older_than_keepalive_are_not_reused() -> None:
    async def go() -> int:
        server = RawServer(lambda n: [reply(b"{}")])
        async with server as url:
            pool = HttpPool(url, keepalive_s=0.0)
            await post(pool, url)
            await asyncio.sleep(0.01)
            await post(pool, url)
            await pool.aclose()
        return pool.opened

    assert run(go()) == 2


def test_a_header_that_could_split_the_request_is_refused() -> None:
    with pytest.raises(ValueError):
        build_template("http://127.0.0.1:1/v1", [("x-evil", "a\r\nhost: b")])


def test_the_template_repr_leaves_the_headers_out() -> None:
    template = build_template("http://127.0.0.1:1/v1", [("authorization", f"Bearer {OPENAI_KEY}")])
    assert OPENAI_KEY not in repr(template)


# --- replies bounded (issue 31) -------------------------------------------------------------

LIMIT = 4096
BIG = b"x" * (LIMIT * 8)


@pytest.mark.parametrize(
    "raw",
    [
        reply(BIG),
        reply(
            b"".join(
                f"{len(BIG[i : i + 1000]):x}\r\n".encode() + BIG[i : i + 1000] + b"\r\n"
                for i in range(0, len(BIG), 1000)
            )
            + b"0\r\n\r\n",
            "transfer-encoding: chunked",
        ),
        b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n" + BIG,
        # 32 kB of x in under 100 bytes: a decompressed body is held to the limit too.
        reply(gzip.compress(BIG), "content-encoding: gzip"),
    ],
    ids=["content-length", "chunked", "until-close", "gzip"],
)
def test_a_body_over_the_limit_is_cut_off_however_it_is_framed(raw: bytes) -> None:
    async def go() -> tuple[str, bytes]:
        server = RawServer(lambda n: [raw, reply(b"{}")][n - 1 : n], close_after=b"1.0" in raw)
        async with server as url:
            pool = HttpPool(url, max_body_bytes=LIMIT)
            with pytest.raises(HttpBodyTooLarge) as cut:
                await post(pool, url)
            after = (await post(pool, url)).body  # the pool goes on, on a new connection
            await pool.aclose()
        return str(cut.value), bytes(after)

    message, after = run(go())
    assert "over the 4,096-byte limit: cut off" in message
    assert after == b"{}"


def test_a_body_at_the_limit_is_read() -> None:
    async def go() -> bytes:
        server = RawServer(lambda n: [reply(BIG[:LIMIT])])
        async with server as url:
            pool = HttpPool(url, max_body_bytes=LIMIT)
            body = (await post(pool, url)).body
            await pool.aclose()
        return bytes(body)

    assert run(go()) == BIG[:LIMIT]


@pytest.mark.parametrize("route", ["openai lean", "openai sdk", "anthropic sdk"])
def test_a_30_mb_reply_is_cut_within_the_deadline_recorded_invalid_and_not_cached(
    server: FakeLLMServer, tmp_path: Path, route: str
) -> None:
    """The 2 MB default against a 30 MB reply sent as fast as the loopback takes it, on the
    lean path and through each SDK: cut off, not timed out at 2 s (the error says which),
    asked once (neither retried nor re-asked, though both are allowed), and the cache stays
    empty. Bodies whose length is not announced are cut as they arrive (the framings above)."""
    from chatledger.providers import AnthropicProvider

    kind, http_client = route.split()
    settings = CallSettings(timeout_s=2.0, max_attempts=3, max_reasks=2, http_client=http_client)  # type: ignore[arg-type]
    cache = CompletionCache(tmp_path / "calls")
    if kind == "openai":
        huge = json.dumps(openai_body("y" * 30_000_000)).encode()
        server.script(OPENAI_PATH, Reply(body=huge))
        chosen: Any = OpenAIProvider(base_url=server.url + "/v1", settings=settings, cache=cache)
        model = "openai:gpt-5.2"
    else:
        huge = json.dumps(anthropic_body(text="y" * 30_000_000)).encode()
        server.script(ANTHROPIC_PATH, Reply(body=huge))
        chosen = AnthropicProvider(base_url=server.url, settings=settings, cache=cache)
        model = "anthropic:claude-opus-4-6"

    async def go() -> Completion:
        async with chosen:
            request = CompletionRequest.from_prompt(model, "q", output_schema=SCHEMA)
            done: Completion = await chosen.complete(request)
            return done

    done = run(go())
    assert done.error is not None and done.parsed is None
    assert f"the reply's body ({len(huge):,} bytes)" in done.error
    assert "over the 2,000,000-byte limit: cut off" in done.error
    assert "timed out" not in done.error
    assert (done.calls, done.cached, done.cost_usd) == (1, False, 0.0)
    assert server.calls() == 1
    assert len(cache) == 0
    cache.close()


# --- the provider: lean and SDK alike ----------------------------------------------------------


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        point_sdks_at(
            fake, monkeypatch, tmp_path / "cache", anthropic_key="sk-ant-x", openai_key=OPENAI_KEY
        )
        yield fake


def provider(server: FakeLLMServer, http_client: str) -> OpenAIProvider:
    settings = CallSettings(**{**FAST.__dict__, "http_client": http_client})
    return OpenAIProvider(base_url=server.url + "/v1", settings=settings)


def outcome(server: FakeLLMServer, http_client: str, request: CompletionRequest) -> Any:
    """What one request gives (the completion's fields, or the error) and what was sent."""
    chosen = provider(server, http_client)

    async def go() -> Completion | str:
        async with chosen:
            try:
                answer: Completion | str = await chosen.complete(request)
            except ProviderError as exc:
                answer = f"{type(exc).__name__}: {exc}"
            route = await chosen._client.get()
            assert route.lean is (http_client == "lean" and route.sdk_reason is None)
            return answer

    answer = run(go())
    if isinstance(answer, Completion):
        answer = answer.model_dump(exclude={"latency_s"})
    return answer, [r.body for r in server.requests]


ask = CompletionRequest.from_prompt("openai:gpt-5.2", "Rate this.", system="Be terse.")
ask_schema = CompletionRequest.from_prompt(
    "openai:gpt-5.2", "Rate this.", system="Be terse.", output_schema=SCHEMA
)
SCENARIOS: dict[str, tuple[list[Reply], CompletionRequest]] = {
    "ok": ([Reply(body=openai_body("hello", prompt_tokens=12, completion_tokens=3))], ask),
    "429 then ok": (
        [
            Reply(status=429, body=error_body("slow down"), headers={"retry-after": "0"}),
            Reply(body=openai_body("ok")),
        ],
        ask,
    ),
    "500 three times": ([Reply(status=500, body=error_body("boom"))] * 3, ask),
    "404 with a message": ([Reply(status=404, body=error_body("no such model"))], ask),
    "404 without JSON": ([Reply(status=404, body=b"not here", content_type="text/plain")], ask),
    "401 echoing the key": (
        [Reply(status=401, body=error_body(f"Incorrect API key: {OPENAI_KEY}"))],
        ask,
    ),
    "html page": ([Reply(body=b"<html>proxy</html>", content_type="text/html")] * 3, ask),
    "not utf-8": ([Reply(body=b'{"a": "\xff\xfe"}')] * 3, ask),
    "not JSON": ([Reply(body=b"{nope")] * 3, ask),
    "wrong shape": ([Reply(body={"error": {"message": "odd"}})] * 3, ask),
    "schema refused": (
        [
            Reply(status=400, body=error_body("response_format json_schema is not supported")),
            Reply(body=openai_body('{"score": 3, "label": "none"}')),
        ],
        ask_schema,
    ),
    "schema violation re-asked": (
        [
            Reply(body=openai_body('{"score": 300, "label": "none"}')),
            Reply(body=openai_body('```json\n{"score": 30, "label": "none"}\n```')),
        ],
        ask_schema,
    ),
    "timeout then ok": (
        [Reply(body=openai_body("late"), delay_s=1.5), Reply(body=openai_body("in time"))],
        ask,
    ),
    "redirect": (
        [
            Reply(status=307, body=b"", headers={"location": "/v1/chat/completions"}),
            Reply(body=openai_body("moved")),
        ],
        ask,
    ),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_lean_path_answers_as_the_sdk_does(
    server: FakeLLMServer, scenario: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    replies, request = SCENARIOS[scenario]
    results = []
    for http_client in ("sdk", "lean"):
        server.requests.clear()
        server.script(OPENAI_PATH, *replies)
        results.append(outcome(server, http_client, request))
    assert results[0] == results[1]
    text = json.dumps(results[1], default=str)
    assert OPENAI_KEY not in text


def test_the_lean_path_sends_the_sdks_headers(server: FakeLLMServer) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_body("x")))
    for http_client in ("sdk", "lean"):
        outcome(server, http_client, ask)
    sdk, lean = (r.headers for r in server.requests)
    connection_level = {"accept-encoding", "connection", "content-length", "host"}
    assert {k: v for k, v in sdk.items() if k not in connection_level} == {
        k: v for k, v in lean.items() if k not in connection_level
    }
    assert lean["authorization"] == f"Bearer {OPENAI_KEY}"


def test_the_lean_path_is_taken_by_default_and_keeps_its_connection(
    server: FakeLLMServer,
) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_body("x")))
    chosen = OpenAIProvider(base_url=server.url + "/v1", settings=FAST)

    async def go() -> tuple[bool, int, int]:
        async with chosen:
            for i in range(3):
                await chosen.complete(CompletionRequest.from_prompt("openai:gpt-5.2", f"q{i}"))
            route = await chosen._client.get()
            assert route.pool is not None
            return route.lean, route.pool.opened, route.pool.reused

    assert run(go()) == (True, 1, 2)


def test_a_proxy_in_the_environment_sends_through_the_sdk(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # never reached: see below
    monkeypatch.setenv("NO_PROXY", "")
    chosen = OpenAIProvider(base_url=server.url + "/v1", settings=FAST)

    async def go() -> tuple[bool, str | None]:
        async with chosen:
            route = await chosen._client.get()
            await route.ready()
            return route.lean, route.sdk_reason

    lean, reason = run(go())
    assert not lean and reason == "a proxy applies to the URL"
    # A host the proxy does not apply to goes straight to the server.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    chosen = OpenAIProvider(base_url=server.url + "/v1", settings=FAST)

    async def again() -> bool:
        async with chosen:
            route = await chosen._client.get()
            await route.ready()
            return route.lean

    assert run(again())


# --- the compiled schema check ----------------------------------------------------------------


def json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 200),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([0.0, 1.0, 0.5, 1.5, -0.0, 100.0, 101.0]),
        st.text(max_size=4),
        st.sampled_from(["", "person", "pro", "open", "joy", "improving", "none", "fabricated"]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(["text", "name", "x", "score"]), inner, max_size=3),
        ),
        max_leaves=6,
    )


def example_extraction() -> dict[str, Any]:
    _, extraction = bundled_example()
    return extraction.model_dump(mode="json", exclude_defaults=True)


def mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """``value`` with one random change somewhere inside: a value replaced, a key dropped or
    added, an item dropped or added."""
    if depth > 6 or not isinstance(value, dict | list) or not value:
        return data.draw(json_values())
    action = data.draw(st.sampled_from(["descend", "replace", "drop", "add"]))
    if isinstance(value, dict):
        keys = sorted(value)
        key = data.draw(st.sampled_from(keys))
        if action == "descend":
            return {**value, key: mutate(value[key], data, depth + 1)}
        if action == "replace":
            return {**value, key: data.draw(json_values())}
        if action == "drop":
            return {k: v for k, v in value.items() if k != key}
        new_key = data.draw(st.sampled_from(["extra", "confidence", "text", "evidence", key]))
        return {**value, new_key: data.draw(json_values())}
    index = data.draw(st.integers(0, len(value) - 1))
    if action == "descend":
        return [*value[:index], mutate(value[index], data, depth + 1), *value[index + 1 :]]
    if action == "replace":
        return [*value[:index], data.draw(json_values()), *value[index + 1 :]]
    if action == "drop":
        return value[:index] + value[index + 1 :]
    return [*value, copy.deepcopy(value[index])]


SCHEMAS = {
    "extraction": extraction_output_schema().json_schema,
    "extraction-strict": extraction_output_schema(strict=True).json_schema,
    "verdict": SCHEMA.json_schema,
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_compiled_check_agrees_with_jsonschema(name: str, data: st.DataObject) -> None:
    schema = SCHEMAS[name]
    check = compile_check(schema)
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    start: Any = example_extraction() if name.startswith("extraction") else {"score": 5}
    if name == "verdict":
        start["label"] = "none"
    value = start
    for _ in range(data.draw(st.integers(0, 3))):
        value = mutate(value, data)
    assert check(value) is validator.is_valid(value), value


def test_the_compiled_check_follows_jsonschema_on_the_edge_cases() -> None:
    check = compile_check(SCHEMA.json_schema)
    assert check({"score": 5.0, "label": "none"})  # an integral float is an integer
    assert not check({"score": True, "label": "none"})  # a boolean is not
    assert not check({"score": 5, "label": "none", "more": 1})
    assert not check({"score": 5})
    confidence = compile_check({"type": "number", "minimum": 0, "maximum": 1})
    assert confidence(math.nan) and not confidence(1.5)  # NaN passes bounds, as in jsonschema
    nullable = compile_check({"type": ["string", "null"], "enum": ["a", None]})
    assert nullable(None) and nullable("a") and not nullable("b") and not nullable(0)
    assert compile_check({"items": {"$ref": "#"}, "type": "array"})([[[]]])


ODD_SCHEMA = {
    "type": "object",
    "properties": {
        "it's \"quoted\"\n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}, "minItems": 1,
                 "maxItems": 2},
        "one": {"oneOf": [{"type": "string"}, {"enum": ["x", True]}]},
        "both": {"allOf": [{"type": "number"}, {"minimum": 1.5}]},
        "tree": {"$ref": "#/$defs/node"},
    },
    "additionalProperties": {"type": "boolean"},
    "$defs": {"node": {"type": "object",
                       "properties": {"kids": {"items": {"$ref": "#/$defs/node"}}},
                       "additionalProperties": False}},
}  # fmt: skip


@pytest.mark.parametrize(
    "value",
    [
        {},
        {'it\'s "quoted"\n': 2},
        {'it\'s "quoted"\n': 3},
        {'it\'s "quoted"\n': 0.5},
        {"tags": []},
        {"tags": ["ab", "c"]},
        {"tags": ["abc"]},
        {"tags": ["a", "b", "c"]},
        {"one": "y"},
        {"one": "x"},  # both alternatives: not exactly one
        {"one": True},
        {"one": 1},
        {"both": 1.5},
        {"both": 1},
        {"both": True},
        {"extra": False},
        {"extra": 0},
        {"tree": {"kids": [{"kids": []}, {}]}},
        {"tree": {"kids": [{"kids": [{"leaf": 1}]}]}},
        [],
        "text",
    ],
)
def test_the_compiled_check_agrees_with_jsonschema_on_rarer_keywords(value: Any) -> None:
    validator = Draft202012Validator(ODD_SCHEMA)
    assert compile_check(ODD_SCHEMA)(value) is validator.is_valid(value)


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"type": "string", "pattern": "^a"}, "ab", "ba"),
        ({"type": "string", "format": "date"}, "2026-01-02", "someday"),
        ({"enum": [1, 2]}, 1, 3),
        ({"type": "array", "prefixItems": [{"type": "string"}]}, ["a"], [1]),
    ],
)
def test_keywords_the_check_does_not_know_leave_the_schema_to_jsonschema(
    schema: dict[str, Any], good: Any, bad: Any
) -> None:
    with pytest.raises(Unsupported):
        compile_check(schema)
    output = OutputSchema.model_validate({"name": "s", "schema": schema})
    assert schema_facts(output).check is None
    assert validation_error(good, output) is None
    assert validation_error(bad, output) is not None


def test_an_invalid_reply_still_gets_jsonschemas_message() -> None:
    error = validation_error({"score": 300, "label": "none"}, SCHEMA)
    assert error == "at score: 300 is greater than the maximum of 100"


# --- keys and bodies built from pre-encoded schema JSON --------------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_a_key_with_the_encoded_schema_is_the_plain_key(strict: bool) -> None:
    schema = extraction_output_schema(strict=strict)
    parts = {
        "provider": "openai",
        "model": "openai:gpt-5.2",
        "parameters": {"max_tokens": 5, "temperature": None, "options": {"é": [1, 2.5]}},
        "system": "sys ü",
        "messages": [{"role": "user", "content": "hi ☃"}],
        "schema": schema.model_dump(by_alias=True),
        "schema_mode": "native",
        "sample_index": 0,
        "local": {"sha256": "abc"},
    }
    plain = hashlib.sha256(canonical_json({"v": KEY_VERSION, **parts}).encode()).hexdigest()
    assert cache_key(parts) == plain
    encoded = {**parts, "schema": EncodedJson(schema_facts(schema).key_text)}
    assert cache_key(encoded) == plain
    assert cache_key({**encoded, "zz": EncodedJson("[1]")}) == cache_key({**parts, "zz": [1]})


@pytest.mark.parametrize("options", [{}, {"seed": 1}, {"response_format": {"type": "json_object"}}])
@pytest.mark.parametrize("strict", [False, True])
def test_the_body_with_the_encoded_schema_decodes_to_the_body(
    options: dict[str, Any], strict: bool
) -> None:
    chunk, _ = bundled_example()
    model = "openai-compatible:http://127.0.0.1:9/v1:m"
    request = get_prompt_style("plain", strict=strict).request(chunk, model)
    chosen = OpenAIProvider(base_url="http://127.0.0.1:9/v1")
    call = WireCall(
        model=parse_model_id(model),
        system=request.system_text + "\ud800",  # a lone surrogate must not break the encoding
        turns=request.turns,
        max_tokens=10,
        temperature=0.5,
        options=options,
        schema=request.output_schema,
        timeout_s=1.0,
    )
    body = chosen._body(call)
    assert json.loads(chosen._payload(call, body)) == body


# --- TLS ---------------------------------------------------------------------------------------


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a certificate for 127.0.0.1 signed by it (openssl)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command")
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    steps = [
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
         "-days", "2", "-subj", "/CN=chatledger-test-ca"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
         "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext"],
    ]  # fmt: skip
    for step in steps:
        subprocess.run([openssl, *step], cwd=folder, check=True, capture_output=True, timeout=60)
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


def test_https_uses_the_sdks_certificate_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca, certificate, key = make_certificates(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificate, key)

    async def go() -> tuple[bytes, int]:
        server = RawServer(lambda n: [reply(b'{"tls": true}')])
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=context)
        port = listening.sockets[0].getsockname()[1]
        url = f"https://127.0.0.1:{port}"
        try:
            # Unknown CA: refused, as the SDK would refuse it.
            monkeypatch.delenv("SSL_CERT_FILE", raising=False)
            with pytest.raises(HttpConnectionError, match="SSLCertVerificationError"):
                await post(HttpPool(url, ssl_context=_sdk_ssl_context), url)
            # The CA given the way httpx (and so the SDK) reads it: the certificate verifies.
            monkeypatch.setenv("SSL_CERT_FILE", str(ca))
            pool = HttpPool(url, ssl_context=_sdk_ssl_context)
            bodies = [(await post(pool, url)).body for _ in range(2)]
            await pool.aclose()
            assert bodies[0] == bodies[1]
            return bodies[0], pool.opened
        finally:
            for writer in server.writers:
                writer.close()
            listening.close()

    assert run(go()) == (b'{"tls": true}', 1)
