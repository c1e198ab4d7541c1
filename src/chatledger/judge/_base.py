"""The judge interface: many (chunk, extraction) pairs in, one verdict (or None) for each."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from chatledger.core import Chunk, ExtractionV3
from chatledger.judge._verdict import Verdict


class Judge(ABC):
    """A judge never sees the model's name: only the chunk and one extraction.

    ``judge_many`` returns None for a verdict that could not be obtained or parsed (unscored:
    excluded from means and counted, never scored 0).
    """

    name: str = ""
    family: str = ""

    @abstractmethod
    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        """Verdicts in the order of ``pairs``."""

    def describe(self) -> dict[str, str]:
        """A spec from which the judge can be rebuilt by name (logged in run.json)."""
        return {"name": self.name, "family": self.family}
