"""Model calls at scale: does ``concurrency`` turn into calls in flight, up to 128 at once?

A fake OpenAI-compatible server runs in its own process on 127.0.0.1 (an asyncio server written
for this benchmark, ``--serve``: it answers every request after a fixed latency, 200 ms, from
replies built once, so its own CPU per call is a small fraction of the client's and it is not
the bottleneck; its CPU time is measured and reported beside the client's). Three series, each
at concurrency 1, 8, 32 and 128, every call a distinct prompt (no cache hit):

- ``provider_http``: ``ProviderHub.complete`` with an OpenAI-compatible model id — the provider
  layer over real HTTP (the reply is ``{}``);
- ``extraction_http``: ``aextract_chunks`` as ``chatledger extract`` runs it — a hub with the
  call cache and a budget in its spend ledger (SQLite in a fresh folder per run), the plain
  prompt style with the v3 schema, the reply a 2.5 kB extraction that is validated against the
  schema and as ``ExtractionV3`` and written as a line;
- ``layer_only``: the provider class with the HTTP call replaced by ``asyncio.sleep(latency)``,
  so chatledger's own machinery (cache key, limits, retries, accounting) apart from HTTP.

Throughput is reported as a fraction of the ideal ``concurrency / latency`` calls per second:
fraction = calls · latency / (elapsed · concurrency), after an untimed warm-up wave on the same
hub (which builds the client and opens the connections). Each run is 16 or more full waves of
calls, so the figure is the steady state rather than the ramp of the first and last waves; the
median of the repeats is kept. CPU per call is the client process's CPU time (user + system)
over the timed calls divided by their number; the server's is read from /proc.

Run: python benchmarks/bench_providers.py [--repeats 3] [--latency 0.2] [--concurrency 32 128]
Writes benchmarks/results/bench_providers.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_providers.json"
# Calls per run at each concurrency: 16 or more full waves of calls, so the figure is the
# steady state rather than the ramp of the first and last waves (at 4 waves, 128 calls at 32,
# the ramp alone costs about 0.1 of the ideal); 32 calls at 1 keep that run under 7 s.
CALLS = {1: 32, 8: 256, 32: 512, 128: 2048}
SERIES = ("provider_http", "extraction_http", "layer_only")
PROVIDER_PATH = "/v1/chat/completions"
EXTRACTION_PATH = "/extract/v1/chat/completions"
MESSAGES_PER_CHUNK = 12


# --- the fake server (its own process) ------------------------------------------------------


def _chat_completion(content: str, prompt_tokens: int, completion_tokens: int) -> bytes:
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "bench",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    payload = json.dumps(body).encode("utf-8")
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        f"content-length: {len(payload)}\r\n\r\n"
    ).encode("ascii")
    return head + payload


def _replies() -> dict[bytes, bytes]:
    from chatledger.extraction import bundled_example

    _, extraction = bundled_example()
    answer = json.dumps(extraction.model_dump(mode="json", exclude_defaults=True))
    return {
        PROVIDER_PATH.encode(): _chat_completion("{}", 10, 5),
        EXTRACTION_PATH.encode(): _chat_completion(answer, 900, 700),
    }


class _ServerProtocol(asyncio.Protocol):
    """HTTP/1.1 with keep-alive: reads a request (head and content-length body), answers it
    ``delay`` seconds later with the reply of its path."""

    def __init__(self, replies: dict[bytes, bytes], delay: float) -> None:
        self.replies = replies
        self.delay = delay
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            path = head.split(b" ", 2)[1]
            reply = self.replies.get(path, b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            asyncio.get_running_loop().call_later(self.delay, self._send, reply)

    def _send(self, reply: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def _serve(delay: float) -> None:
    replies = _replies()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: _ServerProtocol(replies, delay), "127.0.0.1", 0, backlog=4096
    )
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}", flush=True)
    await server.serve_forever()


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        raise RuntimeError(f"the fake server did not start: {url!r}")
    return process, url


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the client series -----------------------------------------------------------------------


class Measured:
    def __init__(self, elapsed_s: float, cpu_s: float) -> None:
        self.elapsed_s = elapsed_s
        self.cpu_s = cpu_s
        self.sqlite: SqliteCount | None = None


class SqliteCount:
    """Statements and commits on one SQLite connection (its trace callback): a commit is a
    COMMIT, or a write outside BEGIN … COMMIT (an autocommit)."""

    def __init__(self) -> None:
        self.statements = 0
        self.commits = 0
        self._open = False

    def __call__(self, statement: str) -> None:
        self.statements += 1
        verb = statement.lstrip().split(" ", 1)[0].upper()
        if verb == "BEGIN":
            self._open = True
        elif verb in ("COMMIT", "ROLLBACK"):
            self._open = False
            self.commits += verb == "COMMIT"
        elif verb in ("INSERT", "UPDATE", "DELETE", "REPLACE") and not self._open:
            self.commits += 1


async def _timed(work: Any) -> Measured:
    cpu = time.process_time()
    started = time.perf_counter()
    await work
    return Measured(time.perf_counter() - started, time.process_time() - cpu)


async def measure_provider(url: str, concurrency: int, calls: int, repeat: int) -> Measured:
    from chatledger.providers import CallSettings, CompletionRequest, ProviderHub

    settings = CallSettings(concurrency=concurrency, timeout_s=30.0)
    model = f"openai-compatible:{url}/v1:bench"
    async with ProviderHub(settings=settings) as hub:
        # Warm-up, untimed: the first call builds the client, and one wave at full concurrency
        # opens the connections the pool then keeps alive.
        await asyncio.gather(
            *(
                hub.complete(CompletionRequest.from_prompt(model, f"warm-up {i}", max_tokens=16))
                for i in range(concurrency)
            )
        )
        requests = [
            CompletionRequest.from_prompt(model, f"call {repeat}-{i}", max_tokens=16)
            for i in range(calls)
        ]
        return await _timed(asyncio.gather(*(hub.complete(r) for r in requests)))


def bench_chunks(count: int, prefix: str) -> list[Any]:
    """``count`` distinct chunks of 12 messages, built from the bundled example's messages."""
    from chatledger.core import Chunk, Message
    from chatledger.extraction import bundled_example

    example, _ = bundled_example()
    chunks = []
    for i in range(count):
        messages = [
            Message(
                id=f"{prefix}{i}-m{j}",
                speaker=source.speaker,
                timestamp=source.timestamp,
                text=source.text,
            )
            for j, source in enumerate(
                example.messages[k % len(example.messages)] for k in range(MESSAGES_PER_CHUNK)
            )
        ]
        chunks.append(
            Chunk(
                chunk_id=f"{prefix}{i}",
                conversation_id=example.conversation_id,
                title=example.title,
                participants=example.participants,
                messages=messages,
            )
        )
    return chunks


