"""Trust in the numbers: bootstrap intervals, paired differences, ranks, weight sensitivity."""

from chatledger.stats._bootstrap import (
    Interval,
    PairedDifference,
    bootstrap_intervals,
    paired_difference,
    rank_probabilities,
    resample_indices,
)
from chatledger.stats._effects import (
    EffectInterval,
    MetricEffects,
    StrategyVsModel,
    factor_effects,
)
from chatledger.stats._variance import repeat_variance
from chatledger.stats._weights import Sensitivity, dirichlet_sensitivity, ranking, simplex_grid

__all__ = [
    "EffectInterval",
    "Interval",
    "MetricEffects",
    "PairedDifference",
    "Sensitivity",
    "StrategyVsModel",
    "bootstrap_intervals",
    "dirichlet_sensitivity",
    "factor_effects",
    "paired_difference",
    "rank_probabilities",
    "ranking",
    "repeat_variance",
    "resample_indices",
    "simplex_grid",
]
