"""Simulated challengers: a reference file passed through corruption operators.

Their model names always start with ``simulated:`` so that no table, chart or file can show them
as a real model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from chatledger.core import Chunk, ExtractionRecord, ExtractionV3, RecordStatus, atomic_writer
from chatledger.simulate._operators import LIST_FIELDS, corrupt_traced, operator_class
from chatledger.simulate._truth import ChunkTruth, Effect, ItemTruth

SIMULATED_PREFIX = "simulated:"
# The demo's simulated models: every operator, in order, at a light, medium and heavy severity
# (the ladder the judge audit grades judges on).
LADDER: tuple[tuple[str, float], ...] = (("light", 0.1), ("medium", 0.3), ("heavy", 0.6))


def simulated_name(label: str) -> str:
    return label if label.startswith(SIMULATED_PREFIX) else SIMULATED_PREFIX + label


def simulate_records(
    reference: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk],
    operations: Sequence[tuple[str, float]],
    *,
    seed: int = 0,
    label: str = "corrupted",
) -> dict[str, ExtractionRecord]:
    """Apply ``operations`` (operator, severity) in order to every valid reference record."""
    return simulate_with_truth(reference, chunks, operations, seed=seed, label=label)[0]


def simulate_with_truth(
    reference: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk],
    operations: Sequence[tuple[str, float]],
    *,
    seed: int = 0,
    label: str = "corrupted",
) -> tuple[dict[str, ExtractionRecord], dict[str, ChunkTruth]]:
    """:func:`simulate_records` and, per chunk, what was done to each item (its known truth)."""
    name = simulated_name(label)
    out: dict[str, ExtractionRecord] = {}
    truths: dict[str, ChunkTruth] = {}
    for chunk in chunks:
        record = reference.get(chunk.chunk_id)
        if record is None or record.extraction is None:
            continue
        extraction, items = _corrupt_chunk(record.extraction, chunk, operations, seed)
        out[chunk.chunk_id] = ExtractionRecord(
            chunk_id=chunk.chunk_id, model=name, status=RecordStatus.OK, extraction=extraction
        )
        truths[chunk.chunk_id] = ChunkTruth(
            chunk_id=chunk.chunk_id,
            model=name,
            operations=[(op, float(sev)) for op, sev in operations],
            items=items,
        )
    return out, truths


def _corrupt_chunk(
    extraction: ExtractionV3,
    chunk: Chunk,
    operations: Sequence[tuple[str, float]],
    seed: int,
) -> tuple[ExtractionV3, list[ItemTruth]]:
    # Per field, aligned with the current list: (index in the reference or None, effects).
    state: dict[str, list[tuple[int | None, list[Effect]]]] = {
        f: [(i, []) for i in range(len(getattr(extraction, f)))] for f in LIST_FIELDS
    }
    gone: list[ItemTruth] = []
    for step, (operator, severity) in enumerate(operations):
        extraction, trace = corrupt_traced(
            extraction, chunk, operator, severity, seed + 7919 * step
        )
        for field, steps in trace.items():
            before = state[field]
            kept = {origin for origin, _ in steps if origin is not None}
            for i, (source, effects) in enumerate(before):
                if i not in kept:
                    gone.append(
                        ItemTruth(field=field, source_index=source, effects=[*effects, "dropped"])
                    )
            after: list[tuple[int | None, list[Effect]]] = []
            for origin, changed in steps:
                if origin is None:
                    after.append((None, ["invented"]))
                    continue
                source, effects = before[origin]
                effect = operator_class(operator).effect
                if changed and effect is not None and effect not in effects:
                    effects = [*effects, effect]
                after.append((source, effects))
            state[field] = after
    items = [
        ItemTruth(field=f, index=j, source_index=source, effects=effects)
        for f in LIST_FIELDS
        for j, (source, effects) in enumerate(state[f])
    ]
    return extraction, items + gone


def write_records(records: Mapping[str, ExtractionRecord], path: Path) -> None:
    """Write records in the extraction JSONL format (valid records only)."""
    with atomic_writer(path) as handle:
        for line in record_lines(records):
            handle.write(line)


def record_lines(records: Mapping[str, ExtractionRecord]) -> Iterator[str]:
    """The lines :func:`write_records` writes, newline included, one record at a time."""
    for record in records.values():
        if record.extraction is None:
            continue
        line = {
            "chunk_id": record.chunk_id,
            "model": record.model,
            "extraction": record.extraction.model_dump(mode="json"),
            "usage": record.usage.model_dump(mode="json"),
        }
        yield json.dumps(line, ensure_ascii=False) + "\n"
