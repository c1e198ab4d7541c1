"""AMI meetings → chunks: top-level topic segments of dialogue acts, capped in size.

Each chunk also gets an empty :class:`ChunkGold` that the annotation mappings fill, and a
:class:`Placement` that says which chunk each message went to.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chatledger.core import Chunk, Message
from chatledger.corpus._ami_layers import Layers
from chatledger.corpus._ami_transcript import Meeting
from chatledger.corpus._gold import Placement


@dataclass
class ChunkGold:
    """Items collected for one chunk before validation."""

    lists: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    summary: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)


@dataclass
class MeetingChunks:
    """A meeting's chunks, the gold being collected for each, and where each act went."""

    meeting: Meeting
    chunks: list[Chunk]
    placement: Placement
    gold: list[ChunkGold]
    # Annotated items meant for each v3 field, before any was dropped on import: a field whose
    # items were all dropped is not covered (its gold would claim "none" where humans saw some).
    offered: Counter[str] = field(default_factory=Counter)

    def kept(self, name: str) -> int:
        """Items of field ``name`` the import placed in any chunk of the meeting."""
        return sum(len(entry.lists.get(name, ())) for entry in self.gold)

    def speaker(self, act_id: str) -> str:
        return self.meeting.speakers[self.meeting.acts[act_id].agent]

    def speakers(self, act_ids: Iterable[str]) -> list[str]:
        return list(dict.fromkeys(self.speaker(a) for a in act_ids))


def _split(acts: list[str], max_messages: int) -> list[list[str]]:
    """Consecutive parts of near-equal size, none longer than ``max_messages``."""
    if not acts:
        return []
    parts = math.ceil(len(acts) / max_messages)
    size = math.ceil(len(acts) / parts)
    return [acts[i : i + size] for i in range(0, len(acts), size)]


def _segments(meeting: Meeting, layers: Layers) -> list[tuple[str, list[str]]]:
    """(label, act ids) per top-level topic, ordered by when each starts; one run without topics.

    Grouping by topic rather than cutting the timeline at every topic change keeps an act that
    overlaps the next topic's first words (people talk over each other) out of a one-act chunk.
    """
    if not layers.topics:
        return [("", list(meeting.timeline))]
    segment_of_word = {
        word: index for index, seg in enumerate(layers.topics) for word in seg.word_labels
    }
    groups: dict[int, list[str]] = defaultdict(list)
    current = 0
    for act_id in meeting.timeline:
        found = [segment_of_word[w] for w in meeting.acts[act_id].word_ids if w in segment_of_word]
        # An act outside every topic stays with the topic before it.
        current = found[0] if found else current
        groups[current].append(act_id)
    order = sorted(groups, key=lambda i: meeting.acts[groups[i][0]].start)
    return [(layers.topics[i].label, groups[i]) for i in order]


def chunk_meeting(meeting: Meeting, layers: Layers, max_messages: int) -> MeetingChunks:
    participants = list(meeting.speakers.values())
    chunks: list[Chunk] = []
    gold: list[ChunkGold] = []
    word_labels = {w: t for seg in layers.topics or [] for w, t in seg.word_labels.items()}
    for label, acts in _segments(meeting, layers):
        parts = _split(acts, max_messages)
        for number, part in enumerate(parts, start=1):
            title = f"{meeting.name}: {label}" if label else meeting.name
            if len(parts) > 1:
                title += f" (part {number}/{len(parts)})"
            messages = [
                Message(
                    id=a,
                    speaker=meeting.speakers[meeting.acts[a].agent],
                    timestamp=meeting.timestamp(meeting.acts[a].start),
                    text=meeting.acts[a].text,
                )
                for a in part
            ]
            chunks.append(
                Chunk(
                    chunk_id=f"{meeting.name}-{len(chunks) + 1:02d}",
                    conversation_id=meeting.name,
                    title=title,
                    participants=participants,
                    messages=messages,
                )
            )
            entry = ChunkGold()
            words = (w for a in part for w in meeting.acts[a].word_ids)
            entry.topics = list(dict.fromkeys(t for w in words for t in word_labels.get(w, [])))
            gold.append(entry)
    return MeetingChunks(meeting, chunks, Placement(chunks), gold)
