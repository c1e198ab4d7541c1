"""Prediction-powered agreement with humans on the AMI pool (issue 33).

The 32 meetings of /work/shared/data/ami-pool are imported, extracted by ``offline:rules`` and
run against their human gold with the grounding judge (extraction and judge layers). Per
meeting: ``y`` = offline:rules' extraction agreement with the human gold, ``f`` = the judge's
score (the figure that needs no human). Each of 1,000 seeded hidings keeps the gold of 6
meetings (hides it on 80 %), and the PPI interval from those 6 and the judge on all 32 is set
beside the human-only interval on the same 6; both should cover the full-gold figure (the mean
of ``y`` over all 32 meetings). Prints coverage, median widths, the share of hidings where PPI
is narrower, and writes benchmarks/results/bench_ppi_ami.json.

Run: python benchmarks/bench_ppi_ami.py [--pool PATH] [--hidings 1000] [--keep 6]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from chatledger.corpus import import_corpus
from chatledger.extractors import get_extractor
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._sequential import conversation_figures
from chatledger.stats import ppi_mean

DEFAULT_POOL = Path(os.environ.get("CHATLEDGER_DATA", "/work/shared/data")) / "ami-pool"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pool", type=Path, default=DEFAULT_POOL)
    parser.add_argument("--hidings", type=int, default=1000)
    parser.add_argument("--keep", type=int, default=6, help="meetings whose gold is kept")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        import_corpus("ami", args.pool / "ami_public_manual_1.6.2", work)
        get_extractor("offline:rules").extract_file(work / "chunks.jsonl", work / "rules.jsonl")
        config = {
            "chunks": "chunks.jsonl",
            "reference": {"file": "gold.jsonl", "name": "human"},
            "challengers": [{"file": "rules.jsonl", "name": "offline:rules"}],
            "layers": ["extraction", "judge"],
            "judges": ["grounding"],
            "stats": {"bootstrap_resamples": 100, "dirichlet_draws": 100},
        }
        (work / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
        execute_run(load_run_config(work / "run.yaml"), work / "run")
        per = conversation_figures(
            work / "run", "offline:rules", "offline:rules", ["layers.extraction", "layers.judge"]
        )
    y = per["layers.extraction"].candidate
    f = per["layers.judge"].candidate
    n = y.size
    truth = float(y.mean())
    rng = np.random.default_rng(33)
    rows: dict[str, list[float]] = {k: [] for k in ("ppi", "human", "ppi_n", "human_n")}
    widths: dict[str, list[float]] = {k: [] for k in ("ppi", "human", "ppi_n", "human_n")}
    narrower, worth = 0, []
    for _ in range(args.hidings):
        kept = np.zeros(n, dtype=bool)
        kept[rng.choice(n, args.keep, replace=False)] = True
        for student, suffix in ((True, ""), (False, "_n")):
            e = ppi_mean(y[kept], f[kept], f[~kept], student=student)
            rows["ppi" + suffix].append(float(e.low <= truth <= e.high))
            rows["human" + suffix].append(float(e.human_low <= truth <= e.human_high))
            widths["ppi" + suffix].append(e.width)
            widths["human" + suffix].append(e.human_width)
            if student:
                narrower += e.width < e.human_width
                worth.append(e.labels_worth)
    result = {
        "meetings": n,
        "kept": args.keep,
        "hidings": args.hidings,
        "full_gold_figure": truth,
        "correlation_y_f": float(np.corrcoef(y, f)[0, 1]),
        "coverage": {k: float(np.mean(v)) for k, v in rows.items()},
        "median_width": {k: float(np.median(v)) for k, v in widths.items()},
        "ppi_narrower_share": narrower / args.hidings,
        "median_labels_worth": float(np.median(worth)),
        "seconds": time.perf_counter() - started,
    }
    print(f"{n} meetings, gold kept on {args.keep}, {args.hidings} hidings")
    corr = result["correlation_y_f"]
    print(f"full-gold figure (mean per meeting): {truth:.4f}; corr(y, judge) {corr:.2f}")
    for k in ("ppi", "human", "ppi_n", "human_n"):
        label = {
            "ppi": "PPI (t)",
            "human": "humans only (t)",
            "ppi_n": "PPI (normal)",
            "human_n": "humans only (normal)",
        }[k]
        print(
            f"{label:>22}: coverage {result['coverage'][k]:.3f}, median width "
            f"{result['median_width'][k]:.4f}"
        )
    print(
        f"PPI narrower in {result['ppi_narrower_share']:.1%} of hidings; median worth "
        f"{result['median_labels_worth']:.2f} labels for {args.keep}"
    )
    out = Path(__file__).parent / "results" / "bench_ppi_ami.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
