"""`chatledger run` on each executor: N chunks × 3 challengers, all three layers, whole process.

For each size and executor the run is a fresh process (`chatledger run --no-report`); wall time
is measured around it and peak memory is the largest sum of RSS over the process and all its
descendants (the worker processes), sampled every 250 ms from /proc (benchmarks/_proctree.py).
Ratios are against `local` measured in the same invocation, medians over the repeats. Run:
    python benchmarks/bench_executors.py [--sizes 1000 10000] [--repeats 3]
Writes benchmarks/results/bench_executors.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _proctree import measure  # the script's folder is on sys.path
from _synthetic import write_run_corpus

EXECUTORS = ("local", "processes:2", "dask")


def prepare(directory: Path, n_chunks: int) -> Path:
    return write_run_corpus(directory, n_chunks, f"bench-{n_chunks}")


def run_once(config: Path, out: Path, executor: str) -> dict[str, float]:
    cli = [sys.executable, "-m", "chatledger", "run", str(config), "--out", str(out)]
    measured = measure([*cli, "--no-report", "--executor", executor], every_s=0.25)
    record = json.loads((out / "run.json").read_text())
    return {
        "wall_s": measured["wall_s"],
        "peak_tree_mb": measured["peak_tree_mb"],
        "timings": record["timings"],
    }


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
