"""``local:NAME``: a local GGUF model that ChatLedger serves itself, called like any
OpenAI-compatible server — the same provider code, cache, budget and retries.

The first call to a local model locates its file (checked against its SHA-256), starts a server
for it on 127.0.0.1 (see :mod:`._local_server`) and waits until it answers; later calls reuse
it, and a server that died (killed, crashed) is started again by the next attempt, so a retry
recovers. :meth:`LocalProvider.aclose` (and, as a safety net, interpreter exit) stops it.

What a local call sends, unless the request says otherwise: temperature 0, seed 0 and a repeat
penalty of 1.1 — deterministic, and without the greedy repetition loops small models fall into.
The cache key holds the model's SHA-256 (a different file with the same name misses) and these
defaults, never the server's port.
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import logging
from pathlib import Path
from typing import Any, ClassVar

from pydantic import JsonValue

from chatledger.core import EnvironmentFault
from chatledger.providers._base import WireCall, _Tally
from chatledger.providers._errors import LocalServerStoppedError, ServerUnreachableError
from chatledger.providers._lease import HeldLease
from chatledger.providers._local_models import LocalModelFile, locate_model
from chatledger.providers._local_server import LocalServer, ServerOptions
from chatledger.providers._model_id import LOCAL, ModelId
from chatledger.providers._openai import OpenAICompatibleProvider
from chatledger.providers._reply import RawReply
from chatledger.providers._types import CompletionRequest, StructuredMode

log = logging.getLogger("chatledger.providers")

LOCAL_DEFAULTS: dict[str, JsonValue] = {"seed": 0, "repeat_penalty": 1.1}
LOCAL_TEMPERATURE = 0.0
# Bump when LOCAL_DEFAULTS or LOCAL_TEMPERATURE change: the cached answers were made with others.
LOCAL_DEFAULTS_VERSION = 1

_RUNNING: set[LocalServer] = set()


@atexit.register
def _stop_all() -> None:  # pragma: no cover - exercised by process exit
    for server in list(_RUNNING):
        server.stop()


class LocalProvider(OpenAICompatibleProvider):
    """One local model, served on demand."""

    kind = LOCAL
    key_variable: ClassVar[str] = "CHATLEDGER_LOCAL_API_KEY"  # never needed; never set

    def __init__(
        self,
        *,
        model: str,
        server_options: ServerOptions | None = None,
        work_dir: Path,
        **shared: Any,
    ) -> None:
        # The base URL is known once the server runs; until then nothing is sent.
        super().__init__(base_url="http://127.0.0.1:1/v1", **shared)
        self.model_name = model
        self.server_options = server_options or ServerOptions()
        self.work_dir = work_dir
        self.server: LocalServer | None = None
        self.file: LocalModelFile | None = None
        self.starts = 0
        # Calls the servers answered (this process): what a message about a stopped server says.
        self.answered = 0
        self._starting: asyncio.Lock | None = None

    def accepts(self, model: ModelId) -> bool:
        return model.provider == LOCAL and model.model == self.model_name

    async def _ensure_server(self) -> LocalServer:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self.server is not None and self.server.alive():
                return self.server
            if self.server is not None:
                log.warning(
                    "local:%s: the server stopped (%s); starting it again",
                    self.model_name,
                    self.server.log_tail(1),
                )
                _RUNNING.discard(self.server)
                self.server.stop()
                await self._client.aclose()
            if self.file is None:
                self.file = await asyncio.to_thread(locate_model, self.model_name, self.work_dir)
            try:
                self.server = await asyncio.to_thread(
                    LocalServer.start, self.file, self.server_options, self.work_dir / "local-logs"
                )
            except EnvironmentFault as exc:
                if not self.starts:
                    raise
                calls = f"{self.answered} call{'' if self.answered == 1 else 's'}"
                raise EnvironmentFault(
                    f"local:{self.model_name}: the server stopped after {calls} and could not be "
                    f"started again: {exc}",
                    hint=f"the {calls} it answered are cached: run the same command again to "
                    f"resume; {exc.hint or ''}".rstrip("; "),
                ) from None
            _RUNNING.add(self.server)
            self.starts += 1
            self.base_url = self.server.base_url
            return self.server

    async def _prepare(self) -> None:
        # Before the client is made: it is made for the server's URL.
        await self._ensure_server()
        await super()._prepare()

    async def _send(self, call: WireCall) -> RawReply:
        await self._ensure_server()
        options = {**LOCAL_DEFAULTS, **dict(call.options)}
        temperature = call.temperature if call.temperature is not None else LOCAL_TEMPERATURE
        sent = dataclasses.replace(call, temperature=temperature, options=options)
        return await super()._send(sent)

    async def _live_call(
        self, key: str, call: WireCall, tally: _Tally, lease: HeldLease | None = None
    ) -> RawReply:
        try:
            reply = await super()._live_call(key, call, tally, lease)
        except LocalServerStoppedError:
            raise
        except ServerUnreachableError as exc:
            # ChatLedger started this server and it answered /health: a refused connection now
            # means it stopped, not that someone has to start one.
            raise LocalServerStoppedError(str(call.model), exc.url, self.answered) from None
        self.answered += 1
        return reply

    def _key_parts(
        self, call: WireCall, request: CompletionRequest, mode: StructuredMode | None
    ) -> dict[str, Any]:
        parts = super()._key_parts(call, request, mode)
        parts["local"] = {
            "sha256": self.file.sha256 if self.file is not None else self._model_hash(),
            "defaults": LOCAL_DEFAULTS_VERSION,
        }
        return parts

    def _model_hash(self) -> str:
        # The key is made before the first send: locate the file (cheap after its first check).
        self.file = locate_model(self.model_name, self.work_dir)
        return self.file.sha256

    async def aclose(self) -> None:
        await super().aclose()
        if self.server is not None:
            _RUNNING.discard(self.server)
            await asyncio.to_thread(self.server.stop)
            self.server = None
