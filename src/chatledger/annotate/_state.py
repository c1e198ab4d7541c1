"""What the page edits for one chunk (:class:`ChunkState`), and the gold line it stands for.

The page holds, per field, the current items — each remembering which prefilled item it came
from, if any — the prefilled items deleted, and whether the person has reviewed the field. The
server keeps that state (so a field unticked after edits keeps its edits) and derives the gold
line from it: the reviewed fields whose items validate are ``covers``; each prefilled item of
them is ``accepted`` (unchanged; an item left alone in a reviewed field counts as accepted:
the person saw it and kept it), ``edited`` or ``deleted``; items without a prefill are added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from chatledger.annotate._gold import HUMAN_PREFIX, Annotation, GoldLine, ItemDecision
from chatledger.core import FIELDS_V3, ExtractionRecord, ExtractionV3, first_validation_error

STATE_VERSION = 1
# Fields whose value is one thing, not a list: the page shows them as a list of at most one.
SCALAR_FIELDS = ("summary", "emotional_arc")
ANNOTATED_FIELDS = tuple(f for f in FIELDS_V3 if f != "confidence")


class ItemState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: JsonValue  # the item as the schema's JSON (a string for topics, message ids, summary)
    prefill: int | None = Field(default=None, ge=0)  # index in the prefill's list; None: added
    accepted: bool = False  # the person pressed accept


class FieldState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[ItemState] = Field(default_factory=list)
    # Prefill indices the person deleted (each at most once; checked against the prefill).
    deleted: list[Annotated[int, Field(ge=0)]] = Field(default_factory=list)
    reviewed: bool = False


class ChunkState(BaseModel):
    """One chunk as the page left it; what the journal records and the page is sent."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    chunk_id: str = Field(min_length=1)
    fields: dict[str, FieldState] = Field(default_factory=dict)
    done: bool = False
    updated_at: str = ""
    # Saves of the chunk so far: a page sends the revision it edited, and a save made from
    # an older one (another tab saved meanwhile) is refused, never silently laid over it.
    revision: int = Field(default=0, ge=0)


class FieldProblem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    item: int | None  # index in the field's current items
    message: str


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def field_values(extraction: ExtractionV3 | None, field: str) -> list[JsonValue]:
    """A field of an extraction as the page's list of items (JSON)."""
    if extraction is None:
        return []
    data = extraction.model_dump(mode="json")
    value = data.get(field)
    if field in SCALAR_FIELDS:
        return [] if value in (None, "") else [value]
    assert isinstance(value, list)
    return list(value)


def initial_state(chunk_id: str, fields: Sequence[str], prefill: ExtractionV3 | None) -> ChunkState:
    """A chunk before the person touched it: every field holds the prefill's items."""
    return ChunkState(
        chunk_id=chunk_id,
        fields={
            f: FieldState(
                items=[
                    ItemState(value=v, prefill=i) for i, v in enumerate(field_values(prefill, f))
                ]
            )
            for f in fields
        },
    )


def _field_data(field: str, items: Sequence[JsonValue]) -> JsonValue:
    if field in SCALAR_FIELDS:
        return items[0] if items else ("" if field == "summary" else None)
    return list(items)


def _validate_field(
    field: str, items: Sequence[JsonValue]
) -> tuple[JsonValue, FieldProblem | None]:
    """The field's value as the schema normalises it, or the first problem (with the item)."""
    try:
        model = ExtractionV3.model_validate({field: _field_data(field, items)})
    except ValidationError as exc:
        where, message = first_validation_error(exc)
        parts = where.split(".")
        index = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        if field in SCALAR_FIELDS and items:
            index = 0
        detail = ".".join(parts[2:]) if index is not None and field not in SCALAR_FIELDS else ""
        if field in SCALAR_FIELDS:
            detail = ".".join(parts[1:])
        text = f"{detail}: {message}" if detail else message
        return None, FieldProblem(field=field, item=index, message=text)
    value: JsonValue = model.model_dump(mode="json")[field]
    return value, None


def gold_line(
    state: ChunkState,
    prefill: ExtractionV3 | None,
    *,
    annotator: str,
    prefill_model: str | None,
) -> tuple[GoldLine | None, list[FieldProblem]]:
    """The gold line ``state`` stands for (None: no field reviewed and valid yet), and the
    problems of reviewed fields left out of ``covers`` until they validate."""
    extraction: dict[str, JsonValue] = {}
    covers: list[str] = []
    decisions: dict[str, list[ItemDecision]] = {}
    added: dict[str, list[int]] = {}
    problems: list[FieldProblem] = []
    for field in ANNOTATED_FIELDS:
        fstate = state.fields.get(field)
        if fstate is None or not fstate.reviewed:
            continue
        values = [item.value for item in fstate.items]
        normalised, problem = _validate_field(field, values)
        if problem is not None:
            problems.append(problem)
            continue
        covers.append(field)
        extraction[field] = normalised
        kept = (
            [normalised]
            if field in SCALAR_FIELDS and normalised not in (None, "")
            else (normalised if isinstance(normalised, list) else [])
        )
        originals = field_values(prefill, field)
        where = {item.prefill: i for i, item in enumerate(fstate.items) if item.prefill is not None}
        field_decisions = []
        for p, original in enumerate(originals):
            i = where.get(p)
            if i is None or p in fstate.deleted:
                field_decisions.append(ItemDecision(prefill_index=p, decision="deleted"))
                continue
            same = i < len(kept) and kept[i] == original
            field_decisions.append(
                ItemDecision(
                    prefill_index=p, decision="accepted" if same else "edited", item_index=i
                )
            )
        if field_decisions:
            decisions[field] = field_decisions
        new = [i for i, item in enumerate(fstate.items) if item.prefill is None]
        if new:
            added[field] = new
    if not covers:
        return None, problems
    line = GoldLine(
        chunk_id=state.chunk_id,
        model=f"{HUMAN_PREFIX}{annotator}",
        covers=covers,
        extraction=ExtractionV3.model_validate(extraction),
        annotation=Annotation(
            annotator=annotator,
            prefill=prefill_model,
            updated_at=state.updated_at or now(),
            decisions=decisions,
            added=added,
        ),
    )
    return line, problems


def state_from_gold(
    record: ExtractionRecord,
    annotation: Annotation | None,
    fields: Sequence[str],
    prefill: ExtractionV3 | None,
) -> ChunkState:
    """The page's state back from a gold line (when no journal says more): the covered fields
    as the line has them, reviewed; the others as the prefill has them."""
    state = initial_state(record.chunk_id, fields, prefill)
    covers = record.covers if record.covers is not None else tuple(fields)
    decisions: Mapping[str, list[ItemDecision]] = annotation.decisions if annotation else {}
    for field in fields:
        if field not in covers:
            continue
        values = field_values(record.extraction, field)
        origin = {d.item_index: d for d in decisions.get(field, []) if d.item_index is not None}
        items = [
            ItemState(
                value=v,
                prefill=origin[i].prefill_index if i in origin else None,
                accepted=i in origin and origin[i].decision == "accepted",
            )
            for i, v in enumerate(values)
        ]
        deleted = [d.prefill_index for d in decisions.get(field, []) if d.decision == "deleted"]
        if annotation is None:
            # Someone's own gold, no record of a prefill: every prefilled item is superseded.
            deleted = list(range(len(field_values(prefill, field))))
        state.fields[field] = FieldState(items=items, deleted=deleted, reviewed=True)
    state.done = True
    state.updated_at = annotation.updated_at if annotation else ""
    return state
