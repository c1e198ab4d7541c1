"""The candidate fields of schema selection (DESIGN.md §9, issue 16): a registry by name.

25 candidates in four tiers, as the methodology's seed has them: the **6 proven** v1 fields
(the screen's yardstick: information gain and redundancy are measured against them), **5
latent** (what people hold without saying it), **8 structural** (how the conversation is
built), **6 derived** (computed over other content). 17 of them are schema v3's fields and
score with their layer-1 scorers; the 8 others are new list fields scored by fuzzy set F1 of
their item texts (or set F1 of their keys), through the one matching kernel.

Each candidate has a name, a tier, the pydantic model of one item (or of the whole value),
an extraction instruction, how its content reads as texts (for information gain and
redundancy), and a pair scorer (for consistency and the tournament).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from chatledger.core import FIELDS_V3, ExtractionV3, Registry
from chatledger.matching import get_matcher
from chatledger.scoring import FIELD_SCORERS, ChunkContext, ScoringConfig, ScoringContext, f1
from chatledger.select._metrics import text_set_f1

Tier = Literal["proven", "latent", "structural", "derived"]
TIERS: tuple[Tier, ...] = ("proven", "latent", "structural", "derived")
PairScore = Callable[[Any, Any], float]


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TopicShift(_Item):
    from_topic: str
    to_topic: str
    message_id: str | None = None


class Commitment(_Item):
    text: str
    owner: str | None = None
    deadline: str | None = None


class Request(_Item):
    text: str
    requested_by: str | None = None
    addressee: str | None = None


class Agreement(_Item):
    text: str
    kind: Literal["agree", "disagree"]
    between: list[str] = Field(default_factory=list)


class SpeakerSentiment(_Item):
    speaker: str
    sentiment: Literal["positive", "negative", "neutral", "mixed"]


class Humour(_Item):
    text: str
    kind: Literal["humour", "sarcasm"]
    speaker: str | None = None


class TurnShare(_Item):
    speaker: str
    share: float = Field(ge=0.0, le=1.0)
    dominant: bool = False


class Politeness(_Item):
    speaker: str
    level: Literal["polite", "neutral", "impolite"]


@dataclass(frozen=True)
class Candidate:
    """One candidate field of the screen."""

    name: str
    tier: Tier
    shape: Any  # the pydantic type of the field's whole value (a list of items, mostly)
    instruction: str
    texts: Callable[[Any], list[str]]  # the field's content as texts
    score_pair: PairScore  # agreement of two values of the field, in [0, 1]

    def validate(self, value: Any) -> Any:
        """The value parsed into the candidate's shape (pydantic errors for bad input)."""
        return TypeAdapter(self.shape).validate_python(value)

    @property
    def in_v3(self) -> bool:
        return self.name in FIELDS_V3


CANDIDATES: Registry[Candidate] = Registry("candidate field")

_V3 = ExtractionV3.model_fields


def _v3_pair(name: str) -> PairScore:
    """The field's own layer-1 scorer on two values (no chunk: names resolve among
    themselves, message order from the ids seen)."""
    spec = FIELD_SCORERS.get(name)
    config = ScoringConfig.default()
    matcher = get_matcher(config.matcher)

    def score(a: Any, b: Any) -> float:
        ref = ExtractionV3.model_validate({name: a})
        pred = ExtractionV3.model_validate({name: b})
        ctx = ScoringContext(ChunkContext.from_ids([]), config, matcher)
        return spec.fn(ref, pred, ctx).score

    return score


def _text_pair(text_of: Callable[[Any], str]) -> PairScore:
    def score(a: Any, b: Any) -> float:
        return text_set_f1([text_of(x) for x in a or ()], [text_of(x) for x in b or ()])

    return score


def _key_pair(key_of: Callable[[Any], tuple[str, ...]]) -> PairScore:
    def score(a: Any, b: Any) -> float:
        ka = {key_of(x) for x in a or ()}
        kb = {key_of(x) for x in b or ()}
        return f1(len(ka & kb), len(kb), len(ka))[2]

    return score


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key)


def _texts_by(key: str | None) -> Callable[[Any], list[str]]:
    """The texts of a list value: each item's ``key`` (the item itself when None)."""

    def texts(value: Any) -> list[str]:
        items = value or []
        return [str(x if key is None else _get(x, key) or "") for x in items]

    return texts


def _register(
    name: str,
    tier: Tier,
    instruction: str,
    texts: Callable[[Any], list[str]],
    shape: Any | None = None,
    score_pair: PairScore | None = None,
) -> None:
    if shape is None:
        shape = _V3[name].annotation
    if score_pair is None:
        score_pair = _v3_pair(name)
    CANDIDATES.register(name)(Candidate(name, tier, shape, instruction, texts, score_pair))


def _joined(*keys: str) -> Callable[[Any], str]:
    return lambda item: " ".join(str(_get(item, k) or "") for k in keys).strip()


