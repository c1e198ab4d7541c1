"""Arcs: a conversation's mood series, one point per chunk with an emotional arc.

Each point is the valence of the chunk's closing mood (positive: joy, trust, anticipation;
negative: anger, fear, disgust, sadness; neutral: neutral, surprise; an emotion added by a
schema file's vocabulary is ``other``) and the chunk's trajectory. Linked in chunk order they
form the conversation's arc.

Agreement is the fraction of the run's chunks where both sides agree on valence and trajectory;
a chunk without an arc on either side agrees, a chunk with an arc on one side only does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from chatledger.downstream._agreement import share_or_one, union_chunks
from chatledger.downstream._base import (
    CONSUMERS,
    Consumer,
    ConsumerAgreement,
    ConsumerOutput,
    Counts,
    DownstreamEvent,
    FloatArray,
)
from chatledger.downstream._conversation import ConversationView

VALENCE: dict[str, str] = {
    "joy": "positive",
    "trust": "positive",
    "anticipation": "positive",
    "anger": "negative",
    "fear": "negative",
    "disgust": "negative",
    "sadness": "negative",
    "neutral": "neutral",
    "surprise": "neutral",
}


def valence(emotion: str) -> str:
    return VALENCE.get(emotion, "other")


@dataclass(frozen=True)
class ArcPoint(DownstreamEvent):
    """The mood of chunk ``chunk_id`` as the arc sees it (``closing_mood`` is not compared)."""

    chunk_id: str
    position: int
    valence: str
    trajectory: str
    closing_mood: str = field(default="", compare=False)

    def describe(self) -> str:
        return f"{self.valence} ({self.closing_mood}), {self.trajectory}"

    def about(self) -> tuple[str, ...]:
        return (self.chunk_id,)


def conversation_arc(conversation: ConversationView) -> list[ArcPoint]:
    return [
        ArcPoint(
            conversation.conversation_id,
            view.chunk_id,
            view.position,
            valence(arc.closing_mood),
            arc.trajectory,
            arc.closing_mood,
        )
        for view in conversation.chunks
        if (arc := view.extraction.emotional_arc) is not None
    ]


@CONSUMERS.register("arcs")
class ArcsConsumer(Consumer[ArcPoint]):
    """Agreement: fraction of chunks agreeing on (valence, trajectory), absent = absent."""

    name = "arcs"
    reads = ("emotional_arc",)
    count_names = ("agreeing_chunks", "n_chunks")
    evidence_counts = ("n_chunks",)  # chunks of conversations where some side has an arc

    @staticmethod
    def agreement_from_counts(counts: Counts) -> FloatArray:
        """agreeing_chunks / n_chunks; no chunks at all → 1.0 (the composite leaves such a
        consumer out: no evidence)."""
        return share_or_one(counts["agreeing_chunks"], counts["n_chunks"])

    def build(self, conversations: Sequence[ConversationView]) -> ConsumerOutput[ArcPoint]:
        return self.output([p for c in conversations for p in conversation_arc(c)], conversations)

    def agreement(
        self, reference: ConsumerOutput[ArcPoint], challenger: ConsumerOutput[ArcPoint]
    ) -> ConsumerAgreement:
        ref = {(p.conversation_id, p.chunk_id): p for p in reference.events}
        chal = {(p.conversation_id, p.chunk_id): p for p in challenger.events}
        run = [(c.conversation_id, c.chunk_id) for c in union_chunks(reference, challenger)]
        # A conversation with no arc on either side gives no evidence (DESIGN.md §5): only the
        # chunks of conversations where some side has one count, absent = absent among them.
        spoken = {key[0] for key in (*ref, *chal)}
        chunks = [key for key in dict.fromkeys([*run, *ref, *chal]) if key[0] in spoken]
        both = valence_same = trajectory_same = 0
        missed: list[ArcPoint] = []
        invented: list[ArcPoint] = []
        for key in chunks:
            r, c = ref.get(key), chal.get(key)
            same_valence = (r is None and c is None) or (
                r is not None and c is not None and r.valence == c.valence
            )
            same_trajectory = (r is None and c is None) or (
                r is not None and c is not None and r.trajectory == c.trajectory
            )
            valence_same += same_valence
            trajectory_same += same_trajectory
            if same_valence and same_trajectory:
                both += 1
                continue
            if r is not None:
                missed.append(r)
            if c is not None:
                invented.append(c)
        n = len(chunks)
        details = {
            "n_chunks": n,
            "n_reference": len(ref),
            "n_challenger": len(chal),
            "agreeing_chunks": both,
            "valence_agreement": valence_same / n if n else 1.0,
            "trajectory_agreement": trajectory_same / n if n else 1.0,
        }
        return self.counted({"agreeing_chunks": both, "n_chunks": n}, details, missed, invented)
