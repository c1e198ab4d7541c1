"""README.md's demo figures are the demo's own: each table is generated from a demo run and
compared with the README (tests/generated_docs.py), and the claims the prose makes about them
are asserted here, so neither can drift from the code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatledger.record import ConversationRun, SwitchComparison, WhatBreaks, read_run_record
from generated_docs import check_block


@pytest.fixture(scope="module")
def demo(demo_json: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    """What `chatledger demo --format json` printed (conftest.demo_json, once a session)."""
    return demo_json[1]


def _switch_dir(demo: dict[str, Any]) -> Path:
    assert demo["switch"] is not None
    return Path(demo["switch"]["run"])


def _record(path: Path) -> ConversationRun:
    record = read_run_record(path)
    assert isinstance(record, ConversationRun)
    return record


def _cell(record: ConversationRun, model: str, key: str, value: float) -> str:
    stats = record.stats
    interval = stats.interval(model, key) if stats is not None else None
    if interval is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def leaderboard_markdown(run_dir: Path) -> str:
    """The leaderboard of a run as the README shows it: overall with its interval, the layers,
    validity and replies cut by the token limit."""
    record = _record(run_dir)
    rows = [
        "| model | overall [95 % interval] | extraction | judge | downstream | valid "
        "| cut by max_tokens |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in sorted(record.models, key=lambda m: (-m.overall, m.name)):
        layers = " | ".join(
            f"{m.layers[name]:.3f}" if name in m.layers else "—"
            for name in ("extraction", "judge", "downstream")
        )
        degenerate = m.degenerate
        cut = (
            str(degenerate.cut_by_max_tokens)
            if degenerate and degenerate.cut_by_max_tokens
            else "—"
        )
        valid = m.chunks - m.invalid - m.missing
        rows.append(
            f"| {m.name} | {_cell(record, m.name, 'overall', m.overall)} | {layers} "
            f"| {valid}/{m.chunks} | {cut} |"
        )
    return "\n".join(rows)


def test_readme_leaderboard_is_the_demo_s(demo: dict[str, Any]) -> None:
    check_block("README.md", "demo-leaderboard", leaderboard_markdown(Path(demo["run"])))


def test_readme_switch_table_is_the_demo_s(demo: dict[str, Any]) -> None:
    check_block("README.md", "demo-switch", leaderboard_markdown(_switch_dir(demo)))


def test_readme_structbench_table_is_the_demo_s(demo: dict[str, Any]) -> None:
    local = demo["structbench_local"]
    assert local is not None
    wv = {row["name"]: row["WV"] for row in local["leaderboard"]}
    baseline = next(v for k, v in wv.items() if "rule_baseline" in k)
    strategies = sorted({k.rsplit("/", 1)[1] for k in wv if "rule_baseline" not in k})
    models = sorted({k.rsplit("/", 1)[0] for k in wv if "rule_baseline" not in k})
    rows = ["| strategy | " + " | ".join(models) + " |", "|---" * (len(models) + 1) + "|"]
    for strategy in strategies:
        cells = " | ".join(f"{wv[f'{m}/{strategy}']:.3f}" for m in models)
        rows.append(f"| {strategy} | {cells} |")
    rows.append(f"| (rule baseline, same emails) | {baseline:.3f} |" + " |" * (len(models) - 1))
    check_block("README.md", "demo-structbench", "\n".join(rows))


def structbench_pairs_markdown(grid: dict[str, Any]) -> str:
    """The grid's decisions as the README shows them: per model how many strategy pairs are
    decided, and the model-size difference under each strategy."""
    level, power = f"{grid['confidence']:.0%}", f"{grid['power']:.0%}"
    rows = [
        f"| comparison (WV, a − b) | difference [{level} interval] | decided at {level}? "
        f"| emails for {power} power |",
        "|---|---|---|---|",
    ]
    for pair in grid["pairs"]:
        what = (
            f"{_short(pair['within'])}: {pair['a']} − {pair['b']}"
            if pair["kind"] == "strategy"
            else f"{pair['within']}: {_short(pair['a'])} − {_short(pair['b'])}"
        )
        interval = f" [{pair['low']:+.3f}, {pair['high']:+.3f}]" if pair["low"] is not None else ""
        needed = "—" if pair["documents_needed"] is None else f"≈ {pair['documents_needed']}"
        decided = "yes" if pair["decided"] else "no"
        rows.append(f"| {what} | {pair['difference']:+.3f}{interval} | {decided} | {needed} |")
    return "\n".join(rows)


def _short(model: str) -> str:
    return model.removeprefix("local:").removeprefix("qwen2.5-coder-")


def test_readme_structbench_pairs_are_the_demo_s(demo: dict[str, Any]) -> None:
    local = demo["structbench_local"]
    assert local is not None and local["grid_pairs"] is not None
    grid = local["grid_pairs"]
    # Shown: the model size under each strategy, and the strategy pairs of the 1.5B (the model
    # in production); the report has every pair.
    shown = [
        p
        for p in grid["pairs"]
        if p["kind"] == "model" or p["within"] == "local:qwen2.5-coder-1.5b"
    ]
    check_block(
        "README.md", "demo-structbench-pairs", structbench_pairs_markdown({**grid, "pairs": shown})
    )


def what_breaks_markdown(comparison: SwitchComparison) -> str:
    """The figures that drop when production moves to the cheaper model, largest drop first."""
    level = f"{comparison.confidence:.0%}"
    rows = [
        f"| figure | production vs gold | candidate vs gold | change [{level} paired interval] "
        "| paired over | agreement with production |",
        "|---|---|---|---|---|---|",
    ]
    for f in sorted(comparison.drops, key=lambda f: f.difference):
        assert f.low is not None and f.high is not None and f.high < 0
        agreement = "—" if f.agreement is None else f"{f.agreement:.3f}"
        if f.agreement_low is not None:
            agreement += f" [{f.agreement_low:.3f}, {f.agreement_high:.3f}]"
        rows.append(
            f"| {f.figure} | {f.production:.3f} | {f.candidate:.3f} "
            f"| {f.difference:+.3f} [{f.low:+.3f}, {f.high:+.3f}] | {f.n_units} {f.units} "
            f"| {agreement} |"
        )
    return "\n".join(rows)


def test_readme_what_breaks_is_the_demo_s(demo: dict[str, Any]) -> None:
    switch = _switch_dir(demo)
    assert demo["switch"]["what_breaks"] is not None
    what_breaks = WhatBreaks.model_validate(demo["switch"]["what_breaks"])
    # Written into the switch run and read back by the same class, as the report reads it:
    # what the file holds is what the demo printed.
    assert WhatBreaks.read(switch) == what_breaks
    comparison = next(
        c for c in what_breaks.comparisons if c.candidate == "recorded:qwen2.5-coder-0.5b"
    )
    assert comparison.production == "recorded:qwen2.5-coder-1.5b"
    for f in comparison.figures:
        drop = f.high is not None and f.high < 0
        gain = f.low is not None and f.low > 0
        if f.verdict != "undecided":  # no interval: too few units to tell
            assert f.verdict == ("drop" if drop else "gain" if gain else "no change shown")
    check_block("README.md", "demo-what-breaks", what_breaks_markdown(comparison))
    report = demo["switch"]["report"]
    html = Path(report).read_text(encoding="utf-8") if report else ""
    assert "What breaks when you switch from" in html


def test_the_prose_about_the_demo_holds(demo: dict[str, Any]) -> None:
    """What the README says in words: seven challengers, three of them recorded; the
    simulated models in severity order; the 1.5B above the 0.5B above the 135M against the
    gold; the cheaper models in the switch run agree with the 1.5B less than 1."""
    record = _record(Path(demo["run"]))
    overall = {m.name: m.overall for m in record.models}
    assert len(overall) == 7
    assert sum(name.startswith("recorded:") for name in overall) == 3
    light, medium, heavy = (overall[f"simulated:{s}"] for s in ("light", "medium", "heavy"))
    assert light > medium > heavy
    big, small, tiny = (
        overall[f"recorded:{m}"]
        for m in ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m")
    )
    assert big > small > tiny
    switch = _record(_switch_dir(demo))
    assert switch.reference.name == "recorded:qwen2.5-coder-1.5b"
    assert all(m.overall < 1.0 for m in switch.models)
