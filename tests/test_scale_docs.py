"""docs/scale.md's measured tables, generated from benchmarks/bench_scale.py's results files
(issue 34): what each run of the benchmark printed, with the load it ran under."""

from __future__ import annotations

import json
import statistics
from typing import Any

from generated_docs import ROOT, check_block

RESULTS = ROOT / "benchmarks" / "results"


def _table(data: dict[str, Any]) -> list[str]:
    rows = [
        "| chunks | executor | wall | CPU (tree) | peak memory (tree) | growth per chunk "
        "| wall vs local | CPU vs local | load before → after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    sizes = sorted(int(k) for k in data if k.isdigit())
    for size in sizes:
        for executor, entry in data[str(size)].items():
            growth = entry.get("growth_kb_per_chunk")
            rows.append(
                f"| {size:,} | `{executor}` | {entry['wall_s']:,.1f} s | {entry['cpu_s']:,.1f} s "
                f"| {entry['peak_tree_mb']:,.0f} MB "
                f"| {'—' if growth is None else f'{growth:,.0f} kB'} "
                f"| {entry.get('speedup_vs_local', 1.0):.2f}× "
                f"| {entry.get('cpu_vs_local', 1.0):.2f}× "
                f"| {entry['load_before']:.1f} → {entry['load_after']:.1f} |"
            )
    return rows


def test_streamed_assembly_table() -> None:
    """The 10,000-chunk invocation after the stages were assembled from the spool in chunk
    order (bench_scale.py --sizes 10000 --dask, the executors one after another; the runs it
    finished): every peak within the issue's targets."""
    data = json.loads((RESULTS / "bench_scale_10k_streamed.json").read_text(encoding="utf-8"))
    check_block("docs/scale.md", "scale-10k-streamed", "\n".join(_table(data)))
    peaks = {e: entry["peak_tree_mb"] for e, entry in data["10000"].items()}
    assert peaks["local"] <= 1024  # the targets: 1 GB local, 1.5 GB with workers
    assert all(peak <= 1536 for executor, peak in peaks.items() if executor != "local")


def test_speed_table() -> None:
    """One 1,000-chunk round of the three executors (bench_scale.py --sizes 1000 --no-baseline
    --dask) on the shared machine: CPU of the tree against local's, wall with the load."""
    data = json.loads((RESULTS / "bench_scale_speed_1k.json").read_text(encoding="utf-8"))
    check_block("docs/scale.md", "scale-speed-1k", "\n".join(_table(data)))
    assert set(data["1000"]) == {"local", "processes:2", "dask"}


def test_quiet_speed_table() -> None:
    """Three interleaved 1,000-chunk rounds in a quiet window (bench_scale.py --sizes 1000
    --no-baseline --rounds 3 --dask): medians, the load they ran at."""
    data = json.loads((RESULTS / "bench_scale_speed_1k_quiet.json").read_text(encoding="utf-8"))
    check_block("docs/scale.md", "scale-speed-1k-quiet", "\n".join(_table(data)))
    assert data["rounds"] == 3 and set(data["1000"]) == {"local", "processes:2", "dask"}
    for entry in data["1000"].values():
        assert len(entry["rounds"]) == 3 and entry["load_before"] < 2.0


def _phase_table(data: dict[str, Any]) -> list[str]:
    """Where each executor's wall time went (bench_scale.py's phases, from each run's run.json;
    with rounds, each phase's median): what runs in series is outside the run and the rest."""
    rows = [
        "| chunks | executor | wall | outside the run | facts | units | rest in series "
        "| in series (outside + rest) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in sorted(int(k) for k in data if k.isdigit()):
        for executor, entry in data[str(size)].items():
            runs = entry.get("rounds", [entry])
            phases = {
                name: statistics.median(r["phases"][name] for r in runs)
                for name in ("outside", "facts", "units", "rest")
            }
            serial = phases["outside"] + phases["rest"]
            rows.append(
                f"| {size:,} | `{executor}` | {entry['wall_s']:,.1f} s "
                f"| {phases['outside']:,.1f} s | {phases['facts']:,.1f} s "
                f"| {phases['units']:,.1f} s | {phases['rest']:,.1f} s "
                f"| {serial:,.1f} s ({serial / entry['wall_s']:.0%}) |"
            )
    return rows


def test_overlapped_speed_tables() -> None:
    """After the challengers' facts were moved beside the batches (issue 34, sixth part), on
    top of the stages assembled while the units run (fifth part): three interleaved
    1,000-chunk rounds in one quiet window (bench_scale.py --sizes 1000 --no-baseline --rounds 3
    --dask) and 10,000-chunk runs in quiet windows (local and processes:2 side by side in two
    windows, processes:2 and dask in a third; bench_scale.py --merge), with where the time
    went."""
    small = json.loads((RESULTS / "bench_scale_speed_1k_beside.json").read_text(encoding="utf-8"))
    large = json.loads((RESULTS / "bench_scale_speed_10k_beside.json").read_text(encoding="utf-8"))
    check_block("docs/scale.md", "scale-speed-1k-overlap", "\n".join(_table(small)))
    check_block("docs/scale.md", "scale-speed-10k-overlap", "\n".join(_table(large)))
    merged = {**small, **{k: v for k, v in large.items() if k.isdigit()}}
    check_block("docs/scale.md", "scale-phases-overlap", "\n".join(_phase_table(merged)))
    assert small["rounds"] == 3
    for data, size in ((small, "1000"), (large, "10000")):
        assert set(data[size]) == {"local", "processes:2", "dask"}
        assert all(entry["load_before"] < 3.0 for entry in data[size].values())
    one_k, ten_k = small["1000"], large["10000"]
    # 1,000 chunks: processes:2 1.67x local by the medians (the rounds 1.71, 1.71, 1.67x),
    # its tree's CPU 1.07x local's; dask 20 % behind it.
    assert 1.6 <= one_k["processes:2"]["speedup_vs_local"] < 1.7
    rounds = zip(one_k["local"]["rounds"], one_k["processes:2"]["rounds"], strict=True)
    assert [round(a["wall_s"] / b["wall_s"], 2) for a, b in rounds] == [1.71, 1.71, 1.67]
    assert one_k["dask"]["wall_s"] > 1.1 * one_k["processes:2"]["wall_s"]
    # 10,000 chunks: processes:2 1.67x local by the medians (two local runs, three of
    # processes:2), not 1.7x; the two windows that ran both side by side 1.60x and 1.64x; its
    # tree's CPU 1.14x local's. dask ran once, in the window of the fastest processes:2 run:
    # within 10 % of that run.
    assert 1.6 <= ten_k["processes:2"]["speedup_vs_local"] < 1.7
    local_runs, process_runs = ten_k["local"]["rounds"], ten_k["processes:2"]["rounds"]
    pairs = [(local_runs[0], process_runs[0]), (local_runs[1], process_runs[2])]
    assert [round(a["wall_s"] / b["wall_s"], 2) for a, b in pairs] == [1.60, 1.64]
    assert ten_k["processes:2"]["cpu_vs_local"] > 1.1
    assert ten_k["dask"]["wall_s"] <= 1.1 * process_runs[1]["wall_s"]
    # The facts before the batches are the index and the reference alone, and what runs in
    # series with workers (outside the run and the rest) a few percent of the run.
    for executor in ("processes:2", "dask"):
        runs = ten_k[executor].get("rounds", [ten_k[executor]])
        for run in runs:
            phases = run["phases"]
            assert phases["facts"] < 0.02 * run["wall_s"]
            assert phases["outside"] + phases["facts"] + phases["rest"] < 0.05 * run["wall_s"]
    assert all(entry["peak_tree_mb"] <= 1536 for entry in ten_k.values())
    assert ten_k["local"]["peak_tree_mb"] <= 1024


def _per_chunk_table(data: dict[str, Any]) -> list[str]:
    """Each size's run: wall and CPU per chunk, and wall per chunk against the smallest size's
    (a run linear in chunks gives 1.00×; the issue allows ±20 %)."""
    rows = [
        "| chunks | executor | wall | CPU (tree) | peak memory (tree) | growth per chunk "
        "| wall per chunk | CPU per chunk | wall per chunk vs the smallest | load before → after |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    sizes = sorted(int(k) for k in data if k.isdigit())
    for executor in data[str(sizes[0])]:
        first = data[str(sizes[0])][executor]["wall_s"] / sizes[0]
        for size in sizes:
            entry = data[str(size)][executor]
            growth = entry.get("growth_kb_per_chunk")
            wall_ms, cpu_ms = entry["wall_s"] * 1000 / size, entry["cpu_s"] * 1000 / size
            rows.append(
                f"| {size:,} | `{executor}` | {entry['wall_s']:,.1f} s | {entry['cpu_s']:,.1f} s "
                f"| {entry['peak_tree_mb']:,.0f} MB "
                f"| {'—' if growth is None else f'{growth:,.0f} kB'} "
                f"| {wall_ms:,.1f} ms | {cpu_ms:,.1f} ms "
                f"| {entry['wall_s'] / size / first:.2f}× "
                f"| {entry['load_before']:.1f} → {entry['load_after']:.1f} |"
            )
    return rows


def test_streamed_layer_3_table() -> None:
    """10,000 and 20,000 chunks after layer 3 was merged conversation by conversation
    (bench_scale.py --sizes 10000 20000 --executors local --timeline 10): the peak of the tree
    within the issue's 10k target, and what it grows by per chunk."""
    data = json.loads((RESULTS / "bench_scale_10k_20k.json").read_text(encoding="utf-8"))
    check_block("docs/scale.md", "scale-10k-20k", "\n".join(_per_chunk_table(data)))
    assert data["10000"]["local"]["peak_tree_mb"] <= 1024


def test_end_cut_10k_table() -> None:
    """10,000 chunks after the end of the run was cut (issue 34's fifth part; bench_scale.py
    --sizes 10000 20000 --executors local --timeline 10, from a copy of main, the 10,000-chunk
    run and the baseline as it printed them: the 20,000-chunk run had not finished): under
    the 1 GB target, and below the same run before it (bench_scale_10k_20k.json)."""
    data = json.loads((RESULTS / "bench_scale_10k_end.json").read_text(encoding="utf-8"))
    check_block("docs/scale.md", "scale-10k-end", "\n".join(_per_chunk_table(data)))
    before = json.loads((RESULTS / "bench_scale_10k_20k.json").read_text(encoding="utf-8"))
    peak = data["10000"]["local"]["peak_tree_mb"]
    assert peak <= 1024 and peak < before["10000"]["local"]["peak_tree_mb"]


def test_100k_table() -> None:
    """100,000 chunks × 3 challengers × 3 layers, `local` (bench_scale.py --sizes 100000
    --executors local --timeline 10, after the end of the run was cut: issue 34's fifth
    part): the tree's peak within the issue's 2 GB, and CPU per chunk within ±20 % of the
    10,000-chunk run's (linear in chunks)."""
    data = json.loads((RESULTS / "bench_scale_100k.json").read_text(encoding="utf-8"))
    check_block("docs/scale.md", "scale-100k", "\n".join(_per_chunk_table(data)))
    assert data["100000"]["local"]["peak_tree_mb"] <= 2048
    small = json.loads((RESULTS / "bench_scale_10k_20k.json").read_text(encoding="utf-8"))
    ratio = (
        data["100000"]["local"]["cpu_ms_per_chunk"] / small["10000"]["local"]["cpu_ms_per_chunk"]
    )
    assert 0.8 <= ratio <= 1.2


def test_generator_table() -> None:
    """The benchmark's corpus generator, writing as it goes: its peak does not grow with the
    corpus (bench_scale.py --generate-only, 10,000 and 100,000 chunks)."""
    runs = {
        **json.loads((RESULTS / "bench_scale_generate_10k.json").read_text(encoding="utf-8"))[
            "generated"
        ],
        **json.loads((RESULTS / "bench_scale_generate.json").read_text(encoding="utf-8"))[
            "generated"
        ],
    }
    rows = [
        "| chunks | wall | CPU | CPU per chunk | peak memory |",
        "|---|---|---|---|---|",
    ]
    for size in sorted(int(k) for k in runs):
        entry = runs[str(size)]
        rows.append(
            f"| {size:,} | {entry['wall_s']:,.0f} s | {entry['cpu_s']:,.1f} s "
            f"| {entry['cpu_s'] * 1000 / size:.1f} ms | {entry['peak_tree_mb']:,.0f} MB |"
        )
    check_block("docs/scale.md", "scale-generate", "\n".join(rows))
    assert set(runs) == {"10000", "100000"}
    # Flat but for the readers' duplicate-id sets (a few dozen bytes a chunk): 36 → 66 MB.
    assert all(entry["peak_tree_mb"] < 100 for entry in runs.values())
