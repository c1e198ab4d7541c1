"""Coverage of ChatLedger's intervals on real human gold, for docs/statistics.md.

    python benchmarks/coverage_tables.py ami-pool /work/shared/data/ami-pool --size 8
    python benchmarks/coverage_tables.py casino /work/shared/data/casino --size 40
    python benchmarks/coverage_tables.py ami-pool /work/shared/data/ami-pool --size 40 --unit chunk

Imports the corpus, builds the population run (human gold as the reference; the offline
extractor and two simulated challengers, the gold through every corruption operator at 0.1
and 0.6; extraction, judge and downstream layers), draws R subsets of whole conversations and
writes docs/data/coverage-NAME.json. tests/test_coverage.py renders that file into the tables
of docs/statistics.md and keeps them equal (CHATLEDGER_UPDATE_DOCS=1 rewrites them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from chatledger.demo._population import prepare_population
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._coverage import run_coverage

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name")
    parser.add_argument("source", type=Path)
    parser.add_argument("--kind", default=None, help="corpus kind (default: from the name)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/chatledger-coverage"))
    parser.add_argument("--subsets", type=int, default=200)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--unit",
        default="conversation",
        help="chunk: subsets of random chunks, intervals resampling chunks (--size chunks); "
        "writes docs/data/coverage-NAME-chunks.json",
    )
    parser.add_argument(
        "--no-offline", action="store_true", help="simulated challengers only (no offline:rules)"
    )
    args = parser.parse_args()
    kind = args.kind or ("casino" if "casino" in args.name else "ami")
    work = args.work / args.name
    corpus = work / "corpus"
    started = time.perf_counter()
    if not (corpus / "gold.jsonl").exists():
        subprocess.run(
            [sys.executable, "-m", "chatledger", "corpus", "import", kind, str(args.source),
             "--out", str(corpus)],
            check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
    run_dir = work / "population" / "run"
    if not (run_dir / "run.json").exists():
        config = prepare_population(
            corpus / "chunks.jsonl",
            corpus / "gold.jsonl",
            work / "population",
            offline=not args.no_offline,
        )
        execute_run(load_run_config(config), run_dir)
    result = run_coverage(
        run_dir, subsets=args.subsets, size=args.size, seed=args.seed, unit=args.unit
    )
    data = {
        "corpus": args.name,
        "seconds": round(time.perf_counter() - started, 1),
        **result.to_dict(),
    }
    data["run_dir"] = f"{args.name} population run"
    suffix = "-chunks" if args.unit == "chunk" else ""
    out = ROOT / "docs" / "data" / f"coverage-{args.name}{suffix}.json"
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out} ({data['seconds']} s)")


if __name__ == "__main__":
    main()
