"""The rectangular assignment problem in plain Python, step for step as SciPy solves it.

Crouse's shortest augmenting path (DF Crouse, "On implementing 2D rectangular assignment
algorithms", IEEE TAES 52(4):1679–1696, 2016), transcribed from SciPy's
``scipy/optimize/rectangular_lsap/rectangular_lsap.cpp`` (BSD-3-Clause, the SciPy developers;
author PM Larsen) with every choice it makes: a tall matrix is transposed, maximisation negates,
columns are scanned from the last, a tie on the shortest path goes to a free column, the duals
are updated in the same order of the same floating-point operations. So for every finite matrix
it returns exactly what ``scipy.optimize.linear_sum_assignment`` returns, ties included
(``tests/test_matching.py`` compares the two on matrices built to tie).

Why it exists: ``import scipy.optimize`` costs ~0.3 s of CPU (linprog, linalg, sparse, the
array-API layer) — a third of scoring 1,000 chunks — while a chunk's matrices are a few rows
wide, where this loop takes ~13 µs. :func:`chatledger.matching.assign` uses it for small
matrices until enough of them have been solved that SciPy's import pays for itself
(docs/benchmarks.md, issue 32).
"""

from __future__ import annotations

import math

_INF = math.inf


def solve(weights: list[list[float]], maximize: bool) -> tuple[list[int], list[int]]:
    """(row indices, column indices) of an optimal assignment of the finite matrix
    ``weights`` (a list of equally long rows, at least one of each): min(m, n) pairs, rows
    ascending — ``scipy.optimize.linear_sum_assignment(weights, maximize=maximize)``."""
    nr, nc = len(weights), len(weights[0])
    transpose = nc < nr
    sign = -1.0 if maximize else 1.0
    if transpose:
        cost = [sign * weights[i][j] for j in range(nc) for i in range(nr)]
        nr, nc = nc, nr
    else:
        cost = [sign * x for row in weights for x in row]
    u = [0.0] * nr
    v = [0.0] * nc
    path = [-1] * nc
    col4row = [-1] * nr
    row4col = [-1] * nc
    for current in range(nr):
        min_val, sink, shortest, rows_seen, cols_seen = _augmenting_path(
            nc, cost, u, v, path, row4col, current
        )
        # the duals, as SciPy updates them
        u[current] += min_val
        for i in rows_seen:
            if i != current:
                u[i] += min_val - shortest[col4row[i]]
        for j in cols_seen:
            v[j] -= min_val - shortest[j]
        # augment the previous solution along the path
        j = sink
        while True:
            i = path[j]
            row4col[j] = i
            col4row[i], j = j, col4row[i]
            if i == current:
                break
    if transpose:
        order = sorted(range(nr), key=col4row.__getitem__)
        return [col4row[k] for k in order], order
    return list(range(nr)), col4row


def _augmenting_path(
    nc: int,
    cost: list[float],
    u: list[float],
    v: list[float],
    path: list[int],
    row4col: list[int],
    i: int,
) -> tuple[float, int, list[float], list[int], list[int]]:
    """(the path's length, its sink column, the shortest-path costs, the rows and the columns
    it visited) from row ``i``."""
    min_val = 0.0
    remaining = list(range(nc - 1, -1, -1))  # reversed: a constant matrix gives the identity
    shortest = [_INF] * nc
    rows_seen: list[int] = []
    cols_seen: list[int] = []
    sink = -1
    while sink == -1:
        index = -1
        lowest = _INF
        rows_seen.append(i)
        base = i * nc
        u_i = u[i]
        for it, j in enumerate(remaining):
            r = min_val + cost[base + j] - u_i - v[j]
            if r < shortest[j]:
                path[j] = i
                shortest[j] = r
            s = shortest[j]
            # among equally short paths, one that ends at a free column
            if s < lowest or (s == lowest and row4col[j] == -1):
                lowest = s
                index = it
        min_val = lowest
        if min_val == _INF:  # only for infinite entries, which callers rule out
            raise ValueError("cost matrix is infeasible")
        j = remaining[index]
        if row4col[j] == -1:
            sink = j
        else:
            i = row4col[j]
        cols_seen.append(j)
        remaining[index] = remaining[-1]
        remaining.pop()
    return min_val, sink, shortest, rows_seen, cols_seen
