"""Prediction-powered agreement with humans on the AMI pool (issue 33).

The 32 meetings of /work/shared/data/ami-pool are imported, extracted by ``offline:rules`` and
run against their human gold with the grounding judge (extraction and judge layers). Per
meeting: ``y`` = offline:rules' extraction agreement with the human gold, ``f`` = the judge's
score (the only figure on these meetings that needs no human: ChatLedger's one offline
extractor is offline:rules itself, the simulated ones are made from the gold, and a local
model takes ~80 s a chunk here, ~8 hours for the pool's 354 chunks).

``runs._coverage.run_ppi_coverage`` (``chatledger coverage RUN --ppi-keep 6``) then draws
1,000 seeded hidings that keep the gold of 6 meetings (hide it on 80 %) and checks the Student
PPI interval and the human-only one on the same 6 against the full-gold figure (the mean of
``y`` over all 32). Then, to say what correlation PPI would need here: predictors with an exact
correlation ρ with the real ``y`` (five per ρ, each over 1,000 hidings). Writes
benchmarks/results/bench_ppi_ami.json (docs/sequential.md's table is generated from it).

Run: python benchmarks/bench_ppi_ami.py [--pool PATH] [--hidings 1000] [--keep 6]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from chatledger.corpus import import_corpus
from chatledger.extractors import get_extractor
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._coverage import ppi_coverage, run_ppi_coverage
from chatledger.runs._sequential import conversation_figures

DEFAULT_POOL = Path(os.environ.get("CHATLEDGER_DATA", "/work/shared/data")) / "ami-pool"
RHOS = (0.12, 0.3, 0.5, 0.7, 0.9)


def normal_summary(normal: dict[str, Any]) -> dict[str, Any]:
    """What the results keep of the hidings with normal quantiles and ppi-python's λ."""
    return {
        "ppi_coverage": normal["ppi"]["coverage"],
        "human_coverage": normal["human"]["coverage"],
        "median_width": normal["median_width"],
        "wider_share": normal["wider_share"],
        "max_width_ratio": normal["max_width_ratio"],
    }


def _predictor(y: np.ndarray, rho: float, rng: np.random.Generator) -> np.ndarray:
    """A predictor whose correlation with ``y`` is exactly ``rho`` (offset, own scale)."""
    z = (y - y.mean()) / y.std()
    e = rng.standard_normal(y.size)
    e -= e.mean()
    e -= (e @ z) / (z @ z) * z
    e /= e.std()
    return 0.3 + 0.05 * (rho * z + math.sqrt(1.0 - rho**2) * e)


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
        real = run_ppi_coverage(
            work / "run", model="offline:rules", keep=args.keep, hidings=args.hidings, seed=33
        )
        normal = run_ppi_coverage(
            work / "run",
            model="offline:rules",
            keep=args.keep,
            hidings=args.hidings,
            seed=33,
            student=False,
        ).to_dict()
        per = conversation_figures(
            work / "run", "offline:rules", "offline:rules", ["layers.extraction"]
        )
    y = per["layers.extraction"].candidate
    result = real.to_dict()
    result["run_dir"] = "(temporary)"
    result["normal"] = normal_summary(normal)
    rng = np.random.default_rng(7)
    needed = []
    for rho in RHOS:
        rows = [
            ppi_coverage(
                y, _predictor(y, rho, rng), keep=args.keep, hidings=args.hidings, seed=rep
            ).to_dict()
            for rep in range(5)
        ]
        needed.append(
            {
                "correlation": rho,
                "ppi_coverage": float(np.mean([r["ppi"]["coverage"] for r in rows])),
                "median_width_ratio": float(np.median([r["median_width_ratio"] for r in rows])),
                "narrower_share": float(np.mean([r["narrower_share"] for r in rows])),
            }
        )
    result["needed"] = needed
    result["seconds"] = time.perf_counter() - started
    ppi, human = result["ppi"], result["human"]
    print(
        f"{result['conversations']} meetings, gold kept on {args.keep}, {args.hidings} hidings; "
        f"full-gold figure {result['full_gold_figure']:.4f}; corr(y, judge) "
        f"{result['correlation']:.2f}"
    )
    print(
        f"PPI covers {ppi['coverage']:.3f}, humans only {human['coverage']:.3f}; width ratio "
        f"median {result['median_width_ratio']:.3f}, max {result['max_width_ratio']:.3f}; "
        f"narrower in {result['narrower_share']:.1%}"
    )
    for row in needed:
        print(
            f"  corr {row['correlation']:.2f}: covers {row['ppi_coverage']:.3f}, median ratio "
            f"{row['median_width_ratio']:.3f}, narrower in {row['narrower_share']:.1%}"
        )
    out = Path(__file__).parent / "results" / "bench_ppi_ami.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
