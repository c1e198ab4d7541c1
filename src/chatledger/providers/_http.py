"""A lean HTTP/1.1 client for model calls: one keep-alive connection pool per endpoint.

The SDKs send each request through several layers (request options, ``httpx`` request and
response objects, ``httpcore``'s pool, ``anyio`` streams), about 2–3 ms of CPU per call; at a
few hundred calls per second that saturates one core, and ``httpcore``'s pool scans every
connection for each request, so the cost grows with the number in flight. What a model call
needs is much less: POST a JSON body on a connection kept open, read the status, the headers
and the body. This module does only that, on an asyncio protocol (about 0.15 ms a call):

- connections are opened on demand, with no limit of their own — the provider's concurrency
  gate bounds the calls in flight, so the pool holds at most that many — and kept alive after
  a complete reply (HTTP/1.1 without ``connection: close``), most recently used first; one idle
  longer than ``keepalive_s`` (5 s, as ``httpx``) or closed by the server is dropped;
- a request that fails on a reused connection before any byte of the reply arrived (the
  server closed the idle connection as the request went out) is sent once more on a new one;
- replies framed by ``content-length``, ``transfer-encoding: chunked`` or the end of the
  connection; ``gzip`` / ``deflate`` bodies are decoded (none is asked for);
- TLS with the same certificate store as the SDKs (``httpx``'s default context);
- a request abandoned half-way (the caller's deadline, a cancellation) closes its connection,
  which is never reused;
- a body longer than the pool's ``max_body_bytes`` (announced by its ``content-length``, or
  once that many bytes have arrived, or decompressed to more) is cut off:
  :class:`HttpBodyTooLarge`, the connection closed. A model's reply of megabytes is a server
  gone wrong; reading it whole would cost its memory and time, and store it in the cache.

What is sent — the URL, and every header (the key, the SDK's own headers, those the
environment adds through the SDK) — comes from the SDK client itself
(:func:`sdk_request_template`), so a request goes out as the SDK would send it. Nothing here
logs, and no error carries a header or a body.
"""

from __future__ import annotations

import asyncio
import ssl
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from chatledger.core import EnvironmentFault

# Longest a connection may sit idle before it is dropped rather than reused (httpx's default).
KEEPALIVE_S = 5.0
# A reply head longer than this is refused (no model API sends one).
_MAX_HEAD_BYTES = 256 * 1024
_NO_BODY_STATUS = frozenset({204, 304})
# Request headers the client writes itself (or that would frame the body another way).
_OWN_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "accept-encoding", "expect"}
)


class HttpConnectionError(EnvironmentFault):
    """The connection failed, or closed or broke the protocol before a whole reply (internal:
    the provider retries it as a :class:`RetryableError`)."""

    def __init__(self, reason: str, *, replied: bool = False) -> None:
        super().__init__(reason)
        # Whether any byte of the reply had arrived (a request that got none may be re-sent).
        self.replied = replied
        # Whether nothing listened at the address (the connection was refused).
        self.refused = False


class HttpBodyTooLarge(HttpConnectionError):
    """The reply's body is longer than the limit: cut off, not read further."""

    def __init__(self, limit: int, *, announced: int | None = None) -> None:
        size = f"{announced:,} bytes" if announced is not None else "more"
        super().__init__(
            f"the reply's body ({size}) is over the {limit:,}-byte limit: cut off", replied=True
        )
        self.limit = limit


