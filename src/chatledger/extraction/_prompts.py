"""Prompt styles: how a chunk is put to a model, registered by name.

Every style asks for the same thing — one schema v3 extraction as JSON — and sends the v3 JSON
Schema as the request's output schema, so the provider enforces it where it can (a forced tool,
``response_format``) and otherwise puts it in the prompt, repairs, validates and re-asks. Styles
differ only in what they tell the model:

- ``plain``: the task and the ground rules;
- ``field-guide``: plus a definition of every field with its enumerations (DESIGN.md §3);
- ``example``: plus one worked example (the bundled example chunk and its hand-written
  extraction) as a user/assistant exchange before the real chunk.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from functools import cache
from importlib import resources
from typing import Any

from pydantic import JsonValue

from chatledger.core import (
    DEFAULT_VOCABULARY,
    Chunk,
    ExtractionV3,
    Registry,
    Vocabulary,
    extraction_json_schema,
)
from chatledger.extraction._constraints import (
    SchemaConstraints,
    bound_schema,
    restrict_message_ids,
)
from chatledger.extraction._guide import field_guide
from chatledger.providers import ChatMessage, CompletionRequest, OutputSchema, strict_schema

SCHEMA_NAME = "chatledger_extraction_v3"

_RULES = """You extract structured data from a window ("chunk") of a conversation.

