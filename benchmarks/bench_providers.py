"""Provider-layer throughput: does ``concurrency`` turn into calls in flight?

Starts the scripted LLM server (tests/fakes/llm_server.py) in its own process on 127.0.0.1,
answering every call after a fixed latency (200 ms), and sends calls through a ProviderHub (an
OpenAI-compatible model id, so the openai SDK over real HTTP) at concurrency 1, 8 and 32. Each
call is a distinct prompt (no cache). Throughput is reported as a fraction of the ideal
``concurrency / latency`` calls per second: fraction = calls · latency / (elapsed ·
concurrency). The median of the repeats is kept. Writes benchmarks/results/bench_providers.json.

A second series ("layer only") replaces the HTTP call by ``asyncio.sleep(latency)`` inside the
same provider class, so it measures chatledger's own machinery (cache key, limits, retries,
accounting) apart from the SDK and the HTTP stack.

Run: python benchmarks/bench_providers.py [--repeats 3] [--latency 0.2]
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
import time
from datetime import UTC, datetime
from pathlib import Path

from chatledger.providers import (
    CallSettings,
    CompletionRequest,
    OpenAICompatibleProvider,
    ProviderHub,
    RawReply,
    WireCall,
)

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "fakes" / "llm_server.py"
# Calls per run at each concurrency: 16 or more full waves of calls, so the figure is the
# steady-state throughput rather than the ramp of the first and last waves (at 4 waves, 128
# calls at 32, the ramp alone costs about 0.1 of the ideal); 64 calls at 1 keep it under 15 s.
CALLS = {1: 64, 8: 256, 32: 512}


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--delay", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        raise RuntimeError(f"the fake server did not start: {url!r}")
    return process, url


async def measure(url: str, concurrency: int, calls: int, repeat: int) -> float:
    """Seconds for ``calls`` distinct calls at ``concurrency`` (after a warm-up wave)."""
    settings = CallSettings(concurrency=concurrency, timeout_s=30.0)
    model = f"openai-compatible:{url}/v1:bench"
    async with ProviderHub(settings=settings) as hub:
        # Warm-up, untimed: the first call builds the SDK client, and one wave at full
        # concurrency opens the connections the pool then keeps alive (and the server's threads).
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
        started = time.perf_counter()
        await asyncio.gather(*(hub.complete(r) for r in requests))
        return time.perf_counter() - started


class _SleepingProvider(OpenAICompatibleProvider):
    """The real provider class with the HTTP call replaced by a fixed wait."""

    latency_s = 0.2

    async def _send(self, call: WireCall) -> RawReply:
        await asyncio.sleep(self.latency_s)
        return RawReply(text="{}", input_tokens=10, output_tokens=5)


async def measure_layer(latency: float, concurrency: int, calls: int, repeat: int) -> float:
    base_url = "http://127.0.0.1:9/v1"  # never contacted
    provider = _SleepingProvider(
        base_url=base_url, settings=CallSettings(concurrency=concurrency, timeout_s=30.0)
    )
    provider.latency_s = latency
    model = f"openai-compatible:{base_url}:bench"
    requests = [
        CompletionRequest.from_prompt(model, f"call {repeat}-{i}", max_tokens=16)
        for i in range(calls)
    ]
    started = time.perf_counter()
    await asyncio.gather(*(provider.complete(r) for r in requests))
    return time.perf_counter() - started


def summarise(
    elapsed: list[float], calls: int, concurrency: int, latency: float
) -> dict[str, float | int | list[float]]:
    median = statistics.median(elapsed)
    return {
        "calls": calls,
        "elapsed_s": elapsed,
        "median_elapsed_s": median,
        "calls_per_s": calls / median,
        "ideal_calls_per_s": concurrency / latency,
        "fraction_of_ideal": calls * latency / (median * concurrency),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    process, url = start_server(args.latency)
    results: dict[str, dict[str, dict[str, float | int | list[float]]]] = {
        "sdk_over_http": {},
        "layer_only": {},
    }
    try:
        for concurrency, calls in CALLS.items():
            for series in ("sdk_over_http", "layer_only"):
                elapsed = [
                    asyncio.run(
                        measure(url, concurrency, calls, r)
                        if series == "sdk_over_http"
                        else measure_layer(args.latency, concurrency, calls, r)
                    )
                    for r in range(args.repeats)
                ]
                entry = summarise(elapsed, calls, concurrency, args.latency)
                results[series][str(concurrency)] = entry
                print(
                    f"{series:>13} concurrency {concurrency:>2}: {calls} calls in "
                    f"{entry['median_elapsed_s']:6.3f} s (median of {args.repeats}) = "
                    f"{entry['calls_per_s']:6.1f}/s, ideal {entry['ideal_calls_per_s']:6.1f}/s "
                    f"→ {entry['fraction_of_ideal']:.3f} of ideal"
                )
    finally:
        process.terminate()
        process.wait(timeout=10)
    out = Path(__file__).parent / "results" / "bench_providers.json"
    out.parent.mkdir(exist_ok=True)
    payload = {
        "benchmark": "bench_providers",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": {"latency_s": args.latency, "repeats": args.repeats, "calls": CALLS},
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "results": results,
        "target": "fraction_of_ideal >= 0.9 at concurrency 32",
    }
    out.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
