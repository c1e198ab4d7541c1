"""Validity of the sequential decision at scale (issue 33): simulated challengers with known
true differences over a pool of conversations, visited in a random order in batches, stopped
at the first batch whose confidence sequence lies on one side of the threshold (0).

Prints, per effect, the decisions over the repetitions, the share of wrong ones (must be ≤ α
for every effect, including none, where "undecided" is the right answer) and the median share
of the pool used; writes benchmarks/results/bench_sequential.json. `make test` runs a small
version (tests/test_sequential.py). Run: python benchmarks/bench_sequential.py [--pool 500]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

from chatledger.stats import simulate_sequential

EFFECTS = [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, -0.05, -0.3]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pool", type=int, default=500)
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--grid", type=int, default=500)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    start = time.perf_counter()
    results = simulate_sequential(
        EFFECTS,
        pool=args.pool,
        repetitions=args.repetitions,
        batch=args.batch,
        grid=args.grid,
        alpha=args.alpha,
        seed=33,
    )
    elapsed = time.perf_counter() - start
    print(
        f"pool {args.pool}, {args.repetitions} repetitions, batches of {args.batch}, α {args.alpha}"
    )
    print(f"{'effect':>7} {'pass':>5} {'fail':>5} {'undec':>5} {'wrong':>6} {'median stop':>12}")
    for r in results:
        print(
            f"{r.effect:+7.2f} {r.passed:5d} {r.failed:5d} {r.undecided:5d} "
            f"{r.wrong_share:6.3f} {r.median_stop:6d} ({r.median_stop_share:.0%})"
        )
    worst = max(r.wrong_share for r in results)
    print(f"worst wrong share {worst:.3f} (α {args.alpha}); {elapsed:.1f} s")
    out = Path(__file__).parent / "results" / "bench_sequential.json"
    out.parent.mkdir(exist_ok=True)
    payload = {"settings": vars(args), "results": [asdict(r) for r in results], "seconds": elapsed}
    out.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
