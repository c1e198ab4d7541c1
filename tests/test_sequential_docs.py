"""The figures of docs/sequential.md and README's spend-less block, generated (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

from chatledger.demo._sequential import sequential_demo, sequential_lines
from generated_docs import ROOT, check_block


def test_demo_spend_less_block(tmp_path: Path) -> None:
    demo = sequential_demo(tmp_path)
    lines = sequential_lines(demo)
    text = "\n".join([lines[0], "", *(f"- {line.strip()}" for line in lines[1:])])
    check_block("README.md", "demo-spend-less", text)
    check_block("docs/sequential.md", "spend-less-demo", text)
    assert demo.decision.conversations_used < demo.decision.conversations_available


def test_ppi_ami_pool_table() -> None:
    data = json.loads((ROOT / "benchmarks" / "results" / "bench_ppi_ami.json").read_text())
    cov, width = data["coverage"], data["median_width"]
    labels = {
        "ppi": f"PPI: the judge on {data['meetings']} + humans on {data['kept']} (Student t)",
        "human": f"humans only, the same {data['kept']} (Student t)",
        "ppi_n": "PPI, normal (as ppi-python)",
        "human_n": "humans only, normal",
    }
    rows = [
        f"Full-gold figure {data['full_gold_figure']:.4f}; correlation of the judge with the "
        f"human figure {data['correlation_y_f']:.2f}; {data['hidings']:,} hidings.",
        "",
        "| interval (95 %) | covers the full-gold figure | median width |",
        "|---|---|---|",
    ]
    rows += [f"| {labels[k]} | {cov[k]:.1%} | {width[k]:.4f} |" for k in labels]
    rows += [
        "",
        f"PPI narrower than humans only in {data['ppi_narrower_share']:.1%} of hidings; "
        f"median worth {data['median_labels_worth']:.1f} human-annotated meetings for "
        f"{data['kept']}.",
    ]
    check_block("docs/sequential.md", "ppi-ami-pool", "\n".join(rows))


def test_sequential_benchmark_table() -> None:
    data = json.loads((ROOT / "benchmarks" / "results" / "bench_sequential.json").read_text())
    pool = data["settings"]["pool"]
    rows = [
        "| true difference | pass | fail | undecided | wrong share | median stop |",
        "|---|---|---|---|---|---|",
    ]
    rows += [
        f"| {r['effect']:+.2f} | {r['passed']} | {r['failed']} | {r['undecided']} | "
        f"{r['wrong_share']:.3f} | {r['median_stop']} of {pool} ({r['median_stop_share']:.0%}) |"
        for r in data["results"]
    ]
    check_block("docs/sequential.md", "sequential-benchmark", "\n".join(rows))
    assert all(r["wrong_share"] <= data["settings"]["alpha"] for r in data["results"])
