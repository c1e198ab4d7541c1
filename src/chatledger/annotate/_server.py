"""The annotation page's server: Starlette on uvicorn, bound to 127.0.0.1 only.

Every request must carry the session's token — ``?token=`` on the page's address (what the
command prints and opens), then the ``X-ChatLedger-Token`` header on the page's own requests —
and a ``Host`` of the loopback address and port the server listens on (a page elsewhere cannot
reach it through a DNS name that resolves to 127.0.0.1). The page is one HTML document with its
script and style inline under a per-response nonce (``Content-Security-Policy`` allows nothing
else: no external asset, no inline handler, no eval); it renders every text from the chats
through ``textContent``, never as markup.

A save is bounded before it is read: a body over ``MAX_BODY_BYTES`` is refused with 413 (read
no further), JSON nested deeper than ``MAX_DEPTH`` with 400, and a save made from an older
revision of the chunk than the saved one with 409 and the saved state (the page shows both).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
from collections.abc import Awaitable, Callable
from functools import cache
from importlib import resources
from typing import Any

from chatledger.annotate._session import AnnotationSession, StaleSaveError
from chatledger.core import ChatLedgerError, require_extra

TOKEN_HEADER = "X-ChatLedger-Token"
LOOPBACK = "127.0.0.1"
# A chunk's whole state is a few kB to a few hundred (a long chunk's every item edited); a
# megabyte is far past any of it.
MAX_BODY_BYTES = 1_000_000
# The deepest a state nests is 8 (fields → items → value → turning points → …).
MAX_DEPTH = 32


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests containers deeper than ``limit`` (walked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


@cache
def _asset(name: str) -> str:
    return resources.files("chatledger.annotate").joinpath("static", name).read_text("utf-8")


def page_html(nonce: str) -> str:
    """The page, its script and style inline under ``nonce``."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("chatledger.annotate", "static"),
        autoescape=True,
        undefined=StrictUndefined,
    )
    template = env.get_template("annotate.html.j2")
    from markupsafe import Markup

    return template.render(
        nonce=nonce,
        style=Markup(_asset("annotate.css")),
        # A script's text is not HTML: only "</" could end it early, and it holds none.
        script=Markup(_asset("annotate.js").replace("</", "<\\/")),
    )


def build_app(session: AnnotationSession, token: str, port: int) -> Any:
    """The Starlette application of one session."""
    require_extra("annotate", "the annotation page")
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route

    hosts = {f"{LOOPBACK}:{port}", f"localhost:{port}"}
    lock = asyncio.Lock()

    def refused(request: Request) -> Response | None:
        if request.headers.get("host", "") not in hosts:
            return PlainTextResponse("wrong host", status_code=421)
        given = request.headers.get(TOKEN_HEADER) or request.query_params.get("token") or ""
        if not secrets.compare_digest(given.encode(), token.encode()):
            return PlainTextResponse(
                "missing or wrong session token: open the address the command printed",
                status_code=403,
            )
        return None

    def guarded(
        handler: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            problem = refused(request)
            if problem is not None:
                return problem
            response = await handler(request)
            response.headers["Cache-Control"] = "no-store"
            response.headers["X-Content-Type-Options"] = "nosniff"
            response.headers["Referrer-Policy"] = "no-referrer"
            return response

        return endpoint

    async def index(request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        policy = (
            f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
            "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'"
        )
        return HTMLResponse(page_html(nonce), headers={"Content-Security-Policy": policy})

    async def overview(request: Request) -> Response:
        return JSONResponse(session.overview())

    def _index(request: Request) -> int:
        try:
            return int(request.path_params["index"])
        except ValueError:
            return -1

    async def chunk(request: Request) -> Response:
        try:
            return JSONResponse(session.chunk_view(_index(request)))
        except ChatLedgerError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)

    async def bounded_body(request: Request) -> bytes | None:
        """The request's body, or None once it is longer than MAX_BODY_BYTES (not read on)."""
        announced = request.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > MAX_BODY_BYTES:
            return None
        body = bytearray()
        async for piece in request.stream():
            body += piece
            if len(body) > MAX_BODY_BYTES:
                return None
        return bytes(body)

    async def save(request: Request) -> Response:
        raw = await bounded_body(request)
        if raw is None:
            return JSONResponse(
                {"error": f"the save is over {MAX_BODY_BYTES:,} bytes"},
                status_code=413,
                headers={"Connection": "close"},
            )
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        except RecursionError:
            data = None
            deep = True
        else:
            deep = too_deep(data)
        if deep:
            return JSONResponse(
                {"error": f"the body nests deeper than {MAX_DEPTH} levels"}, status_code=400
            )
        async with lock:  # one writer: saves land in the journal in the order they came
            try:
                result = session.save(_index(request), data)
            except StaleSaveError as exc:
                return JSONResponse(
                    {"error": str(exc), "current": exc.current.model_dump(mode="json")},
                    status_code=409,
                )
            except ChatLedgerError as exc:
                return JSONResponse({"error": str(exc)}, status_code=422)
        return JSONResponse(
            {
                "revision": result.state.revision,
                "saved": result.state.updated_at,
                "covers": result.covers,
                "problems": [p.model_dump(mode="json") for p in result.problems],
                "done": result.done,
                "total": result.total,
            }
        )

    return Starlette(
        routes=[
            Route("/", guarded(index), methods=["GET"]),
            Route("/api/session", guarded(overview), methods=["GET"]),
            Route("/api/chunks/{index}", guarded(chunk), methods=["GET"]),
            Route("/api/chunks/{index}", guarded(save), methods=["PUT"]),
        ]
    )


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as exc:
        sock.close()
        from chatledger.core import InputError

        raise InputError(
            f"cannot listen on {LOOPBACK}:{port} ({exc.strerror or exc})", field="--port"
        ) from None
    sock.listen(64)
    return sock


def serve(
    session: AnnotationSession,
    *,
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
    token: str | None = None,
) -> None:
    """Serve the session until interrupted; ``on_ready`` gets the page's address (with its
    token) once the server listens."""
    import uvicorn

    sock = bind(port)
    actual = sock.getsockname()[1]
    secret = token or secrets.token_urlsafe(24)
    app = build_app(session, secret, actual)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    url = f"http://{LOOPBACK}:{actual}/?token={secret}"

    async def run() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        if on_ready is not None and server.started:
            on_ready(url)
        await task

    try:
        asyncio.run(run())
    finally:
        sock.close()
    # uvicorn handles SIGINT and SIGTERM itself and returns: the command still says it was
    # interrupted (exit 130, as every command does).
    if server.should_exit:
        raise KeyboardInterrupt
