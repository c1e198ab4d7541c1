"""A language model as a judge (DESIGN.md §4), through the provider layer.

The judge is shown the chunk's messages, the extraction's summary and its numbered items —
never the name of the model that made it — and must answer with the :class:`Verdict` JSON
schema as structured output (a forced tool, ``response_format``, or schema-in-prompt with
repair, validation and bounded re-asks, all in the provider layer). A verdict that still fails
is unscored (``None``): excluded from the means and counted, never a 0. Labels for item ids that
are not in the list are dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from chatledger.core import (
    ChatLedgerError,
    Chunk,
    EnvironmentFault,
    ExtractionV3,
    Registry,
    first_validation_error,
)
from chatledger.judge._base import Judge
from chatledger.judge._items import judged_items, render_conversation
from chatledger.judge._verdict import ISSUE_LABELS, Verdict
from chatledger.providers import (
    RUN_STOPPING_ERRORS,
    BudgetExceeded,
    CompletionCache,
    CompletionRequest,
    OutputSchema,
    Provider,
    ProviderError,
    ProviderHub,
    parse_model_id,
    run_sync,
    strict_schema,
)

log = logging.getLogger("chatledger.judge")

VERDICT_SCHEMA_NAME = "judge_verdict"
DEFAULT_CONCURRENCY = 4

JUDGE_SYSTEM = f"""You are a strict grader of information extracted from a conversation.
You are given the conversation (one message per line, message id in square brackets) and an
extraction made from it: a summary and a numbered list of items, each with an id such as
"claims#0", the people it is attributed to and the message ids it cites as evidence.

Grade the extraction against the conversation only:
- content_accuracy (0-100): how correct the extracted content is;
- completeness (0-100): how much of what matters in the conversation was extracted;
- hallucination (0-100): 100 means nothing was invented, 0 means mostly invented.
Then label every listed item by its id with one of: {", ".join(ISSUE_LABELS)}
(none = supported and correctly attributed; weak_support = the cited messages do not support
it; fabricated = nothing in the conversation supports it; misattributed = said by someone else;
over_interpreted = says more than the messages do; partially_supported = only part of it is
supported), with a one-line reason. Answer with the verdict JSON only."""


@cache
def verdict_output_schema(strict: bool = False) -> OutputSchema:
    """The :class:`Verdict` JSON schema, with ``items`` required so no label list is left out;
    ``strict``: its strict variant (every property required, no bounds), what a local model's
    grammar takes (the reply is still validated against :class:`Verdict`)."""
    schema: dict[str, JsonValue] = Verdict.model_json_schema()
    required = schema.get("required")
    schema["required"] = [*(required if isinstance(required, list) else []), "items"]
    if strict:
        schema = strict_schema(schema)
    return OutputSchema.model_validate(
        {
            "name": VERDICT_SCHEMA_NAME,
            "schema": schema,
            "description": "The grade of one extraction and a label for each of its items.",
            "strict": False,
        }
    )


def judge_prompt(chunk: Chunk, extraction: ExtractionV3) -> str:
    """What the judge reads: the conversation and the extraction (no model name)."""
    items = judged_items(extraction)
    listed = "\n".join(f"{n}. {item.render()}" for n, item in enumerate(items, start=1))
    parts = [f"Conversation:\n{render_conversation(chunk)}"]
    if extraction.summary:
        parts.append(f"Summary in the extraction:\n{extraction.summary}")
    parts.append(f"Extracted items ({len(items)}):\n{listed or '(none)'}")
    return "\n\n".join(parts)


class LLMJudgeOptions(BaseModel):
    """The ``options`` of a model judge in a run config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: int = Field(default=2048, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)


@dataclass
class JudgeUsage:
    """What a model judge has cost so far."""

    verdicts: int = 0
    unscored: int = 0
    failed_calls: int = 0
    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0


# A spent budget or an error no later call can escape stops the run (not a chunk "not judged");
# with no runtime and no server (EnvironmentFault) the judge stops as well.
_STOPS_THE_RUN: tuple[type[ChatLedgerError], ...] = (BudgetExceeded, *RUN_STOPPING_ERRORS)
_STOPS_JUDGING: tuple[type[ChatLedgerError], ...] = (*_STOPS_THE_RUN, EnvironmentFault)


