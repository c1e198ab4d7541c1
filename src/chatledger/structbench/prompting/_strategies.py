"""Prompting strategies (DESIGN §8): each builds the request(s) for one document and returns the
model's raw text, which is scored as it is.

================  =============================================================================
strategy          what the model is given
================  =============================================================================
zero_shot         the email and the *shape* of the answer (field names with type names) — no
                  schema constraints (formats, enums, required), no example
schema_in_prompt  the email and the full JSON Schema in the prompt
one_shot          as schema_in_prompt, preceded by one worked example (user: example email,
                  assistant: its JSON) — the document's own ``example``, else the first example
                  found in the dataset for the same schema
provider_schema   the email, with the schema sent through the provider's structured-output
                  mechanism (OpenAI ``response_format`` json_schema, Anthropic forced tool; a
                  server that refuses it gets the schema in the prompt — see the providers)
two_step          call 1 lists the email's facts as ``label: value`` lines; call 2 turns only
                  those lines into JSON under the schema (the email is not shown again)
================  =============================================================================
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

from chatledger.core import Registry
from chatledger.providers import (
    ChatMessage,
    Completion,
    CompletionRequest,
    OutputSchema,
    Provider,
)
from chatledger.structbench.dataset import Document, Example, Json
from chatledger.structbench.prompting import _prompts as prompts
from chatledger.structbench.prompting._prompts import SYSTEM, compact


@dataclass(frozen=True)
class CallOptions:
    model: str
    max_tokens: int = 2048
    temperature: float | None = None
    sample_index: int = 0


@dataclass
class StrategyResult:
    """The raw output to score, and what producing it cost (over all calls)."""

    output: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    calls: int = 0
    finish_reasons: list[str | None] = field(default_factory=list)

    def add(self, completion: Completion) -> None:
        self.input_tokens += completion.input_tokens
        self.output_tokens += completion.output_tokens
        self.cost_usd += completion.cost_usd
        self.latency_s += completion.latency_s
        self.calls += completion.calls
        self.finish_reasons.append(completion.finish_reason)

    def usage(self) -> dict[str, object]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "latency_s": self.latency_s,
            "calls": self.calls,
            "finish_reason": self.finish_reasons[-1] if self.finish_reasons else None,
        }


class Strategy(ABC):
    name: str
    needs_example: bool = False

    @abstractmethod
    def requests(
        self, document: Document, options: CallOptions, example: Example | None
    ) -> list[CompletionRequest]:
        """The first (or only) request for ``document``."""

    async def run(
        self,
        provider: Provider,
        document: Document,
        options: CallOptions,
        example: Example | None = None,
    ) -> StrategyResult:
        result = StrategyResult(output="")
        for request in self.requests(document, options, example):
            completion = await provider.complete(request)
            result.add(completion)
            result.output = completion.text
        return result


STRATEGIES: Registry[Strategy] = Registry("prompting strategy")


def register_strategy(strategy: Strategy) -> Strategy:
    STRATEGIES.register(strategy.name)(strategy)
    return strategy


def _ask(
    options: CallOptions, *messages: ChatMessage, schema: OutputSchema | None = None
) -> CompletionRequest:
    return CompletionRequest(
        model=options.model,
        messages=(ChatMessage(role="system", content=SYSTEM), *messages),
        max_tokens=options.max_tokens,
        temperature=options.temperature,
        output_schema=schema,
        sample_index=options.sample_index,
    )


def _user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


class SinglePrompt(Strategy):
    """One user turn: the email and the schema, put into words by ``prompt``."""

    def __init__(self, name: str, prompt: Callable[[str, Json], str]) -> None:
        self.name = name
        self._prompt = prompt

    def requests(
        self, document: Document, options: CallOptions, example: Example | None
    ) -> list[CompletionRequest]:
        return [_ask(options, _user(self._prompt(document.input, document.schema)))]


class OneShot(Strategy):
    name = "one_shot"
    needs_example = True

    def requests(
        self, document: Document, options: CallOptions, example: Example | None
    ) -> list[CompletionRequest]:
        example = document.example or example
        if example is None:
            raise ValueError(f"{document.id}: one_shot needs an example and none was found")
        return [
            _ask(
                options,
                _user(prompts.schema_in_prompt(example.input, document.schema)),
                ChatMessage(role="assistant", content=compact(example.output)),
                _user(prompts.schema_in_prompt(document.input, document.schema)),
            )
        ]


class ProviderSchema(Strategy):
    name = "provider_schema"

    def requests(
        self, document: Document, options: CallOptions, example: Example | None
    ) -> list[CompletionRequest]:
        # "$schema" only names the dialect; some strict structured-output servers reject it.
        schema = {k: v for k, v in document.schema.items() if k != "$schema"}
        output_schema = OutputSchema.model_validate(
            {"name": "structbench_extraction", "schema": schema, "strict": True}
        )
        return [_ask(options, _user(prompts.provider_schema(document.input)), schema=output_schema)]


class TwoStep(Strategy):
    name = "two_step"

    def requests(
        self, document: Document, options: CallOptions, example: Example | None
    ) -> list[CompletionRequest]:
        return [
            CompletionRequest(
                model=options.model,
                messages=(
                    ChatMessage(role="system", content=prompts.FACTS_SYSTEM),
                    _user(prompts.facts(document.input, document.schema)),
                ),
                max_tokens=options.max_tokens,
                temperature=options.temperature,
                sample_index=options.sample_index,
            )
        ]

    async def run(
        self,
        provider: Provider,
        document: Document,
        options: CallOptions,
        example: Example | None = None,
    ) -> StrategyResult:
        result = StrategyResult(output="")
        (extract,) = self.requests(document, options, example)
        facts = await provider.complete(extract)
        result.add(facts)
        formatted = await provider.complete(
            _ask(options, _user(prompts.format_facts(facts.text, document.schema)))
        )
        result.add(formatted)
        result.output = formatted.text
        return result


for _strategy in (
    SinglePrompt("zero_shot", prompts.zero_shot),
    SinglePrompt("schema_in_prompt", prompts.schema_in_prompt),
    OneShot(),
    ProviderSchema(),
    TwoStep(),
):
    register_strategy(_strategy)
