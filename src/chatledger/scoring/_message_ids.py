"""The message ids an extraction cites, field by field: one walk for the problem list (ids a
chunk does not hold) and for the per-model count of foreign ids (DegenerateOutputs)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from chatledger.core import FIELDS_V3

if TYPE_CHECKING:
    from chatledger.core import ExtractionV3


def cited_message_ids(
    extraction: ExtractionV3, fields: Iterable[str] = FIELDS_V3
) -> Iterator[tuple[str, str]]:
    """``(where, id)`` for every message id in ``fields`` of ``extraction``: evidence lists,
    salient messages, turning points and phase bounds; ``where`` is its dotted path."""
    for name in fields:
        if name == "evidence_message_ids":
            for j, mid in enumerate(extraction.evidence_message_ids):
                yield f"{name}.{j}", mid
        elif name == "emotional_arc":
            arc = extraction.emotional_arc
            for i, point in enumerate(arc.turning_points if arc is not None else ()):
                yield f"{name}.turning_points.{i}.message_id", point.message_id
        elif name == "conversation_phases":
            for i, phase in enumerate(extraction.conversation_phases):
                yield f"{name}.{i}.start_message_id", phase.start_message_id
                yield f"{name}.{i}.end_message_id", phase.end_message_id
        else:
            items = getattr(extraction, name, None)
            if not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                for j, mid in enumerate(getattr(item, "evidence", None) or ()):
                    yield f"{name}.{i}.evidence.{j}", mid
