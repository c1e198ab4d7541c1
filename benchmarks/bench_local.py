"""A real local model behind the provider layer: where does the time of an extraction go?

Serves a local GGUF model (``local:NAME``: llama-server when ``CHATLEDGER_LLAMA_SERVER`` is set,
else node-llama-cpp from ``make local-runtime``) and extracts the first ``--chunks`` chunks of
the bundled corpus through ``chatledger.extraction`` exactly as ``chatledger extract`` does
(strict schema, example prompt, temperature 0, seed 0, repeat penalty 1.1), with a fresh call
cache each repeat so every call is live. The server is started and warmed by one extraction
before the clock starts, so start-up is reported apart.

Figures per repeat (the median of ``--repeats`` is reported):
- output tokens/s = Σ output tokens / Σ call latency (as the client sees it: HTTP included);
- prompt + output tokens/s, likewise;
- seconds per chunk = wall time / chunks;
- fraction in the model = Σ call latency / wall time; the rest (prompt building, validation,
  cache, accounting, writing the lines) is ChatLedger's, reported per chunk in milliseconds.

``--constraints both`` alternates repeats with and without the schema constraints local models
get by default (bounded lists and texts, the chunk's own message ids: docs/local-models.md) and
prints the ratio of their median output tokens/s: what the larger grammar costs.

Run: python benchmarks/bench_local.py [--model smollm2-135m] [--chunks 4] [--repeats 3]
        [--max-tokens 256] [--threads 2] [--constraints on|off|both]
Writes benchmarks/results/bench_local.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chatledger.corpus import read_chunks
from chatledger.demo import write_bundled_corpus
from chatledger.extraction import extract_chunks, schema_constraints_for
from chatledger.providers import (
    LOCAL_CALL_SETTINGS,
    CompletionCache,
    ProviderHub,
    ServerOptions,
    run_sync,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "bench_local.json"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def one_repeat(
    model: str, chunks: list[Any], warm: list[Any], args: argparse.Namespace, constrained: bool
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cache = CompletionCache(folder / "cache")
        hub = ProviderHub(
            cache=cache,
            local_settings=LOCAL_CALL_SETTINGS,
            local_server=ServerOptions(threads=args.threads),
        )
        common: dict[str, Any] = {
            "hub": hub,
            "prompt_style": "example",
            "max_tokens": args.max_tokens,
            "temperature": 0.0,
            "options": {"seed": 0, "repeat_penalty": 1.1},
            "constraints": schema_constraints_for(
                model, True, bounded=constrained, chunk_ids=constrained
            ),
        }
        try:
            started = time.perf_counter()
            extract_chunks(model, warm, folder / "warm.jsonl", **common).raise_if_incomplete()
            start_s = time.perf_counter() - started
            started = time.perf_counter()
            summary = extract_chunks(model, chunks, folder / "out.jsonl", **common)
            wall = time.perf_counter() - started
            summary.raise_if_incomplete()
        finally:
            run_sync(hub.aclose())
            cache.close()
        lines = _lines(folder / "out.jsonl")
    latency = sum(float(line["usage"]["latency_s"]) for line in lines)
    out_tokens = sum(int(line["usage"]["output_tokens"]) for line in lines)
    in_tokens = sum(int(line["usage"]["input_tokens"]) for line in lines)
    return {
        "start_and_first_call_s": start_s,
        "wall_s": wall,
        "model_s": latency,
        "output_tokens": float(out_tokens),
        "input_tokens": float(in_tokens),
        "output_tokens_per_s": out_tokens / latency,
        "all_tokens_per_s": (in_tokens + out_tokens) / latency,
        "s_per_chunk": wall / len(chunks),
        "fraction_in_model": latency / wall,
        "chatledger_ms_per_chunk": 1000.0 * (wall - latency) / len(chunks),
        "invalid": float(sum(1 for line in lines if line["extraction"] is None)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--chunks", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--constraints", choices=["on", "off", "both"], default="on")
    args = parser.parse_args()
    if not os.environ.get("CHATLEDGER_LLAMA_SERVER"):
        # The runtime `make local-runtime` installs, as the test suite uses it.
        os.environ.setdefault("CHATLEDGER_NODE_LLAMA_CPP", str(ROOT / "tools" / "local-runtime"))
    with tempfile.TemporaryDirectory() as tmp:
        chunks_path, _ = write_bundled_corpus(Path(tmp))
        every = read_chunks(chunks_path)
    warm, chunks = every[-1:], every[: args.chunks]
    model = f"local:{args.model}"
    runs = []
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.constraints]
    for i in range(args.repeats):
        for constrained in modes:
            result = one_repeat(model, chunks, warm, args, constrained)
            result["constrained"] = float(constrained)
            runs.append(result)
            print(
                f"repeat {i + 1} ({'constrained' if constrained else 'unconstrained'}): "
                f"{result['s_per_chunk']:.1f} s/chunk, "
                f"{result['output_tokens_per_s']:.1f} output tokens/s, "
                f"{result['fraction_in_model']:.4f} of the time in the model",
                file=sys.stderr,
            )
    median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    if args.constraints == "both":

        def speed(flag: float) -> float:
            return statistics.median(
                r["output_tokens_per_s"] for r in runs if r["constrained"] == flag
            )

        median["constrained_over_unconstrained_tokens_per_s"] = speed(1.0) / speed(0.0)
    runtime = "llama-server" if os.environ.get("CHATLEDGER_LLAMA_SERVER") else "node-llama-cpp"
    report = {
        "benchmark": "bench_local",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "model": model,
        "runtime": runtime,
        "threads": args.threads,
        "chunks": args.chunks,
        "max_tokens": args.max_tokens,
        "repeats": args.repeats,
        "constraints": args.constraints,
        "median": median,
        "runs": runs,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(median, indent=2))


if __name__ == "__main__":
    main()
