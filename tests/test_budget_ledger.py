"""The spend ledger: a budget cap that bounds every process and invocation sharing a cache.

Real processes (``python -c`` running the provider layer) call the loopback fake server with one
cache directory; the server counts what was really asked for. Prices are chosen so every sum
is exact in binary floating point: output at $15.625 per Mtok makes a 1000-token reply cost
1/64 dollar ($0.015625) and a call's worst case at max_tokens 8000 cost 1/8 ($0.125); input is
free. Under a $0.25 cap, one budget alone starts a call while spent + 1/8 ≤ 1/4, so it makes
9 calls (9/64): two unshared processes would pay 18/64 = $0.28.

Waits on other processes run under a generous guard (``GUARD_S``), not a timing assertion.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import InputError
from chatledger.providers import (
    Budget,
    BudgetExceeded,
    CallSettings,
    CompletionCache,
    CompletionRequest,
    LedgerTotals,
    ModelPrice,
    PriceTable,
    ProviderHub,
    SpendLedger,
)
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body

GUARD_S = 60.0
CAP = 0.25
CALL_COST = 1 / 64
WORST_CASE = 1 / 8
PRICES = PriceTable({"openai-compatible:*": ModelPrice(0.0, 15.625)})
SETTINGS = CallSettings(timeout_s=30.0, max_attempts=1)

# One invocation of the provider layer in its own process: up to N calls, one at a time,
# stopping at the first refusal as an extraction does; prints what its own budget counted.
CHILD = r"""
import asyncio, json, os, sys
from chatledger.providers import (
    Budget, BudgetExceeded, CallSettings, CompletionCache, CompletionRequest, ModelPrice,
    PriceTable, ProviderHub,
)
url, cache_dir, mode, calls, cap = sys.argv[1:6]


async def main() -> None:
    budget = Budget(cap_usd=float(cap), shared=mode == "shared")
    cache = CompletionCache(cache_dir)
    hub = ProviderHub(
        settings=CallSettings(timeout_s=3600, max_attempts=1),
        cache=cache,
        budget=budget,
        prices=PriceTable({"openai-compatible:*": ModelPrice(0.0, 15.625)}),
    )
    refused = False
    async with hub:
        for i in range(int(calls)):
            request = CompletionRequest.from_prompt(
                f"openai-compatible:{url}/v1:m", f"process {os.getpid()} call {i}",
                max_tokens=8000,
            )
            try:
                await hub.complete(request)
            except BudgetExceeded:
                refused = True
                break
    cache.close()
    print(json.dumps({"spent": budget.spent_usd, "calls": budget.live_calls, "refused": refused}))


asyncio.run(main())
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
        yield fake


def reply() -> Reply:
    return Reply(body=openai_body("ok", prompt_tokens=10, completion_tokens=1000))


