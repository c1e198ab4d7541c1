"""Schema v1 and v3 extraction models (DESIGN.md §3).

Enumerated fields are strings checked against a :class:`Vocabulary` passed in the validation
context (``model_validate(data, context={"vocabulary": v})``), so a schema file can extend an
enumeration without a second set of models; the JSON Schema lists the default values.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
)

from chatledger.core._vocabulary import DEFAULT, DEFAULT_VOCABULARY, Vocabulary


def _member_of(kind: str) -> AfterValidator:
    default = frozenset(DEFAULT.allowed(kind))  # the usual case, a set lookup (DEFAULT is frozen)

    def check(value: str, info: ValidationInfo) -> str:
        context = info.context
        vocabulary = context.get("vocabulary", DEFAULT) if isinstance(context, dict) else DEFAULT
        if vocabulary is DEFAULT and value in default:
            return value
        allowed = vocabulary.allowed(kind)
        if value not in allowed:
            raise ValueError(f"{value!r} is not a {kind}; expected one of {', '.join(allowed)}")
        return value

    return AfterValidator(check)


def _enum_schema(kind: str) -> WithJsonSchema:
    return WithJsonSchema(
        {"type": "string", "enum": list(DEFAULT_VOCABULARY[kind]), "x-vocabulary": kind}
    )


EntityType = Annotated[str, _member_of("entity_type"), _enum_schema("entity_type")]
Status = Annotated[str, _member_of("status"), _enum_schema("status")]
Polarity = Annotated[str, _member_of("polarity"), _enum_schema("polarity")]
Severity = Annotated[str, _member_of("severity"), _enum_schema("severity")]
Emotion = Annotated[str, _member_of("emotion"), _enum_schema("emotion")]
Trajectory = Annotated[str, _member_of("trajectory"), _enum_schema("trajectory")]
PhaseName = Annotated[str, _member_of("phase"), _enum_schema("phase")]
PatternName = Annotated[str, _member_of("negotiation_pattern"), _enum_schema("negotiation_pattern")]

Text = Annotated[str, Field(min_length=1)]
Probability = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
# A message id of the chunk. The JSON Schema marks it (``x-message-id``) so that a request can
# restrict it to the chunk's own ids (chatledger.extraction.schema_constraints); validation
# cannot, as a model knows nothing of the chunk.
MessageId = Annotated[str, Field(json_schema_extra={"x-message-id": True})]
Evidence = Annotated[list[MessageId], Field(default_factory=list)]


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Entity(_Item):
    name: Text
    type: EntityType


class Decision(_Item):
    text: Text
    made_by: list[str] = Field(default_factory=list)
    evidence: Evidence
    confidence: Probability | None = None


class ActionItem(_Item):
    text: Text
    owner: str | None = None
    due: str | None = None
    status: Status = "open"
    evidence: Evidence
    confidence: Probability | None = None


class OpenQuestion(_Item):
    text: Text
    asked_by: str | None = None
    evidence: Evidence
    confidence: Probability | None = None


class Claim(_Item):
    text: Text
    subject: str = ""
    polarity: Polarity = "neutral"
    speaker: str | None = None
    evidence: Evidence
    confidence: Probability | None = None


class Link(_Item):
    url: Text
    context: str = ""


class WarningItem(_Item):
    text: Text
    severity: Severity = "low"
    evidence: Evidence


class QAPair(_Item):
    question: Text
    answer: str | None = None
    asked_by: str | None = None
    answered_by: str | None = None
    evidence: Evidence


class ToneReading(_Item):
    speaker: str
    emotion: Emotion
    intensity: Probability = 0.5
    evidence: Evidence


class TurningPoint(_Item):
    message_id: MessageId
    description: str = ""


class EmotionalArc(_Item):
    opening_mood: Emotion
    closing_mood: Emotion
    trajectory: Trajectory
    turning_points: list[TurningPoint] = Field(default_factory=list)


class Phase(_Item):
    phase: PhaseName
    start_message_id: MessageId
    end_message_id: MessageId


class Assumption(_Item):
    text: Text
    held_by: str | None = None
    evidence: Evidence


class NegotiationMove(_Item):
    pattern: PatternName
    actor: str | None = None
    text: str = ""
    evidence: Evidence


class ExtractionV1(BaseModel):
    """Schema v1: fields 1-9 (field 10, ``confidence``, is read from the items)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="ChatLedger extraction v1")

    topics: list[Text] = Field(default_factory=list)
    entities: list[Entity] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    action_items: list[ActionItem] = Field(default_factory=list)
    open_questions: list[OpenQuestion] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)
    warnings: list[WarningItem] = Field(default_factory=list)
    evidence_message_ids: list[MessageId] = Field(default_factory=list)


class ExtractionV3(ExtractionV1):
    """Schema v3: the 17 scored fields. v1 documents validate as v3 (new fields default empty)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="ChatLedger extraction v3")

    summary: str = ""
    qa_pairs: list[QAPair] = Field(default_factory=list)
    emotional_tone: list[ToneReading] = Field(default_factory=list)
    emotional_arc: EmotionalArc | None = None
    conversation_phases: list[Phase] = Field(default_factory=list)
    implicit_assumptions: list[Assumption] = Field(default_factory=list)
    negotiation_patterns: list[NegotiationMove] = Field(default_factory=list)


Extraction = ExtractionV3

SCHEMA_MODELS: dict[str, type[ExtractionV1]] = {"v1": ExtractionV1, "v3": ExtractionV3}


def extraction_json_schema(version: str, vocabulary: Vocabulary = DEFAULT) -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of an extraction, with the vocabulary's enumerations."""
    try:
        model = SCHEMA_MODELS[version]
    except KeyError:
        raise KeyError(f"unknown schema {version!r}; expected one of v1, v3") from None
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    _apply_vocabulary(schema, vocabulary)
    return schema


def _apply_vocabulary(node: Any, vocabulary: Vocabulary) -> None:
    if isinstance(node, dict):
        kind = node.get("x-vocabulary")
        if isinstance(kind, str):
            node["enum"] = list(vocabulary.allowed(kind))
        for value in node.values():
            _apply_vocabulary(value, vocabulary)
    elif isinstance(node, list):
        for value in node:
            _apply_vocabulary(value, vocabulary)
