"""What one wire call returned (:class:`RawReply`): what a provider gives back and what the
call cache stores, in a module of its own so that the cache can read its rows as the type
without importing the providers that make the calls."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class RawReply(BaseModel):
    """What one wire call returned; this is what the cache stores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    # The value a schema mechanism handed back directly (a tool call's input).
    structured: JsonValue | None = None
    # Tokens billed: what the server reported, within the bounds (see billed_usage).
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    finish_reason: str | None = None
    # Filled by the provider when the back-end reports the cost itself (the claude CLI does),
    # otherwise computed from the price table.
    cost_usd: float | None = None
    latency_s: float = 0.0
    # Reported counts that were replaced before billing, each said in a sentence.
    usage_warnings: tuple[str, ...] = ()
