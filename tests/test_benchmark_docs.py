"""docs/benchmarks.md's table of issue 32's last pass, generated from the results files of
benchmarks/bench_score.py (--process-only) and benchmarks/bench_readers.py: what each run
printed, with the load it ran under. Timings are never asserted, only copied."""

from __future__ import annotations

import json
import statistics
from typing import Any

from generated_docs import ROOT, check_block

RESULTS = ROOT / "benchmarks" / "results"


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / name).read_text(encoding="utf-8"))
    return data


def _score(data: dict[str, Any]) -> dict[str, float]:
    """score and the bare script, CPU and wall medians, and their ratios paired by round."""
    process = data["process"]
    score, bare = process["sizes"]["1000"], process["bare_kernel"]
    pairs = list(zip(score["runs"], bare["runs"], strict=True))
    return {
        "cpu": score["cpu_median_s"],
        "wall": score["wall_median_s"],
        "bare_cpu": bare["cpu_median_s"],
        "bare_wall": bare["wall_median_s"],
        "cpu_ratio": process["score_vs_bare_cpu_paired"],
        "wall_ratio": statistics.median(s["wall_s"] / b["wall_s"] for s, b in pairs),
        "rounds": len(pairs),
        "load_start": data["machine_at_start"]["load_average_1_5_15min"][0],
        "load_end": data["load_average_at_end"][0],
    }


def _load_range(*loads: float) -> str:
    low, high = f"{min(loads):.1f}", f"{max(loads):.1f}"
    return low if low == high else f"{low}–{high}"


def issue32_rows() -> list[str]:
    before = _score(_load("bench_score_issue32_before.json"))
    after = _score(_load("bench_score_issue32_after.json"))
    one = _score(_load("bench_score_issue32_after_blas1.json"))
    readers = _load("bench_readers_issue32.json")
    readers_one = _load("bench_readers_issue32_blas1.json")
    score_load = _load_range(
        before["load_start"], before["load_end"], after["load_start"], after["load_end"]
    )
    rows = [
        "| figure | before | after | how |",
        "|---|---|---|---|",
        f"| `score` / bare script, CPU, median of the rounds' ratios "
        f"| {before['cpu_ratio']:.2f}× | **{after['cpu_ratio']:.2f}×** "
        f"| `bench_score.py --process-only --sizes 1000 --repeats {after['rounds']} "
        f"--no-peer [--source]`, load {score_load} |",
        f"| `score` / bare script, wall, same rounds | {before['wall_ratio']:.2f}× "
        f"| {after['wall_ratio']:.2f}× | same |",
        f"| `score`, CPU / wall (bare script) | {before['cpu']:.2f} / {before['wall']:.2f} s "
        f"({before['bare_cpu']:.2f} / {before['bare_wall']:.2f} s) "
        f"| {after['cpu']:.2f} / {after['wall']:.2f} s "
        f"({after['bare_cpu']:.2f} / {after['bare_wall']:.2f} s) | same |",
        f"| `score` / bare script, both at one BLAS thread | — | {one['cpu_ratio']:.2f}× CPU, "
        f"{one['wall_ratio']:.2f}× wall | the same with `OPENBLAS_NUM_THREADS=1` for every "
        f"process, load {_load_range(one['load_start'], one['load_end'])} |",
    ]
    for run, how in (
        (readers, "`bench_readers.py --repeats {n} --source`, the trees alternating"),
        (readers_one, "the same with `OPENBLAS_NUM_THREADS=1` for every process"),
    ):
        floor = run["floor"]
        load = _load_range(run["load_average_before"][0], run["load_average_after"][0])
        text = how.format(n=run["repeats"])
        blas = "" if run["openblas_num_threads_env"] is None else ", one BLAS thread"
        for name in ("gate", "stats"):
            entry = run["commands"][name]
            other = entry["other_tree"]
            rows.append(
                f"| `{name}` on {run['chunks']:,} chunks, CPU / wall{blas} "
                f"| {other['cpu_median_s']:.2f} / {other['wall_median_s']:.2f} s "
                f"| **{entry['cpu_median_s']:.2f}** / {entry['wall_median_s']:.2f} s "
                f"(after / before {entry['cpu_vs_other_paired']:.2f} by round) "
                f"| {text}, load {load}; floor {floor['cpu_median_s']:.2f} / "
                f"{floor['wall_median_s']:.2f} s |"
            )
    return rows


def test_issue32_last_pass_table() -> None:
    check_block("docs/benchmarks.md", "issue32-last-pass", "\n".join(issue32_rows()))
    for name in ("bench_readers_issue32.json", "bench_readers_issue32_blas1.json"):
        data = _load(name)
        assert set(data["commands"]) == {"gate", "stats"} and data["repeats"] >= 5
        assert all("other_tree" in entry for entry in data["commands"].values())
    assert _load("bench_readers_issue32.json")["openblas_num_threads_env"] is None
    assert (
        _load("bench_score_issue32_after_blas1.json")["machine_at_start"][
            "openblas_num_threads_env"
        ]
        == "1"
    )
