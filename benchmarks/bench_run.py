"""A whole run: 1,000 chunks × 3 challengers, all three layers; time per layer, peak memory.

Memory is measured in separate processes (peak RSS is monotonic within one) for 1 and for 3
challengers: the run streams one challenger at a time, so the peak should grow by no more than
the extra challengers' score rows and summaries. Run:
    python benchmarks/bench_run.py [--chunks 1000] [--repeats 3]
Writes benchmarks/results/bench_run.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _synthetic import generate  # the script's folder is on sys.path
from chatledger.corpus import read_chunks, read_extractions
from chatledger.simulate import simulate_records, write_records

CHILD = """
import json, resource, sys, time
from pathlib import Path
from chatledger.runs import execute_run, load_run_config
config, out = Path(sys.argv[1]), Path(sys.argv[2])
t0 = time.perf_counter()
result = execute_run(load_run_config(config), out)
wall = time.perf_counter() - t0
rows = sum(1 for _ in open(out / "judgements.jsonl"))
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"timings": result.timings, "wall_s": wall, "peak_mb": peak_mb}))
"""


def prepare(directory: Path, n_chunks: int) -> None:
    corpus = generate(n_chunks, seed=0)
    chunks_path, _reference_path, chal_path = corpus.write(directory)
    chunks = read_chunks(chunks_path)
    challenger = read_extractions(chal_path).records
    for label, ops in (
        ("b", [("drop", 0.2)]),
        ("c", [("paraphrase", 0.3), ("flip_polarity", 0.3)]),
    ):
        write_records(
            simulate_records(challenger, chunks, ops, seed=1, label=label),
            directory / f"challenger_{label}.jsonl",
        )
    for n in (1, 3):
        files = ["challenger.jsonl", "challenger_b.jsonl", "challenger_c.jsonl"][:n]
        config = {
            "name": f"bench-{n}",
            "chunks": "chunks.jsonl",
            "reference": "reference.jsonl",
            "challengers": [{"file": f, "name": f.removesuffix(".jsonl")} for f in files],
            "layers": ["extraction", "judge", "downstream"],
            "judges": ["grounding"],
        }
        (directory / f"run{n}.yaml").write_text(json.dumps(config))


def run_child(config: Path, out: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(config), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    data: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, object] = {"chunks": args.chunks, "repeats": args.repeats}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        prepare(directory, args.chunks)
        for n in (1, 3):
            runs = [
                run_child(directory / f"run{n}.yaml", directory / f"out{n}-{i}")
                for i in range(args.repeats)
            ]
            timing_keys = runs[0]["timings"].keys()  # type: ignore[attr-defined]
            results[f"challengers_{n}"] = {
                "median_timings_s": {
                    k: statistics.median(r["timings"][k] for r in runs)  # type: ignore[index]
                    for k in timing_keys
                },
                "median_peak_mb": statistics.median(r["peak_mb"] for r in runs),
            }
    one, three = results["challengers_1"], results["challengers_3"]
    assert isinstance(one, dict) and isinstance(three, dict)
    results["peak_memory_ratio_3_vs_1"] = three["median_peak_mb"] / one["median_peak_mb"]
    print(json.dumps(results, indent=2))
    out = Path(__file__).parent / "results" / "bench_run.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
