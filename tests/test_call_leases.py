"""A paid call is paid once across the processes sharing a cache (issue 31).

Three real processes (``python -c`` running the provider layer) ask the same 12 prompts of one
loopback server, which counts the requests it gets and holds each reply 0.5 s so the processes'
calls overlap: the server sees each prompt once (12 requests, not up to 36), one process paid
each call, and the others waited and read its reply from the cache. A process killed while it
holds a lease leaves a lease that the next process takes over at once (its pid is gone); a
lease of a live holder elsewhere is waited for until its heartbeat is older than
``stale_after_s``. Waits on other processes run under a generous guard, never a timing
assertion.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.providers import (
    CallSettings,
    CompletionCache,
    CompletionRequest,
    ProviderHub,
    RawReply,
)
from chatledger.providers._lease import LeaseSettings
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body

GUARD_S = 60.0
PROMPTS = 12

# One invocation in its own process: waits for the go file, then asks every prompt at once
# (four in flight, as an extraction does), and prints what it paid for and what it read.
CHILD = r"""
import asyncio, json, os, sys, time
from chatledger.providers import CallSettings, CompletionCache, CompletionRequest, ProviderHub
url, cache_dir, prompts, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]


async def main() -> None:
    cache = CompletionCache(cache_dir)
    hub = ProviderHub(settings=CallSettings(timeout_s=3600, max_attempts=1), cache=cache)
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.01)
    async with hub:
        done = await asyncio.gather(*(
            hub.complete(CompletionRequest.from_prompt(
                f"openai-compatible:{url}/v1:m", f"prompt {i}", max_tokens=50))
            for i in range(prompts)
        ))
    cache.close()
    print(json.dumps({
        "paid": sum(1 for c in done if not c.cached),
        "texts": sorted(c.text for c in done),
        "waited": cache.leases.waited,
    }))


asyncio.run(main())
"""


def answer(body: Any) -> dict[str, Any]:
    prompt = body["messages"][-1]["content"]
    return openai_body(f"answer to {prompt}", prompt_tokens=5, completion_tokens=5)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
        yield fake


def child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def start(server: FakeLLMServer, cache_dir: Path, go: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, server.url, str(cache_dir), str(PROMPTS), str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready", child.communicate()[1]
    return child


def test_three_processes_sharing_a_cache_make_each_call_once(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(OPENAI_PATH, Reply(body=answer, delay_s=0.5))
    go = tmp_path / "go"
    cache_dir = tmp_path / "cache"
    children = [start(server, cache_dir, go) for _ in range(3)]
    go.touch()
    results = []
    for child in children:
        out, err = child.communicate(timeout=GUARD_S)
        assert child.returncode == 0, err
        results.append(json.loads(out))
    asked = Counter(body["messages"][-1]["content"] for body in server.bodies(OPENAI_PATH))
    # Each of the 12 prompts reached the server once, and was paid by one process only.
    assert asked == Counter(f"prompt {i}" for i in range(PROMPTS))
    assert sum(r["paid"] for r in results) == PROMPTS
    # Every process got every answer (the waiters from the payer's reply).
    expected = sorted(f"answer to prompt {i}" for i in range(PROMPTS))
    assert all(r["texts"] == expected for r in results)
    # The calls overlapped (a process found a call in flight elsewhere and waited for it, not
    # only read a finished one), and no lease is left behind.
    assert sum(r["waited"] for r in results) > 0
    with CompletionCache(cache_dir) as cache:
        assert cache.leases.held() == 0
        assert len(cache) == PROMPTS


def test_the_lease_of_a_killed_process_is_taken_over(server: FakeLLMServer, tmp_path: Path) -> None:
    # The first request never gets its reply; the one after it does.
    server.script(OPENAI_PATH, Reply(delay_s=3600))
    server.always(OPENAI_PATH, Reply(body=answer))
    go = tmp_path / "go"
    go.touch()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, server.url, str(tmp_path), "1", str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    deadline = time.monotonic() + GUARD_S
    while server.calls() == 0:
        assert time.monotonic() < deadline, "the child never called"
        assert child.poll() is None, child.communicate()[1]
        time.sleep(0.02)
    cache = CompletionCache(tmp_path)
    assert cache.leases.held() == 1  # the child holds the call
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=GUARD_S)
    hub = ProviderHub(settings=CallSettings(timeout_s=30, max_attempts=1), cache=cache)

    async def ask() -> Any:
        async with hub:
            return await hub.complete(
                CompletionRequest.from_prompt(
                    f"openai-compatible:{server.url}/v1:m", "prompt 0", max_tokens=50
                )
            )

    done = asyncio.run(ask())
    assert (done.text, done.cached) == ("answer to prompt 0", False)
    assert cache.leases.taken_over == 1
    assert (server.calls(), cache.leases.held()) == (2, 0)
    cache.close()


def lease_row(cache: CompletionCache, key: str, *, host: str, pid: int, age_s: float) -> None:
    """A lease as another process (or machine) would have written it, last beating age_s ago."""
    beat = time.time() - age_s
    with sqlite3.connect(cache.path) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO call_leases VALUES (?, 'other', ?, ?, 'x', ?, ?)",
            (key, host, pid, beat, beat),
        )


def test_a_lease_is_judged_by_its_process_and_its_heartbeat(tmp_path: Path) -> None:
    settings = LeaseSettings(heartbeat_s=1.0, stale_after_s=10.0)
    cache = CompletionCache(tmp_path, leases=settings)
    # Another machine's holder that beat 2 s ago is alive: the call is waited for.
    lease_row(cache, "a", host="elsewhere.invalid", pid=1, age_s=2.0)
    assert cache.leases.claim("a") == (None, None)
    # Silent for 11 s (over stale_after_s): taken over.
    lease_row(cache, "a", host="elsewhere.invalid", pid=1, age_s=11.0)
    reply, token = cache.leases.claim("a")
    assert reply is None and token is not None
    assert cache.leases.taken_over == 1
    # Taken: a second claim (another caller) waits for this one.
    assert cache.leases.claim("a") == (None, None)
    # Released without a reply (the call failed): the next caller takes it.
    cache.leases.release("a", token)
    _, again = cache.leases.claim("a")
    assert again is not None and again != token
    # A stored reply wins over any lease.
    cache.put("a", "m", RawReply(text="stored"))
    assert cache.leases.claim("a") == (RawReply(text="stored"), None)
    # Releasing a lease taken over by someone else leaves theirs alone.
    lease_row(cache, "b", host="elsewhere.invalid", pid=1, age_s=0.0)
    cache.leases.release("b", "not-theirs")
    assert cache.leases.claim("b") == (None, None)
    cache.close()


def test_a_failed_call_leaves_no_lease(server: FakeLLMServer, tmp_path: Path) -> None:
    server.always(OPENAI_PATH, Reply(status=400, body={"error": {"message": "bad request"}}))
    cache = CompletionCache(tmp_path)
    hub = ProviderHub(settings=CallSettings(timeout_s=30, max_attempts=1), cache=cache)

    async def ask() -> None:
        async with hub:
            await hub.complete(
                CompletionRequest.from_prompt(
                    f"openai-compatible:{server.url}/v1:m", "prompt 0", max_tokens=50
                )
            )

    with pytest.raises(Exception, match="bad request"):
        asyncio.run(ask())
    assert (cache.leases.held(), len(cache)) == (0, 0)
    cache.close()
