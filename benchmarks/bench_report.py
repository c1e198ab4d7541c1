"""The report of a large run: 10,000 chunks × 3 challengers, all three layers; how long
``build_report`` takes, its peak memory and the size of report.html.

The run is made once (synthetic corpus from ``_synthetic.py``, two more challengers from
``chatledger.simulate``, as bench_run.py does) and kept in ``--work`` so the report can be timed
again — before and after a change — on the same run directory. Each report is built in a fresh
process (peak RSS is monotonic within one), ``--repeats`` times; the medians are kept. Run:

    python benchmarks/bench_report.py [--chunks 10000] [--repeats 3] [--work DIR] [--label after]

Writes benchmarks/results/bench_report.json (one entry per ``--label``; earlier labels stay).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _synthetic import write_run_corpus  # the script's folder is on sys.path

RESULTS = Path(__file__).resolve().parent / "results" / "bench_report.json"

RUN_CHILD = """
import json, resource, sys, time
from pathlib import Path
from chatledger.runs import execute_run, load_run_config
config, out = Path(sys.argv[1]), Path(sys.argv[2])
t0 = time.perf_counter()
result = execute_run(load_run_config(config), out)
wall = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"timings": result.timings, "wall_s": wall, "peak_mb": usage.ru_maxrss / 1024,
                  "cpu_s": usage.ru_utime + usage.ru_stime}))
"""

REPORT_CHILD = """
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from chatledger.report import build_report
path = build_report(Path(sys.argv[1]))
wall = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024, "bytes": path.stat().st_size}))
"""


def prepare(directory: Path, n_chunks: int) -> Path:
    return write_run_corpus(directory, n_chunks, f"bench-report-{n_chunks}")


def child(code: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], check=True, capture_output=True, text=True
    )
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", type=Path, help="keep the corpus and run here (reused)")
    parser.add_argument("--label", default="current", help="the entry to write, e.g. before")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        run_dir = work / "run"
        run_info_path = work / "run-timing.json"
        if not (run_dir / "run.json").is_file():
            config = prepare(work, args.chunks)
            run_info = child(RUN_CHILD, str(config), str(run_dir))
            run_info_path.write_text(json.dumps(run_info))
        run_info = json.loads(run_info_path.read_text()) if run_info_path.is_file() else {}
        reports = [child(REPORT_CHILD, str(run_dir)) for _ in range(args.repeats)]
    build_s = statistics.median(r["wall_s"] for r in reports)
    run_s = run_info.get("wall_s")
    entry = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "chunks": args.chunks,
        "challengers": 3,
        "repeats": args.repeats,
        "run_wall_s": run_s,
        "run_peak_mb": run_info.get("peak_mb"),
        "report_build_s": build_s,
        "report_build_s_all": [r["wall_s"] for r in reports],
        "report_cpu_s": statistics.median(r["cpu_s"] for r in reports),
        "run_cpu_s": run_info.get("cpu_s"),
        "report_peak_mb": statistics.median(r["peak_mb"] for r in reports),
        "report_mb": reports[0]["bytes"] / 1e6,
        "report_share_of_run": build_s / run_s if run_s else None,
        "load_average_1min": os.getloadavg()[0],
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results[args.label] = entry
    print(json.dumps(entry, indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