class LLMJudge(Judge):
    """A judge behind a model id; its family is the model's provider (``anthropic``, …)."""

    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        hub: Provider | None = None,
        max_tokens: int = 2048,
        temperature: float | None = None,
        concurrency: int | None = None,
    ) -> None:
        self.model = model
        self.family = parse_model_id(model).provider
        self.name = name or model
        self.hub = hub
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.concurrency = concurrency
        self.spent = JudgeUsage()

    @classmethod
    def from_spec(
        cls, name: str, model: str, options: Mapping[str, Any], hub: Provider | None
    ) -> LLMJudge:
        """Build from a run config's judge entry; bad options raise a ValueError."""
        try:
            parsed = LLMJudgeOptions.model_validate(dict(options))
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            raise ValueError(f"option {where}: {msg}") from None
        return cls(
            model,
            name=name,
            hub=hub,
            max_tokens=parsed.max_tokens,
            temperature=parsed.temperature,
        )

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "family": self.family, "model": self.model}

    def usage(self) -> dict[str, Any]:
        return asdict(self.spent)

    def request(self, chunk: Chunk, extraction: ExtractionV3) -> CompletionRequest:
        return CompletionRequest.from_prompt(
            self.model,
            judge_prompt(chunk, extraction),
            system=JUDGE_SYSTEM,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            output_schema=verdict_output_schema(strict=self.family == "local"),
        )

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        return run_sync(self.ajudge_many(pairs))

    async def ajudge_many(
        self, pairs: Sequence[tuple[Chunk, ExtractionV3]]
    ) -> list[Verdict | None]:
        """Verdicts in the order of ``pairs``, judged concurrently within the endpoint's limit.

        Raises :class:`BudgetExceeded` (after the calls in flight finish) and configuration
        errors (a missing key, a price a budget needs); other failed calls are unscored.
        """
        own_hub = self.hub is None
        hub: Provider = self.hub or ProviderHub(cache=CompletionCache())
        size = self.concurrency or (
            hub.provider_for(self.model).gate.concurrency
            if isinstance(hub, ProviderHub)
            else DEFAULT_CONCURRENCY
        )
        slots = asyncio.Semaphore(size)
        stop: list[ChatLedgerError] = []

        async def one(chunk: Chunk, extraction: ExtractionV3) -> Verdict | None:
            async with slots:
                if stop:
                    return None
                try:
                    return await self._judge_one(hub, chunk, extraction)
                except _STOPS_JUDGING as exc:
                    stop.append(exc)
                    return None

        try:
            verdicts = await asyncio.gather(*(one(c, e) for c, e in pairs))
        finally:
            if own_hub:
                await hub.aclose()
                if isinstance(hub, ProviderHub) and hub.cache is not None:
                    hub.cache.close()
        if stop:
            raise stop[0]
        return list(verdicts)

    async def _judge_one(
        self, hub: Provider, chunk: Chunk, extraction: ExtractionV3
    ) -> Verdict | None:
        try:
            completion = await hub.complete(self.request(chunk, extraction))
        except _STOPS_THE_RUN:
            raise
        except ProviderError as exc:
            log.warning("judge %s: chunk %s not judged: %s", self.name, chunk.chunk_id, exc)
            self.spent.failed_calls += 1
            self.spent.unscored += 1
            return None
        spent = self.spent
        spent.calls += completion.calls
        spent.cached_calls += completion.calls if completion.cached else 0
        spent.input_tokens += completion.input_tokens
        spent.output_tokens += completion.output_tokens
        spent.cost_usd += completion.cost_usd
        spent.latency_s += completion.latency_s
        verdict = _read_verdict(completion.parsed, completion.error, extraction)
        if verdict is None:
            log.info("judge %s: chunk %s unscored: %s", self.name, chunk.chunk_id, completion.error)
            spent.unscored += 1
        else:
            spent.verdicts += 1
        return verdict


def _read_verdict(
    parsed: JsonValue | None, error: str | None, extraction: ExtractionV3
) -> Verdict | None:
    if error is not None or parsed is None:
        return None
    try:
        verdict = Verdict.model_validate(parsed)
    except ValidationError:
        return None
    listed = {item.item_id for item in judged_items(extraction)}
    kept = []
    seen: set[str] = set()
    for item in verdict.items:
        if item.item_id in listed and item.item_id not in seen:
            kept.append(item)
            seen.add(item.item_id)
    return verdict.model_copy(update={"items": kept})


class ModelJudgeFactory(Protocol):
    def __call__(
        self, name: str, model: str, options: Mapping[str, Any], hub: Provider | None
    ) -> Judge: ...


# How a run config's ``judges: [{name, model, options}]`` entry becomes a judge; ``options.kind``
# picks the factory (default ``llm``).
MODEL_JUDGES: Registry[ModelJudgeFactory] = Registry("model judge")
MODEL_JUDGES.register("llm")(LLMJudge.from_spec)