class Rendezvous:
    """A reply whose first ``n`` requests wait for one another: the calls of two processes are
    then certainly in flight at once, each holding its worst case in the ledger."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.seen = 0
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(n, timeout=GUARD_S)

    def __call__(self, body: Any) -> dict[str, Any]:
        with self.lock:
            self.seen += 1
            wait = self.seen <= self.n
        if wait:
            self.barrier.wait()
        return openai_body("ok", prompt_tokens=10, completion_tokens=1000)


def start_child(
    server: FakeLLMServer, cache_dir: Path, mode: str, calls: int
) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, server.url, str(cache_dir), mode, str(calls), str(CAP)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finish(child: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = child.communicate(timeout=GUARD_S)
    assert child.returncode == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


def model(server: FakeLLMServer) -> str:
    return f"openai-compatible:{server.url}/v1:m"


def ask(server: FakeLLMServer, prompt: str, max_tokens: int = 8000) -> CompletionRequest:
    return CompletionRequest.from_prompt(model(server), prompt, max_tokens=max_tokens)


def invocation(server: FakeLLMServer, cache_dir: Path, calls: int, **budget: Any) -> Budget:
    """One run in this process with its own cache connection, budget and hub (as a new
    ``chatledger extract`` would have): up to ``calls`` calls, stopping at a refusal."""
    spend = Budget(cap_usd=CAP, **budget)
    cache = CompletionCache(cache_dir)
    hub = ProviderHub(settings=SETTINGS, cache=cache, budget=spend, prices=PRICES)

    async def go() -> None:
        async with hub:
            for _ in range(calls):
                prompt = f"call {time.monotonic_ns()}"  # a new prompt: never a cache hit
                try:
                    await hub.complete(ask(server, prompt))
                except BudgetExceeded:
                    return

    asyncio.run(go())
    cache.close()
    return spend


# --- across processes --------------------------------------------------------------------------


def test_two_processes_sharing_a_cache_never_pay_more_than_the_cap(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(OPENAI_PATH, Reply(body=Rendezvous(2)))
    children = [start_child(server, tmp_path / "cache", "shared", 12) for _ in range(2)]
    results = [finish(child) for child in children]

    paid = server.calls() * CALL_COST  # what the server was really asked for
    assert paid <= CAP
    with CompletionCache(tmp_path / "cache") as cache:
        totals = cache.ledger().totals()
    assert totals.spent_usd == paid == sum(r["spent"] for r in results)
    assert totals.calls == server.calls() == sum(r["calls"] for r in results)
    assert (totals.reserved_usd, totals.reservations) == (0.0, 0)  # every hold settled
    assert all(r["refused"] for r in results)
    # Both processes were in flight at once (the rendezvous), and both got calls through.
    assert all(r["calls"] >= 1 for r in results)


def test_without_the_shared_ledger_the_same_two_processes_overspend(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    # The behaviour the ledger fixes: each process alone keeps within the cap (9 calls, 9/64),
    # together they pay 18/64 = $0.28 under a $0.25 cap.
    server.always(OPENAI_PATH, Reply(body=Rendezvous(2)))
    children = [start_child(server, tmp_path / "cache", "local", 12) for _ in range(2)]
    results = [finish(child) for child in children]
    assert [r["calls"] for r in results] == [9, 9]
    assert server.calls() * CALL_COST == 18 / 64 > CAP


def test_sequential_invocations_are_bounded_cumulatively(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    # Each invocation wants 3 calls. The ninth call still fits (8/64 spent + 8/64 = the cap);
    # after it, 9/64 + 8/64 > 16/64: the fourth invocation may not start a single call.
    server.always(OPENAI_PATH, reply())
    cache_dir = tmp_path / "cache"
    spent = [invocation(server, cache_dir, 3).spent_usd for _ in range(4)]
    assert spent == [3 / 64, 3 / 64, 3 / 64, 0.0]
    assert server.calls() == 9
    with CompletionCache(cache_dir) as cache:
        totals = cache.ledger().totals()
        assert (totals.spent_usd, totals.calls) == (9 / 64, 9)
        assert (totals.input_tokens, totals.output_tokens) == (90, 9000)
        # A reset starts the cap again from $0.
        assert cache.ledger().reset() == totals
        assert cache.ledger().totals().spent_usd == 0.0
    assert invocation(server, cache_dir, 3).spent_usd == 3 / 64
    assert server.calls() == 12


def test_the_refusal_names_the_ledger(server: FakeLLMServer, tmp_path: Path) -> None:
    server.always(OPENAI_PATH, reply())
    invocation(server, tmp_path, 12)
    cache = CompletionCache(tmp_path)
    hub = ProviderHub(settings=SETTINGS, cache=cache, budget=Budget(cap_usd=CAP), prices=PRICES)
    with pytest.raises(BudgetExceeded) as info:
        asyncio.run(hub.complete(ask(server, "x")))
    cache.close()
    assert info.value.ledger == "default"
    assert str(info.value) == (
        "budget cap $0.2500 would be passed: $0.1406 spent or reserved in spend ledger 'default' "
        "(every run sharing the cache counts) + up to $0.1250 for the next call to "
        f"{model(server)}"
    )


def test_ledgers_of_other_names_are_separate(server: FakeLLMServer, tmp_path: Path) -> None:
    server.always(OPENAI_PATH, reply())
    assert invocation(server, tmp_path, 12, name="nightly").spent_usd == 9 / 64
    # "default" has spent nothing: a budget named after it starts from $0.
    assert invocation(server, tmp_path, 1).spent_usd == 1 / 64
    # shared=False: this process only, the cache's ledgers are left alone.
    local = invocation(server, tmp_path, 12, name="nightly", shared=False)
    assert local.spent_usd == 9 / 64 and local.ledger is None
    with CompletionCache(tmp_path) as cache:
        assert [(t.name, t.spent_usd) for t in cache.ledgers()] == [
            ("default", 1 / 64),
            ("nightly", 9 / 64),
        ]


# --- holds left behind -------------------------------------------------------------------------


def test_the_hold_of_a_killed_process_stops_counting(server: FakeLLMServer, tmp_path: Path) -> None:
    server.always(OPENAI_PATH, Reply(delay_s=3600))  # the child's call never returns
    child = start_child(server, tmp_path, "shared", 1)
    deadline = time.monotonic() + GUARD_S
    while server.calls() == 0:
        assert time.monotonic() < deadline, "the child never called"
        assert child.poll() is None, child.communicate()[1]
        time.sleep(0.02)
    with CompletionCache(tmp_path) as cache:
        # The child is alive and in flight: its worst case is held, visible from here.
        held = cache.ledger().totals()
        assert (held.reservations, held.reserved_usd) == (1, WORST_CASE)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=GUARD_S)
        assert cache.ledger().totals().reservations == 0  # its process is gone
        # A budget of exactly one worst case can start: the dead hold no longer counts…
        budget = Budget(cap_usd=WORST_CASE)
        budget.bind(cache)
        budget.settle(budget.reserve("m", WORST_CASE), 0.0)
        # …and it was deleted, not only skipped.
        rows = sqlite3.connect(cache.path).execute("SELECT COUNT(*) FROM spend_reservations")
        assert rows.fetchone() == (0,)


def hold(cache: CompletionCache, *, host: str, pid: int, process: str, expires_in: float) -> None:
    """A hold row as another process (or machine) would have written it."""
    now = time.time()
    with sqlite3.connect(cache.path) as conn:
        conn.execute(
            "INSERT INTO spend_reservations (ledger, model, amount_usd, host, pid, process,"
            " created_at, expires_at) VALUES ('default', 'm', 0.2, ?, ?, ?, ?, ?)",
            (host, pid, process, now, now + expires_in),
        )


def test_holds_are_judged_by_process_and_age(tmp_path: Path) -> None:
    cache = CompletionCache(tmp_path)
    ledger = cache.ledger()
    # Another machine's live hold counts (its process cannot be asked)…
    hold(cache, host="elsewhere.invalid", pid=1, process="x", expires_in=600)
    with pytest.raises(BudgetExceeded):
        Budget(cap_usd=0.25, ledger=ledger).reserve("m", 0.1)
    assert ledger.totals().reserved_usd == 0.2
    ledger.cache._conn.execute("DELETE FROM spend_reservations")
    # …but not once it is older than its call could last; nor a hold under this process's pid
    # written by an earlier process that had the same pid.
    hold(cache, host="elsewhere.invalid", pid=1, process="x", expires_in=-1)
    hold(cache, host=socket.gethostname(), pid=os.getpid(), process="earlier", expires_in=600)
    assert ledger.totals().reservations == 0
    budget = Budget(cap_usd=0.25, ledger=ledger)
    budget.reserve("m", 0.25)
    assert ledger.totals() == LedgerTotals("default", 0.0, 0, 0, 0, 0.25, 1, None)
    cache.close()


def test_a_provider_holds_no_longer_than_its_longest_call(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    # Held while the call is in flight; how long it may count is the call's own bound:
    # 2 · attempts · (timeout + the longest wait between attempts) + 600 s.
    seen: list[tuple[float, float]] = []

    def answer(body: Any) -> dict[str, Any]:
        with sqlite3.connect(tmp_path / "completions.sqlite3") as conn:
            seen.extend(conn.execute("SELECT created_at, expires_at FROM spend_reservations"))
        return openai_body("ok", prompt_tokens=1, completion_tokens=1)

    server.always(OPENAI_PATH, Reply(body=answer))
    settings = CallSettings(
        timeout_s=10.0, max_attempts=3, backoff_max_s=5.0, max_retry_after_s=20.0
    )
    cache = CompletionCache(tmp_path)
    hub = ProviderHub(settings=settings, cache=cache, budget=Budget(cap_usd=1.0), prices=PRICES)
    asyncio.run(hub.complete(ask(server, "x", 10)))
    cache.close()
    assert len(seen) == 1
    created, expires = seen[0]
    assert expires - created == pytest.approx(2 * 3 * (10.0 + 20.0) + 600.0)


# --- the API the CLI uses ----------------------------------------------------------------------


def test_totals_and_reset_of_an_unused_ledger(tmp_path: Path) -> None:
    with CompletionCache(tmp_path) as cache:
        empty = LedgerTotals("fresh", 0.0, 0, 0, 0, 0.0, 0, None)
        assert cache.ledger("fresh").totals() == empty
        assert cache.ledger("fresh").reset() == empty
        assert cache.ledgers() == []
        assert repr(cache.ledger("fresh")) == f"SpendLedger('fresh', {str(cache.path)!r})"


@pytest.mark.parametrize("name", ["", "-x", "a b", "x" * 65, "caf\u00e9", "a/b"])
def test_a_ledger_name_is_checked(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match="cannot name a spend ledger"):
        Budget(cap_usd=1.0, name=name)
    with CompletionCache(tmp_path) as cache, pytest.raises(InputError):
        SpendLedger(cache, name)


def test_a_budget_without_a_cache_stays_in_process(server: FakeLLMServer) -> None:
    server.always(OPENAI_PATH, reply())
    budget = Budget(cap_usd=CAP)
    hub = ProviderHub(settings=SETTINGS, budget=budget, prices=PRICES)

    async def go() -> int:
        for i in range(12):
            try:
                await hub.complete(ask(server, f"{i}"))
            except BudgetExceeded:
                return i
        return 12

    assert asyncio.run(go()) == 9
    assert budget.ledger is None and budget.spent_usd == 9 / 64
    assert budget.remaining_usd == CAP - 9 / 64


def test_remaining_usd_reads_the_shared_ledger(server: FakeLLMServer, tmp_path: Path) -> None:
    server.always(OPENAI_PATH, reply())
    invocation(server, tmp_path, 2)
    with CompletionCache(tmp_path) as cache:
        budget = Budget(cap_usd=CAP)
        budget.bind(cache)
        assert budget.spent_usd == 0.0  # this budget's own calls: none yet
        assert budget.remaining_usd == CAP - 2 / 64  # the ledger's: two calls
        totals = budget.ledger_totals()
        assert totals is not None and totals.calls == 2