@dataclass(frozen=True)
class HttpResponse:
    status: int
    # Lower-case names; a header sent several times has its values joined with ", ".
    headers: Mapping[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        """The media type, without parameters (``application/json``)."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    def text(self) -> str:
        """The body as text: the charset it names (UTF-8 if none), bad bytes replaced."""
        charset = "utf-8"
        for parameter in self.headers.get("content-type", "").split(";")[1:]:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip('"')
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one request at a time, the reply parsed as it arrives."""

    def __init__(self, max_body_bytes: int | None = None) -> None:
        self.max_body_bytes = max_body_bytes
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._buffer = bytearray()
        self._waiter: asyncio.Future[HttpResponse] | None = None
        self._reset()

    def _reset(self) -> None:
        self._status = 0
        self._headers: dict[str, str] = {}
        self._keep_alive = False
        self._head_done = False
        # Body framing: "length" (self._remaining bytes), "chunked", "close" or "none".
        self._framing = "none"
        self._remaining = 0
        self._chunks: list[bytes] = []
        self._chunked_bytes = 0
        self._chunk_left = -1  # bytes left of the current chunk (-1: a size line is next)
        self._in_trailers = False
        self._replied = False

    # --- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            # Bytes nobody asked for (a server talking out of turn): the connection is unusable.
            self.close()
            return
        self._replied = True
        self._buffer += data
        try:
            self._advance()
        except HttpConnectionError as exc:
            self._fail(exc)
            self.close()

    def eof_received(self) -> bool:
        return False  # close the transport: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.transport = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._head_done and self._framing == "close":
            if self.max_body_bytes is not None and len(self._buffer) > self.max_body_bytes:
                self._fail(HttpBodyTooLarge(self.max_body_bytes))
                return
            self._finish(bytes(self._buffer))  # the end of the connection ends the body
            return
        self._fail(
            HttpConnectionError(
                "the server closed the connection before the whole reply", replied=self._replied
            )
        )

    # --- one exchange -----------------------------------------------------------------------

    def send(self, data: bytes) -> asyncio.Future[HttpResponse]:
        assert self.transport is not None and self._waiter is None
        self._reset()
        self._buffer.clear()
        waiter: asyncio.Future[HttpResponse] = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        self.transport.write(data)
        return waiter

    def reusable(self) -> bool:
        return not self.closed and self._keep_alive and self._waiter is None and not self._buffer

    def close(self) -> None:
        self._keep_alive = False
        transport = self.transport
        if transport is not None:
            transport.abort()
        self.closed = True

    def _fail(self, exc: HttpConnectionError) -> None:
        waiter, self._waiter = self._waiter, None
        self._keep_alive = False
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _finish(self, body: bytes) -> None:
        waiter, self._waiter = self._waiter, None
        encoding = self._headers.get("content-encoding", "").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            try:
                # wbits 47: gzip or zlib header, detected; raw deflate is tried next.
                body = self._inflate(body, 47)
            except HttpBodyTooLarge as exc:
                self._keep_alive = False
                if waiter is not None and not waiter.done():
                    waiter.set_exception(exc)
                return
            except zlib.error:
                try:
                    body = self._inflate(body, -15)
                except HttpBodyTooLarge as exc:
                    self._keep_alive = False
                    if waiter is not None and not waiter.done():
                        waiter.set_exception(exc)
                    return
                except zlib.error:
                    self._keep_alive = False
                    if waiter is not None and not waiter.done():
                        broken = HttpConnectionError("the reply's body does not decompress")
                        broken.replied = True
                        waiter.set_exception(broken)
                    return
        if waiter is not None and not waiter.done():
            waiter.set_result(HttpResponse(self._status, self._headers, body))

    def _inflate(self, body: bytes, wbits: int) -> bytes:
        """``body`` decompressed, refused once it passes the limit (a small bomb stays small)."""
        if self.max_body_bytes is None:
            return zlib.decompress(body, wbits)
        inflater = zlib.decompressobj(wbits)
        out = inflater.decompress(body, self.max_body_bytes + 1)
        if len(out) > self.max_body_bytes:
            raise HttpBodyTooLarge(self.max_body_bytes)
        if not inflater.eof:
            raise zlib.error("incomplete or truncated stream")
        return out

    def _advance(self) -> None:
        while not self._head_done:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > _MAX_HEAD_BYTES:
                    raise HttpConnectionError("the reply's header is too long", replied=True)
                return
            head = bytes(self._buffer[:end])
            del self._buffer[: end + 4]
            self._read_head(head)
        if self._framing == "length":
            if len(self._buffer) < self._remaining:
                return
            body = bytes(self._buffer[: self._remaining])
            del self._buffer[: self._remaining]
            if self._buffer:
                self._keep_alive = False  # more than the reply: do not trust the connection
            self._finish(body)
        elif self._framing == "chunked":
            self._read_chunks()
        elif self._framing == "close":
            if self.max_body_bytes is not None and len(self._buffer) > self.max_body_bytes:
                raise HttpBodyTooLarge(self.max_body_bytes)
        elif self._framing == "none":
            if self._buffer:
                self._keep_alive = False
            self._finish(b"")

    def _read_head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise HttpConnectionError("the reply is not HTTP/1.x", replied=True)
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise HttpConnectionError("the reply has a malformed header line", replied=True)
            key = name.decode("latin-1").lower()
            text = value.strip().decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        if 100 <= status < 200:
            return  # an interim reply (100 Continue, 103 Early Hints): the real one follows
        self._status = status
        self._headers = headers
        self._head_done = True
        tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        http10 = parts[0] == b"HTTP/1.0"
        self._keep_alive = "keep-alive" in tokens if http10 else "close" not in tokens
        if status in _NO_BODY_STATUS:
            self._framing = "none"
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._framing = "chunked"
        elif "content-length" in headers:
            try:
                length = int(headers["content-length"].split(",")[0])
            except ValueError:
                raise HttpConnectionError(
                    "the reply's content-length is not a number", replied=True
                ) from None
            if length < 0:
                raise HttpConnectionError("the reply's content-length is negative", replied=True)
            if self.max_body_bytes is not None and length > self.max_body_bytes:
                raise HttpBodyTooLarge(self.max_body_bytes, announced=length)
            self._framing = "length"
            self._remaining = length
        else:
            self._framing = "close"
            self._keep_alive = False

    def _read_chunks(self) -> None:
        # Read from a position and cut the buffer once at the end: cutting it after every
        # chunk would move the rest of a large reply once per chunk.
        buffer = self._buffer
        position = 0
        try:
            while True:
                if self._in_trailers:
                    end = buffer.find(b"\r\n", position)
                    if end < 0:
                        return
                    line = bytes(buffer[position:end])
                    position = end + 2
                    if not line:
                        if len(buffer) > position:
                            self._keep_alive = False
                        self._finish(b"".join(self._chunks))
                        return
                    continue
                if self._chunk_left < 0:
                    end = buffer.find(b"\r\n", position)
                    if end < 0:
                        if len(buffer) - position > 4096:
                            raise HttpConnectionError("a chunk size line is too long", replied=True)
                        return
                    size_text = bytes(buffer[position:end]).split(b";", 1)[0].strip()
                    position = end + 2
                    try:
                        size = int(size_text, 16)
                    except ValueError:
                        raise HttpConnectionError(
                            "the reply's chunk size is malformed", replied=True
                        ) from None
                    if size < 0:
                        raise HttpConnectionError("a chunk size is negative", replied=True)
                    if size == 0:
                        self._in_trailers = True
                        continue
                    limit = self.max_body_bytes
                    if limit is not None and self._chunked_bytes + size > limit:
                        raise HttpBodyTooLarge(limit)
                    self._chunk_left = size
                end = position + self._chunk_left
                if len(buffer) < end + 2:
                    return
                if buffer[end : end + 2] != b"\r\n":
                    raise HttpConnectionError("the reply's chunk is malformed", replied=True)
                self._chunks.append(bytes(buffer[position:end]))
                self._chunked_bytes += end - position
                position = end + 2
                self._chunk_left = -1
        finally:
            del buffer[:position]


class HttpPool:
    """Keep-alive connections to one origin (``scheme://host:port``), for one event loop."""

    def __init__(
        self,
        origin: str,
        *,
        ssl_context: Callable[[], ssl.SSLContext] | None = None,
        keepalive_s: float = KEEPALIVE_S,
        max_body_bytes: int | None = None,
    ) -> None:
        """``max_body_bytes``: the longest reply body read (None: no limit)."""
        parts = urlsplit(origin)
        self.max_body_bytes = max_body_bytes
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) origin: {parts.scheme}://…")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl_factory = ssl_context
        self._ssl: ssl.SSLContext | None = None
        self.keepalive_s = keepalive_s
        self._idle: list[_Connection] = []
        self._busy: set[_Connection] = set()
        self._closed = False
        # Counts, for tests and benchmarks.
        self.opened = 0
        self.reused = 0

    def _ssl_context(self) -> ssl.SSLContext | None:
        if self.scheme != "https":
            return None
        if self._ssl is None:
            context = self._ssl_factory() if self._ssl_factory else ssl.create_default_context()
            context.set_alpn_protocols(["http/1.1"])
            self._ssl = context
        return self._ssl

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        context = self._ssl_context()
        try:
            _, connection = await loop.create_connection(
                lambda: _Connection(self.max_body_bytes),
                self.host,
                self.port,
                ssl=context,
                server_hostname=self.host if context is not None else None,
            )
        except (OSError, ssl.SSLError) as exc:
            failed = HttpConnectionError(f"cannot connect ({type(exc).__name__})")
            failed.refused = isinstance(exc, ConnectionRefusedError)
            raise failed from None
        self.opened += 1
        return connection

    def _take_idle(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if connection.reusable() and now - connection.idle_since <= self.keepalive_s:
                return connection
            connection.close()
        return None

    async def request(self, head: bytes, body: bytes) -> HttpResponse:
        """Send one request (``head``: request line and headers, ending in a blank line) and
        read its whole reply. Raises :class:`HttpConnectionError` when no reply could be read."""
        if self._closed:
            raise HttpConnectionError("the connection pool is closed")
        data = head + body
        connection = self._take_idle()
        reused = connection is not None
        while True:
            if connection is None:
                connection = await self._open()
            current = connection
            self._busy.add(current)
            try:
                response = await current.send(data)
            except HttpConnectionError as exc:
                current.close()
                if reused and not exc.replied:
                    # The server closed the idle connection as the request went out: once more
                    # on a new one.
                    connection, reused = None, False
                    continue
                raise
            except BaseException:
                current.close()  # abandoned half-way: the reply may still come
                raise
            finally:
                self._busy.discard(current)
            break
        if reused:
            self.reused += 1
        if connection.reusable() and not self._closed:
            connection.idle_since = time.monotonic()
            self._idle.append(connection)
        else:
            connection.close()
        return response

    def idle_connections(self) -> int:
        return len(self._idle)

    async def aclose(self) -> None:
        self._closed = True
        for connection in [*self._idle, *self._busy]:
            connection.close()
        self._idle.clear()
        self._busy.clear()


@dataclass(frozen=True)
class RequestTemplate:
    """One endpoint's request line and headers, encoded once; ``head`` adds the length."""

    origin: str
    target: str  # path and query, e.g. "/v1/chat/completions"
    # "Host" and every header the SDK sends, each line ending in CRLF.
    header_block: bytes

    def head(self, body_length: int) -> bytes:
        return b"".join(
            (
                b"POST ",
                self.target.encode("ascii"),
                b" HTTP/1.1\r\n",
                self.header_block,
                b"content-length: ",
                str(body_length).encode("ascii"),
                b"\r\n\r\n",
            )
        )

    def __repr__(self) -> str:  # the header block holds the key
        return f"RequestTemplate({self.origin!r}, {self.target!r})"


def build_template(url: str, headers: Iterable[tuple[str, str]]) -> RequestTemplate:
    """The template of a POST to ``url`` with ``headers`` (those the client writes itself are
    left out). Raises ValueError for a header that cannot go on the wire as it is."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http(s) URL")
    default_port = 443 if parts.scheme == "https" else 80
    port = parts.port or default_port
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    authority = host if port == default_port else f"{host}:{port}"
    origin = f"{parts.scheme}://{authority}"
    target = parts.path or "/"
    if parts.query:
        target += f"?{parts.query}"
    lines = [f"host: {authority}\r\n".encode("ascii")]
    for name, value in headers:
        if name.lower() in _OWN_HEADERS:
            continue
        if any(c in name + value for c in "\r\n\0") or not name.isascii():
            raise ValueError("a header cannot be sent as it is")
        lines.append(f"{name}: {value}\r\n".encode("latin-1"))
    return RequestTemplate(origin, target, b"".join(lines))


async def sdk_request_template(
    client: Any, models: Any, path: str, **options: Any
) -> RequestTemplate:
    """What the SDK ``client`` would send for ``client.post(path, options=options)``: its URL and
    headers (key, platform headers, headers from the environment), as a template.

    Raises ValueError when the SDK would not send the request straight to the server: a proxy
    applies to its URL, it authenticates some other way than headers known up front (workload
    identity, a provider runtime, custom ``httpx`` auth), or it is not plain HTTP(S); the
    caller then goes through the SDK. Uses the SDK's own request builder (``models`` is its
    ``_models`` module, for ``FinalRequestOptions``)."""
    for hook in ("_workload_identity_auth", "_provider_runtime"):
        if getattr(client, hook, None) is not None:
            raise ValueError(f"the SDK client has {hook}")
    if client.custom_auth is not None:
        raise ValueError("the SDK client has custom auth")
    final = models.FinalRequestOptions.construct(method="post", url=path, json_data={}, **options)
    final = await client._prepare_options(final)
    request = client._build_request(final)
    await client._prepare_request(request)
    http = client._client
    if http._transport_for_url(request.url) is not http._transport:
        raise ValueError("a proxy applies to the URL")
    # A per-request key (an idempotency header) must not be sent with every request.
    per_request = {str(getattr(client, "_idempotency_header", None) or "").lower()}
    headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() not in per_request]
    return build_template(str(request.url), headers)


def _sdk_ssl_context() -> ssl.SSLContext:
    """The SDKs' certificate store: ``httpx``'s default context (``SSL_CERT_FILE`` and
    ``SSL_CERT_DIR`` included)."""
    try:
        import httpx2

        return httpx2.create_ssl_context()
    except (ImportError, AttributeError):
        return ssl.create_default_context()


class SdkRoute:
    """An SDK client of one event loop and, when its requests can go straight to the server,
    the lean path beside it: the SDK's request template and a :class:`HttpPool`.

    ``lean=False`` (``CallSettings.http_client="sdk"``) keeps every request on the SDK. The
    template is built on the first call (:meth:`ready`); when the SDK would not send the
    request straight to the server (see :func:`sdk_request_template`) the route stays on the
    SDK, which then handles proxies and authentication itself.
    """

    def __init__(
        self,
        sdk: Any,
        *,
        models: Any,
        path: str,
        options: Mapping[str, Any],
        lean: bool,
        max_body_bytes: int | None = None,
    ) -> None:
        self.sdk = sdk
        self.max_body_bytes = max_body_bytes
        self._models = models
        self._path = path
        self._options = dict(options)
        self._want_lean = lean
        self._ready = False
        self.template: RequestTemplate | None = None
        self.pool: HttpPool | None = None
        # Why the route stays on the SDK (None: it does not, or lean was not asked for).
        self.sdk_reason: str | None = None

    @property
    def lean(self) -> bool:
        return self.pool is not None

    async def ready(self) -> None:
        if self._ready:
            return
        self._ready = True
        if not self._want_lean:
            return
        try:
            template = await sdk_request_template(
                self.sdk, self._models, self._path, **self._options
            )
        except ValueError as exc:
            self.sdk_reason = str(exc)
            return
        except Exception as exc:  # an SDK whose internals moved: it still works on its own
            self.sdk_reason = f"the SDK's request builder has changed ({type(exc).__name__})"
            return
        self.template = template
        self.pool = HttpPool(
            template.origin, ssl_context=_sdk_ssl_context, max_body_bytes=self.max_body_bytes
        )

    async def post(self, body: bytes) -> HttpResponse:
        assert self.pool is not None and self.template is not None
        return await self.pool.request(self.template.head(len(body)), body)

    async def aclose(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            await pool.aclose()
        await self.sdk.close()


# The per-call endpoints whose replies are bounded (OpenAI's, Anthropic's).
BOUNDED_PATHS = ("/chat/completions", "/messages")


def bounded_sdk_hooks(max_body_bytes: int | None) -> dict[str, list[Any]]:
    """``event_hooks`` for an SDK's ``httpx.AsyncClient`` that keep a reply's body within
    ``max_body_bytes`` on the SDK path too (the lean path's bound, :class:`HttpBodyTooLarge`).
    Only a per-call reply (:data:`BOUNDED_PATHS`) is bounded, never a batch's files. The
    response hook runs once the head is in and before the body is read: a longer
    announced length is refused there, any other body is cut as its bytes arrive. The SDK
    wraps the error in its connection error; :func:`body_too_large` finds it."""
    if max_body_bytes is None:
        return {}
    limit = max_body_bytes
    # One wrapper class per HTTP library (the SDKs ship their own httpx, as httpx2): the
    # response's body must stay an AsyncByteStream of the library that reads it.
    wrappers: dict[type, type] = {}

    def bounded(stream_base: type) -> type:
        class BoundedStream(stream_base):  # type: ignore[misc]
            """The response's byte stream, raising HttpBodyTooLarge past the limit."""

            def __init__(self, inner: Any) -> None:
                self._inner = inner

            async def __aiter__(self) -> Any:
                seen = 0
                async for piece in self._inner:
                    seen += len(piece)
                    if seen > limit:
                        raise HttpBodyTooLarge(limit)
                    yield piece

            async def aclose(self) -> None:
                await self._inner.aclose()

        return BoundedStream

    async def check(response: Any) -> None:
        if not response.request.url.path.endswith(BOUNDED_PATHS):
            return  # a batch's files and results are as long as the batch
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > limit:
            await response.aclose()
            raise HttpBodyTooLarge(limit, announced=int(announced))
        library = sys.modules[type(response).__module__.partition(".")[0]]
        base = library.AsyncByteStream
        if base not in wrappers:
            wrappers[base] = bounded(base)
        response.stream = wrappers[base](response.stream)

    return {"response": [check]}


def body_too_large(exc: BaseException) -> HttpBodyTooLarge | None:
    """The :class:`HttpBodyTooLarge` behind ``exc`` (an SDK's wrapped error), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, HttpBodyTooLarge):
            return current
        current = current.__cause__ or current.__context__
    return None
