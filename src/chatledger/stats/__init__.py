"""Trust in the numbers: bootstrap intervals, paired differences, ranks, weight sensitivity,
power (how many units a comparison needs)."""

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
from chatledger.stats._power import DEFAULT_POWER, paired_power, units_needed, units_needed_for
from chatledger.stats._ppi import PPIEstimate, ppi_labels_needed, ppi_lambda, ppi_mean
from chatledger.stats._resample import (
    Resamples,
    bootstrap_sums,
    intervals_from,
    paired_from,
    rank_probabilities_from,
    resample_counts,
    resample_statistics,
)
from chatledger.stats._sequential import (
    ConfidenceSequence,
    Decision,
    SimulatedEffect,
    betting_bounds,
    confidence_sequence,
    decide,
    first_decision,
    simulate_sequential,
)
from chatledger.stats._variance import repeat_variance
from chatledger.stats._weights import Sensitivity, dirichlet_sensitivity, ranking, simplex_grid

__all__ = [
    "DEFAULT_POWER",
    "ConfidenceSequence",
    "Decision",
    "EffectInterval",
    "Interval",
    "MetricEffects",
    "PPIEstimate",
    "PairedDifference",
    "Resamples",
    "Sensitivity",
    "SimulatedEffect",
    "StrategyVsModel",
    "betting_bounds",
    "bootstrap_intervals",
    "bootstrap_sums",
    "confidence_sequence",
    "decide",
    "dirichlet_sensitivity",
    "factor_effects",
    "first_decision",
    "intervals_from",
    "paired_difference",
    "paired_from",
    "paired_power",
    "ppi_labels_needed",
    "ppi_lambda",
    "ppi_mean",
    "rank_probabilities",
    "rank_probabilities_from",
    "ranking",
    "repeat_variance",
    "resample_counts",
    "resample_indices",
    "resample_statistics",
    "simplex_grid",
    "simulate_sequential",
    "units_needed",
    "units_needed_for",
]
