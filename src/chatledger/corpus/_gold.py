"""Human gold records built from annotated corpora, and where their items belong.

A gold line is an extraction line (DESIGN.md §2) with one more key, ``covers``: the fields the
human annotation actually speaks to. A covered field that is empty means "the annotators found
nothing here"; a field not covered is empty only because the corpus does not annotate it, and
scoring against the gold should look at covered fields only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatledger.core import Chunk, ExtractionV3


@dataclass(frozen=True)
class GoldRecord:
    """One chunk's human annotation as a partial v3 extraction."""

    chunk_id: str
    model: str
    covers: tuple[str, ...]
    extraction: ExtractionV3

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "model": self.model,
            "covers": list(self.covers),
            "extraction": self.extraction.model_dump(mode="json"),
        }


@dataclass
class Corpus:
    """Chunks and their gold, plus counts of what was kept and what had to be dropped."""

    chunks: list[Chunk] = field(default_factory=list)
    gold: list[GoldRecord] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    sources: Counter[str] = field(default_factory=Counter)

    def extend(self, other: Corpus) -> None:
        self.chunks.extend(other.chunks)
        self.gold.extend(other.gold)
        self.dropped.update(other.dropped)
        self.sources.update(other.sources)


def gold_item_counts(records: Iterable[GoldRecord]) -> dict[str, int]:
    """Items per covered list field over all records (``summary`` counts non-empty summaries)."""
    counts: Counter[str] = Counter()
    for record in records:
        data = record.extraction
        for name in record.covers:
            value = getattr(data, name)
            if isinstance(value, list):
                counts[name] += len(value)
            elif value:
                counts[name] += 1
    return dict(sorted(counts.items()))


class Placement:
    """Which chunk each message went to, to place an item with the messages it cites.

    An item goes to the chunk holding most of its evidence (ties: the earliest such chunk) and
    keeps only the evidence ids of that chunk, so every evidence id exists in its chunk.
    """

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._chunk_of: dict[str, int] = {}
        self._position: dict[str, int] = {}
        for index, chunk in enumerate(chunks):
            for position, message in enumerate(chunk.messages):
                self._chunk_of[message.id] = index
                self._position[message.id] = position

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._chunk_of

    def chunk_of(self, message_id: str) -> int:
        return self._chunk_of[message_id]

    def place(self, evidence: Iterable[str]) -> tuple[int, list[str]] | None:
        """(chunk index, evidence kept in time order), or None when no id is a known message."""
        known = list(dict.fromkeys(m for m in evidence if m in self._chunk_of))
        if not known:
            return None
        votes = Counter(self._chunk_of[m] for m in known)
        best = max(votes.values())
        index = min(i for i, n in votes.items() if n == best)
        kept = sorted(
            (m for m in known if self._chunk_of[m] == index), key=lambda m: self._position[m]
        )
        return index, kept
