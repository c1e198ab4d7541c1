"""One line of an annotator's gold file: a v3 extraction with ``covers``, plus what the person
did to the prefilled items (the ``annotation`` block).

The line is an ordinary extraction line — runs read it with ``gold: {file: GOLD.jsonl}`` or as a
reference, and extra keys are ignored by every reader — so a person's gold is usable as soon as
it is written. The ``annotation`` block is what agreement measures read:

- ``decisions[field]``: one entry per prefilled item of the field, in the prefill's order
  (``prefill_index`` is the index a judge's ``item_id`` ``field#index`` names): ``accepted``
  (kept as it was), ``edited`` (kept, changed) or ``deleted``; ``item_index`` is where the kept
  item is in ``extraction[field]``.
- ``added[field]``: indices in ``extraction[field]`` of the items the person added.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chatledger.core import ExtractionV3

ANNOTATION_VERSION = 1
Decision = Literal["accepted", "edited", "deleted"]
HUMAN_PREFIX = "human:"


class ItemDecision(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    prefill_index: int = Field(ge=0)
    decision: Decision
    item_index: int | None = Field(default=None, ge=0)  # None when deleted


class Annotation(BaseModel):
    """What the person did, beside the extraction they ended with."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    annotator: str
    prefill: str | None = None  # the model whose extraction was prefilled, if any
    updated_at: str  # ISO 8601, UTC
    decisions: dict[str, list[ItemDecision]] = Field(default_factory=dict)
    added: dict[str, list[int]] = Field(default_factory=dict)


class GoldLine(BaseModel):
    """A line of GOLD.jsonl as the annotation page writes it."""

    model_config = ConfigDict(extra="forbid")

    chunk_id: str = Field(min_length=1)
    model: str  # human:ANNOTATOR
    covers: list[str]  # the fields the person reviewed
    extraction: ExtractionV3
    annotation: Annotation
