"""Simulated challengers: a reference file passed through corruption operators.

Their model names always start with ``simulated:`` so that no table, chart or file can show them
as a real model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from chatledger.core import Chunk, ExtractionRecord, RecordStatus, atomic_writer
from chatledger.simulate._operators import corrupt

SIMULATED_PREFIX = "simulated:"


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
    name = simulated_name(label)
    out: dict[str, ExtractionRecord] = {}
    for chunk in chunks:
        record = reference.get(chunk.chunk_id)
        if record is None or record.extraction is None:
            continue
        extraction = record.extraction
        for step, (operator, severity) in enumerate(operations):
            extraction = corrupt(extraction, chunk, operator, severity, seed + 7919 * step)
        out[chunk.chunk_id] = ExtractionRecord(
            chunk_id=chunk.chunk_id, model=name, status=RecordStatus.OK, extraction=extraction
        )
    return out


def write_records(records: Mapping[str, ExtractionRecord], path: Path) -> None:
    """Write records in the extraction JSONL format (valid records only)."""
    with atomic_writer(path) as handle:
        for record in records.values():
            if record.extraction is None:
                continue
            line = {
                "chunk_id": record.chunk_id,
                "model": record.model,
                "extraction": record.extraction.model_dump(mode="json"),
                "usage": record.usage.model_dump(mode="json"),
            }
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
