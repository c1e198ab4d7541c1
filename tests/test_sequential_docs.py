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
    """benchmarks/bench_ppi_ami.py's output (runs._coverage.run_ppi_coverage on the AMI pool, and
    predictors of set correlation) as docs/sequential.md's table; the must-show's parts that
    hold are asserted: PPI covers (its Wilson interval reaches 95 %) and is never wider."""
    data = json.loads((ROOT / "benchmarks" / "results" / "bench_ppi_ami.json").read_text())
    ppi, human, width = data["ppi"], data["human"], data["median_width"]
    normal = data["normal"]
    n, kept = data["conversations"], data["kept"]
    rows = [
        f"Full-gold figure {data['full_gold_figure']:.4f} (offline:rules' extraction agreement "
        f"with humans, mean over {n} meetings); the judge's correlation with it across "
        f"meetings {data['correlation']:.2f}; {data['hidings']:,} hidings keeping {kept}.",
        "",
        "| interval (95 %, Student t) | covers the full-gold figure [Wilson 95 %] | median width |",
        "|---|---|---|",
        f"| PPI: the judge on {n} + humans on {kept} (Student t) | {ppi['coverage']:.1%} "
        f"[{ppi['coverage_low']:.1%}, {ppi['coverage_high']:.1%}] | {width['ppi']:.4f} |",
        f"| humans only, the same {kept} (Student t) | {human['coverage']:.1%} "
        f"[{human['coverage_low']:.1%}, {human['coverage_high']:.1%}] | {width['human']:.4f} |",
        f"| PPI, normal quantile and ppi-python's λ | {normal['ppi_coverage']:.1%} "
        f"| {normal['median_width']['ppi']:.4f} |",
        f"| humans only, normal quantile | {normal['human_coverage']:.1%} "
        f"| {normal['median_width']['human']:.4f} |",
        "",
        f"PPI width / humans-only width: median {data['median_width_ratio']:.3f}, at most "
        f"{data['max_width_ratio']:.3f}; narrower in {data['narrower_share']:.1%} of hidings, "
        f"wider in {data['wider_share']:.1%} (median λ {data['median_lambda']:.2f}); with "
        f"ppi-python's λ and normal quantiles wider in {normal['wider_share']:.1%}, by up to "
        f"{normal['max_width_ratio'] - 1:.1%}.",
        "",
        "With a predictor of correlation ρ with the same per-meeting human figure (five "
        f"predictors per ρ, {data['hidings']:,} hidings each):",
        "",
        "| ρ | PPI covers | median width PPI / humans only | PPI narrower in |",
        "|---|---|---|---|",
    ]
    rows += [
        f"| {r['correlation']:.2f} | {r['ppi_coverage']:.1%} | {r['median_width_ratio']:.3f} "
        f"| {r['narrower_share']:.1%} |"
        for r in data["needed"]
    ]
    check_block("docs/sequential.md", "ppi-ami-pool", "\n".join(rows))
    assert ppi["coverage_high"] >= 0.95
    assert data["wider_share"] == 0.0 and data["max_width_ratio"] <= 1.0 + 1e-9


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
    # the must-show: 200 repetitions; wrong decisions at most α for every effect, zero
    # included (where "undecided" is right); a large effect's median run stops by 30 %
    assert data["settings"]["repetitions"] == 200
    assert all(r["wrong_share"] <= data["settings"]["alpha"] for r in data["results"])
    by_effect = {r["effect"]: r for r in data["results"]}
    assert by_effect[0.0]["undecided"] == 200
    assert by_effect[0.3]["median_stop_share"] <= 0.30
    assert by_effect[-0.3]["median_stop_share"] <= 0.30


def test_ppi_ami_model_reference_table() -> None:
    """benchmarks/bench_ppi_ami_model.py's output — the AMI pool's 32 meetings with a recorded
    local model as the reference, on two populations of chunks — as docs/sequential.md's table.
    Asserted on every population: PPI is never wider than humans alone, and where the model
    predicts the humans' figure (correlation 0.5 or more) narrower in median. Coverage is shown,
    not asserted: on the recording so far it moves with the population (docs say why)."""
    data = json.loads((ROOT / "benchmarks" / "results" / "bench_ppi_ami_model.json").read_text())
    recording, kept = data["recording"], data["kept"]
    rows = [
        f"Recording: {recording['lines']} of the pool's {recording['pool_chunks']} chunks, the "
        f"first {recording['chunks_per_meeting']} of every meeting among them; gold kept on "
        f"{kept} of {recording['meetings']} meetings, {data['hidings']:,} hidings per population.",
        "",
        "| population | chunks | full-gold figure | corr(y, f) | PPI covers [Wilson 95 %] "
        "| humans only cover | median width PPI / humans only | PPI narrower in | wider in |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in data["cases"]:
        ppi, human = case["ppi"], case["human"]
        rows.append(
            f"| {case['population']} | {case['chunks']} | {case['full_gold_figure']:.4f} "
            f"| {case['correlation']:.2f} | {ppi['coverage']:.1%} [{ppi['coverage_low']:.1%}, "
            f"{ppi['coverage_high']:.1%}] | {human['coverage']:.1%} "
            f"| {case['median_width_ratio']:.3f} | {case['narrower_share']:.1%} "
            f"| {case['wider_share']:.1%} |"
        )
    check_block("docs/sequential.md", "ppi-ami-model", "\n".join(rows))
    for case in data["cases"]:
        assert case["wider_share"] == 0.0 and case["max_width_ratio"] <= 1.0 + 1e-9
    strong = [case for case in data["cases"] if case["correlation"] >= 0.5]
    assert strong, "no population where the model predicts the humans' figure"
    for case in strong:
        assert case["median_width_ratio"] < 1.0
