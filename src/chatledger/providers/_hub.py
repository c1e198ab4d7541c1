"""One place that turns model ids into providers, sharing cache, budget and price table.

Providers are made once per endpoint (Anthropic, OpenAI, each OpenAI-compatible server, the
claude CLI), so all models behind one endpoint share its concurrency and rate limits.

Given a cache and a budget, the hub binds the budget to the cache's spend ledger of the
budget's name (``Budget(cap_usd, name=...)``, default ``"default"``): the cap then bounds what
every process using that cache spends together, across invocations, until the ledger is reset.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TypedDict

from chatledger.providers._anthropic import AnthropicProvider
from chatledger.providers._base import ManagedProvider, Provider
from chatledger.providers._batch import BatchStats
from chatledger.providers._budget import Budget
from chatledger.providers._cache import CompletionCache, default_cache_dir
from chatledger.providers._claude_cli import ClaudeCliProvider
from chatledger.providers._local import LocalProvider
from chatledger.providers._local_server import ServerOptions
from chatledger.providers._model_id import (
    ANTHROPIC,
    CLAUDE_CLI,
    LOCAL,
    OPENAI,
    OPENAI_COMPATIBLE,
    ModelId,
    parse_model_id,
)
from chatledger.providers._openai import OpenAICompatibleProvider, OpenAIProvider
from chatledger.providers._pricing import PriceTable
from chatledger.providers._settings import LOCAL_CALL_SETTINGS, BatchSettings, CallSettings
from chatledger.providers._types import Completion, CompletionRequest


class _SharedParts(TypedDict):
    settings: CallSettings
    cache: CompletionCache | None
    budget: Budget | None
    prices: PriceTable
    batch: BatchSettings | None


class ProviderHub(Provider):
    """Routes each request to the provider of its model id.

    ``settings`` apply to every endpoint unless ``endpoint_settings`` names one (keys are
    ``ModelId.endpoint``: ``"anthropic"``, ``"openai"``, ``"claude-cli"``,
    ``"openai-compatible:<url>"``, ``"local:<name>"``). ``base_urls`` redirects
    ``"anthropic"`` / ``"openai"`` to another server speaking their API (a proxy or a test
    server). Local models (``local:NAME``) use ``local_settings`` (one call at a time, long
    timeouts: a small CPU model takes minutes for a long answer) and ``local_server`` to start
    their servers. ``batch`` turns on batch mode (providers/_batch.py) for every endpoint that
    has a batch API (OpenAI, Anthropic); the others send their calls one by one, with a note.
    """

    def __init__(
        self,
        *,
        settings: CallSettings | None = None,
        endpoint_settings: Mapping[str, CallSettings] | None = None,
        cache: CompletionCache | None = None,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
        base_urls: Mapping[str, str] | None = None,
        claude_executable: str = "claude",
        local_settings: CallSettings | None = None,
        local_server: ServerOptions | None = None,
        batch: BatchSettings | None = None,
    ) -> None:
        self.settings = settings or CallSettings()
        self.endpoint_settings = dict(endpoint_settings or {})
        self.cache = cache
        self.budget = budget
        if budget is not None and cache is not None:
            budget.bind(cache)
        self.prices = prices if prices is not None else PriceTable.default()
        self.base_urls = dict(base_urls or {})
        self.claude_executable = claude_executable
        self.local_settings = local_settings or LOCAL_CALL_SETTINGS
        self.local_server = local_server or ServerOptions()
        self.batch = batch
        self._providers: dict[str, ManagedProvider] = {}

    def provider_for(self, model: str | ModelId) -> ManagedProvider:
        model_id = parse_model_id(model) if isinstance(model, str) else model
        provider = self._providers.get(model_id.endpoint)
        if provider is None:
            provider = self._make(model_id)
            self._providers[model_id.endpoint] = provider
        return provider

    def _make(self, model_id: ModelId) -> ManagedProvider:
        default = self.local_settings if model_id.provider == LOCAL else self.settings
        settings = self.endpoint_settings.get(model_id.endpoint, default)
        shared = _SharedParts(
            settings=settings,
            cache=self.cache,
            budget=self.budget,
            prices=self.prices,
            batch=self.batch,
        )
        if model_id.provider == ANTHROPIC:
            return AnthropicProvider(base_url=self.base_urls.get(ANTHROPIC), **shared)
        if model_id.provider == OPENAI:
            return OpenAIProvider(base_url=self.base_urls.get(OPENAI), **shared)
        if model_id.provider == OPENAI_COMPATIBLE:
            assert model_id.base_url is not None
            return OpenAICompatibleProvider(base_url=model_id.base_url, **shared)
        if model_id.provider == LOCAL:
            work_dir = self.cache.path.parent if self.cache is not None else default_cache_dir()
            return LocalProvider(
                model=model_id.model, server_options=self.local_server, work_dir=work_dir, **shared
            )
        if model_id.provider == CLAUDE_CLI:
            return ClaudeCliProvider(executable=self.claude_executable, **shared)
        raise AssertionError(f"unhandled provider kind {model_id.provider}")  # pragma: no cover

    async def complete(self, request: CompletionRequest) -> Completion:
        return await self.provider_for(request.model).complete(request)

    def batch_stats(self) -> BatchStats:
        """What batch mode did, over every endpoint used so far."""
        total = BatchStats()
        for provider in self._providers.values():
            if provider.batcher is not None:
                total.add(provider.batcher.stats)
        return total

    def batch_fallbacks(self) -> list[str]:
        """The endpoints used so far that batch mode could not batch (no batch API)."""
        return sorted(e for e, p in self._providers.items() if p.batch_fallback)

    async def aclose(self) -> None:
        for provider in self._providers.values():
            await provider.aclose()

    async def __aenter__(self) -> ProviderHub:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
