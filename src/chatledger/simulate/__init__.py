"""Simulated challengers: corruption operators with a severity and a seed (DESIGN.md §7)."""

from chatledger.simulate._challengers import (
    SIMULATED_PREFIX,
    simulate_records,
    simulated_name,
    write_records,
)
from chatledger.simulate._operators import (
    LIST_FIELDS,
    OPERATORS,
    TEXT_FIELDS,
    CorruptionOperator,
    corrupt,
    item_draw,
)

__all__ = [
    "LIST_FIELDS",
    "OPERATORS",
    "SIMULATED_PREFIX",
    "TEXT_FIELDS",
    "CorruptionOperator",
    "corrupt",
    "item_draw",
    "simulate_records",
    "simulated_name",
    "write_records",
]
