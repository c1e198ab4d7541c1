"""The extractor interface and the registry that rebuilds an extractor from its name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from chatledger.core import Chunk, ExtractionV3, Registry


class Extractor(Protocol):
    """Anything that turns a chunk into a schema v3 extraction."""

    name: str

    def extract(self, chunk: Chunk) -> ExtractionV3:
        """The extraction of one chunk."""
        ...

    def extract_file(self, chunks_path: str | Path, out_path: str | Path) -> int:
        """Extract every chunk of a ``chunks.jsonl`` into an extraction file; returns the count."""
        ...


EXTRACTORS: Registry[Callable[[], Extractor]] = Registry("extractor")


def get_extractor(name: str) -> Extractor:
    """Build a registered extractor by name (e.g. ``"offline:rules"``)."""
    return EXTRACTORS.get(name)()
