"""Prediction-powered inference of a mean (stats._ppi, issue 33): ppi-python's numbers, and
coverage and width by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chatledger.stats import ppi_labels_needed, ppi_lambda, ppi_mean

# Six annotated conversations (human agreement y, the model-referenced figure f on them) and
# ten more the model alone scored. Expected values printed by ppi-python 0.2.3's own
# ppi_mean_pointestimate / ppi_mean_ci (alpha 0.05): tuned λ, λ = 1 (plain PPI), λ = 0 (the
# classical interval of the six humans).
Y = [0.2, 0.5, 0.4, 0.9, 0.3, 0.6]
F = [0.25, 0.45, 0.5, 0.8, 0.2, 0.7]
F_OTHERS = [0.3, 0.6, 0.1, 0.7, 0.5, 0.4, 0.8, 0.35, 0.55, 0.65]


def test_the_numbers_of_ppi_python() -> None:
    tuned = ppi_mean(Y, F, F_OTHERS, alpha=0.05)
    assert tuned.estimate == pytest.approx(0.4906489765746476, abs=1e-12)
    assert (tuned.low, tuned.high) == pytest.approx((0.3714377041765577, 0.6098602489727376))
    plain = ppi_mean(Y, F, F_OTHERS, alpha=0.05, lam=1.0)
    assert plain.estimate == pytest.approx(0.495, abs=1e-12)
    assert (plain.low, plain.high) == pytest.approx((0.353359544299395, 0.636640455700605))
    classical = ppi_mean(Y, F, F_OTHERS, alpha=0.05, lam=0.0)
    assert (classical.low, classical.high) == pytest.approx((0.30194595, 0.66472072))
    # the human-only interval beside every estimate is that classical one
    assert (tuned.human_low, tuned.human_high) == pytest.approx((0.30194595, 0.66472072))
    # λ by hand: cov_pop(y, f) / ((1 + 6/10) · var(f over all 16, ddof 1))
    y, f = np.array(Y), np.array(F)
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    lam = cov / (1.6 * float(np.var(np.concatenate([f, F_OTHERS]), ddof=1)))
    assert ppi_lambda(Y, F, F_OTHERS) == pytest.approx(lam) == pytest.approx(tuned.lam)
    # worth: 6 · (human se / PPI se)²; narrower than the humans' own, so worth more than 6
    ratio = (classical.high - classical.low) / (tuned.high - tuned.low)
    assert tuned.labels_worth == pytest.approx(6 * ratio**2)
    assert tuned.labels_worth > 6


def test_coverage_and_width_by_simulation() -> None:
    """1,000 draws: 20 annotated of 100 conversations, a predictor correlated 0.9 with the human
    figure (offset by a bias PPI must rectify): the 95 % interval covers the true mean ≥ 93 %
    of the time and is narrower than the human-only interval on the same 20."""
    rng = np.random.default_rng(33)
    covered = narrower = 0
    for _ in range(1000):
        truth_y = rng.normal(0.5, 0.1, 100)
        f = 0.1 + truth_y + rng.normal(0, 0.05, 100)  # biased by +0.1
        labeled = rng.choice(100, 20, replace=False)
        mask = np.zeros(100, dtype=bool)
        mask[labeled] = True
        est = ppi_mean(truth_y[mask], f[mask], f[~mask])
        covered += est.low <= truth_y.mean() <= est.high
        narrower += est.width < est.human_width
    assert covered >= 930
    assert narrower >= 950


def test_labels_needed_for_a_width() -> None:
    rng = np.random.default_rng(1)
    y = rng.normal(0.5, 0.1, 20)
    f = y + rng.normal(0, 0.03, 20)
    others = rng.normal(0.5, 0.1, 300)
    ppi, human = ppi_labels_needed(0.05, y, f, others)
    assert human == math.ceil(float(np.var(y, ddof=1)) / (0.05 / (2 * 1.959963984540054)) ** 2)
    assert ppi is not None and ppi < human
    # a width the model's own part cannot reach: no number of labels
    assert ppi_labels_needed(0.001, y, f, others)[0] is None


def test_student_lambda_minimises_the_interval_it_reports() -> None:
    """With ``student`` λ minimises λ² s²(f_others)/N + s²(y − λ f)/n (sample variances). By
    hand on the six/ten example: Σ(y − ȳ)(f − f̄) = 0.82/3 (both means 2.9/6), so s(y, f) =
    41/750; Σ(f − f̄)² = 0.85/3, s²(f) = 17/300; the others' Σ of squared deviations from
    0.495 is 0.39725, s² = 0.39725/9. λ = (41/750/6) / (0.39725/9/10 + 17/300/6) ≈ 0.6574."""
    lam = (41 / 750 / 6) / (0.39725 / 9 / 10 + 17 / 300 / 6)
    assert lam == pytest.approx(0.65745, abs=1e-5)
    assert ppi_lambda(Y, F, F_OTHERS, student=True) == pytest.approx(lam, abs=1e-12)
    est = ppi_mean(Y, F, F_OTHERS, student=True)
    assert est.lam == pytest.approx(lam, abs=1e-12)
    y, f, others = np.array(Y), np.array(F), np.array(F_OTHERS)
    assert est.estimate == pytest.approx(lam * others.mean() + float(np.mean(y - lam * f)))

    def se(weight: float) -> float:
        return math.sqrt(
            weight**2 * float(np.var(others, ddof=1)) / 10
            + float(np.var(y - weight * f, ddof=1)) / 6
        )

    # no λ on a fine grid of [0, 1] gives a narrower interval; λ = 0 is the human-only one
    assert se(lam) <= min(se(w) for w in np.linspace(0.0, 1.0, 1001)) + 1e-15
    assert est.width == pytest.approx(2 * 2.5705818366147395 * se(lam))
    assert est.human_width == pytest.approx(2 * 2.5705818366147395 * se(0.0))
    assert est.width < est.human_width


def test_student_ppi_is_never_wider_than_humans_alone() -> None:
    """Predictors from useless (independent of y) to good: over 2,000 draws of 6 annotated of 32,
    the Student PPI interval is never wider than the human-only one with the same quantile."""
    rng = np.random.default_rng(5)
    for _ in range(2000):
        y = rng.normal(0.2, 0.035, 32)
        f = rng.uniform(0, 1) * y + rng.normal(0.3, 0.05, 32)
        mask = np.zeros(32, dtype=bool)
        mask[rng.choice(32, 6, replace=False)] = True
        est = ppi_mean(y[mask], f[mask], f[~mask], student=True)
        assert est.width <= est.human_width * (1 + 1e-12)


def test_ppi_coverage_over_hidings() -> None:
    """runs._coverage.ppi_coverage: a predictor that knows nothing (constant) gets λ = 0, so
    every PPI interval is the human-only one. A perfect one (f = y): se²(λ) = λ² s²_U/15 +
    (1 − λ)² s²_L/5 is least at λ = (s²_L/5) / (s²_U/15 + s²_L/5), 3/4 when the two spreads are
    equal, and the width ratio is then √(5/20) = 1/2: always narrower."""
    from chatledger.core import InputError
    from chatledger.runs._coverage import ppi_coverage

    y = np.random.default_rng(2).uniform(0.1, 0.4, 20)
    flat = ppi_coverage(y, np.full(20, 0.5), keep=5, hidings=50, seed=1).to_dict()
    assert flat["correlation"] == 0.0 and flat["median_lambda"] == 0.0
    assert flat["ppi"]["covered"] == flat["human"]["covered"]
    assert flat["median_width_ratio"] == 1.0 and flat["narrower_share"] == 0.0
    assert flat["ppi"]["with_interval"] == 50 and flat["full_gold_figure"] == y.mean()
    exact = ppi_coverage(y, y.copy(), keep=5, hidings=50, seed=1).to_dict()
    assert 0.6 < exact["median_lambda"] < 0.9
    assert exact["narrower_share"] == 1.0 and 0.35 < exact["median_width_ratio"] < 0.65
    with pytest.raises(InputError, match="keep"):
        ppi_coverage(y, y, keep=20)
