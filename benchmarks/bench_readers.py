"""Commands that read a run — ``chatledger gate`` and ``chatledger stats`` — as whole processes,
on a 1,000-chunk run: what they import is most of what they cost.

Each round runs, in turn: the floor (a process that imports only numpy, pydantic and typer,
which every such command needs), ``gate`` (two challengers of the run, the rules of
bench_gate.py, 2,000 resamples) and ``stats``; with ``--source DIR`` also both commands from
another source tree (an older commit, for a before and after in one session). Medians over
``--repeats`` rounds of wall and CPU seconds (the child's own rusage), and each command's ratio
to the floor (and to the other tree) measured in the same rounds.

Run: python benchmarks/bench_readers.py [--chunks 1000] [--repeats 5] [--run DIR] [--source DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _synthetic import write_run_corpus
from bench_gate import RULES
from bench_score import compile_sources

TARGET_S = 0.5  # issue 32: gate and stats on 1,000 chunks


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
    args = parser.parse_args()
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
    floor_wall, floor_cpu = median["floor"]
    print(f"{args.chunks} chunks, median of {args.repeats} rounds "
          f"(load average {os.getloadavg()[0]:.1f} at the end)")  # fmt: skip
    print(f"  floor (numpy, pydantic, typer): {floor_wall:.2f} s wall, {floor_cpu:.2f} s CPU")
    for name in ("gate", "stats"):
        wall, cpu = median[name]
        line = (f"  {name}: {wall:.2f} s wall, {cpu:.2f} s CPU = {cpu / floor_cpu:.1f}x the "
                f"floor's CPU (target {TARGET_S} s)")  # fmt: skip
        other = median.get(f"{name} (other tree)")
        if other is not None:
            line += f"; other tree {other[1]:.2f} s CPU, ratio {cpu / other[1]:.2f}"
        print(line)


if __name__ == "__main__":
    main()
