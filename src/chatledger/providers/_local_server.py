"""Serving a local GGUF model on 127.0.0.1 with an OpenAI-compatible ``/v1/chat/completions``.

Two runtimes, both started and stopped by ChatLedger, both answering the same wire format
(JSON-schema-constrained output, ``max_tokens``, ``temperature``, ``seed``,
``repeat_penalty``), so the ``openai-compatible`` provider — with its cache, budget and
retries — talks to either unchanged:

* ``llama-server`` from llama.cpp: the faster one, used to record the bundled runs. Found as
  ``$CHATLEDGER_LLAMA_SERVER`` or ``llama-server`` on the PATH; building it takes ~30 minutes on
  two cores (docs/local-models.md shows how).
* ``node``: the small server in ``local_server.mjs`` on node-llama-cpp's prebuilt CPU binaries
  (an npm install of about a minute), found in ``$CHATLEDGER_NODE_LLAMA_CPP`` (a folder whose
  ``node_modules`` holds node-llama-cpp). This is what the test suite runs.

A server binds to the loopback interface only, on a free port, and is stopped (terminate, then
kill) when its owner closes; its output goes to a log file whose tail is shown if it fails to
start.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, Literal

from chatledger.core import EnvironmentFault, InputError
from chatledger.providers._local_models import LocalModelFile

LLAMA_SERVER_ENV = "CHATLEDGER_LLAMA_SERVER"
NODE_RUNTIME_ENV = "CHATLEDGER_NODE_LLAMA_CPP"
RuntimeName = Literal["auto", "llama-server", "node"]
DEFAULT_CONTEXT = 8192
# Linux's parent-death signal follows the *thread* that forked the child, not the process: a
# server started from a worker thread (asyncio.to_thread, whose pool is shut down at the end of
# every asyncio.run) was killed when that thread retired, between two runs of one process. Every
# server is therefore forked by this one thread, which lives as long as the process.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chatledger-server-spawner")
START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class ServerOptions:
    runtime: RuntimeName = "auto"
    threads: int = 2
    context: int = DEFAULT_CONTEXT
    port: int = 0  # 0: a free one


def _llama_server() -> str | None:
    given = os.environ.get(LLAMA_SERVER_ENV, "").strip()
    if given:
        return given if Path(given).is_file() else None
    return shutil.which("llama-server")


def _node_runtime() -> Path | None:
    given = os.environ.get(NODE_RUNTIME_ENV, "").strip()
    if not given or shutil.which("node") is None:
        return None
    folder = Path(given).expanduser()
    return folder if (folder / "node_modules" / "node-llama-cpp").is_dir() else None


def runtime_name(options: ServerOptions) -> Literal["llama-server", "node"]:
    """The runtime ``options`` asks for (``auto``: llama-server when there is one)."""
    if options.runtime in ("auto", "llama-server") and _llama_server() is not None:
        return "llama-server"
    if options.runtime in ("auto", "node") and _node_runtime() is not None:
        return "node"
    wanted = "llama-server" if options.runtime == "llama-server" else "local model runtime"
    raise EnvironmentFault(
        f"no {wanted} found to serve a local model",
        hint=f"set {LLAMA_SERVER_ENV} to a llama-server binary, or {NODE_RUNTIME_ENV} to a "
        "folder with node-llama-cpp installed (make local-runtime; docs/local-models.md)",
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(eq=False)  # one object per process: compared (and hashed) by identity
class LocalServer:
    """One running model server. ``with LocalServer.start(model, options, log) as server:``"""

    model: LocalModelFile
    runtime: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    _log: IO[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @classmethod
    def start(cls, model: LocalModelFile, options: ServerOptions, log_dir: Path) -> LocalServer:
        runtime = runtime_name(options)
        port = options.port or free_port()
        command = _command(runtime, model, port, options)
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"{model.name.replace('/', '_')}-{port}.log"
        log = log_path.open("wb")
        environment = dict(os.environ)
        node_dir = _node_runtime()
        if node_dir is not None:
            environment["CHATLEDGER_NODE_MODULES"] = str(node_dir / "node_modules")
        try:
            process = _SPAWNER.submit(
                subprocess.Popen,
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=environment,
                # Its own process group: Ctrl-C reaches ChatLedger, which stops the server.
                start_new_session=True,
                preexec_fn=_die_with_parent,
            ).result()
        except OSError as exc:
            log.close()
            raise EnvironmentFault(f"cannot start {runtime}: {exc}") from None
        server = cls(model, runtime, port, process, log_path, log)
        server._wait_until_ready()
        return server

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                raise EnvironmentFault(
                    f"the {self.runtime} server for {self.model.name} exited with code "
                    f"{self.process.returncode}: {self.log_tail()}",
                    hint=f"its whole log is {self.log_path}",
                )
            if self.healthy():
                return
            time.sleep(0.2)
        self.stop()
        raise EnvironmentFault(
            f"the {self.runtime} server for {self.model.name} was not ready in "
            f"{START_TIMEOUT_S:.0f} s: {self.log_tail()}",
            hint=f"its whole log is {self.log_path}",
        )

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=2) as reply:
                return bool(reply.status == 200)
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
        return " | ".join(tail) or "(empty log)"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def node_script() -> Path:
    """The node-llama-cpp server shipped with the package."""
    return Path(str(resources.files("chatledger.providers") / "local_server.mjs"))


def _command(runtime: str, model: LocalModelFile, port: int, options: ServerOptions) -> list[str]:
    if options.threads < 1 or options.context < 256:
        raise InputError("threads must be ≥ 1 and the context ≥ 256 tokens", field="--threads")
    if runtime == "llama-server":
        binary = _llama_server()
        assert binary is not None
        return [
            binary, "--model", str(model.path), "--host", "127.0.0.1", "--port", str(port),
            "--ctx-size", str(options.context), "--threads", str(options.threads),
            "--parallel", "1", "--jinja",
        ]  # fmt: skip
    node = shutil.which("node") or "node"
    return [
        node, str(node_script()), "--model", str(model.path), "--port", str(port),
        "--threads", str(options.threads), "--context", str(options.context),
        "--name", model.name,
    ]  # fmt: skip


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the server gets SIGTERM when ChatLedger dies, even by SIGKILL (no orphan holds the
    model's memory). Elsewhere a no-op: interpreter exit and aclose stop it instead."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
