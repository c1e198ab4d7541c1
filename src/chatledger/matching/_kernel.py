"""The matching kernel: similarity matrices (RapidFuzz ``cdist``) and optimal one-to-one
assignment (SciPy ``linear_sum_assignment``), DESIGN.md §3 "Matching rules".

Every field that pairs items goes through :func:`assign`; text fields get their matrix from a
:class:`TextMatcher`. A process-wide :data:`KERNEL_CLOCK` can time exactly these two calls so a
benchmark can report how much of scoring is spent outside the kernel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz, process, utils

_solver: Callable[..., tuple[Any, Any]] | None = None


def linear_sum_assignment(weights: FloatMatrix, *, maximize: bool = False) -> tuple[Any, Any]:
    """``scipy.optimize.linear_sum_assignment``, imported on the first call.

    Importing ``scipy.optimize`` loads linprog, linalg, sparse and the array-API layer, a
    fixed cost that a command which never assigns (``--help``, ``gate``, ``stats``, reading a
    run) should not pay; a command that scores pays it once, as any script calling scipy does.
    The assignment itself is SciPy's, never a hand-written solver: :func:`assign` only skips
    calling it where the optimum needs no search (one eligible pair per row and column).
    """
    global _solver
    if _solver is None:
        from scipy.optimize import linear_sum_assignment as solver

        _solver = solver
    return _solver(weights, maximize=maximize)


FloatMatrix = npt.NDArray[np.float64]
FloatVector = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]
IndexArrayPair = tuple[IndexArray, IndexArray]

_EMPTY_INDEX: IndexArray = np.zeros(0, dtype=np.intp)

# Credit-first assignment (:func:`assign` with ``credit``): the default step of credits (the
# entities' 1 and 0.5) and the strict upper bound τ of a 0–100 score plus a tie bonus < 1.
CREDIT_UNIT = 0.5
SIMILARITY_CEILING = 101.0


@dataclass
class KernelClock:
    """Accumulated seconds inside cdist and linear_sum_assignment, when enabled."""

    enabled: bool = False
    cdist_s: float = 0.0
    assign_s: float = 0.0
    cdist_calls: int = 0
    assign_calls: int = 0

    def reset(self) -> None:
        self.cdist_s = self.assign_s = 0.0
        self.cdist_calls = self.assign_calls = 0

    @property
    def total_s(self) -> float:
        return self.cdist_s + self.assign_s


KERNEL_CLOCK = KernelClock()


def preprocess(texts: Sequence[str]) -> list[str]:
    """RapidFuzz's ``default_process`` (lower-case, non-alphanumerics to spaces, trimmed)."""
    return list(map(utils.default_process, texts))


def _token_set(
    kernel: Callable[..., FloatMatrix], a: Sequence[str], b: Sequence[str]
) -> FloatMatrix:
    """RapidFuzz's ``cdist`` or ``cpdist`` with ``token_set_ratio``, timed by the clock."""
    clock = KERNEL_CLOCK
    if not clock.enabled:
        return kernel(a, b, scorer=fuzz.token_set_ratio, dtype=np.float64)
    start = time.perf_counter()
    scores = kernel(a, b, scorer=fuzz.token_set_ratio, dtype=np.float64)
    clock.cdist_s += time.perf_counter() - start
    clock.cdist_calls += 1
    return scores


def token_set_matrix(a: Sequence[str], b: Sequence[str]) -> FloatMatrix:
    """``fuzz.token_set_ratio`` on preprocessed strings, 0–100, shape (len(a), len(b)).

    RapidFuzz scores two empty strings 0; here two texts that both preprocess to nothing are
    equal (100), so that any extraction compared with itself scores 1.0.
    """
    if not a or not b:
        return np.zeros((len(a), len(b)), dtype=np.float64)
    scores = _token_set(process.cdist, a, b)
    if "" in a and "" in b:  # a C-level scan; the index lists are rarely needed
        empty_a = [i for i, t in enumerate(a) if not t]
        empty_b = [j for j, t in enumerate(b) if not t]
        scores[np.ix_(empty_a, empty_b)] = 100.0
    return scores


