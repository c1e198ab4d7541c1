"""Trust in the numbers: intervals, paired differences, ranks, weight sensitivity, audit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chatledger.cli._app import main
from chatledger.corpus import read_chunks, read_extractions
from chatledger.demo import write_bundled_corpus
from chatledger.runs import audit_metrics, pitfall_summary
from chatledger.stats import (
    bootstrap_intervals,
    dirichlet_sensitivity,
    paired_difference,
    rank_probabilities,
    repeat_variance,
    simplex_grid,
)


def test_constant_sample_has_zero_width_interval() -> None:
    low_high = bootstrap_intervals([[0.7] * 30, [1.0] * 30], n_resamples=500)
    assert [(i.low, i.high, i.method) for i in low_high] == [
        (0.7, 0.7, "constant"),
        (1.0, 1.0, "constant"),
    ]
    single = bootstrap_intervals([[0.4]])[0]
    assert (single.low, single.high) == (0.4, 0.4)


def test_interval_covers_the_mean_and_is_seeded() -> None:
    rng = np.random.default_rng(0)
    data = rng.uniform(0, 1, size=(3, 50))
    a = bootstrap_intervals(data, n_resamples=1000, seed=5)
    b = bootstrap_intervals(data, n_resamples=1000, seed=5)
    assert a == b
    for interval, row in zip(a, data, strict=True):
        assert interval.low < row.mean() < interval.high
        # Standard error of a U(0,1) mean over 50 chunks is about 0.041: a 95% interval
        # is about ±0.08 wide on each side.
        assert 0.05 < interval.high - interval.low < 0.25


def test_paired_difference_detects_a_known_gap() -> None:
    rng = np.random.default_rng(42)
    base = rng.uniform(0.4, 0.9, 200)
    better = base + 0.03 + rng.normal(0, 0.05, 200)  # known gap 0.03 at n = 200
    diff = paired_difference(better, base, n_resamples=4000, seed=1)
    assert diff.difference > 0 and diff.low > 0
    assert diff.p_value < 0.05
    reverse = paired_difference(base, better, n_resamples=4000, seed=1)
    assert reverse.difference < 0 and reverse.p_value < 0.05


def test_paired_difference_of_noise_is_not_significant() -> None:
    rng = np.random.default_rng(7)
    base = rng.uniform(0.4, 0.9, 200)
    noisy = base + rng.normal(0, 0.05, 200) - 0.0  # identical up to noise
    diff = paired_difference(noisy, base, n_resamples=4000, seed=1)
    assert diff.low < 0 < diff.high
    assert diff.p_value > 0.05
    same = paired_difference(base, base)
    assert (same.difference, same.p_value) == (0.0, 1.0)


def test_rank_probabilities() -> None:
    rng = np.random.default_rng(3)
    clear = np.vstack([rng.uniform(0.8, 0.9, 40), rng.uniform(0.1, 0.2, 40)])
    probs = rank_probabilities(clear, n_resamples=500)
    assert probs.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    tied = np.vstack([rng.uniform(0, 1, 40), rng.uniform(0, 1, 40)])
    probs = rank_probabilities(tied, n_resamples=2000, seed=1)
    assert np.allclose(probs.sum(axis=0), 1.0) and np.allclose(probs.sum(axis=1), 1.0)
    assert 0.05 < probs[0, 0] < 0.95


def test_ranking_flip_under_layer_weights_is_found() -> None:
    # A is better on extraction (0.9 vs 0.6), B on downstream (0.9 vs 0.3).
    # Overall with weights (w, 1-w): A = 0.3 + 0.6w, B = 0.9 - 0.3w; A wins when w > 2/3.
    scores = [[0.9, 0.3], [0.6, 0.9]]
    grid = simplex_grid(scores, ["extraction", "downstream"], [0.8, 0.2], step=0.05)
    holds = {round(p["weights"]["extraction"], 2): p["holds"] for p in grid["points"]}
    assert grid["configured_ranking"] == [0, 1]
    assert holds[0.7] and not holds[0.65] and holds[1.0] and not holds[0.0]
    # Grid points 0.70, 0.75, ..., 1.00 hold: 7 of 21.
    assert grid["share_holding"] == pytest.approx(7 / 21)
    # Near the configured weights the ranking is stable; with loose draws it swaps often.
    tight = dirichlet_sensitivity(scores, [0.8, 0.2], ["A", "B"], concentration=1000, seed=0)
    loose = dirichlet_sensitivity(scores, [0.8, 0.2], ["A", "B"], concentration=2, seed=0)
    assert tight.swap_probability["A|B"] < 0.05
    assert loose.swap_probability["A|B"] > 0.2
    assert loose.tau_mean < tight.tau_mean


def test_repeat_variance_split() -> None:
    # Two chunks × two samples: chunk means 0.5 and 0.9 (between variance 0.04),
    # within-chunk variance 0.01 each -> sampling share 0.01 / 0.05 = 0.2.
    out = repeat_variance([[0.4, 0.6], [0.8, 1.0]])
    assert out["sampling_share"] == pytest.approx(0.2)
    assert out["mean"] == pytest.approx(0.7)


def test_audit_curves_are_monotone_on_the_bundled_corpus(tmp_path: Path) -> None:
    chunks_path, gold_path = write_bundled_corpus(tmp_path)
    curves = audit_metrics(
        read_extractions(gold_path).records,
        read_chunks(chunks_path),
        severities=(0.0, 0.25, 0.5, 0.75, 1.0),
    )
    assert curves and all(c.monotone for c in curves), [
        c.to_dict() for c in curves if not c.monotone
    ]
    # Every operator bites on at least one of its fields, except the keyword collapse under
    # the default matcher: that is the one-keyword pitfall, which the guarded matcher catches.
    by_op: dict[tuple[str, str], float] = {}
    for c in curves:
        key = (c.operator, c.matcher)
        by_op[key] = max(by_op.get(key, 0.0), c.sensitivity)
    assert by_op.pop(("keywords", "token_set")) == 0.0
    assert all(v > 0.1 for v in by_op.values()), by_op
    pitfall = pitfall_summary(curves)
    assert pitfall["token_set"] == 0.0 and pitfall["guarded"] > 0.5


def test_stats_command_on_a_run(
    demo_json: tuple[Path, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    run = demo_json[0] / "run"  # the session's demo (stats reads it, writes nothing)
    assert main(["stats", str(run), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    stats = data["stats"]
    assert set(stats) >= {
        "intervals",
        "paired_differences",
        "rank_probabilities",
        "weight_sensitivity",
    }
    light = stats["intervals"]["simulated:light"]["overall"]
    assert light["low"] <= light["estimate"] <= light["high"]
    assert main(["stats", str(run)]) == 0
    shown = capsys.readouterr().out
    assert "Paired differences" in shown and "simplex" in shown
