"""Strategy vs model (stats.factor_effects), worked by hand on tiny grids."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chatledger.stats import factor_effects

MODELS = ("big", "small")
STRATEGIES = ("s1", "s2")


def _cube(cells: dict[tuple[str, str], list[float]]) -> np.ndarray:
    return np.array([[cells[(m, s)] for s in STRATEGIES] for m in MODELS], dtype=np.float64)


def test_point_estimates_by_hand() -> None:
    cube = _cube(
        {
            ("big", "s1"): [1, 1],
            ("big", "s2"): [0, 0],
            ("small", "s1"): [1, 0],
            ("small", "s2"): [0, 0],
        }
    )
    result = factor_effects({"WV": cube}, MODELS, STRATEGIES, n_resamples=0, seed=0)
    (e,) = result.metrics
    # s1 over models and documents: (1+1+1+0)/4 = 0.75; s2: 0 → strategy effect 0.75.
    # big over strategies and documents: (1+1+0+0)/4 = 0.5; small: 0.25 → model effect 0.25.
    assert e.strategy.estimate == pytest.approx(0.75)
    assert e.model.estimate == pytest.approx(0.25)
    assert e.difference.estimate == pytest.approx(0.5)
    assert (e.best_strategy, e.worst_strategy, e.best_model, e.worst_model) == (
        "s1",
        "s2",
        "big",
        "small",
    )
    assert e.strategy.low is None and e.verdict == "unclear"  # no resamples, no verdict
    assert result.resamples == 0 and result.documents == 2


def test_identical_documents_give_a_degenerate_interval_and_a_verdict() -> None:
    # Every document the same: every resample equals the estimate, so the interval is a point.
    strategy_wins = _cube(
        {
            ("big", "s1"): [1.0] * 4,
            ("big", "s2"): [0.0] * 4,
            ("small", "s1"): [0.8] * 4,
            ("small", "s2"): [0.2] * 4,
        }
    )
    (e,) = factor_effects(
        {"MV": strategy_wins}, MODELS, STRATEGIES, n_resamples=200, seed=1
    ).metrics
    assert e.strategy.estimate == pytest.approx(0.8) and e.model.estimate == pytest.approx(0.0)
    assert (e.difference.low, e.difference.high) == (pytest.approx(0.8), pytest.approx(0.8))
    assert e.verdict == "strategy"
    model_wins = _cube(
        {
            ("big", "s1"): [0.9] * 4,
            ("big", "s2"): [0.8] * 4,
            ("small", "s1"): [0.2] * 4,
            ("small", "s2"): [0.1] * 4,
        }
    )
    (e,) = factor_effects({"MV": model_wins}, MODELS, STRATEGIES, n_resamples=200, seed=1).metrics
    # strategy: 0.55 − 0.45 = 0.10; model: 0.85 − 0.15 = 0.70; difference −0.60.
    assert e.difference.estimate == pytest.approx(-0.6)
    assert e.verdict == "model" and e.best_model == "big"


def test_noise_leaves_the_verdict_unclear_and_intervals_hold_their_estimates() -> None:
    rng = np.random.default_rng(7)
    cube = rng.uniform(0, 1, size=(2, 2, 30))
    (e,) = factor_effects({"DOC": cube}, MODELS, STRATEGIES, n_resamples=500, seed=3).metrics
    assert e.verdict == "unclear"
    assert e.difference.low is not None and e.difference.high is not None
    assert e.difference.low < 0 < e.difference.high
    for interval in (e.strategy, e.model, e.difference):
        assert interval.low is not None and interval.high is not None
        assert interval.low <= interval.estimate <= interval.high


def test_a_structbench_run_with_two_models_and_two_strategies_reports_the_comparison(
    tmp_path: Path,
) -> None:
    import json

    from chatledger.structbench import load_prediction_file, read_dataset, write_structbench_run

    schema = {
        "type": "object",
        "properties": {"total": {"type": "number"}},
        "required": ["total"],
        "additionalProperties": False,
    }
    truth = {f"d{i}": {"total": i} for i in range(1, 5)}
    dataset = tmp_path / "emails.jsonl"
    dataset.write_text(
        "".join(
            json.dumps({"id": k, "input": f"total {v['total']}", "schema": schema,
                        "ground_truth": v}) + "\n"
            for k, v in truth.items()
        ),
        encoding="utf-8",
    )  # fmt: skip
    files = []
    for model, strategy, right in (
        ("big", "s1", True), ("big", "s2", True), ("small", "s1", True), ("small", "s2", False),
    ):  # fmt: skip
        path = tmp_path / f"{model}-{strategy}.jsonl"
        path.write_text(
            "".join(
                json.dumps({"id": k, "output": json.dumps(v) if right else "no JSON here",
                            "model": model, "strategy": strategy}) + "\n"
                for k, v in truth.items()
            ),
            encoding="utf-8",
        )  # fmt: skip
        files.append(load_prediction_file(path))
    run = write_structbench_run(
        tmp_path / "run", read_dataset(dataset), files, dataset_path=dataset, n_resamples=200
    )
    effects = run.run.strategy_vs_model
    assert effects is not None
    block = effects.model_dump(mode="json")
    assert (block["models"], block["strategies"], block["documents"]) == (
        ["big", "small"], ["s1", "s2"], 4,
    )  # fmt: skip
    doc = next(e for e in block["metrics"] if e["metric"] == "DOC")
    # DOC is 1 for every right answer, 0 for "no JSON here": s1 means 1.0, s2 0.5 → 0.5;
    # big 1.0, small 0.5 → 0.5. Every document alike, so every resample gives 0.5 − 0.5 = 0.
    assert doc["strategy"]["estimate"] == pytest.approx(0.5)
    assert doc["model"]["estimate"] == pytest.approx(0.5)
    assert (doc["difference"]["low"], doc["difference"]["high"]) == (0.0, 0.0)
    assert doc["verdict"] == "unclear"
    assert (doc["best_strategy"], doc["worst_model"]) == ("s1", "small")
    # The grid's pairs on WV (1 for a right answer, 0 for "no JSON here", on every document):
    # within big s1 − s2 = 0 everywhere (nothing to decide, no sample size shows nothing); within
    # small s1 − s2 = 1 on every document (decided; with no spread two documents would do);
    # under s1 big − small = 0, under s2 = 1.
    grid = run.run.grid_pairs
    assert grid is not None and (grid.metric, grid.documents, grid.power) == ("WV", 4, 0.8)
    got = [
        (p.kind, p.within, p.a, p.b, p.difference, p.decided, p.documents_needed)
        for p in grid.pairs
    ]
    assert got == [
        ("strategy", "big", "s1", "s2", 0.0, False, None),
        ("strategy", "small", "s1", "s2", 1.0, True, 2),
        ("model", "s1", "big", "small", 0.0, False, None),
        ("model", "s2", "big", "small", 1.0, True, 2),
    ]
    assert (grid.pairs[1].low, grid.pairs[1].high) == (1.0, 1.0)
    from chatledger.report import build_structbench_report

    html = build_structbench_report(run.out_dir).read_text(encoding="utf-8")
    assert "Strategy or model: which moves the scores more?" in html
    assert "unclear (interval includes 0)" in html
    assert "Which differences are decided?" in html and html.count(">not decided<") == 2
    # A run with one model has no comparison.
    single = write_structbench_run(
        tmp_path / "one", read_dataset(dataset), files[:2], dataset_path=dataset, n_resamples=0
    )
    assert single.run.strategy_vs_model is None and single.run.grid_pairs is None
