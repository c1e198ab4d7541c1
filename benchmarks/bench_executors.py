"""`chatledger run` on each executor: N chunks × 3 challengers, all three layers, whole process.

For each size and executor the run is a fresh process (`chatledger run --no-report`); wall time
is measured around it and peak memory is the largest sum of RSS over the process and all its
descendants (the worker processes), sampled every 250 ms from /proc. Ratios are against
`local` measured in the same invocation, medians over the repeats. Run:
    python benchmarks/bench_executors.py [--sizes 1000 10000] [--repeats 3]
Writes benchmarks/results/bench_executors.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _synthetic import write_run_corpus  # the script's folder is on sys.path

EXECUTORS = ("local", "processes:2", "dask")


def prepare(directory: Path, n_chunks: int) -> Path:
    return write_run_corpus(directory, n_chunks, f"bench-{n_chunks}")


def _tree_rss_kb(root: int) -> int:
    """RSS of ``root`` and every descendant, from /proc (kB)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            ppid, pages = int(fields[1]), int(fields[21])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = pages * os.sysconf("SC_PAGE_SIZE") // 1024
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def run_once(config: Path, out: Path, executor: str) -> dict[str, float]:
    cli = [sys.executable, "-m", "chatledger", "run", str(config), "--out", str(out)]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*cli, "--no-report", "--executor", executor],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kb(process.pid))
            time.sleep(0.25)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{executor}: exit {process.returncode}: {err[-2000:]}")
    record = json.loads((out / "run.json").read_text())
    return {"wall_s": wall, "peak_tree_mb": peak / 1024, "timings": record["timings"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--executors", nargs="+", default=list(EXECUTORS))
    parser.add_argument("--out", default="bench_executors.json", help="file in results/")
    args = parser.parse_args()
    results: dict[str, object] = {"repeats": args.repeats, "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            folder = Path(tmp) / str(size)
            folder.mkdir()
            config = prepare(folder, size)
            by_executor: dict[str, dict[str, object]] = {}
            for executor in args.executors:
                runs = [
                    run_once(config, folder / f"out-{executor.replace(':', '')}-{i}", executor)
                    for i in range(args.repeats)
                ]
                by_executor[executor] = {
                    "median_wall_s": statistics.median(r["wall_s"] for r in runs),
                    "median_peak_tree_mb": statistics.median(r["peak_tree_mb"] for r in runs),
                    "walls_s": [r["wall_s"] for r in runs],
                }
                print(size, executor, json.dumps(by_executor[executor]), flush=True)
            local_wall = (
                float(by_executor["local"]["median_wall_s"]) if "local" in by_executor else None
            )  # type: ignore[arg-type]
            for entry in by_executor.values():
                if local_wall is not None:
                    entry["speedup_vs_local"] = local_wall / float(entry["median_wall_s"])  # type: ignore[arg-type]
            results[str(size)] = by_executor
    print(json.dumps(results, indent=2))
    out = Path(__file__).parent / "results" / args.out
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