async def measure_extraction(url: str, concurrency: int, calls: int, repeat: int) -> Measured:
    from chatledger.extraction import aextract_chunks
    from chatledger.providers import Budget, CallSettings, CompletionCache, ProviderHub

    model = f"openai-compatible:{url}/extract/v1:bench"
    with tempfile.TemporaryDirectory(prefix="bench-providers-") as folder:
        work = Path(folder)
        cache = CompletionCache(work / "cache")
        hub = ProviderHub(
            settings=CallSettings(concurrency=concurrency, timeout_s=30.0),
            cache=cache,
            budget=Budget(cap_usd=None),
        )
        warm = bench_chunks(concurrency, f"warm-{repeat}-")
        chunks = bench_chunks(calls, f"c-{repeat}-")
        try:
            async with hub:
                summary = await aextract_chunks(model, warm, work / "warm.jsonl", hub=hub)
                assert summary.complete and summary.progress.invalid == 0, summary.to_dict()
                progress: list[Any] = []
                count = SqliteCount()
                cache._conn.set_trace_callback(count)
                measured = await _timed(
                    aextract_chunks(
                        model, chunks, work / "out.jsonl", hub=hub, on_progress=progress.append
                    )
                )
        finally:
            cache._conn.set_trace_callback(None)
            cache.close()
        measured.sqlite = count
        done = progress[-1]
        assert done.written == calls and done.invalid == 0 and done.live_calls == calls, done
        return measured


