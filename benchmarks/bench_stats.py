"""Bootstrap cost: 10,000 resamples for 5 models × 40 chunks × 20 scores.

Prints the median of several repeats for (a) BCa intervals of all 100 score series in one
vectorised call, (b) paired differences for every pair of models, (c) rank probabilities, and
writes benchmarks/results/bench_stats.json. Run: python benchmarks/bench_stats.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from pathlib import Path

import numpy as np

from chatledger.stats import bootstrap_intervals, paired_difference, rank_probabilities

MODELS, CHUNKS, SCORES, RESAMPLES = 5, 40, 20, 10_000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    data = rng.uniform(0.2, 1.0, size=(MODELS * SCORES, CHUNKS))
    overall = data[::SCORES]
    timings: dict[str, list[float]] = {"intervals_bca": [], "paired": [], "ranks": []}
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        bootstrap_intervals(data, n_resamples=RESAMPLES, seed=1)
        timings["intervals_bca"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for i, j in itertools.combinations(range(MODELS), 2):
            paired_difference(overall[i], overall[j], n_resamples=RESAMPLES, seed=1)
        timings["paired"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        rank_probabilities(overall, n_resamples=RESAMPLES, seed=1)
        timings["ranks"].append(time.perf_counter() - t0)
    medians = {k: statistics.median(v) for k, v in timings.items()}
    medians["total"] = sum(medians.values())
    for key, value in medians.items():
        print(f"{key:>14}: {value:7.2f} s (median of {args.repeats})")
    out = Path(__file__).parent / "results" / "bench_stats.json"
    out.parent.mkdir(exist_ok=True)
    payload = {
        "models": MODELS,
        "chunks": CHUNKS,
        "scores": SCORES,
        "resamples": RESAMPLES,
        "median_s": medians,
        "repeats": args.repeats,
    }
    out.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
