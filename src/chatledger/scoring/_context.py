"""Per-chunk scoring context: participant-name resolution, message positions, shared matches."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz import fuzz, utils

from chatledger.matching import IndexArrayPair, TextMatcher, assign, preprocess, token_set_matrix
from chatledger.scoring._config import ScoringConfig

if TYPE_CHECKING:
    from chatledger.core import Chunk

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``m-2`` before ``m-10``."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in _DIGITS.split(text) if p)


@dataclass
class ChunkContext:
    """What scoring needs to know about the chunk (participants, message order)."""

    participants: tuple[str, ...]
    positions: dict[str, int]
    _resolved: dict[str, str] = field(default_factory=dict)
    _processed: list[str] = field(default_factory=list)

    @classmethod
    def from_chunk(cls, chunk: Chunk) -> ChunkContext:
        return cls(
            participants=tuple(chunk.speakers()),
            positions={m.id: i for i, m in enumerate(chunk.messages)},
        )

    @classmethod
    def from_ids(cls, message_ids: Iterable[str]) -> ChunkContext:
        """Without a chunk: no participants, message order by natural sort of the ids seen."""
        ordered = sorted(set(message_ids), key=natural_key)
        return cls(participants=(), positions={m: i for i, m in enumerate(ordered)})

    def resolve(self, name: str | None, threshold: float = 70.0) -> str:
        """A speaker/owner/actor name → the chunk participant it denotes (case-folded).

        Exact (case-folded) names win; otherwise the participant with the highest token-set
        similarity ≥ ``threshold``, ties broken by plain ratio; a name that stays ambiguous or
        matches nobody is kept as written, case-folded.
        """
        if name is None:
            return ""
        cached = self._resolved.get(name)
        if cached is not None:
            return cached
        folded = name.strip().casefold()
        result = folded
        if self.participants and folded:
            if not self._processed:
                self._processed = preprocess(self.participants)
            lowered = [p.casefold() for p in self.participants]
            if folded in lowered:
                result = folded
            else:
                query = utils.default_process(name)
                scores = token_set_matrix([query], self._processed)[0]
                best = float(scores.max())
                if best >= threshold:
                    tied = np.flatnonzero(scores == best)
                    if len(tied) == 1:
                        result = lowered[int(tied[0])]
                    else:
                        ratios = [fuzz.ratio(query, self._processed[int(i)]) for i in tied]
                        top = max(ratios)
                        winners = [int(i) for i, r in zip(tied, ratios, strict=True) if r == top]
                        if len(winners) == 1:
                            result = lowered[winners[0]]
        self._resolved[name] = result
        return result


@dataclass
class ScoringContext:
    """One chunk being scored under one config; memoises text matches shared between fields."""

    chunk: ChunkContext
    config: ScoringConfig
    matcher: TextMatcher
    text_matches: dict[str, tuple[IndexArrayPair, int, int]] = field(default_factory=dict)

    def match_texts(
        self, key: str, reference: Sequence[str], predicted: Sequence[str]
    ) -> IndexArrayPair:
        """Optimal (reference, predicted) index pairs of two text lists at the text cutoff."""
        cached = self.text_matches.get(key)
        if cached is not None:
            return cached[0]
        scores = self.matcher.matrix(preprocess(reference), preprocess(predicted))
        pairs = assign(scores, 100.0 * self.config.thresholds.text)
        self.text_matches[key] = (pairs, len(reference), len(predicted))
        return pairs

    def resolve(self, name: str | None) -> str:
        # Most names repeat within a chunk: answer them from the chunk's memo without a call.
        cached = self.chunk._resolved.get(name) if name is not None else ""
        if cached is not None:
            return cached
        return self.chunk.resolve(name, 100.0 * self.config.thresholds.participant)
