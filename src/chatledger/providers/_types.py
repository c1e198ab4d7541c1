"""What a caller asks a model for, and what it gets back.

These are the only types ``chatledger extract`` and the judges need: they build a
:class:`CompletionRequest`, hand it to a provider, and read a :class:`Completion`. Both are plain
pydantic models so a completion can be stored as JSON (cache, run files) and read back unchanged.
"""

from __future__ import annotations

from typing import Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from chatledger.core import Usage
from chatledger.providers._errors import BudgetExceeded
from chatledger.providers._model_id import parse_model_id

Role = Literal["system", "user", "assistant"]
StructuredMode = Literal["native", "prompt"]


class ChatMessage(BaseModel):
    """One turn of the conversation sent to a model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    content: str


class OutputSchema(BaseModel):
    """A JSON Schema (Draft 2020-12) the reply must follow, sent as a tool or response format."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Both APIs restrict tool / response-format names to this alphabet and length.
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    schema_: dict[str, JsonValue] = Field(alias="schema")
    description: str = ""
    # OpenAI's strict mode needs every property required and no additional properties; a
    # schema that is not written that way is rejected by the server, and the provider falls back
    # to schema-in-prompt (see ManagedProvider).
    strict: bool = True

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, JsonValue]) -> dict[str, JsonValue]:
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"not a valid Draft 2020-12 JSON Schema: {exc.message}") from None
        return schema

    @property
    def json_schema(self) -> dict[str, JsonValue]:
        return self.schema_


class CompletionRequest(BaseModel):
    """One question to one model. Every field here is part of the cache key."""

    # A refused model id may hold credentials (``http://user:secret@host``): pydantic would
    # quote the input in its error, so inputs are left out (the message says what is wrong).
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    model: str
    messages: tuple[ChatMessage, ...]
    max_tokens: int = Field(default=4096, ge=1)
    # None leaves the provider's default in place; newer Anthropic models reject the parameter.
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    output_schema: OutputSchema | None = None
    # Repeat-variance runs ask the same question n times; each sample gets its own cache entry.
    sample_index: int = Field(default=0, ge=0)
    # Provider-specific request fields passed through unchanged (e.g. {"reasoning_effort": "low"}).
    options: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("model")
    @classmethod
    def _known_model_id(cls, model: str) -> str:
        parse_model_id(model)
        return model

    @model_validator(mode="after")
    def _has_user_turn(self) -> CompletionRequest:
        if not any(m.role == "user" for m in self.messages):
            raise ValueError("a request needs at least one user message")
        seen_other = False
        for message in self.messages:
            if message.role == "system" and seen_other:
                raise ValueError("system messages must come before user/assistant messages")
            seen_other = seen_other or message.role != "system"
        return self

    @classmethod
    def from_prompt(
        cls,
        model: str,
        user: str,
        *,
        system: str | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
        output_schema: OutputSchema | None = None,
        sample_index: int = 0,
    ) -> CompletionRequest:
        """The common case: an optional system prompt and one user message."""
        messages = [ChatMessage(role="system", content=system)] if system else []
        messages.append(ChatMessage(role="user", content=user))
        return cls(
            model=model,
            messages=tuple(messages),
            max_tokens=max_tokens,
            temperature=temperature,
            output_schema=output_schema,
            sample_index=sample_index,
        )

    @property
    def system_text(self) -> str:
        return "\n\n".join(m.content for m in self.messages if m.role == "system")

    @property
    def turns(self) -> tuple[ChatMessage, ...]:
        return tuple(m for m in self.messages if m.role != "system")


class BudgetStop(BaseModel):
    """A :class:`BudgetExceeded` kept on a completion: the budget refused a re-ask, so the
    completion carries the last paid reply and the caller should start no new calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cap_usd: float
    committed_usd: float
    worst_case_usd: float
    model: str
    ledger: str | None = None

    @classmethod
    def of(cls, error: BudgetExceeded) -> BudgetStop:
        return cls(
            cap_usd=error.cap_usd,
            committed_usd=error.committed_usd,
            worst_case_usd=error.worst_case_usd,
            model=error.model,
            ledger=error.ledger,
        )

    def exception(self) -> BudgetExceeded:
        """The error the refused call raised, for callers that stop a run on it."""
        return BudgetExceeded(
            cap_usd=self.cap_usd,
            committed_usd=self.committed_usd,
            worst_case_usd=self.worst_case_usd,
            model=self.model,
            ledger=self.ledger,
        )


class Completion(BaseModel):
    """A model's answer with its cost. ``parsed`` is set only when a schema was asked for and the
    reply validated; otherwise ``error`` says why (the caller counts it, nothing is raised).

    ``error`` is also set, with ``parsed=None``, when every attempt got a 200 that could not be
    read as a reply (an HTML page, invalid UTF-8): the output is invalid, not missing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    text: str
    parsed: JsonValue | None = None
    error: str | None = None
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    latency_s: float = Field(default=0.0, ge=0.0)
    cost_usd: float = Field(default=0.0, ge=0.0)
    # True when every model call behind this completion came from the cache (cost 0).
    cached: bool = False
    finish_reason: str | None = None
    # Model calls behind this completion: 1 + re-asks (cached calls included).
    calls: int = Field(default=1, ge=1)
    structured_mode: StructuredMode | None = None
    sample_index: int = Field(default=0, ge=0)
    # Token counts the server reported that were not billed as reported (more output tokens
    # than max_tokens allowed, an impossible input count, no count at all); empty when none.
    usage_warnings: tuple[str, ...] = ()
    # Set when the budget refused a re-ask: this completion holds the last paid (invalid)
    # reply, and no new call should start (``budget_stop.exception()`` is the refusal).
    budget_stop: BudgetStop | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def usage_clamped(self) -> bool:
        """True when a reported token count was replaced before billing (see usage_warnings)."""
        return bool(self.usage_warnings)

    def usage(self) -> Usage:
        """The accounting block of an extraction line (DESIGN §2)."""
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
            latency_s=self.latency_s,
        )
