"""A scripted LLM server on 127.0.0.1 speaking the OpenAI chat-completions and the Anthropic
messages wire formats, for testing the providers over real HTTP.

Each test queues the responses it wants per path; the server answers requests in order, records
what it received (path, headers, JSON body) and how many requests were in flight at once. A
path can also have a standing reply (``always``), used once its queue is empty — typically a
callable that answers from the request body, for runs of many calls.

Faults are replies too: a body of raw ``bytes`` (HTML, invalid UTF-8) with any
``content_type``, a ``delay_s`` before anything is sent (a hung server), a ``stall_s`` after
the headers and half the body (a server that stops mid-reply), or a ``drip_s`` between single
bytes of the body (a reply so slow that no single read ever times out). Waits end early when
the server stops, so a test with a hung reply does not leave a thread sleeping behind it.

The batch endpoints of both APIs (OpenAI's files and batches, Anthropic's message batches) are
served too, with their state in ``server.batch_api`` (see ``tests/fakes/batch_api.py``):
``server.plan_batches(BatchPlan(...))`` scripts how the next batches run and end, and each
request of a batch is answered by the reply scripted for its per-call path.

Run as a script (``python tests/fakes/llm_server.py --delay 0.2``) it serves a fixed reply on
both paths from its own process and prints its URL — what the provider benchmark measures
against, so the server's threads do not share the client's interpreter lock.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

try:  # imported as fakes.llm_server (tests/ is on the path), or run as a script
    from fakes.batch_api import BatchPlan, FakeBatch, FakeBatchAPI
except ImportError:  # pragma: no cover
    from batch_api import BatchPlan, FakeBatch, FakeBatchAPI  # type: ignore[no-redef]

__all__ = ["BatchPlan", "FakeBatch", "FakeLLMServer", "Reply"]

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


@dataclass
class Reply:
    """One scripted response. ``body`` may be a callable of the request's JSON body; ``bytes``
    (from it or given directly) are sent as they are, ``str`` as UTF-8, anything else as JSON."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    # Seconds before the status line is sent: the server has the request and says nothing.
    delay_s: float = 0.0
    content_type: str = "application/json"
    # Seconds to stall after the headers and the first half of the body (content-length is
    # the whole body's, so the client waits for the rest).
    stall_s: float = 0.0
    # Seconds between single bytes of the body: every read gets data, none gets the reply.
    drip_s: float = 0.0


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any
    at: float


class _Server(ThreadingHTTPServer):
    # One thread per connection; a listen backlog well above the concurrency any test or
    # benchmark uses (the default of 5 drops connections when 32 clients open at once, and the
    # client's SYN retry then costs a whole second).
    request_queue_size = 256
    daemon_threads = True
    block_on_close = False


