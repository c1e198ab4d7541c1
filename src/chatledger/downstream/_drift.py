"""Drift: a speaker's polarity on a subject changing between consecutive mentions.

Claims are read in time order: chunks by position, and within a chunk by the first message each
claim cites (claims citing no message of the chunk come last, in list order), so two extractions
that list the same claims in another order still agree. Subjects are clustered across the
conversation's chunks by fuzzy ≥ 0.60 on their content words (stop words removed, the one list of
:mod:`chatledger.matching`, as the claims scorer's subject consistency does, so "the car" and
"the Fig Tree" are two subjects; leader clustering, :func:`cluster_texts`); an event names the
cluster by its first-seen subject, and events of the two sides match on the same subject
similarity. A claim without a subject or a speaker cannot drift and is skipped. Speakers are
resolved to the chunk's participants (fuzzy ≥ 0.70), as in layer 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from chatledger.downstream._agreement import (
    F1_COUNTS,
    F1_EVIDENCE,
    cluster_texts,
    f1_agreement,
    fuzzy_pairs,
    matched_agreement,
)
from chatledger.downstream._base import (
    CONSUMERS,
    Consumer,
    ConsumerAgreement,
    ConsumerOutput,
    Counts,
    DownstreamEvent,
    FloatArray,
)
from chatledger.downstream._conversation import ChunkView, ConversationView

if TYPE_CHECKING:
    from chatledger.core import Claim
    from chatledger.matching import FloatMatrix

CHUNK_WINDOW = 1  # a drift event matches one at most this many chunk positions away


@dataclass(frozen=True)
class DriftEvent(DownstreamEvent):
    """``speaker`` went from ``from_polarity`` to ``to_polarity`` on ``subject`` in ``chunk_id``."""

    chunk_id: str
    position: int
    speaker: str
    subject: str
    from_polarity: str
    to_polarity: str

    def describe(self) -> str:
        return f"{self.speaker} on {self.subject}: {self.from_polarity} -> {self.to_polarity}"

    def about(self) -> tuple[str, ...]:
        return (self.chunk_id,)


@dataclass(frozen=True)
class _Mention:
    view: ChunkView
    speaker: str
    subject: str
    polarity: str


def _claims_in_order(view: ChunkView) -> list[Claim]:
    positions = {m.id: i for i, m in enumerate(view.chunk.messages)}
    last = len(positions)

    def first_cited(item: tuple[int, Claim]) -> tuple[int, int]:
        index, claim = item
        cited = [positions[m] for m in claim.evidence if m in positions]
        return (min(cited) if cited else last, index)

    return [claim for _, claim in sorted(enumerate(view.extraction.claims), key=first_cited)]


def _mentions(conversation: ConversationView) -> list[_Mention]:
    from chatledger.matching import preprocess

    mentions: list[_Mention] = []
    for view in conversation.chunks:
        for claim in _claims_in_order(view):
            speaker = view.speaker(claim.speaker)
            if speaker and preprocess([claim.subject])[0]:
                mentions.append(_Mention(view, speaker, claim.subject, claim.polarity))
    return mentions


def _subjects(drop_stop_words: bool) -> Callable[[Sequence[str], Sequence[str]], FloatMatrix]:
    from chatledger.matching import subject_similarity

    if drop_stop_words:
        return subject_similarity
    return partial(subject_similarity, drop_stop_words=False)


def conversation_drifts(
    conversation: ConversationView, *, drop_stop_words: bool = True
) -> tuple[DriftEvent, ...]:
    """Every polarity change of every (speaker, subject cluster), in time order.

    ``drop_stop_words=False`` clusters whole subjects (plain token set), the rule before
    issue 15, kept only so the metric audit can show both.
    """
    if not drop_stop_words:
        return conversation.derived("drift:plain_subjects", partial(_compute_drift, plain=True))
    return conversation.derived("drift", _compute_drift)


def _compute_drift(conversation: ConversationView, plain: bool = False) -> tuple[DriftEvent, ...]:
    mentions = _mentions(conversation)
    labels = cluster_texts([m.subject for m in mentions], scorer=_subjects(not plain))
    leader: dict[int, str] = {}
    last_polarity: dict[tuple[str, int], str] = {}
    events: list[DriftEvent] = []
    for mention, label in zip(mentions, labels, strict=True):
        leader.setdefault(label, mention.subject)
        track = (mention.speaker.casefold(), label)
        before = last_polarity.get(track)
        if before is not None and before != mention.polarity:
            events.append(
                DriftEvent(
                    conversation_id=conversation.conversation_id,
                    chunk_id=mention.view.chunk_id,
                    position=mention.view.position,
                    speaker=mention.speaker,
                    subject=leader[label],
                    from_polarity=before,
                    to_polarity=mention.polarity,
                )
            )
        last_polarity[track] = mention.polarity
    return tuple(events)


@CONSUMERS.register("drift")
class DriftConsumer(Consumer[DriftEvent]):
    """Agreement: F1 over optimal one-to-one matches. A pair matches when conversation, speaker
    and direction are equal, the chunks are at most one position apart, and the subjects score
    fuzzy ≥ 0.60 on their content words; among equally many matches, same-chunk pairs are
    preferred. ``drop_stop_words=False`` (the metric audit's "before") compares whole subjects.
    """

    name = "drift"
    reads = ("claims",)
    count_names = F1_COUNTS
    evidence_counts = F1_EVIDENCE

    @staticmethod
    def agreement_from_counts(counts: Counts) -> FloatArray:
        """F1 = 2·matched / (n_reference + n_challenger); both empty 1.0, one side empty 0."""
        return f1_agreement(counts)

    def __init__(self, *, drop_stop_words: bool = True) -> None:
        self.drop_stop_words = drop_stop_words

    def build(self, conversations: Sequence[ConversationView]) -> ConsumerOutput[DriftEvent]:
        events = [
            e
            for c in conversations
            for e in conversation_drifts(c, drop_stop_words=self.drop_stop_words)
        ]
        return self.output(events, conversations)

    def agreement(
        self, reference: ConsumerOutput[DriftEvent], challenger: ConsumerOutput[DriftEvent]
    ) -> ConsumerAgreement:
        pairs = fuzzy_pairs(
            reference.events,
            challenger.events,
            key=lambda e: (e.conversation_id, e.speaker.casefold(), e.from_polarity, e.to_polarity),
            text=lambda e: e.subject,
            compatible=lambda r, c: abs(r.position - c.position) <= CHUNK_WINDOW,
            bonus=lambda r, c: 0.5 if r.position == c.position else 0.0,
            scorer=_subjects(self.drop_stop_words),
        )
        return matched_agreement(self, reference.events, challenger.events, pairs)
