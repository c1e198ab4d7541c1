"""Prompting strategies and the runner that sends them to a model through the provider layer
(imports ``chatledger.providers``, so ``chatledger.structbench`` loads it on first use).
Builds on ``dataset``.
"""

from chatledger.structbench.prompting._run import (
    RunOutcome,
    examples_by_schema,
    run_strategy,
    strategy_named,
)
from chatledger.structbench.prompting._strategies import (
    STRATEGIES,
    CallOptions,
    Strategy,
    StrategyResult,
)

__all__ = [
    "STRATEGIES",
    "CallOptions",
    "RunOutcome",
    "Strategy",
    "StrategyResult",
    "examples_by_schema",
    "run_strategy",
    "strategy_named",
]
