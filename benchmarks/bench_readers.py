"""Commands that read a run — ``chatledger gate`` and ``chatledger stats`` — as whole processes,
on a 1,000-chunk run: what they import is most of what they cost.

Each round runs, in turn: the floor (a process that imports only numpy, pydantic and typer,
which every such command needs), ``gate`` (two challengers of the run, the rules of
bench_gate.py, 2,000 resamples) and ``stats``; with ``--source DIR`` also both commands from
another source tree (an older commit, for a before and after in one session). Medians over
``--repeats`` rounds of wall and CPU seconds (the child's own rusage), and each command's ratio
to the floor (and to the other tree) measured in the same rounds.

Run: python benchmarks/bench_readers.py [--chunks 1000] [--repeats 5] [--run DIR] [--source DIR]
    [--out FILE]

Every sample, the medians, the ratios and the load average before and after go to ``--out``
(default benchmarks/results/bench_readers.json); docs/benchmarks.md's table of issue 32's last
pass is generated from such a file by tests/test_benchmark_docs.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _synthetic import write_run_corpus
from bench_gate import RULES
from bench_score import compile_sources

TARGET_S = 0.5  # issue 32: gate and stats on 1,000 chunks
RESULTS = Path(__file__).resolve().parent / "results" / "bench_readers.json"


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: a gate rule failed, as it may
        assert proc.stderr is not None
        raise SystemExit(f"{command[2:5]} failed ({code}): {proc.stderr.read()[-500:]!r}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--run", type=Path, help="an existing run directory of bench_gate's kind")
    parser.add_argument("--source", type=Path, help="another source tree to compare with")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"JSON results ({RESULTS})")
    args = parser.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = args.run
        if run_dir is None:
            from chatledger.runs import execute_run, load_run_config

            config = write_run_corpus(Path(tmp), args.chunks, "bench-readers")
            run_dir = Path(tmp) / "run"
            execute_run(load_run_config(config), run_dir)
        python = sys.executable
        gate_args = ["gate", str(run_dir), str(run_dir), "--rules", RULES, "--format", "json"]
        commands = {
            "floor": [python, "-c", "import numpy, pydantic, typer"],
            "gate": [python, "-m", "chatledger", *gate_args],
            "stats": [python, "-m", "chatledger", "stats", str(run_dir), "--format", "json"],
        }
        trees = {"": Path(__file__).resolve().parents[1] / "src"}
        if args.source is not None:
            trees[" (other tree)"] = args.source.resolve() / "src"
        samples: dict[str, list[tuple[float, float]]] = {}
        compile_sources(*trees.values())
        for _ in range(args.repeats):
            for label, tree in trees.items():
                env = dict(os.environ, PYTHONPATH=str(tree))
                for name, command in commands.items():
                    if name == "floor" and label:
                        continue
                    samples.setdefault(name + label, []).append(timed(command, env))
    median = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
              for k, v in samples.items()}  # fmt: skip
    load_after = [round(x, 2) for x in os.getloadavg()]
    floor_wall, floor_cpu = median["floor"]
    print(f"{args.chunks} chunks, median of {args.repeats} rounds "
          f"(load average {load_before[0]:.1f} before, {load_after[0]:.1f} after)")  # fmt: skip
    print(f"  floor (numpy, pydantic, typer): {floor_wall:.2f} s wall, {floor_cpu:.2f} s CPU")
    commands_out: dict[str, dict[str, object]] = {}
    for name in ("gate", "stats"):
        wall, cpu = median[name]
        entry: dict[str, object] = {
            "wall_median_s": wall,
            "cpu_median_s": cpu,
            "cpu_vs_floor": cpu / floor_cpu,
            "samples": [{"wall_s": w, "cpu_s": c} for w, c in samples[name]],
        }
        line = (f"  {name}: {wall:.2f} s wall, {cpu:.2f} s CPU = {cpu / floor_cpu:.1f}x the "
                f"floor's CPU (target {TARGET_S} s)")  # fmt: skip
        other_samples = samples.get(f"{name} (other tree)")
        if other_samples is not None:
            other_wall, other_cpu = median[f"{name} (other tree)"]
            # Each round ran both trees one after the other: the median of the rounds' ratios
            # is steadier on a shared machine than the ratio of the two medians.
            paired = statistics.median(
                c / oc for (_, c), (_, oc) in zip(samples[name], other_samples, strict=True)
            )
            entry["other_tree"] = {
                "wall_median_s": other_wall,
                "cpu_median_s": other_cpu,
                "cpu_vs_floor": other_cpu / floor_cpu,
                "samples": [{"wall_s": w, "cpu_s": c} for w, c in other_samples],
            }
            entry["cpu_vs_other_paired"] = paired
            line += f"; other tree {other_cpu:.2f} s CPU, ratio {paired:.2f} (paired by round)"
        commands_out[name] = entry
        print(line)
    result = {
        "benchmark": "bench_readers",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "chunks": args.chunks,
        "repeats": args.repeats,
        "other_tree": str(args.source) if args.source is not None else None,
        "load_average_before": load_before,
        "load_average_after": load_after,
        # chatledger asks for one OpenBLAS thread unless this is set; the floor does not
        "openblas_num_threads_env": os.environ.get("OPENBLAS_NUM_THREADS"),
        "target_s": TARGET_S,
        "floor": {
            "wall_median_s": floor_wall,
            "cpu_median_s": floor_cpu,
            "samples": [{"wall_s": w, "cpu_s": c} for w, c in samples["floor"]],
        },
        "commands": commands_out,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"results written to {args.out}")


if __name__ == "__main__":
    main()
