"""Running one prompting strategy over a dataset with one model (``structbench run``).

Calls go through the provider layer (cache, retries, rate limits, budget). A document whose call
fails after retries gets no prediction line — it is scored as ``missing`` — and its reason is
returned; a budget stop keeps everything finished before it. The run measures a single reply per
document: the runner asks the providers for no schema re-asks (``max_reasks=0``) unless told
otherwise, because a re-ask would hand the model its validation error and score the second try.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chatledger.core import ChatLedgerError, InputError
from chatledger.providers import (
    RUN_STOPPING_ERRORS,
    BudgetExceeded,
    Provider,
    ProviderError,
)
from chatledger.structbench.dataset import Document, Example, Prediction
from chatledger.structbench.prompting._strategies import STRATEGIES, CallOptions, Strategy


@dataclass
class RunOutcome:
    predictions: list[Prediction]
    failures: dict[str, str] = field(default_factory=dict)
    budget_stop: str | None = None

    @property
    def cost_usd(self) -> float:
        total = 0.0
        for p in self.predictions:
            cost = (p.usage or {}).get("cost_usd", 0.0)
            total += float(cost) if isinstance(cost, int | float) else 0.0
        return total


def strategy_named(name: str) -> Strategy:
    try:
        return STRATEGIES.get(name)
    except InputError as exc:
        raise InputError(exc.detail, field="strategy") from None


def examples_by_schema(documents: Sequence[Document]) -> dict[str, Example]:
    """The first example given for each distinct schema (one-shot's fallback)."""
    found: dict[str, Example] = {}
    for d in documents:
        if d.example is not None:
            found.setdefault(d.schema_key, d.example)
    return found


async def run_strategy(
    documents: Sequence[Document],
    strategy: Strategy,
    provider: Provider,
    options: CallOptions,
    *,
    concurrency: int = 4,
    on_done: Callable[[], None] | None = None,
) -> RunOutcome:
    """Predictions in dataset order for the documents that got an answer.

    Errors every other call would hit too (no API key; no price under a budget) stop the run
    and are raised once the calls in flight are done: they are the user's to fix, not a
    document's failure.
    """
    examples = examples_by_schema(documents)
    if strategy.needs_example:
        lacking = [d.id for d in documents if d.example is None and d.schema_key not in examples]
        if lacking:
            raise InputError(
                f"{strategy.name} needs a one-shot example; none for {lacking[0]} "
                f"(and {len(lacking) - 1} more)",
                field="example",
            )
    gate = asyncio.Semaphore(max(1, concurrency))
    results: dict[str, Prediction] = {}
    outcome = RunOutcome(predictions=[])
    stop = asyncio.Event()
    fatal: list[ChatLedgerError] = []

    async def one(document: Document) -> None:
        async with gate:
            if stop.is_set():
                return
            try:
                result = await strategy.run(
                    provider, document, options, examples.get(document.schema_key)
                )
            except BudgetExceeded as exc:
                outcome.budget_stop = outcome.budget_stop or str(exc)
                stop.set()
                return
            except RUN_STOPPING_ERRORS as exc:
                fatal.append(exc)
                stop.set()
                return
            except ProviderError as exc:
                outcome.failures[document.id] = str(exc)
                return
            finally:
                if on_done is not None:
                    on_done()
            results[document.id] = Prediction(
                id=document.id,
                output=result.output,
                strategy=strategy.name,
                model=options.model,
                usage=result.usage(),
            )

    await asyncio.gather(*(one(d) for d in documents))
    if fatal:
        raise fatal[0]
    outcome.predictions = [results[d.id] for d in documents if d.id in results]
    return outcome
