"""offline:rules on long input: time per message (per MB) as chunks grow; linear ⇒ ratio ≈ 1.

Four series. Every extraction runs in a fresh process (so peak RSS is that size's own and no
repeat is answered from the previous one's VADER cache), after a warm-up on a small chunk; the
median of ``--repeats`` rounds, each round running every size once (a machine whose load
changes during the benchmark then slows all sizes alike):

* ``messages`` — chunks of 1,000 / 2,000 / 5,000 / 10,000 messages (bundled-corpus messages,
  three speakers, each message made unique by its number);
* ``busy_messages`` — the same sizes, every message a task, a request, a decision, a question,
  a greeting or a mood swing (eight templates in turn): many items, owners and short phases,
  the worst case for the rules that relate items to later messages;
* ``one_message`` — a single message of 0.5 / 1 / 2 / 5 MB (bundled-corpus messages joined);
* ``run_on`` — a single message of 0.25 / 0.5 / 1 / 2 MB with no sentence end at all (every
  ``.!?`` and line break made a space): one sentence, the worst case for sentence-level rules.

For each series it prints the time per unit (ms per message, s per MB) and the ratio of the
largest size's per-unit time to the smallest's — the baseline measured in the same run; a
linear extractor stays near 1. A size that does not finish within ``--timeout`` seconds is
reported as such, and the larger sizes of its series are not run. Run:
    python benchmarks/bench_rules.py [--repeats 3] [--timeout 600] [--series NAME ...]
Writes benchmarks/results/bench_rules.json.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

SERIES: dict[str, tuple[str, list[float]]] = {
    "messages": ("message", [1_000, 2_000, 5_000, 10_000]),
    "busy_messages": ("message", [1_000, 2_000, 5_000, 10_000]),
    "one_message": ("MB", [0.5, 1, 2, 5]),
    "run_on": ("MB", [0.25, 0.5, 1, 2]),
}
CORPUS = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "corpus" / "parts"
SPEAKERS = ("Ana Ruiz", "Theo Pike", "Mei Chen")
BUSY = (
    "I'll send the report {i} tomorrow.",
    "Can you book the room {i} for Friday?",
    "Hi there, how is it going?",
    "This is terrible, I hate it.",
    "Let's go with plan {i}.",
    "Great, thanks so much!",
    "What do you need for item {i}?",
    "I need two of the {i} boxes, deal?",
)


def corpus_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(CORPUS.glob("*_chunks.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.extend(m["text"] for m in json.loads(line)["messages"])
    return texts


def build_chunk(series: str, size: float) -> dict[str, Any]:
    texts = corpus_texts()
    if series in ("messages", "busy_messages"):

        def text(i: int) -> str:
            if series == "busy_messages":
                return BUSY[i % len(BUSY)].format(i=i)
            return f"{texts[i % len(texts)]} (#{i})"

        messages = [
            {"id": f"m{i}", "speaker": SPEAKERS[i % 3], "text": text(i)} for i in range(int(size))
        ]
    else:
        target = int(size * 1_000_000)
        parts: list[str] = []
        length = 0
        while length < target:
            part = f"{texts[len(parts) % len(texts)]} (#{len(parts)})"
            parts.append(part)
            length += len(part) + 1
        text = " ".join(parts)[:target]
        if series == "run_on":
            text = re.sub(r"[.!?\n]", " ", text)
        messages = [{"id": "m0", "speaker": SPEAKERS[0], "text": text}]
    return {"chunk_id": f"{series}-{size}", "participants": list(SPEAKERS), "messages": messages}


def child(series: str, size: float) -> None:
    """One extraction of one size, in this process: seconds and peak RSS, as one JSON line."""
    import resource
    import time

    from chatledger.core import Chunk
    from chatledger.extractors import RuleBasedExtractor

    extractor = RuleBasedExtractor()
    extractor.extract(Chunk.model_validate(build_chunk("messages", 20)))  # warm-up
    chunk = Chunk.model_validate(build_chunk(series, size))
    started = time.perf_counter()
    extraction = extractor.extract(chunk)
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    items = sum(len(v) for v in extraction.model_dump().values() if isinstance(v, list))
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "items": items}))


def once(series: str, size: float, timeout: float) -> dict[str, Any] | None:
    """One child run; None when it does not finish within ``timeout`` seconds."""
    argv = [sys.executable, __file__, "--child", series, str(size)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def measure_series(
    series: str, repeats: int, timeout: float, scale: float = 1.0
) -> list[dict[str, Any]]:
    """Every size of a series (times ``scale``), ``repeats`` rounds; each round runs every size
    once, so a load that changes while the benchmark runs weighs on all sizes alike. A size
    that does not finish is not tried again, nor are the sizes above it."""
    unit, full = SERIES[series]
    sizes = [size * scale for size in full]
    runs: dict[float, list[dict[str, Any]]] = {size: [] for size in sizes}
    failed: float | None = None
    for _ in range(repeats):
        for size in sizes:
            if failed is not None and size >= failed:
                break
            result = once(series, size, timeout)
            if result is None:
                failed = size
                break
            runs[size].append(result)
    rows: list[dict[str, Any]] = []
    for size in sizes:
        if failed is not None and size >= failed:
            row: dict[str, Any] = {"size": size, "finished": False, "timeout_s": timeout}
            if size > failed:
                row["skipped"] = True
            rows.append(row)
            continue
        seconds = statistics.median(r["seconds"] for r in runs[size])
        per = seconds / size
        rows.append(
            {
                "size": size,
                "finished": True,
                "seconds": seconds,
                "all_seconds": [r["seconds"] for r in runs[size]],
                "peak_mb": max(r["peak_mb"] for r in runs[size]),
                "items": runs[size][0]["items"],
                "per_unit_s": per,
                "per_unit": f"{per * 1000:.3f} ms/message"
                if unit == "message"
                else f"{per:.2f} s/MB",
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per size")
    parser.add_argument("--series", choices=sorted(SERIES), action="append")
    parser.add_argument("--child", nargs=2, metavar=("SERIES", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--scale", type=float, default=1.0, help="every size times this (the docs test: 0.01)"
    )
    args = parser.parse_args()
    if args.child:
        child(args.child[0], float(args.child[1]))
        return
    payload: dict[str, Any] = {"repeats": args.repeats, "series": {}}
    for series in args.series or list(SERIES):
        unit = SERIES[series][0]
        rows = measure_series(series, args.repeats, args.timeout, args.scale)
        for row in rows:
            if row["finished"]:
                shown = (
                    f"{row['seconds']:8.2f} s  {row['per_unit']:>16}  peak {row['peak_mb']:6.0f} MB"
                )
            elif row.get("skipped"):
                shown = "not run"
            else:
                shown = f"did not finish in {args.timeout:.0f} s"
            print(f"{series:>13} {row['size']:>8g} {unit:<7} {shown}", flush=True)
        finished = [r for r in rows if r["finished"]]
        ratio = (
            finished[-1]["per_unit_s"] / finished[0]["per_unit_s"]
            if len(finished) == len(rows)
            else None
        )
        payload["series"][series] = {"unit": unit, "rows": rows, "ratio_largest_smallest": ratio}
        text = f"{ratio:.2f}" if ratio is not None else "n/a (a size did not finish)"
        print(f"{series:>13} per-{unit} time, largest / smallest: {text}", flush=True)
    out = args.out or Path(__file__).parent / "results" / "bench_rules.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