class FakeLLMServer:
    """``with FakeLLMServer() as server:`` then point a provider at ``server.url``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self._standing: dict[str, Reply] = {}
        self.requests: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        # Set by stop(): a handler waiting out a delay or a stall gives up at once.
        self._stopping = threading.Event()
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the fake server only listens on the loopback interface")
        self._httpd = _Server((host, port), self._handler_class())
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.batch_api = FakeBatchAPI(self._answer_per_call, lambda: self.url)

    @property
    def batches(self) -> dict[str, FakeBatch]:
        """Every batch created, by id (both APIs)."""
        return self.batch_api.batches

    def plan_batches(self, *plans: BatchPlan) -> None:
        """How the next batches created behave, in order (then ``batch_api.default_plan``)."""
        self.batch_api.plan(*plans)

    def _answer_per_call(self, path: str, body: Any) -> tuple[int, Any]:
        """What a per-call request of ``body`` to ``path`` would get (a batch's answer)."""
        reply = self._next_reply(path)
        payload = reply.body(body) if callable(reply.body) else reply.body
        if isinstance(payload, bytes):
            payload = payload.decode("utf-8", errors="replace")
        return reply.status, payload

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self._scripts[path].extend(replies)

    def always(self, path: str, reply: Reply) -> None:
        """Answer ``path`` with ``reply`` whenever its queue is empty."""
        with self._lock:
            self._standing[path] = reply

    def calls(self, path: str | None = None) -> int:
        return sum(1 for r in self.requests if path is None or r.path == path)

    def bodies(self, path: str) -> list[Any]:
        return [r.body for r in self.requests if r.path == path]

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, path: str) -> Reply:
        with self._lock:
            queue = self._scripts.get(path)
            if queue:
                return queue.popleft()
            standing = self._standing.get(path)
            if standing is not None:
                return standing
        return Reply(status=500, body={"error": {"message": f"nothing scripted for {path}"}})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle's algorithm on, the body waits
            # for the client's delayed ACK of the headers — 40 ms added to every call.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output quiet

            def _read_body(self) -> bytes:
                if self.headers.get("transfer-encoding", "").lower() == "chunked":
                    parts = []
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline()
                            return b"".join(parts)
                        parts.append(self.rfile.read(size))
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("content-length", "0")))

            def _batch_endpoint(self, method: str, raw: bytes) -> bool:
                """Answer a batch endpoint; False for any other path."""
                headers = {k.lower(): v for k, v in self.headers.items()}
                answer = server.batch_api.handle(method, self.path, headers, raw)
                if answer is None:
                    return False
                status, payload, content_type = answer
                try:
                    body: Any = json.loads(raw) if raw else None
                except (json.JSONDecodeError, UnicodeDecodeError):
                    body = raw.decode("utf-8", errors="replace")
                with server._lock:
                    server.requests.append(
                        Received(self.path.split("?")[0], headers, body, time.monotonic())
                    )
                data = _encode(payload)
                try:
                    self.send_response(status)
                    self.send_header("content-type", content_type)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                return True

            def do_GET(self) -> None:
                if self.path == "/health":  # as llama-server answers once its model is loaded
                    self.send_response(200)
                    self.send_header("content-length", "0")
                    self.end_headers()
                elif not self._batch_endpoint("GET", b""):
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()

            def do_POST(self) -> None:
                raw = self._read_body()
                if self._batch_endpoint("POST", raw):
                    return
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", errors="replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append(Received(self.path, headers, body, time.monotonic()))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    reply = server._next_reply(self.path)
                    if reply.delay_s and server._stopping.wait(reply.delay_s):
                        return
                    payload = reply.body(body) if callable(reply.body) else reply.body
                    data = _encode(payload)
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type)
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if reply.stall_s:
                        half = len(data) // 2
                        self.wfile.write(data[:half])
                        self.wfile.flush()
                        if server._stopping.wait(reply.stall_s):
                            return
                        data = data[half:]
                    if reply.drip_s:
                        for i in range(len(data)):
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                            if server._stopping.wait(reply.drip_s):
                                return
                        return
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                finally:
                    with server._lock:
                        server.in_flight -= 1

        return Handler


def _encode(payload: Any) -> bytes:
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, str):
        return payload.encode("utf-8")
    return json.dumps(payload).encode("utf-8")


def openai_body(
    content: str,
    *,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    finish_reason: str = "stop",
    model: str = "fake-model",
) -> dict[str, Any]:
    """A chat.completion object as OpenAI returns it."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def anthropic_body(
    *,
    text: str | None = None,
    tool: tuple[str, Any] | None = None,
    input_tokens: int = 10,
    output_tokens: int = 5,
    stop_reason: str | None = None,
    model: str = "fake-model",
) -> dict[str, Any]:
    """A Message object as the Anthropic Messages API returns it (text and/or one tool call)."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool is not None:
        name, arguments = tool
        content.append({"type": "tool_use", "id": "toolu_test", "name": name, "input": arguments})
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool is not None else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def error_body(message: str, kind: str = "error") -> dict[str, Any]:
    """An error body both SDKs can read."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def _serve_fixed(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per reply")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = FakeLLMServer(port=args.port)
    server.always(OPENAI_PATH, Reply(body=openai_body("{}"), delay_s=args.delay))
    server.always(ANTHROPIC_PATH, Reply(body=anthropic_body(text="{}"), delay_s=args.delay))
    # Nothing is recorded per request here: a long benchmark would only grow the list.
    server.requests = _Discard()
    print(server.url, flush=True)
    server._httpd.serve_forever(poll_interval=0.05)


class _Discard(list[Received]):
    def append(self, item: Received) -> None:
        return None


if __name__ == "__main__":
    _serve_fixed()


def point_sdks_at(
    fake: FakeLLMServer,
    monkeypatch: Any,
    cache_dir: Any,
    *,
    anthropic_key: str,
    openai_key: str,
) -> None:
    """Keys and base URLs in the environment so that both SDKs talk to ``fake`` only (were a
    base URL ever left out of a provider, the SDK would still come here), and a fresh cache."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url + "/v1")
    monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(cache_dir))


@contextmanager
def sdk_server(
    monkeypatch: Any, cache_dir: Any, *, anthropic_key: str, openai_key: str
) -> Iterator[FakeLLMServer]:
    """``with sdk_server(...) as fake:`` a running fake the SDKs point at (see
    :func:`point_sdks_at`); each test module passes keys of its own, so a key found in a file
    names the test that leaked it."""
    with FakeLLMServer() as fake:
        point_sdks_at(
            fake, monkeypatch, cache_dir, anthropic_key=anthropic_key, openai_key=openai_key
        )
        yield fake
