"""Known truth of a simulated extraction: what the corruption operators did to each item.

A simulated challenger is the reference passed through operators, so for every item we know
its fate: copied untouched, changed (speaker swapped, polarity flipped, paraphrased, collapsed
to a keyword, evidence shifted, phases moved), invented, or dropped. :class:`ChunkTruth` holds
that per chunk and is written beside the simulated extraction (``simulated-light.jsonl`` →
``simulated-light.truth.jsonl``), one line per chunk, by :func:`write_truth` and read back by
:func:`read_truth` — a labelled set for free, which the judge audit grades judges against.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chatledger.core import InputError, atomic_writer, first_validation_error
from chatledger.corpus import read_json_lines

TRUTH_VERSION = 1
TRUTH_SUFFIX = ".truth.jsonl"

Effect = Literal[
    "invented",
    "speaker_swapped",
    "polarity_flipped",
    "paraphrased",
    "keywords",
    "evidence_shifted",
    "phases_shifted",
    "dropped",
]
EFFECTS: tuple[Effect, ...] = get_args(Effect)
UNTOUCHED = "untouched"


class ItemTruth(BaseModel):
    """One item of a list field: where it is now and where it came from, and what was done."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    # Position in the simulated extraction's list (None: dropped, it is not there).
    index: int | None = Field(default=None, ge=0)
    # Position in the reference's list (None: invented, it was never there).
    source_index: int | None = Field(default=None, ge=0)
    # In the order applied; empty: copied untouched.
    effects: list[Effect] = Field(default_factory=list)

    @property
    def fate(self) -> str:
        """``untouched``, or the one effect when there is one, else ``a+b`` in order."""
        return "+".join(self.effects) if self.effects else UNTOUCHED


class ChunkTruth(BaseModel):
    """Every item's fate in one chunk of a simulated extraction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1  # TRUTH_VERSION
    chunk_id: str = Field(min_length=1)
    model: str
    operations: list[tuple[str, float]] = Field(default_factory=list)
    items: list[ItemTruth] = Field(default_factory=list)

    def present(self) -> dict[tuple[str, int], ItemTruth]:
        """Items still in the extraction, by (field, index)."""
        return {(t.field, t.index): t for t in self.items if t.index is not None}

    def dropped(self) -> list[ItemTruth]:
        return [t for t in self.items if t.index is None]


def truth_path(extraction_path: str | Path) -> Path:
    """Where the truth of a simulated extraction file lives: beside it, ``.truth.jsonl``."""
    path = Path(extraction_path)
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    return path.with_name(stem + TRUTH_SUFFIX)


def write_truth(truths: Iterable[ChunkTruth], path: str | Path) -> None:
    with atomic_writer(path) as handle:
        for truth in truths:
            handle.write(json.dumps(truth.model_dump(mode="json"), ensure_ascii=False) + "\n")


def read_truth(path: str | Path) -> dict[str, ChunkTruth]:
    """Chunk id → truth; a bad line is an InputError naming the file, line and field."""
    out: dict[str, ChunkTruth] = {}
    for line in read_json_lines(path):
        if line.error is not None:
            raise InputError(line.error, path=path, line=line.number, field=line.field or None)
        try:
            truth = ChunkTruth.model_validate(line.value)
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            raise InputError(msg, path=path, line=line.number, field=where or None) from None
        if truth.chunk_id in out:
            raise InputError(f"chunk {truth.chunk_id!r} listed twice", path=path, line=line.number)
        out[truth.chunk_id] = truth
    return out


def effect_counts(truths: Mapping[str, ChunkTruth]) -> dict[str, int]:
    """How many items met each fate (``untouched`` included), over all chunks."""
    counts: dict[str, int] = {}
    for truth in truths.values():
        for item in truth.items:
            counts[item.fate] = counts.get(item.fate, 0) + 1
    return dict(sorted(counts.items()))
