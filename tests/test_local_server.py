"""The local model server's lifetime, with a stand-in for llama-server (a script that answers
``/health`` on the port it is given), so no model is needed."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from chatledger.providers import LocalModelFile, LocalServer, ServerOptions

FAKE_SERVER = """\
import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


@pytest.fixture
def fake_llama_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalModelFile:
    script = tmp_path / "fake_server.py"
    script.write_text(FAKE_SERVER, encoding="utf-8")
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n', encoding="utf-8")
    binary.chmod(0o755)
    monkeypatch.setenv("CHATLEDGER_LLAMA_SERVER", str(binary))
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    return LocalModelFile("tiny", model, "0" * 64)


def test_a_server_started_from_a_thread_that_ends_keeps_running(
    tmp_path: Path, fake_llama_server: LocalModelFile
) -> None:
    # asyncio.to_thread starts servers from pool threads that retire at the end of each
    # asyncio.run; the parent-death signal must not follow such a thread.
    started: list[LocalServer] = []
    options = ServerOptions(runtime="llama-server", threads=1)
    thread = threading.Thread(
        target=lambda: started.append(
            LocalServer.start(fake_llama_server, options, tmp_path / "logs")
        )
    )
    thread.start()
    thread.join()
    (server,) = started
    try:
        time.sleep(1.0)
        assert server.alive() and server.healthy()
    finally:
        server.stop()
    assert not server.alive()