def token_set_pairs(a: Sequence[str], b: Sequence[str]) -> FloatVector:
    """``fuzz.token_set_ratio`` of ``a[i]`` and ``b[i]`` for each i (preprocessed strings), in
    one call: what :func:`token_set_matrix` gives on the diagonal, two empty texts 100."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} texts against {len(b)}: pairs need the same number")
    if not a:
        return np.zeros(0, dtype=np.float64)
    scores = _token_set(process.cpdist, a, b)
    if "" in a and "" in b:
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not x and not y:
                scores[i] = 100.0
    return scores


def assign(
    scores: FloatMatrix,
    cutoff: float,
    bonus: FloatMatrix | None = None,
    credit: FloatMatrix | None = None,
    *,
    credit_unit: float = CREDIT_UNIT,
) -> IndexArrayPair:
    """Optimal one-to-one matching: the most pairs with score ≥ cutoff, then the highest total.

    Weights are ``where(S ≥ cutoff, C + S (+ bonus), 0)`` with ``C = 100·(min(m, n) + 1)``: one
    more match is always worth more than any gain in similarity, so the count is maximal.
    Pairs below the cutoff are never returned. ``bonus`` (< 1 per pair) only breaks ties.

    ``credit`` (same shape; whole multiples of ``credit_unit``, ≥ 0) is for fields whose
    matched pairs earn unequal credit (entities: 1 exact, 0.5 fuzzy-only). The matching then
    maximises, in this order, the total credit, the number of matches and the total
    similarity (DESIGN.md §3): count-first could trade two exact matches for three partial
    ones. Eligible weights become ``A·u + C′ + t`` with ``u`` the pair's credit in units
    (``credit / credit_unit``), ``t = S (+ bonus)`` and, for ``k = min(m, n)``:

    - ``τ`` a strict upper bound of every eligible ``t``: 101 for the 0–100 matrices plus a
      bonus < 1 (``floor(max t) + 1`` if larger); every eligible ``t`` must be ≥ 0;
    - ``C′ = τ·(k + 1)`` and ``A = (C′ + τ)·k = τ·k·(k + 2)``.

    A matching with ``U`` units, ``N ≤ k`` pairs and similarity ``T`` (``0 ≤ T < τ·N``) weighs
    ``W = A·U + C′·N + T``. Same ``U``, ``N₁ > N₂``: ``W₁ − W₂ > C′ − τ·(k − 1) = 2τ > 0``.
    ``U₁ > U₂`` (so ``U₁ ≥ U₂ + 1``, units are integers): ``W₁ − W₂ > A − (C′ + τ)·k = 0``,
    since ``C′·N₂ + T₂ < (C′ + τ)·k``. Same ``U`` and ``N``: ``T`` decides. The order holds for
    any ``k``; in float64 the margins (≥ τ, and ≥ C′ between credit levels) stay far above
    rounding while ``u_max·τ·k³`` is below about 10¹³, i.e. ``k`` up to ~3,000 for entity
    credits (``u_max = 2``), beyond what a dense assignment solves anyway. The count-first
    weights above are unchanged when ``credit`` is None.
    """
    if scores.size == 0:
        return _EMPTY_INDEX, _EMPTY_INDEX
    eligible = scores >= cutoff
    hits = eligible.reshape(-1).nonzero()[0].tolist()  # np.flatnonzero without its wrapper
    if not hits:
        return _EMPTY_INDEX, _EMPTY_INDEX
    m, n = scores.shape
    if credit is None and len(hits) <= min(m, n):
        # No row and no column with two eligible pairs (most chunks' lists): every eligible
        # pair is in the optimum — leaving one out frees a row and a column whose other pairs
        # weigh 0 — and the solver returns them ordered by row, as flatnonzero lists them.
        rows_of = [h // n for h in hits]
        cols_of = [h - i * n for h, i in zip(hits, rows_of, strict=True)]
        if len(set(rows_of)) == len(hits) and len(set(cols_of)) == len(hits):
            return np.array(rows_of, dtype=np.intp), np.array(cols_of, dtype=np.intp)
    if credit is None:
        big = 100.0 * (min(m, n) + 1)
        weights = big + (scores if bonus is None else scores + bonus)
    else:
        weights = _credit_weights(scores, eligible, bonus, credit, credit_unit)
    np.putmask(weights, ~eligible, 0.0)
    clock = KERNEL_CLOCK
    if clock.enabled:
        start = time.perf_counter()
    rows, cols = linear_sum_assignment(weights, maximize=True)
    if clock.enabled:
        clock.assign_s += time.perf_counter() - start
        clock.assign_calls += 1
    keep = eligible[rows, cols]
    if np.count_nonzero(keep) < len(keep):
        rows, cols = rows[keep], cols[keep]
    return rows.astype(np.intp, copy=False), cols.astype(np.intp, copy=False)


def _credit_weights(
    scores: FloatMatrix,
    eligible: npt.NDArray[np.bool_],
    bonus: FloatMatrix | None,
    credit: FloatMatrix,
    credit_unit: float,
) -> FloatMatrix:
    """``A·units + C′ + S (+ bonus)`` of :func:`assign`'s credit-first order (its docstring)."""
    if credit.shape != scores.shape:
        raise ValueError(f"credit has shape {credit.shape}, scores {scores.shape}")
    if not credit_unit > 0:
        raise ValueError(f"credit_unit must be > 0, got {credit_unit}")
    units = np.rint(credit / credit_unit)
    # Two reductions instead of np.allclose's (the same test: |u·unit − credit| ≤ 1e-9, NaN
    # failing it), which cost more than the assignment on a chunk's few entities.
    off = float(np.abs(units * credit_unit - credit).max())
    if float(units.min()) < 0.0 or not off <= 1e-9:
        raise ValueError(f"credits must be whole multiples ≥ 0 of {credit_unit}")
    similarity = scores if bonus is None else scores + bonus
    values = similarity[eligible]
    if float(values.min()) < 0.0:
        raise ValueError("credit-first assignment needs eligible scores (+ bonus) ≥ 0")
    ceiling = max(SIMILARITY_CEILING, float(np.floor(values.max())) + 1.0)
    k = min(scores.shape)
    count_weight = ceiling * (k + 1)
    credit_weight = (count_weight + ceiling) * k
    weights: FloatMatrix = credit_weight * units + count_weight + similarity
    return weights
