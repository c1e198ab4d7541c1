"""Loops: open questions and open action items that keep coming back unresolved.

Open questions and action items with status ``open`` are clustered separately across a
conversation's chunks by fuzzy ≥ 0.60 (leader clustering). Keeping the two kinds apart matters
because token-set similarity pairs "When do we pay the venue?" with "Call the venue" (78: they
share "the venue"). A cluster seen in ≥ 2 distinct chunks is a loop unless it is resolved at or
after its *last* mention (a thing answered and then raised again is open again) by

- a decision whose text matches (fuzzy ≥ 0.60) any of the cluster's texts, or
- for a question, an answer: a Q/A pair whose question matches and whose answer is not empty;
- for an action item, done status: an action item with status ``done`` whose text matches.

The loop is named by the text of its first occurrence and lists the chunks it recurs in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chatledger.downstream._agreement import (
    F1_COUNTS,
    F1_EVIDENCE,
    TEXT_CUTOFF,
    cluster_texts,
    f1_agreement,
    fuzzy_pairs,
    matched_agreement,
    similarity,
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
from chatledger.downstream._conversation import ConversationView

QUESTION = "question"
ACTION = "action"


@dataclass(frozen=True)
class LoopItem(DownstreamEvent):
    """An unresolved item first raised as ``text`` and recurring in ``chunk_ids`` (time order)."""

    text: str
    chunk_ids: tuple[str, ...]
    positions: tuple[int, ...]
    kind: str = "question"

    def describe(self) -> str:
        return self.text

    def about(self) -> tuple[str, ...]:
        return self.chunk_ids


def _open_items(conversation: ConversationView, kind: str) -> list[tuple[int, str, str]]:
    """(position, chunk id, text) of every open item of ``kind``, in time order."""
    found: list[tuple[int, str, str]] = []
    for view in conversation.chunks:
        extraction = view.extraction
        if kind == QUESTION:
            texts = [q.text for q in extraction.open_questions]
        else:
            texts = [a.text for a in extraction.action_items if a.status == "open"]
        found.extend((view.position, view.chunk_id, text) for text in texts)
    return found


def _resolvers(conversation: ConversationView, kind: str) -> list[tuple[int, str]]:
    """(position, text) of what closes a loop of ``kind``: decisions, and answers to a question
    or the done status of an action item."""
    found: list[tuple[int, str]] = []
    for view in conversation.chunks:
        extraction = view.extraction
        found.extend((view.position, d.text) for d in extraction.decisions)
        if kind == QUESTION:
            found.extend(
                (view.position, qa.question)
                for qa in extraction.qa_pairs
                if qa.answer is not None and qa.answer.strip()
            )
        else:
            found.extend(
                (view.position, a.text) for a in extraction.action_items if a.status == "done"
            )
    return found


def _loops_of_kind(conversation: ConversationView, kind: str) -> list[tuple[int, LoopItem]]:
    candidates = _open_items(conversation, kind)
    if not candidates:
        return []
    labels = cluster_texts([text for _, _, text in candidates])
    resolvers = _resolvers(conversation, kind)
    # matches[i, k]: resolver k's text matches candidate i's (fuzzy ≥ 0.60)
    matches = similarity([t for _, _, t in candidates], [t for _, t in resolvers]) >= TEXT_CUTOFF
    resolver_positions = np.array([p for p, _ in resolvers], dtype=np.intp)
    loops: list[tuple[int, LoopItem]] = []
    for label in dict.fromkeys(labels):
        members = [i for i, lab in enumerate(labels) if lab == label]
        positions = tuple(dict.fromkeys(candidates[i][0] for i in members))
        if len(positions) < 2:
            continue
        in_time = resolver_positions >= positions[-1]
        if bool(matches[members][:, in_time].any()):
            continue
        item = LoopItem(
            conversation_id=conversation.conversation_id,
            text=candidates[members[0]][2],
            chunk_ids=tuple(dict.fromkeys(candidates[i][1] for i in members)),
            positions=positions,
            kind=kind,
        )
        loops.append((members[0], item))
    return loops


def conversation_loops(conversation: ConversationView) -> tuple[LoopItem, ...]:
    """The conversation's loops, questions and action items, ordered by first occurrence."""
    return conversation.derived("loops", _compute_loops)


def _compute_loops(conversation: ConversationView) -> tuple[LoopItem, ...]:
    found = [*_loops_of_kind(conversation, QUESTION), *_loops_of_kind(conversation, ACTION)]
    found.sort(key=lambda pair: pair[1].positions[0])
    return tuple(item for _, item in found)


@CONSUMERS.register("loops")
class LoopsConsumer(Consumer[LoopItem]):
    """Agreement: F1 over optimal one-to-one matches of loops of the same conversation whose
    texts score fuzzy ≥ 0.60."""

    name = "loops"
    # Open questions and open action items; what resolves them: decisions, answered Q/A pairs,
    # action items marked done.
    reads = ("decisions", "action_items", "open_questions", "qa_pairs")
    count_names = F1_COUNTS
    evidence_counts = F1_EVIDENCE

    @staticmethod
    def agreement_from_counts(counts: Counts) -> FloatArray:
        """F1 = 2·matched / (n_reference + n_challenger); both empty 1.0, one side empty 0."""
        return f1_agreement(counts)

    def build(self, conversations: Sequence[ConversationView]) -> ConsumerOutput[LoopItem]:
        return self.output([e for c in conversations for e in conversation_loops(c)], conversations)

    def agreement(
        self, reference: ConsumerOutput[LoopItem], challenger: ConsumerOutput[LoopItem]
    ) -> ConsumerAgreement:
        pairs = fuzzy_pairs(
            reference.events,
            challenger.events,
            key=lambda e: e.conversation_id,
            text=lambda e: e.text,
        )
        return matched_agreement(self, reference.events, challenger.events, pairs)
