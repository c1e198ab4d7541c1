"""How a whole run scales: wall, CPU and peak memory of the process tree, per chunk.

Generated corpora (benchmarks/_synthetic.py: ``write_run_corpus``) of N chunks × 3 challengers ×
3 layers (extraction, judge with the grounding judge, downstream); each run is a fresh
``chatledger run --no-report`` process. Measured from outside the run:

* wall — around the process, start-up included;
* CPU — user + system seconds summed over the process and every descendant (the pool's or the
  cluster's workers), polled from /proc/PID/stat every 100 ms, each process counted at its last
  sample (a process's last < 100 ms may be missed);
* peak memory — the largest sum of RSS over the same tree at one sample (both from
  benchmarks/_proctree.py, which bench_executors.py uses too);
* growth per chunk — (peak at N − peak at the baseline size) / (N − baseline): the baseline
  (100 chunks by default) is run first for every executor, so the fixed cost of the interpreter,
  imports and workers cancels out.

Ratios are against ``local`` in the same invocation; each run also notes the 1-minute load
average before and after it (wall time on a shared machine measures the others' load too).
Run:
    python benchmarks/bench_scale.py                      # 1,000 and 10,000 chunks
    python benchmarks/bench_scale.py --sizes 1000         # the quick signal
    python benchmarks/bench_scale.py --with-100k          # adds 100,000 chunks
    python benchmarks/bench_scale.py --dask               # adds the dask LocalCluster
    # the speed comparison alone (a few minutes on 2 idle cores): 1,000 chunks, no baseline,
    # local / processes:2 / dask interleaved three times, medians
    python benchmarks/bench_scale.py --sizes 1000 --no-baseline --rounds 3 --dask \
        --out bench_scale_speed.json
``--corpora DIR`` keeps the generated corpora in DIR/<chunks>/ and reuses them. Each corpus is
generated in a child process measured like a run (``generated`` in the results: wall, CPU,
peak; the generator writes as it goes, so its peak does not depend on the size).
``--generate-only`` (with ``--corpora``) makes the corpora and records only that.
``--merge A.json B.json --out C.json`` combines invocations (e.g. one executor per quiet
window at 10,000 chunks) into one results file, the ratios to local recomputed.
``--timeline S`` records the tree's largest RSS in each S-second window of every run (where
in the run the peak comes). Per-chunk wall and CPU (ms) are beside each size's figures.
Writes benchmarks/results/bench_scale.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _proctree import measure  # the script's folder is on sys.path


def run_once(
    config: Path, out: Path, executor: str, timeline_s: float | None = None
) -> dict[str, Any]:
    cli = [sys.executable, "-m", "chatledger", "run", str(config), "--out", str(out)]
    load_before = os.getloadavg()[0]
    entry = measure([*cli, "--no-report", "--executor", executor], timeline_s=timeline_s)
    entry["load_before"] = round(load_before, 1)
    entry["load_after"] = round(os.getloadavg()[0], 1)
    entry["phases"] = run_phases(out, entry["wall_s"])
    return entry


def run_phases(out: Path, wall_s: float) -> dict[str, float] | None:
    """Where the run's wall time went, from its run.json timings: outside the run proper
    (``outside``: interpreter, imports, starting and stopping the workers), the files' facts,
    the units, and the rest in series (``rest``: planning — hashing the inputs — and, after
    the last unit, what assembly is left, the statistics and the writing)."""
    try:
        timings = json.loads((out / "run.json").read_text(encoding="utf-8"))["timings"]
        total, facts, units = timings["total_s"], timings["facts_s"], timings["units_s"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {
        "outside": round(wall_s - total, 2),
        "facts": round(facts, 2),
        "units": round(units, 2),
        "rest": round(total - facts - units, 2),
    }


def median_entry(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each figure over the rounds (one round: itself), the rounds beside."""
    if len(rounds) == 1:
        return rounds[0]
    keys = ("wall_s", "cpu_s", "peak_tree_mb", "load_before", "load_after")
    entry: dict[str, Any] = {k: round(statistics.median(r[k] for r in rounds), 2) for k in keys}
    entry["processes"] = rounds[0]["processes"]
    entry["rounds"] = rounds
    return entry


def corpus(root: Path, size: int, generated: dict[str, Any]) -> Path:
    """The run config of a generated corpus of ``size`` chunks under ``root`` (made once, by
    a measured child process: its wall, CPU and peak go to ``generated[str(size)]``)."""
    folder = root / str(size)
    config = folder / "run.yaml"
    if config.is_file():
        return config
    folder.mkdir(parents=True, exist_ok=True)
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "from _synthetic import write_run_corpus; "
        "write_run_corpus(Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4])"
    )
    here = str(Path(__file__).parent)
    entry = measure([sys.executable, "-c", code, here, str(folder), str(size), f"scale-{size}"])
    generated[str(size)] = entry
    print(f"generated {size} chunks", json.dumps(entry), flush=True)
    return config


