"""The vectorised Kendall τ of the weight sensitivity gives scipy's τ-b, float for float."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from chatledger.stats._weights import _tau, _taus

# Few distinct values, so that ties (in the configured scores, in a draw, in both) are common.
values = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 0.1 + 0.2, 0.3])


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 8))
    draws = draw(st.integers(1, 12))
    base = draw(arrays(np.float64, n, elements=values))
    return base, draw(arrays(np.float64, (draws, n), elements=values))


@settings(max_examples=300, deadline=None)
@given(cases())
def test_vectorised_tau_equals_scipy_row_by_row(case: tuple[np.ndarray, np.ndarray]) -> None:
    base, rows = case
    expected = np.array([_tau(base, row) for row in rows])
    assert np.array_equal(_taus(base, rows), expected, equal_nan=True)


def test_tau_by_hand() -> None:
    base = np.array([3.0, 2.0, 1.0])
    rows = np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0], [3.0, 1.0, 2.0], [2.0, 2.0, 1.0]])
    # identical: 1; reversed: −1; one swap of three pairs: (2 − 1) / 3; a tie in the draw:
    # C − D = 2 over √3 · √2 (τ-b).
    expected = [1.0, -1.0, 1 / 3, 2 / np.sqrt(3) / np.sqrt(2)]
    assert np.allclose(_taus(base, rows), expected)
