"""Model calls: Anthropic, OpenAI, OpenAI-compatible servers and the ``claude -p`` CLI behind one
interface, with an on-disk cache, retries, rate limits, cost accounting, a budget cap and
validated structured output. The SDKs are optional extras, imported on first use.

    async with ProviderHub(cache=CompletionCache(), budget=Budget(cap_usd=5.0)) as hub:
        completion = await hub.complete(
            CompletionRequest.from_prompt("anthropic:claude-opus-4-6", "Hello", max_tokens=200)
        )

With a cache, the budget's cap bounds the cache's spend ledger (``Budget(cap_usd, name=...)``,
default ``"default"``): every process and invocation using that cache together, until reset.

    cache.ledger(name).totals() -> LedgerTotals     # spent_usd, calls, tokens, reserved_usd
    cache.ledger(name).reset()  -> LedgerTotals     # what was cleared
    cache.ledgers()             -> list[LedgerTotals]

``ProviderHub(batch=BatchSettings())`` sends OpenAI and Anthropic calls through their batch APIs
at the batch price, resuming submitted batches after a restart (docs/batch.md).

``CallSettings(timeout_s=...)`` bounds each attempt of a call (the whole reply, not one read), so
a call against a hung server ends within ``max_attempts`` × ``timeout_s`` plus back-off.
"""

from chatledger.providers._anthropic import AnthropicProvider
from chatledger.providers._base import ManagedProvider, Provider, WireCall
from chatledger.providers._batch import BatchStats
from chatledger.providers._batch_store import BatchRecord, BatchStore
from chatledger.providers._budget import Budget, Reservation
from chatledger.providers._cache import (
    CACHE_DIR_ENV,
    CompletionCache,
    cache_key,
    canonical_json,
    default_cache_dir,
)
from chatledger.providers._claude_cli import ClaudeCliProvider
from chatledger.providers._errors import (
    RUN_STOPPING_ERRORS,
    BudgetExceeded,
    LocalServerStoppedError,
    MissingApiKeyError,
    MissingSdkError,
    PriceUnknownError,
    ProviderError,
    ServerUnreachableError,
)
from chatledger.providers._hub import ProviderHub
from chatledger.providers._ledger import DEFAULT_LEDGER, LedgerTotals, SpendLedger
from chatledger.providers._limits import CallGate, TokenBucket
from chatledger.providers._local import LOCAL_DEFAULTS, LocalProvider
from chatledger.providers._local_models import (
    CATALOGUE,
    LocalModelFile,
    locate_model,
    where_model,
)
from chatledger.providers._local_server import LocalServer, ServerOptions, runtime_name
from chatledger.providers._model_id import (
    PROVIDER_KINDS,
    ModelId,
    ModelIdError,
    parse_model_id,
    redact_model_id,
)
from chatledger.providers._openai import OpenAICompatibleProvider, OpenAIProvider
from chatledger.providers._pricing import ModelPrice, PriceTable
from chatledger.providers._reply import RawReply
from chatledger.providers._settings import LOCAL_CALL_SETTINGS, BatchSettings, CallSettings
from chatledger.providers._strict import strict_schema
from chatledger.providers._structured import check_reply, extract_json, validator_for
from chatledger.providers._sync import run_sync
from chatledger.providers._types import (
    BudgetStop,
    ChatMessage,
    Completion,
    CompletionRequest,
    OutputSchema,
)

__all__ = [
    "CACHE_DIR_ENV",
    "CATALOGUE",
    "DEFAULT_LEDGER",
    "LOCAL_CALL_SETTINGS",
    "LOCAL_DEFAULTS",
    "PROVIDER_KINDS",
    "RUN_STOPPING_ERRORS",
    "AnthropicProvider",
    "BatchRecord",
    "BatchSettings",
    "BatchStats",
    "BatchStore",
    "Budget",
    "BudgetExceeded",
    "BudgetStop",
    "CallGate",
    "CallSettings",
    "ChatMessage",
    "ClaudeCliProvider",
    "Completion",
    "CompletionCache",
    "CompletionRequest",
    "LedgerTotals",
    "LocalModelFile",
    "LocalProvider",
    "LocalServer",
    "LocalServerStoppedError",
    "ManagedProvider",
    "MissingApiKeyError",
    "MissingSdkError",
    "ModelId",
    "ModelIdError",
    "ModelPrice",
    "OpenAICompatibleProvider",
    "OpenAIProvider",
    "OutputSchema",
    "PriceTable",
    "PriceUnknownError",
    "Provider",
    "ProviderError",
    "ProviderHub",
    "RawReply",
    "Reservation",
    "ServerOptions",
    "ServerUnreachableError",
    "SpendLedger",
    "TokenBucket",
    "WireCall",
    "cache_key",
    "canonical_json",
    "check_reply",
    "default_cache_dir",
    "extract_json",
    "locate_model",
    "parse_model_id",
    "redact_model_id",
    "run_sync",
    "runtime_name",
    "strict_schema",
    "validator_for",
    "where_model",
]
