"""Prediction-powered agreement with humans on the AMI pool, a local model as the reference
(issue 33's real-data check).

The reference is the recording in benchmarks/recordings/ami-pool/ (Qwen2.5-Coder-1.5B, made
chunk by chunk, round-robin over the 32 meetings so that at any time it covers the first chunks
of every meeting). The population is the first ``k`` chunks of each meeting, ``k`` the most the
recording covers for all 32 (a meeting with fewer chunks gives all of its own): ``y`` =
offline:rules' extraction agreement with the human gold per meeting, ``f`` = its agreement with
the model on the fields the humans annotated (what a run with ``human_gold: {ppi: true}`` leans
on). ``runs._coverage.run_ppi_coverage`` then draws 1,000 seeded hidings keeping the gold of 6
meetings (80 % hidden) and checks the Student PPI interval and the human-only one on the same 6
against the full-gold figure (the mean of ``y`` over all 32). Writes
benchmarks/results/bench_ppi_ami_model.json (docs/sequential.md's table is generated from it).

Run: python benchmarks/bench_ppi_ami_model.py [--pool PATH] [--recording FILE]
The order the recording is made in: python benchmarks/bench_ppi_ami_model.py --round-robin
CHUNKS OUT writes CHUNKS (the imported pool's chunks.jsonl) as the first chunk of every
meeting, then the second of every meeting, and so on — ``chatledger extract --chunks OUT``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_ppi_ami import normal_summary
from chatledger.corpus import import_corpus
from chatledger.extractors import get_extractor
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._coverage import run_ppi_coverage

HERE = Path(__file__).parent
DEFAULT_POOL = Path(os.environ.get("CHATLEDGER_DATA", "/work/shared/data")) / "ami-pool"
DEFAULT_RECORDING = HERE / "recordings" / "ami-pool" / "qwen2.5-coder-1.5b-example.jsonl"


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["chunk_id"] for line in path.open(encoding="utf-8")]


def _meetings(chunks: Path) -> dict[str, list[str]]:
    """Each meeting's chunk ids, in order."""
    meetings: dict[str, list[str]] = defaultdict(list)
    for line in chunks.open(encoding="utf-8"):
        row = json.loads(line)
        meetings[row["conversation_id"]].append(row["chunk_id"])
    return dict(meetings)


def covered_prefix(meetings: dict[str, list[str]], recorded: set[str]) -> int:
    """The most leading chunks the recording holds for every meeting."""
    k = 0
    while any(k < len(ids) for ids in meetings.values()) and all(
        k >= len(ids) or ids[k] in recorded for ids in meetings.values()
    ):
        k += 1
    return k


def write_round_robin(chunks: Path, out: Path) -> None:
    """``chunks`` reordered: the first chunk of every meeting, then every second, and so on."""
    lines: dict[str, list[str]] = defaultdict(list)
    for line in chunks.open(encoding="utf-8"):
        lines[json.loads(line)["conversation_id"]].append(line)
    longest = max(len(rows) for rows in lines.values())
    with out.open("w", encoding="utf-8") as handle:
        for k in range(longest):
            handle.writelines(rows[k] for rows in lines.values() if k < len(rows))


def _subset(source: Path, target: Path, keep: set[str]) -> int:
    written = 0
    with target.open("w", encoding="utf-8") as out:
        for line in source.open(encoding="utf-8"):
            if json.loads(line)["chunk_id"] in keep:
                out.write(line)
                written += 1
    return written


def _case(
    pool: Path, work: Path, recording: Path, keep: set[str], kept: int, hidings: int
) -> dict[str, Any]:
    """PPI hidings on the run of ``keep``'s chunks (offline:rules against the model, the
    humans' gold beside it)."""
    work.mkdir()
    for name in ("chunks.jsonl", "gold.jsonl"):
        _subset(pool / name, work / name, keep)
    _subset(recording, work / "model.jsonl", keep)
    get_extractor("offline:rules").extract_file(work / "chunks.jsonl", work / "rules.jsonl")
    config = {
        "chunks": "chunks.jsonl",
        "reference": {"file": "model.jsonl", "name": "qwen2.5-coder-1.5b"},
        "challengers": [{"file": "rules.jsonl", "name": "offline:rules"}],
        "human_gold": {"file": "gold.jsonl", "name": "human:ami"},
        "layers": ["extraction"],
        "stats": {"bootstrap_resamples": 100, "dirichlet_draws": 100},
    }
    (work / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    execute_run(load_run_config(work / "run.yaml"), work / "run")
    real = run_ppi_coverage(
        work / "run", model="offline:rules", keep=kept, hidings=hidings, seed=33
    ).to_dict()
    normal = run_ppi_coverage(
        work / "run", model="offline:rules", keep=kept, hidings=hidings, seed=33, student=False
    ).to_dict()
    real["run_dir"] = "(temporary)"
    real["normal"] = normal_summary(normal)
    real["chunks"] = len(keep)
    real["without_extraction"] = sum(
        1
        for line in (work / "model.jsonl").open(encoding="utf-8")
        if json.loads(line).get("extraction") is None
    )
    return real


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pool", type=Path, default=DEFAULT_POOL)
    parser.add_argument("--recording", type=Path, default=DEFAULT_RECORDING)
    parser.add_argument("--hidings", type=int, default=1000)
    parser.add_argument("--keep", type=int, default=6, help="meetings whose gold is kept")
    parser.add_argument("--round-robin", nargs=2, type=Path, metavar=("CHUNKS", "OUT"))
    args = parser.parse_args()
    if args.round_robin:
        write_round_robin(*args.round_robin)
        return
    started = time.perf_counter()
    recorded = _ids(args.recording)
    with tempfile.TemporaryDirectory() as tmp:
        pool = Path(tmp) / "pool"
        import_corpus("ami", args.pool / "ami_public_manual_1.6.2", pool)
        meetings = _meetings(pool / "chunks.jsonl")
        k = covered_prefix(meetings, set(recorded))
        if k == 0:
            parser.error("the recording does not hold a chunk of every meeting yet")
        populations = {
            f"the first {k} chunk(s) of every meeting": {
                cid for ids in meetings.values() for cid in ids[:k]
            },
            "every chunk recorded": set(recorded),
        }
        cases = []
        for number, (population, keep) in enumerate(populations.items()):
            case = _case(
                pool, Path(tmp) / f"case-{number}", args.recording, keep, args.keep, args.hidings
            )
            case["population"] = population
            cases.append(case)
            ppi, human = case["ppi"], case["human"]
            print(
                f"{population}: {case['conversations']} meetings, {len(keep)} chunks; gold kept "
                f"on {args.keep}, {args.hidings} hidings; full-gold figure "
                f"{case['full_gold_figure']:.4f}; corr(y, f) {case['correlation']:.2f}; PPI "
                f"covers {ppi['coverage']:.3f}, humans only {human['coverage']:.3f}; width ratio "
                f"median {case['median_width_ratio']:.3f}, max {case['max_width_ratio']:.3f}; "
                f"narrower in {case['narrower_share']:.1%}"
            )
    result = {
        "recording": {
            "file": str(args.recording.resolve().relative_to(HERE.parent.resolve())),
            "lines": len(recorded),
            "pool_chunks": sum(len(ids) for ids in meetings.values()),
            "meetings": len(meetings),
            "chunks_per_meeting": k,
        },
        "kept": args.keep,
        "hidings": args.hidings,
        "cases": cases,
        "seconds": time.perf_counter() - started,
    }
    out = HERE / "results" / "bench_ppi_ami_model.json"
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