async def measure_layer(latency: float, concurrency: int, calls: int, repeat: int) -> Measured:
    from chatledger.providers import (
        CallSettings,
        CompletionRequest,
        OpenAICompatibleProvider,
        RawReply,
        WireCall,
    )

    class SleepingProvider(OpenAICompatibleProvider):
        """The real provider class with the HTTP call replaced by a fixed wait."""

        async def _send(self, call: WireCall) -> RawReply:
            await asyncio.sleep(latency)
            return RawReply(text="{}", input_tokens=10, output_tokens=5)

    base_url = "http://127.0.0.1:9/v1"  # never contacted
    provider = SleepingProvider(
        base_url=base_url, settings=CallSettings(concurrency=concurrency, timeout_s=30.0)
    )
    model = f"openai-compatible:{base_url}:bench"
    requests = [
        CompletionRequest.from_prompt(model, f"call {repeat}-{i}", max_tokens=16)
        for i in range(calls)
    ]
    return await _timed(asyncio.gather(*(provider.complete(r) for r in requests)))


def summarise(
    runs: list[Measured],
    server_cpu: list[float],
    calls: int,
    concurrency: int,
    latency: float,
) -> dict[str, Any]:
    elapsed = [r.elapsed_s for r in runs]
    median = statistics.median(elapsed)
    entry: dict[str, Any] = {
        "calls": calls,
        "elapsed_s": [round(e, 4) for e in elapsed],
        "median_elapsed_s": round(median, 4),
        "calls_per_s": round(calls / median, 2),
        "ideal_calls_per_s": concurrency / latency,
        "fraction_of_ideal": round(calls * latency / (median * concurrency), 4),
        "client_cpu_ms_per_call": round(statistics.median(r.cpu_s for r in runs) / calls * 1e3, 3),
    }
    if server_cpu:
        entry["server_cpu_ms_per_call"] = round(statistics.median(server_cpu) / calls * 1e3, 3)
    counted = [r.sqlite for r in runs if r.sqlite is not None]
    if counted:
        entry["sqlite_statements_per_call"] = round(counted[-1].statements / calls, 2)
        entry["sqlite_commits_per_call"] = round(counted[-1].commits / calls, 2)
    return entry


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="*", default=sorted(CALLS))
    parser.add_argument("--series", nargs="*", default=list(SERIES), choices=SERIES)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.latency))
        return
    process, url = start_server(args.latency)
    results: dict[str, dict[str, Any]] = {series: {} for series in args.series}
    try:
        for concurrency in args.concurrency:
            calls = CALLS.get(concurrency, 16 * concurrency)
            for series in args.series:
                runs: list[Measured] = []
                server_cpu: list[float] = []
                for r in range(args.repeats):
                    before = process_cpu_s(process.pid)
                    if series == "provider_http":
                        run = asyncio.run(measure_provider(url, concurrency, calls, r))
                    elif series == "extraction_http":
                        run = asyncio.run(measure_extraction(url, concurrency, calls, r))
                    else:
                        run = asyncio.run(measure_layer(args.latency, concurrency, calls, r))
                    runs.append(run)
                    if series != "layer_only":
                        # Warm-up included: an upper bound of the server's cost per call.
                        server_cpu.append(process_cpu_s(process.pid) - before)
                entry = summarise(runs, server_cpu, calls, concurrency, args.latency)
                results[series][str(concurrency)] = entry
                print(
                    f"{series:>15} concurrency {concurrency:>3}: {calls} calls in "
                    f"{entry['median_elapsed_s']:6.3f} s = {entry['calls_per_s']:6.1f}/s, "
                    f"ideal {entry['ideal_calls_per_s']:5.0f}/s → "
                    f"{entry['fraction_of_ideal']:.3f} of ideal; client CPU "
                    f"{entry['client_cpu_ms_per_call']:.3f} ms/call"
                    + (
                        f", server {entry['server_cpu_ms_per_call']:.3f} ms/call"
                        if "server_cpu_ms_per_call" in entry
                        else ""
                    )
                    + (
                        f"; SQLite {entry['sqlite_statements_per_call']:.1f} statements, "
                        f"{entry['sqlite_commits_per_call']:.1f} commits a call"
                        if "sqlite_statements_per_call" in entry
                        else ""
                    ),
                    flush=True,
                )
    finally:
        process.terminate()
        process.wait(timeout=10)
    payload = {
        "benchmark": "bench_providers",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": {
            "latency_s": args.latency,
            "repeats": args.repeats,
            "calls": {str(c): CALLS.get(c, 16 * c) for c in args.concurrency},
            "messages_per_chunk": MESSAGES_PER_CHUNK,
        },
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "results": results,
        "target": "fraction_of_ideal >= 0.95 at concurrency 32 and >= 0.9 at 128, "
        "provider_http and extraction_http",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
