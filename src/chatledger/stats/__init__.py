"""Trust in the numbers: bootstrap intervals, paired differences, ranks, weight sensitivity,
power (how many units a comparison needs).

The names below are loaded on first use: a reader of a run (the gate, stats) resamples with
:mod:`chatledger.stats._resample` and tests with :mod:`chatledger.stats._inference`, not the
sequential, PPI, power or factor-effect code the other commands use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger._lazy import lazy_attributes

if TYPE_CHECKING:
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
    from chatledger.stats._inference import (
        EXACT_UP_TO,
        FEW_ITEMS,
        MIN_OUTCOME_UNITS,
        MIN_UNITS,
        T_METHOD,
        PairedComparison,
        SignFlip,
        concentrated_note,
        few_items_note,
        outcome_units,
        paired_comparison,
        sign_flip_test,
        t_interval,
        t_quantile,
        too_few_note,
        wilson_interval,
    )
    from chatledger.stats._power import DEFAULT_POWER, paired_power, units_needed, units_needed_for
    from chatledger.stats._ppi import PPIEstimate, ppi_labels_needed, ppi_lambda, ppi_mean
    from chatledger.stats._resample import (
        Resamples,
        bootstrap_sums,
        intervals_from,
        paired_from,
        paired_of,
        rank_probabilities_from,
        resample_counts,
        resample_statistics,
        t_interval_of,
    )
    from chatledger.stats._sequential import (
        ConfidenceSequence,
        Decision,
        SimulatedEffect,
        StopPlan,
        betting_bounds,
        confidence_sequence,
        decide,
        expected_conversations,
        first_decision,
        simulate_sequential,
    )
    from chatledger.stats._variance import repeat_variance
    from chatledger.stats._weights import Sensitivity, dirichlet_sensitivity, ranking, simplex_grid

# Loaded on first use (name → module); tests/test_cli_lazy.py holds it to __all__.
_WHERE = {
    **dict.fromkeys(
        (
            "Interval",
            "PairedDifference",
            "bootstrap_intervals",
            "paired_difference",
            "rank_probabilities",
            "resample_indices",
        ),
        "_bootstrap",
    ),
    **dict.fromkeys(
        ("EffectInterval", "MetricEffects", "StrategyVsModel", "factor_effects"),
        "_effects",
    ),
    **dict.fromkeys(
        (
            "EXACT_UP_TO",
            "FEW_ITEMS",
            "MIN_OUTCOME_UNITS",
            "MIN_UNITS",
            "T_METHOD",
            "PairedComparison",
            "SignFlip",
            "concentrated_note",
            "few_items_note",
            "outcome_units",
            "paired_comparison",
            "sign_flip_test",
            "t_interval",
            "t_quantile",
            "too_few_note",
            "wilson_interval",
        ),
        "_inference",
    ),
    **dict.fromkeys(
        ("DEFAULT_POWER", "paired_power", "units_needed", "units_needed_for"),
        "_power",
    ),
    **dict.fromkeys(
        ("PPIEstimate", "ppi_labels_needed", "ppi_lambda", "ppi_mean"),
        "_ppi",
    ),
    **dict.fromkeys(
        (
            "Resamples",
            "bootstrap_sums",
            "intervals_from",
            "paired_from",
            "paired_of",
            "rank_probabilities_from",
            "resample_counts",
            "resample_statistics",
            "t_interval_of",
        ),
        "_resample",
    ),
    **dict.fromkeys(
        (
            "ConfidenceSequence",
            "Decision",
            "SimulatedEffect",
            "StopPlan",
            "betting_bounds",
            "confidence_sequence",
            "decide",
            "expected_conversations",
            "first_decision",
            "simulate_sequential",
        ),
        "_sequential",
    ),
    "repeat_variance": "_variance",
    **dict.fromkeys(
        ("Sensitivity", "dirichlet_sensitivity", "ranking", "simplex_grid"),
        "_weights",
    ),
}

__all__ = [
    "DEFAULT_POWER",
    "EXACT_UP_TO",
    "FEW_ITEMS",
    "MIN_OUTCOME_UNITS",
    "MIN_UNITS",
    "T_METHOD",
    "ConfidenceSequence",
    "Decision",
    "EffectInterval",
    "Interval",
    "MetricEffects",
    "PPIEstimate",
    "PairedComparison",
    "PairedDifference",
    "Resamples",
    "Sensitivity",
    "SignFlip",
    "SimulatedEffect",
    "StopPlan",
    "StrategyVsModel",
    "betting_bounds",
    "bootstrap_intervals",
    "bootstrap_sums",
    "concentrated_note",
    "confidence_sequence",
    "decide",
    "dirichlet_sensitivity",
    "expected_conversations",
    "factor_effects",
    "few_items_note",
    "first_decision",
    "intervals_from",
    "outcome_units",
    "paired_comparison",
    "paired_difference",
    "paired_from",
    "paired_of",
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
    "sign_flip_test",
    "simplex_grid",
    "simulate_sequential",
    "t_interval",
    "t_interval_of",
    "t_quantile",
    "too_few_note",
    "units_needed",
    "units_needed_for",
    "wilson_interval",
]


__getattr__ = lazy_attributes(__name__, _WHERE, globals())