def against_local(by_executor: dict[str, dict[str, Any]]) -> None:
    """Each executor's wall, CPU and peak as ratios to local's (when local ran)."""
    local = by_executor.get("local")
    if local is not None:
        for entry in by_executor.values():
            entry["speedup_vs_local"] = round(local["wall_s"] / entry["wall_s"], 2)
            entry["cpu_vs_local"] = round(entry["cpu_s"] / local["cpu_s"], 2)
            entry["peak_vs_local"] = round(entry["peak_tree_mb"] / local["peak_tree_mb"], 2)


def merge(names: list[str], out_name: str) -> None:
    """Several invocations' results as one (each size's executors side by side, ratios to
    local recomputed): a long comparison split over several quiet windows. An executor run
    in several of them has its runs as rounds, and their medians."""
    folder = Path(__file__).parent / "results"
    results: dict[str, Any] = {"merged_from": names}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in names:
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        for key, value in data.items():
            if key.isdigit():
                for executor, entry in value.items():
                    runs.setdefault(key, {}).setdefault(executor, []).extend(
                        entry.get("rounds", [entry])
                    )
            elif key not in results:
                results[key] = value
    for key, by_executor in runs.items():
        results[key] = {e: median_entry(entries) for e, entries in by_executor.items()}
        against_local(results[key])
    (folder / out_name).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--with-100k", action="store_true", help="also 100,000 chunks")
    parser.add_argument("--baseline", type=int, default=100, help="size the growth is from")
    parser.add_argument("--dask", action="store_true", help="also the dask LocalCluster")
    parser.add_argument("--executors", nargs="+", default=["local", "processes:2"])
    parser.add_argument("--out", default="bench_scale.json", help="file in results/")
    parser.add_argument("--corpora", type=Path, help="keep and reuse generated corpora here")
    parser.add_argument("--no-baseline", action="store_true", help="no growth per chunk")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved repeats (medians)")
    parser.add_argument(
        "--generate-only", action="store_true", help="only make the corpora (with --corpora)"
    )
    parser.add_argument(
        "--timeline", type=float, metavar="S", help="record the tree's RSS per S-second window"
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="FILE",
        help="combine results files of results/ (e.g. one executor per quiet window) into --out",
    )
    args = parser.parse_args()
    if args.merge:
        merge(args.merge, args.out)
        return
    sizes = sorted({*args.sizes, *([100_000] if args.with_100k else [])})
    executors = [*args.executors, *(["dask"] if args.dask else [])]
    load = os.getloadavg()
    results: dict[str, object] = {
        "cores": os.cpu_count(),
        "load_average_at_start": [round(x, 1) for x in load],
        "baseline_chunks": None if args.no_baseline else args.baseline,
        "rounds": args.rounds,
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = args.corpora if args.corpora is not None else Path(tmp) / "corpora"
        generated: dict[str, Any] = {}
        results["generated"] = generated
        configs = {
            size: corpus(root, size, generated)
            for size in [*([] if args.no_baseline else [args.baseline]), *sizes]
        }
        base: dict[str, dict[str, Any]] = {}
        if args.generate_only:
            sizes = []
        elif not args.no_baseline:
            base = {
                executor: run_once(configs[args.baseline], Path(tmp) / f"base-{i}", executor)
                for i, executor in enumerate(executors)
            }
            print("baseline", json.dumps(base), flush=True)
            results["baseline"] = base
        for size in sizes:
            rounds: dict[str, list[dict[str, Any]]] = {e: [] for e in executors}
            for r in range(args.rounds):
                for i, executor in enumerate(executors):
                    out = Path(tmp) / f"out-{size}-{i}-{r}"
                    entry = run_once(configs[size], out, executor, args.timeline)
                    rounds[executor].append(entry)
                    print(size, executor, json.dumps(entry), flush=True)
            by_executor: dict[str, dict[str, Any]] = {}
            for executor in executors:
                entry = median_entry(rounds[executor])
                if executor in base:
                    growth_mb = entry["peak_tree_mb"] - base[executor]["peak_tree_mb"]
                    entry["growth_kb_per_chunk"] = round(
                        growth_mb * 1024 / (size - args.baseline), 1
                    )
                entry["wall_ms_per_chunk"] = round(entry["wall_s"] * 1000 / size, 2)
                entry["cpu_ms_per_chunk"] = round(entry["cpu_s"] * 1000 / size, 2)
                by_executor[executor] = entry
            against_local(by_executor)
            results[str(size)] = by_executor
    results["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(results, indent=2))
    out = Path(__file__).parent / "results" / args.out
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