Rules:
- Use only what the messages say; leave a list empty rather than guess.
- Speakers, owners, actors and other people fields are participant names as listed.
- Evidence is a list of message ids of this chunk (the ids in square brackets).
- Every confidence is your probability, from 0 to 1, that the item is correct.
- Answer with one JSON object following the extraction schema, and nothing else."""


def render_chunk(chunk: Chunk) -> str:
    """The chunk as the model reads it: its id, participants, and one line per message."""
    head = [f"Chunk id: {chunk.chunk_id}"]
    if chunk.conversation_id:
        head.append(f"Conversation: {chunk.conversation_id}")
    if chunk.title:
        head.append(f"Title: {chunk.title}")
    head.append(f"Participants: {', '.join(chunk.speakers()) or '(none listed)'}")
    lines = []
    for message in chunk.messages:
        when = f" ({message.timestamp})" if message.timestamp else ""
        lines.append(f"[{message.id}] {message.speaker}{when}: {message.text}")
    return "\n".join(head) + "\n\nMessages:\n" + "\n".join(lines)


def _strip_annotations(node: Any) -> Any:
    """The schema without keys only we read (``x-vocabulary``) and without ``$schema``: some
    providers reject schema keywords they do not know."""
    if isinstance(node, dict):
        return {
            k: _strip_annotations(v)
            for k, v in node.items()
            if not k.startswith("x-") and k != "$schema"
        }
    if isinstance(node, list):
        return [_strip_annotations(v) for v in node]
    return node


def extraction_output_schema(
    vocabulary: Vocabulary | None = None,
    *,
    strict: bool = False,
    constraints: SchemaConstraints | None = None,
    chunk: Chunk | None = None,
) -> OutputSchema:
    """The v3 JSON Schema as a request's output schema.

    Lenient by default: v3 leaves empty fields optional, and a model may skip them. ``strict``
    asks with the strict variant (every property required, nullable by type union, no extra
    keys: :func:`chatledger.providers.strict_schema`), which OpenAI's strict mode and local
    grammar engines need, and with which small models fill every field instead of skipping it.
    ``constraints`` (which then says ``strict`` itself) may bound lists and texts and restrict
    message ids to those of ``chunk`` (see :mod:`chatledger.extraction._constraints`).
    Either way the reply is validated against the schema asked with and then as
    :class:`ExtractionV3`; scoring does not change.
    """
    shape = constraints or SchemaConstraints(strict=strict)
    return _with_chunk_ids(_shaped_schema(vocabulary or Vocabulary(), shape), shape, chunk)


def _shaped_schema(vocabulary: Vocabulary, shape: SchemaConstraints) -> dict[str, JsonValue]:
    """The v3 schema bounded and made strict, message ids still marked (``x-message-id``)."""
    schema: dict[str, JsonValue] = extraction_json_schema("v3", vocabulary)
    if shape.list_bounds is not None:
        schema = bound_schema(schema, shape.list_bounds)
    shaped: dict[str, JsonValue] = strict_schema(schema) if shape.strict else schema
    return shaped


def _with_chunk_ids(
    shaped: dict[str, JsonValue], shape: SchemaConstraints, chunk: Chunk | None
) -> OutputSchema:
    schema: Any = shaped
    if shape.chunk_ids and chunk is not None:
        schema = restrict_message_ids(schema, [message.id for message in chunk.messages])
    return OutputSchema.model_validate(
        {
            "name": SCHEMA_NAME,
            "schema": _strip_annotations(schema),
            "description": "The extraction of one conversation chunk (ChatLedger schema v3).",
            "strict": shape.strict,
        }
    )


class PromptStyle(ABC):
    """Turns a chunk into the messages of an extraction request."""

    name: str
    description: str

    def __init__(
        self,
        vocabulary: Vocabulary | None = None,
        *,
        strict: bool = False,
        constraints: SchemaConstraints | None = None,
    ) -> None:
        self.vocabulary = vocabulary or Vocabulary()
        # How the output schema is shaped (strict variant, bounded lists, the chunk's ids).
        self.constraints = constraints or SchemaConstraints(strict=strict)
        self._shaped: dict[str, JsonValue] | None = None
        self._checked: OutputSchema | None = None

    @property
    def strict(self) -> bool:
        return self.constraints.strict

    @abstractmethod
    def messages(self, chunk: Chunk) -> tuple[ChatMessage, ...]:
        """System message(s) first, the chunk in the last user message."""

    def output_schema(self, chunk: Chunk) -> OutputSchema:
        """The schema a request for ``chunk`` asks with."""
        if self.constraints.per_chunk:
            # Shaped and checked (Draft 2020-12 meta-validation: ~60 ms) once per style; per
            # request only the chunk's ids go in — an enum of strings where a string was, which
            # keeps the checked schema valid.
            if self._shaped is None:
                self._shaped = _shaped_schema(self.vocabulary, self.constraints)
                self._checked = _with_chunk_ids(self._shaped, self.constraints, None)
            assert self._checked is not None
            ids = [message.id for message in chunk.messages]
            restricted = _strip_annotations(restrict_message_ids(self._shaped, ids))
            return self._checked.model_copy(update={"schema_": restricted})
        return _output_schema_for(self.vocabulary, self.constraints)

    def request(
        self,
        chunk: Chunk,
        model: str,
        *,
        max_tokens: int = 4096,
        temperature: float | None = None,
        sample_index: int = 0,
        options: dict[str, JsonValue] | None = None,
    ) -> CompletionRequest:
        return CompletionRequest(
            model=model,
            messages=self.messages(chunk),
            max_tokens=max_tokens,
            temperature=temperature,
            output_schema=self.output_schema(chunk),
            sample_index=sample_index,
            options=options or {},
        )


@cache
def _schema_for_default(constraints_json: str) -> OutputSchema:
    constraints = SchemaConstraints.model_validate_json(constraints_json)
    return extraction_output_schema(constraints=constraints)


def _output_schema_for(vocabulary: Vocabulary, constraints: SchemaConstraints) -> OutputSchema:
    if vocabulary.values is DEFAULT_VOCABULARY:
        # Built once per shape (~9 kB of JSON); keyed by JSON as the bounds hold a dict.
        return _schema_for_default(constraints.model_dump_json())
    return extraction_output_schema(vocabulary, constraints=constraints)


def _ask(chunk: Chunk) -> str:
    return f"{render_chunk(chunk)}\n\nExtract this chunk."


class PlainStyle(PromptStyle):
    name = "plain"
    description = "the task, the ground rules and the schema"

    def messages(self, chunk: Chunk) -> tuple[ChatMessage, ...]:
        return (
            ChatMessage(role="system", content=_RULES),
            ChatMessage(role="user", content=_ask(chunk)),
        )


class FieldGuideStyle(PromptStyle):
    name = "field-guide"
    description = "plus a definition of every field with its allowed values"

    def messages(self, chunk: Chunk) -> tuple[ChatMessage, ...]:
        system = f"{_RULES}\n\nThe fields:\n{field_guide(self.vocabulary)}"
        return (
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=_ask(chunk)),
        )


@cache
def bundled_example() -> tuple[Chunk, ExtractionV3]:
    """The example chunk and its hand-written extraction shipped in ``chatledger/data``."""
    folder = resources.files("chatledger").joinpath("data", "examples")
    chunk_line = folder.joinpath("chunks.jsonl").read_text("utf-8").splitlines()[0]
    reference_line = folder.joinpath("reference.jsonl").read_text("utf-8").splitlines()[0]
    chunk = Chunk.model_validate_json(chunk_line)
    extraction = ExtractionV3.model_validate(json.loads(reference_line)["extraction"])
    return chunk, extraction


class ExampleStyle(PromptStyle):
    name = "example"
    description = "plus one worked example (the bundled chunk and its extraction)"

    def messages(self, chunk: Chunk) -> tuple[ChatMessage, ...]:
        example_chunk, example = bundled_example()
        answer = json.dumps(
            example.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False
        )
        return (
            ChatMessage(role="system", content=_RULES),
            ChatMessage(role="user", content=_ask(example_chunk)),
            ChatMessage(role="assistant", content=answer),
            ChatMessage(role="user", content=_ask(chunk)),
        )


PROMPT_STYLES: Registry[type[PromptStyle]] = Registry("prompt style")
for _style in (PlainStyle, FieldGuideStyle, ExampleStyle):
    PROMPT_STYLES.register(_style.name)(_style)


def get_prompt_style(
    name: str,
    vocabulary: Vocabulary | None = None,
    *,
    strict: bool = False,
    constraints: SchemaConstraints | None = None,
) -> PromptStyle:
    """The registered style ``name``; an InputError lists the known ones."""
    return PROMPT_STYLES.get(name)(vocabulary, strict=strict, constraints=constraints)
