"""Prediction-powered inference of a mean (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023,
Science 382:669; power-tuned as PPI++, Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453).

The quantity: a challenger's mean agreement with *humans* over conversations. Humans annotated
``n`` of them (``y``); a reference model (or a judge) scores the challenger on every one
(``f``: on the annotated ones ``f_labeled``, on the others ``f_unlabeled``). The estimate

    θ̂ = λ · mean(f_unlabeled) + mean(y − λ · f_labeled)

is the model-referenced figure rectified by the human-vs-model difference, unbiased for any λ;
λ is chosen from the data to minimise the variance (0: the human-only mean, 1: plain PPI), and
the interval is the normal one with the two parts' variances added. The formulas and numbers
are those of ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci`` (ppi-python 0.2.3; checked in
tests/test_ppi.py), written out in numpy: the package pulls numba, statsmodels, scikit-learn,
pandas and gdown for what is here a dozen lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class PPIEstimate:
    """The prediction-powered estimate and interval beside the human-only one."""

    estimate: float
    low: float
    high: float
    lam: float  # the power-tuning weight used
    n_labeled: int
    n_unlabeled: int
    human_estimate: float  # the mean of y alone, and its normal interval
    human_low: float
    human_high: float
    # How many human-annotated conversations the human-only interval would need to be as
    # narrow as the PPI one: n · (human-only se / PPI se)².
    labels_worth: float

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def human_width(self) -> float:
        return self.human_high - self.human_low


def _as_array(values: npt.ArrayLike, what: str) -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what}: every value must be a finite number")
    return array


def ppi_lambda(
    y: npt.ArrayLike,
    f_labeled: npt.ArrayLike,
    f_unlabeled: npt.ArrayLike,
    *,
    student: bool = False,
) -> float:
    """The variance-minimising λ of PPI++ for a mean, clipped to [0, 1].

    Default: ppi-python's ``_calc_lam_glm`` (covariance over the pooled variance of f, scaled
    by 1 + n/N). ``student``: the λ that minimises the very variance the Student interval
    reports, λ² s²(f_unlabeled)/N + s²(y − λ f_labeled)/n with sample variances, i.e.
    (s(y, f_labeled)/n) / (s²(f_unlabeled)/N + s²(f_labeled)/n); λ = 0 being allowed, that
    interval is never wider than the human-only one with the same quantile (ppi-python's λ
    minimises a large-sample version of it, and was up to 10 % wider on 3 % of AMI hidings)."""
    y_, fl, fu = _as_array(y, "y"), _as_array(f_labeled, "f_labeled"), _as_array(f_unlabeled, "f")
    n, big_n = y_.size, fu.size
    if student:
        if n < 2:
            return 0.0
        spread = (float(np.var(fu, ddof=1)) / big_n if big_n > 1 else 0.0) + float(
            np.var(fl, ddof=1)
        ) / n
        if spread <= 0.0:
            return 0.0
        covariance = float(np.sum((y_ - y_.mean()) * (fl - fl.mean()))) / (n - 1)
        return float(np.clip(covariance / n / spread, 0.0, 1.0))
    pooled = np.concatenate([fl, fu])
    variance = float(np.var(pooled, ddof=1)) if pooled.size > 1 else 0.0
    if variance <= 0.0:
        return 0.0
    covariance = float(np.mean((y_ - y_.mean()) * (fl - fl.mean())))
    return float(np.clip(covariance / ((1.0 + n / big_n) * variance), 0.0, 1.0))


def ppi_mean(
    y: npt.ArrayLike,
    f_labeled: npt.ArrayLike,
    f_unlabeled: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    student: bool = False,
) -> PPIEstimate:
    """The prediction-powered mean of ``y`` with its 1 − α interval (λ tuned unless given).
    ``student``: sample variances (n − 1) and Student's t with n − 1 degrees of freedom instead
    of the normal quantile, for both intervals — with a handful of annotated conversations the
    normal interval undercovers (AMI pool, 6 of 32 meetings annotated: 88.5 % instead of 95 %;
    with ``student`` 95 %, docs/sequential.md) — and λ tuned to that interval's own variance,
    so it is never wider than the human-only one (``ppi_lambda``)."""
    y_, fl, fu = _as_array(y, "y"), _as_array(f_labeled, "f_labeled"), _as_array(f_unlabeled, "f")
    if y_.size != fl.size:
        raise ValueError("y and f_labeled must have one value per annotated conversation each")
    if y_.size < 2 or fu.size < 1:
        raise ValueError("PPI needs at least two annotated conversations and one more")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    weight = ppi_lambda(y_, fl, fu, student=student) if lam is None else lam
    n, big_n = y_.size, fu.size
    estimate = weight * float(fu.mean()) + float(np.mean(y_ - weight * fl))
    ddof = 1 if student else 0
    imputed = float(np.var(weight * fu, ddof=ddof)) / big_n if big_n > ddof else 0.0
    se = math.sqrt(imputed + float(np.var(y_ - weight * fl, ddof=ddof)) / n)
    if student:
        from scipy import stats

        z = float(stats.t.ppf(1.0 - alpha / 2.0, n - 1))
    else:
        z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    human_se = math.sqrt(float(np.var(y_, ddof=ddof)) / n)
    human = float(y_.mean())
    worth = n * (human_se / se) ** 2 if se > 0 else math.inf
    return PPIEstimate(
        estimate=estimate,
        low=estimate - z * se,
        high=estimate + z * se,
        lam=weight,
        n_labeled=n,
        n_unlabeled=big_n,
        human_estimate=human,
        human_low=human - z * human_se,
        human_high=human + z * human_se,
        labels_worth=worth,
    )


def ppi_labels_needed(
    width: float,
    y: npt.ArrayLike,
    f_labeled: npt.ArrayLike,
    f_unlabeled: npt.ArrayLike,
    *,
    alpha: float = 0.05,
) -> tuple[int | None, int | None]:
    """Planning from a pilot: the annotated conversations an interval of full ``width`` needs,
    (with PPI beside the model's other conversations, human-only). PPI's se² is
    var(y − λf)/n + λ² var(f)/N; with the pilot's variances and λ and N fixed, n follows.
    None when no number of labels reaches the width (the model's part alone is wider)."""
    if width <= 0:
        raise ValueError("width must be positive")
    y_, fl, fu = _as_array(y, "y"), _as_array(f_labeled, "f_labeled"), _as_array(f_unlabeled, "f")
    weight = ppi_lambda(y_, fl, fu)
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    target = (width / (2.0 * z)) ** 2
    human = math.ceil(float(np.var(y_, ddof=1)) / target) if y_.size > 1 else None
    room = target - weight**2 * float(np.var(fu)) / fu.size
    rectifier = float(np.var(y_ - weight * fl, ddof=1))
    ppi = math.ceil(rectifier / room) if room > 0 else None
    return ppi, human
