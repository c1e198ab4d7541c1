"""The one rule for a composite whose parts may be left out (scoring.combine), worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chatledger.scoring import NO_EVENTS, combine, combine_arrays


def test_a_part_left_out_renormalises_and_says_why() -> None:
    # 0.60·0.8 + 0.25·0.4 + 0.15·(no events): downstream left out, 0.6 and 0.25 over 0.85
    got = combine(
        {"extraction": 0.8, "judge": 0.4, "downstream": 1.0},
        {"extraction": 0.60, "judge": 0.25, "downstream": 0.15},
        {"downstream": NO_EVENTS},
    )
    assert got.value == pytest.approx((0.48 + 0.10) / 0.85)  # 0.682353
    assert got.weights == pytest.approx({"extraction": 0.60 / 0.85, "judge": 0.25 / 0.85})
    assert got.left_out == {"downstream": "no events"}
    assert got.note() == (
        "left out of overall: downstream (no events); "
        "weights renormalised to extraction 0.706, judge 0.294"
    )


def test_no_value_weight_zero_and_nothing_left() -> None:
    got = combine({"a": 0.5, "b": None, "c": float("nan")}, {"a": 0.0, "b": 1.0, "c": 1.0, "d": 1})
    # a weighs 0 (never listed); b, c have no value; d did not run
    assert got.value is None and got.weights == {}
    assert got.left_out == {"b": "no value", "c": "no value", "d": "not run"}
    assert got.note("downstream") is not None
    assert got.note("downstream").endswith("nothing left: no downstream")  # type: ignore[union-attr]
    assert combine({"a": 1.0}, {"a": 1.0}).note() is None


def test_all_ones_give_exactly_one() -> None:
    weights = {"x": 0.1, "y": 0.2, "z": 0.3}  # sums to 0.6000000000000001
    assert combine(dict.fromkeys(weights, 1.0), weights).value == 1.0
    assert combine_arrays({k: np.ones(3) for k in weights}, weights).tolist() == [1.0] * 3


def test_arrays_leave_a_part_out_where_it_is_nan() -> None:
    values = {"a": np.array([0.2, 0.2, np.nan]), "b": np.array([np.nan, 0.8, np.nan])}
    got = combine_arrays(values, {"a": 0.75, "b": 0.25})
    assert got[0] == pytest.approx(0.2)  # b left out: a alone
    assert got[1] == pytest.approx(0.75 * 0.2 + 0.25 * 0.8)  # 0.35
    assert math.isnan(got[2])  # nothing left
    # the headline and a resample agree bit for bit
    assert combine({"a": 0.2, "b": 0.8}, {"a": 0.75, "b": 0.25}).value == got[1]
