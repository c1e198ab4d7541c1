"""Phase 2 and 3 of schema selection (DESIGN.md §9): a tournament of candidate schemas ×
prompt styles over chunks, pruned by successive halving, and validation of the winner.

The tournament is an Optuna study: one trial per (schema, style) pair (``GridSampler``, in a
seeded order), each evaluating chunks one at a time and reporting its running mean score after
each chunk; ``SuccessiveHalvingPruner`` with the number of chunks as the resource stops a
trial at a rung when it is not among the best 1/``reduction_factor`` of the trials that
reached that rung — weak schemas stop after a few chunks, so the calls go to the strong ones.
``evaluate(schema, style, chunk_id)`` is what a trial spends: one extraction scored against
the reference with the layer-1 scorers (or a simulation of it); a call budget stops the study
before it overspends. Every trial is in the table, pruned or not, with the chunks it used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chatledger.stats import Interval, intervals_from, paired_from, resample_statistics

Evaluate = Callable[[str, str, str], float]


@dataclass(frozen=True)
class Entry:
    """One (schema, style) of the tournament."""

    schema: str
    style: str
    scores: tuple[float, ...]  # per chunk, in the order evaluated
    pruned: bool

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores)) if self.scores else 0.0

    @property
    def chunks(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class TournamentResult:
    entries: list[Entry]  # in the order the trials ran
    calls: int
    budget_stopped: bool

    def leaderboard(self) -> list[Entry]:
        """Complete trials first, best mean first; then the pruned, by how far they got."""
        return sorted(self.entries, key=lambda e: (e.pruned, -e.chunks, -e.mean, e.schema))

    @property
    def winner(self) -> Entry:
        complete = [e for e in self.entries if not e.pruned]
        if not complete:
            raise ValueError("no trial evaluated every chunk (budget too small)")
        return max(complete, key=lambda e: (e.mean, -self.entries.index(e)))

    @property
    def runner_up(self) -> Entry | None:
        complete = sorted(
            (e for e in self.entries if not e.pruned and e is not self.winner),
            key=lambda e: -e.mean,
        )
        return complete[0] if complete else None

    @property
    def pruned_share(self) -> float:
        others = [e for e in self.entries if e is not self.winner]
        return sum(e.pruned for e in others) / len(others) if others else 0.0


def tournament(
    schemas: Mapping[str, Sequence[str]],
    styles: Sequence[str],
    chunk_ids: Sequence[str],
    evaluate: Evaluate,
    *,
    min_chunks: int = 2,
    reduction_factor: int = 2,
    max_calls: int | None = None,
    seed: int = 0,
) -> TournamentResult:
    """Run every (schema, style) over ``chunk_ids`` with successive-halving pruning."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    grid = {"schema": list(schemas), "style": list(styles)}
    study = optuna.create_study(
        direction="maximize",
        sampler=optuna.samplers.GridSampler(grid, seed=seed),
        pruner=optuna.pruners.SuccessiveHalvingPruner(
            min_resource=min_chunks, reduction_factor=reduction_factor
        ),
    )
    entries: list[Entry] = []
    calls = 0
    stopped = False

    def objective(trial: optuna.Trial) -> float:
        nonlocal calls, stopped
        schema = str(trial.suggest_categorical("schema", grid["schema"]))
        style = str(trial.suggest_categorical("style", grid["style"]))
        scores: list[float] = []
        for step, chunk_id in enumerate(chunk_ids, start=1):
            if max_calls is not None and calls >= max_calls:
                stopped = True
                entries.append(Entry(schema, style, tuple(scores), pruned=True))
                trial.study.stop()
                raise optuna.TrialPruned()
            scores.append(float(evaluate(schema, style, chunk_id)))
            calls += 1
            trial.report(float(np.mean(scores)), step)
            if step < len(chunk_ids) and trial.should_prune():
                entries.append(Entry(schema, style, tuple(scores), pruned=True))
                raise optuna.TrialPruned()
        entries.append(Entry(schema, style, tuple(scores), pruned=False))
        return float(np.mean(scores))

    study.optimize(objective, n_trials=len(grid["schema"]) * len(grid["style"]))
    return TournamentResult(entries, calls, stopped)


@dataclass(frozen=True)
class Validation:
    """Phase 3: the winner and the runner-up on the full set, with bootstrap intervals of
    their means and of the paired difference (winner − runner-up) over the same chunks."""

    winner: Interval
    runner_up: Interval
    difference: tuple[float, float, float, float]  # difference, low, high, p-value

    @property
    def winner_better(self) -> bool:
        """The paired interval of winner − runner-up lies above 0."""
        return self.difference[1] > 0


def validate(
    winner: Sequence[float],
    runner_up: Sequence[float],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Validation:
    """Per-chunk scores of the two on the same chunks → intervals and the paired difference
    (the engine of the run statistics: resampled sums, BCa for the means)."""
    a = np.asarray(winner, dtype=np.float64)
    b = np.asarray(runner_up, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError("winner and runner-up need scores on the same chunks")
    units = np.column_stack([a, b, np.ones_like(a)])

    def means(sums: np.ndarray) -> np.ndarray:
        return np.vstack([sums[:, 0] / sums[:, 2], sums[:, 1] / sums[:, 2]])

    resamples = resample_statistics(units, means, n_resamples=n_resamples, seed=seed)
    first, second = intervals_from(resamples, confidence=confidence)
    return Validation(first, second, paired_from(resamples, 0, 1, confidence=confidence))