def _arc_texts(value: Any) -> list[str]:
    if not value:
        return []
    return [" ".join(str(_get(value, k)) for k in ("opening_mood", "closing_mood", "trajectory"))]


# Proven (schema v1's six heaviest fields: the yardstick).
_register("claims", "proven", "Statements someone argues for or against.", _texts_by("text"))
_register("action_items", "proven", "Tasks someone takes on.", _texts_by("text"))
_register("open_questions", "proven", "Questions left unanswered.", _texts_by("text"))
_register("decisions", "proven", "What the participants decided.", _texts_by("text"))
_register("entities", "proven", "People, places, organisations, dates named.", _texts_by("name"))
_register("topics", "proven", "What the conversation is about.", _texts_by(None))
# Latent: held but not said.
_register(
    "implicit_assumptions", "latent", "Beliefs the talk takes for granted.", _texts_by("text")
)
_register(
    "emotional_tone",
    "latent",
    "Each speaker's emotion and its intensity.",
    lambda v: [_joined("speaker", "emotion")(x) for x in v or []],
)
_register("emotional_arc", "latent", "How the mood moves from start to end.", _arc_texts)
_register(
    "sentiment_per_speaker",
    "latent",
    "Each speaker's overall sentiment: positive, negative, neutral or mixed.",
    lambda v: [_joined("speaker", "sentiment")(x) for x in v or []],
    list[SpeakerSentiment],
    _key_pair(lambda x: (str(_get(x, "speaker")).casefold(), str(_get(x, "sentiment")))),
)
_register(
    "humour_sarcasm",
    "latent",
    "Jokes and sarcastic remarks, with who made them.",
    _texts_by("text"),
    list[Humour],
    _text_pair(_joined("text")),
)
# Structural: how the conversation is built.
_register("conversation_phases", "structural", "Its phases and their messages.", _texts_by("phase"))
_register("qa_pairs", "structural", "Questions and the answers given.", _texts_by("question"))
_register(
    "negotiation_patterns",
    "structural",
    "Negotiation moves and who made them.",
    lambda v: [_joined("pattern", "actor")(x) for x in v or []],
)
_register("links", "structural", "URLs shared.", _texts_by("url"))
_register("warnings", "structural", "Risks someone raises.", _texts_by("text"))
_register("evidence_message_ids", "structural", "The salient messages.", _texts_by(None))
_register(
    "topic_shifts",
    "structural",
    "Where the talk moves from one topic to another.",
    lambda v: [_joined("from_topic", "to_topic")(x) for x in v or []],
    list[TopicShift],
    _text_pair(_joined("from_topic", "to_topic")),
)
_register(
    "turn_taking",
    "structural",
    "Each speaker's share of the turns; who dominates.",
    lambda v: [str(_get(x, "speaker")) for x in v or [] if _get(x, "dominant")],
    list[TurnShare],
    _key_pair(lambda x: (str(_get(x, "speaker")).casefold(), str(bool(_get(x, "dominant"))))),
)
# Derived: computed over other content.
_register("summary", "derived", "A few sentences on the whole chunk.", lambda v: [v] if v else [])
_register(
    "confidence",
    "derived",
    "A confidence 0–1 on each decision, action item, open question and claim.",
    lambda v: [],
    shape=float,
    score_pair=lambda a, b: float(a == b),
)
_register(
    "commitments",
    "derived",
    "Promises with an owner and a deadline.",
    _texts_by("text"),
    list[Commitment],
    _text_pair(_joined("text")),
)
_register(
    "requests",
    "derived",
    "What someone asks another to do.",
    _texts_by("text"),
    list[Request],
    _text_pair(_joined("text")),
)
_register(
    "agreements",
    "derived",
    "Points on which speakers agree or disagree.",
    lambda v: [_joined("kind", "text")(x) for x in v or []],
    list[Agreement],
    _text_pair(_joined("kind", "text")),
)
_register(
    "politeness",
    "derived",
    "Each speaker's register: polite, neutral or impolite.",
    lambda v: [_joined("speaker", "level")(x) for x in v or []],
    list[Politeness],
    _key_pair(lambda x: (str(_get(x, "speaker")).casefold(), str(_get(x, "level")))),
)


def candidates(tier: Tier | None = None) -> list[Candidate]:
    """The registered candidates (of one tier), in registration order."""
    found = [CANDIDATES.get(name) for name in CANDIDATES]
    return [c for c in found if tier is None or c.tier == tier]


def proven_texts(values: dict[str, Any], names: Sequence[str] | None = None) -> list[str]:
    """The texts of the proven fields' values of one chunk (``values``: field → value)."""
    chosen = names if names is not None else [c.name for c in candidates("proven")]
    return [t for name in chosen for t in CANDIDATES.get(name).texts(values.get(name))]
