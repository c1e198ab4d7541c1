"""A population run for ``chatledger coverage``: human gold as the reference, the offline
extractor and simulated challengers (the gold through the corruption operators) scored on
all three layers. docs/statistics.md's coverage tables and the coverage test are built on it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from chatledger.core import atomic_write_json, prepare_output_dir
from chatledger.corpus import read_chunks, read_extractions
from chatledger.extractors import get_extractor
from chatledger.simulate import OPERATORS, simulate_with_truth, write_records

OFFLINE = "offline:rules"
POPULATION_SEVERITIES: tuple[tuple[str, float], ...] = (("light", 0.1), ("heavy", 0.6))


def prepare_population(
    chunks_path: Path,
    gold_path: Path,
    out_dir: Path,
    *,
    severities: Sequence[tuple[str, float]] = POPULATION_SEVERITIES,
    offline: bool = True,
    judges: Sequence[str] = ("grounding",),
    seed: int = 2026,
) -> Path:
    """Write the challengers and the run config (gold as the reference) into ``out_dir``;
    return the config's path."""
    challengers = prepare_output_dir(out_dir / "challengers")
    entries: list[dict[str, str]] = []
    if offline:
        get_extractor(OFFLINE).extract_file(chunks_path, challengers / "offline-rules.jsonl")
        entries.append({"file": str(challengers / "offline-rules.jsonl"), "name": OFFLINE})
    chunks = read_chunks(chunks_path)
    gold = read_extractions(gold_path).records
    for label, severity in severities:
        operations = [(name, severity) for name in OPERATORS]
        records, _ = simulate_with_truth(gold, chunks, operations, seed=seed, label=label)
        target = challengers / f"simulated-{label}.jsonl"
        write_records(records, target)
        entries.append({"file": str(target), "name": f"simulated:{label}"})
    config = {
        "name": "coverage-population",
        "chunks": str(chunks_path),
        "reference": {"file": str(gold_path), "name": "gold:human"},
        "challengers": entries,
        "layers": ["extraction", "judge", "downstream"] if judges else ["extraction", "downstream"],
        "judges": list(judges),
        "seed": seed,
    }
    path = out_dir / "population.yaml"
    atomic_write_json(path, config)
    return path
