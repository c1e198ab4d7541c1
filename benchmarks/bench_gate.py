"""The regression gate against the run it reads: what a paired bootstrap of two runs costs.

One real run (the synthetic corpus, three challengers, all three layers) is the input; the gate
compares two of its challengers on every figure a user is likely to gate on (overall, the three
layers, every field, validity) at the run's 2,000 resamples. The baseline, measured in the same
process on the same run, is the run's own statistics stage (``timings.stats_s`` in run.json:
intervals of every figure of three models, paired differences, ranks and weight sensitivity),
which the gate repeats in part for two models. Medians of the repeats.

Run: python benchmarks/bench_gate.py [--chunks 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _synthetic import write_run_corpus
from chatledger.gating import evaluate_gate, load_gate_rules
from chatledger.record import ConversationRun, read_run_record
from chatledger.runs import execute_run, load_run_config

RULES = (
    "{overall: {max_drop: 0.02}, layers.*: {max_drop: 0.02}, fields.*: {max_drop: 0.05}, "
    "validity: {min: 0.99}, baseline_model: challenger, candidate_model: challenger_b}"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_run_corpus(folder, args.chunks, "bench-gate")
        started = time.perf_counter()
        execute_run(load_run_config(config), folder / "run")
        run_s = time.perf_counter() - started
        record = read_run_record(folder / "run")
        assert isinstance(record, ConversationRun)
        stats_s = record.timings["stats_s"]
        rules = load_gate_rules(RULES)
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            result = evaluate_gate(rules, folder / "run", folder / "run")
            times.append(time.perf_counter() - t0)
        gate_s = statistics.median(times)
        failed = len(result.failures)
    print(f"{args.chunks} chunks, {len(result.outcomes)} rules ({failed} failed), 2,000 resamples")
    print(f"run (all layers, 3 challengers): {run_s:.1f} s; its statistics stage: {stats_s:.2f} s")
    print(f"gate, median of {args.repeats}: {gate_s:.2f} s = {gate_s / stats_s:.2f}× the stage")


if __name__ == "__main__":
    main()
