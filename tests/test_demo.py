"""`chatledger demo`: the whole offline benchmark on the bundled corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatledger.cli._app import main


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("demo")
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["demo", "--out", str(out), "--format", "json"]) == 0
    return out, json.loads(buffer.getvalue())  # --format json prints nothing but JSON


def test_simulated_models_follow_severity(demo: tuple[Path, dict]) -> None:
    _, data = demo
    by_name = {m["name"]: m for m in data["leaderboard"]}
    assert set(by_name) == {
        "offline:rules",
        "simulated:light",
        "simulated:medium",
        "simulated:heavy",
    }
    for key in ("overall",):
        values = [by_name[f"simulated:{s}"][key] for s in ("light", "medium", "heavy")]
        assert values[0] > values[1] > values[2], values
    for layer in ("extraction", "judge", "downstream"):
        values = [by_name[f"simulated:{s}"]["layers"][layer] for s in ("light", "medium", "heavy")]
        assert values[0] > values[1] > values[2], (layer, values)


def test_demo_writes_a_full_run(demo: tuple[Path, dict]) -> None:
    out, data = demo
    run = out / "run"
    for name in ("run.json", "scores.parquet", "downstream.json", "judgements.jsonl"):
        assert (run / name).is_file(), name
    run_json = json.loads((run / "run.json").read_text())
    assert run_json["layers_run"] == ["extraction", "judge", "downstream"]
    assert run_json["chunks"] == 36
    assert data["renormalisation"] is None


def test_human_gold_uses_covered_fields_only(demo: tuple[Path, dict]) -> None:
    _, data = demo
    by_corpus = {h["corpus"]: h for h in data["human_gold"]}
    assert set(by_corpus) == {"ami", "casino"}
    assert set(by_corpus["casino"]["fields"]) == {"claims", "negotiation_patterns"}
    assert "emotional_arc" not in by_corpus["ami"]["fields"]
    for entry in by_corpus.values():
        assert 0.0 < entry["composite"] < 1.0


def test_demo_includes_the_structbench_baseline(demo: tuple[Path, dict]) -> None:
    _, data = demo
    summary = data["structbench"]
    assert summary["n"] == 1000
    row = summary["leaderboard"][0]
    # An honest floor: neither trivial nor perfect (figures in docs/structbench.md).
    assert 0.5 < row["DOC"] < 0.9 and 0.6 < row["WV"] < 0.95
    assert Path(summary["report"]).is_file()
