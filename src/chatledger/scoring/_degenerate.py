"""Degenerate outputs, counted rather than hidden: what small models do when they fail.

Small local models fail in three recognisable ways, and a composite alone hides which one:

- **repetition**: greedy decoding loops, so one field holds the same item over and over. An item
  counts as *duplicated* when its text (case and spacing folded) appears at least
  ``DUPLICATE_AT`` times in the same field of the same chunk; every copy of such a group counts.
- **cut by max_tokens**: the reply ran into the token limit (OpenAI-compatible finish reason
  ``length``, Anthropic ``max_tokens``), recorded by ``chatledger extract`` in the line's usage.
  Such a reply is usually invalid JSON (counted invalid too) or an object closed early.
- **foreign message ids**: evidence, salient messages, turning points or phase bounds citing a
  message id the chunk does not hold (a small model copies the worked example's ids, or invents
  some): such evidence can never match. Counted over valid extractions, beside all ids cited.
- **empty fields**: a field left empty (an empty list, an empty summary, no arc) where the
  reference has content. ``confidence`` is not a field a model fills (it is computed from the
  items' confidences) and is left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from chatledger.core import FIELDS_V3
from chatledger.scoring._message_ids import cited_message_ids

if TYPE_CHECKING:  # the run record holds DegenerateOutputs: a reader of it loads no schema
    from chatledger.core import Chunk, ExtractionRecord, ExtractionV3

DUPLICATE_AT = 3
CUT_FINISH_REASONS = frozenset({"length", "max_tokens"})
# What names an item, by field: the first of these attributes that holds text.
_ITEM_TEXT = ("text", "name", "url", "question", "description")
# Every field a model writes: ``confidence`` is computed from the items, not filled.
_FILLABLE = tuple(name for name in FIELDS_V3 if name != "confidence")


class DegenerateOutputs(BaseModel):
    """Per model, in ``run.json`` (``models[*].degenerate``) and the report."""

    model_config = ConfigDict(extra="forbid")

    chunks: int
    valid: int  # lines with a schema-valid extraction
    duplicated_items: int  # items in a group of ≥ DUPLICATE_AT identical texts (all copies)
    chunks_with_duplicates: int
    cut_by_max_tokens: int  # lines whose reply hit the token limit
    cut_and_invalid: int  # of those, how many were not valid JSON for the schema
    empty_fields: int  # (chunk, field) slots left empty where the reference has content
    reference_filled: int  # (chunk, field) slots the reference fills: empty_fields' denominator
    empty_by_field: dict[str, int] = Field(default_factory=dict)
    cited_message_ids: int = 0  # message ids cited by the valid extractions
    foreign_message_ids: int = 0  # of those, ids their chunk does not hold

    @property
    def empty_share(self) -> float:
        return self.empty_fields / self.reference_filled if self.reference_filled else 0.0

    @property
    def foreign_share(self) -> float:
        """Share of cited message ids that are not the chunk's (0 when none is cited)."""
        return self.foreign_message_ids / self.cited_message_ids if self.cited_message_ids else 0.0


def _item_text(item: object) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, BaseModel):
        for attribute in _ITEM_TEXT:
            value = getattr(item, attribute, None)
            if isinstance(value, str) and value.strip():
                return value
        # Items without a text (tone readings, phases): the whole item is what repeats.
        return item.model_dump_json(exclude={"evidence", "confidence"})
    return repr(item)


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def duplicated_items(extraction: ExtractionV3) -> int:
    """Items whose folded text appears ≥ DUPLICATE_AT times within one list field."""
    total = 0
    for name in _FILLABLE:
        value = getattr(extraction, name)
        if not isinstance(value, list) or len(value) < DUPLICATE_AT:
            continue
        counts = Counter(_fold(_item_text(item)) for item in value)
        total += sum(n for n in counts.values() if n >= DUPLICATE_AT)
    return total


def is_filled(extraction: ExtractionV3, name: str) -> bool:
    value = getattr(extraction, name)
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list):
        return bool(value)
    return value is not None


def _finish_reason(record: ExtractionRecord) -> str | None:
    value = (record.usage.model_extra or {}).get("finish_reason")
    return value if isinstance(value, str) else None


def count_degenerate(
    reference: Mapping[str, ExtractionRecord],
    challenger: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk],
) -> DegenerateOutputs:
    """The counts over the run's chunks (a chunk missing from a file counts as nothing)."""
    counter = DegenerateCounter()
    for chunk in chunks:
        counter.add(chunk, reference.get(chunk.chunk_id), challenger.get(chunk.chunk_id))
    return counter.result(len(chunks))


class DegenerateCounter:
    """:func:`count_degenerate` one chunk at a time (a run streaming its files)."""

    def __init__(self) -> None:
        self.valid = self.duplicated = self.chunks_duplicated = self.cut = 0
        self.cut_invalid = self.empty = self.filled = self.cited = self.foreign = 0
        self.by_field: Counter[str] = Counter()

    def add(
        self, chunk: Chunk, ref: ExtractionRecord | None, record: ExtractionRecord | None
    ) -> None:
        """One chunk: its reference record and the challenger's (None: the file has none)."""
        if record is None:
            return
        if _finish_reason(record) in CUT_FINISH_REASONS:
            self.cut += 1
            self.cut_invalid += record.extraction is None
        extraction = record.extraction
        if extraction is None:
            return
        self.valid += 1
        known = {message.id for message in chunk.messages}
        for _, message_id in cited_message_ids(extraction):
            self.cited += 1
            self.foreign += message_id not in known
        found = duplicated_items(extraction)
        self.duplicated += found
        self.chunks_duplicated += found > 0
        if ref is None or ref.extraction is None:
            return
        for name in _FILLABLE:
            if ref.covers is not None and name not in ref.covers:
                continue
            if not is_filled(ref.extraction, name):
                continue
            self.filled += 1
            if not is_filled(extraction, name):
                self.empty += 1
                self.by_field[name] += 1

    def result(self, n_chunks: int) -> DegenerateOutputs:
        by_field = self.by_field
        return DegenerateOutputs(
            chunks=n_chunks,
            valid=self.valid,
            duplicated_items=self.duplicated,
            chunks_with_duplicates=self.chunks_duplicated,
            cut_by_max_tokens=self.cut,
            cut_and_invalid=self.cut_invalid,
            empty_fields=self.empty,
            reference_filled=self.filled,
            empty_by_field={k: by_field[k] for k in _FILLABLE if by_field[k]},
            cited_message_ids=self.cited,
            foreign_message_ids=self.foreign,
        )
