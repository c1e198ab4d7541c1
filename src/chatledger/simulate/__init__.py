"""Simulated challengers: corruption operators with a severity and a seed (DESIGN.md §7)."""

from chatledger.simulate._challengers import (
    SIMULATED_PREFIX,
    simulate_records,
    simulate_with_truth,
    simulated_name,
    write_records,
)
from chatledger.simulate._operators import (
    LIST_FIELDS,
    OPERATORS,
    PROBES,
    TEXT_FIELDS,
    CorruptionOperator,
    corrupt,
    corrupt_traced,
    item_draw,
    operator_class,
)
from chatledger.simulate._truth import (
    EFFECTS,
    TRUTH_SUFFIX,
    UNTOUCHED,
    ChunkTruth,
    Effect,
    ItemTruth,
    effect_counts,
    read_truth,
    truth_path,
    write_truth,
)

__all__ = [
    "EFFECTS",
    "LIST_FIELDS",
    "OPERATORS",
    "PROBES",
    "SIMULATED_PREFIX",
    "TEXT_FIELDS",
    "TRUTH_SUFFIX",
    "UNTOUCHED",
    "ChunkTruth",
    "CorruptionOperator",
    "Effect",
    "ItemTruth",
    "corrupt",
    "corrupt_traced",
    "effect_counts",
    "item_draw",
    "operator_class",
    "read_truth",
    "simulate_records",
    "simulate_with_truth",
    "simulated_name",
    "truth_path",
    "write_records",
    "write_truth",
]
