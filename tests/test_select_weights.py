"""Field weights of a selected schema (issue 16): v1 fields ×0.6, the rest by composite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatledger.core import FIELDS_V1, SCHEMA_WEIGHTS
from chatledger.scoring import load_scoring_config
from chatledger.select import derive_weights


def test_v1_fields_keep_v1_weights_times_the_share() -> None:
    # Schema v1's ten fields and two survivors with the composites the methodology reports
    # (Q/A pairs 0.81, implicit assumptions 0.59): v1 weights × 0.6 (claims 0.25 → 0.15, as
    # in schema v3), Q/A 0.4 · 0.81 / 1.40 = 0.231429, assumptions 0.4 · 0.59 / 1.40 = 0.168571.
    derived = derive_weights(
        [*FIELDS_V1, "qa_pairs", "implicit_assumptions"],
        {"qa_pairs": 0.81, "implicit_assumptions": 0.59},
    )
    w = derived.weights
    for name in FIELDS_V1:
        assert w[name] == pytest.approx(0.6 * SCHEMA_WEIGHTS["v1"][name])
    assert w["claims"] == pytest.approx(0.15)
    assert w["qa_pairs"] == pytest.approx(0.231429, abs=1e-6)
    assert w["implicit_assumptions"] == pytest.approx(0.168571, abs=1e-6)
    assert sum(w.values()) == pytest.approx(1.0)


def test_one_side_empty_takes_everything() -> None:
    only_new = derive_weights(["summary", "qa_pairs"], {"summary": 1.0, "qa_pairs": 3.0})
    assert only_new.weights == pytest.approx({"summary": 0.25, "qa_pairs": 0.75})
    only_v1 = derive_weights(["claims", "topics"], {})
    assert only_v1.weights == pytest.approx({"claims": 0.25 / 0.32, "topics": 0.07 / 0.32})
    with pytest.raises(ValueError, match="no screening composite"):
        derive_weights(["claims", "summary"], {})


def test_the_weights_file_is_read_by_the_scorer(tmp_path: Path) -> None:
    derived = derive_weights(
        ["claims", "action_items", "summary", "commitments"],
        {"summary": 0.6, "commitments": 0.6},
    )
    # claims 0.6·0.25/0.40 = 0.375, action items 0.225, summary 0.2, commitments 0.2; the file
    # cannot name commitments (not a v3 field): the rest renormalised over 0.8.
    data, left_out = derived.weights_file("v3")
    assert left_out == ["commitments"]
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    config = load_scoring_config(path)
    assert config.weights["claims"] == pytest.approx(0.375 / 0.8)
    assert config.weights["summary"] == pytest.approx(0.2 / 0.8)
    assert config.weights["topics"] == 0.0
    assert sum(config.weights.values()) == pytest.approx(1.0, abs=1e-9)
