"""``chatledger examples DIR``: the files the README's and the docs' examples name.

- ``chunks.jsonl`` and ``gold.jsonl``: the bundled corpus (36 chunks) and its gold;
- ``cheap.jsonl`` and ``model-a.jsonl``: two simulated challengers, every corruption operator at
  severity 0.3 and 0.1 (seed 7), named ``simulated:cheap`` and ``simulated:model-a``;
- ``human_gold.jsonl``: a partial human gold — the gold's claims, decisions, action items and
  open questions, with ``covers`` naming them.

Written the same on every machine, offline, in about a second.
"""

from __future__ import annotations

import json
from pathlib import Path

from chatledger.core import atomic_write_text, prepare_output_dir
from chatledger.demo._bundled import write_bundled_corpus

EXAMPLE_SEVERITIES = (("cheap", 0.3), ("model-a", 0.1))
EXAMPLE_SEED = 7
HUMAN_COVERS = ("claims", "decisions", "action_items", "open_questions")


def write_examples(out_dir: Path) -> list[Path]:
    """Write the example files into ``out_dir`` (made if missing); returns their paths."""
    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.simulate import OPERATORS, simulate_records, write_records

    folder = prepare_output_dir(out_dir)
    chunks_path, gold_path = write_bundled_corpus(folder)
    chunks = read_chunks(chunks_path)
    gold = read_extractions(gold_path).records
    written = [chunks_path, gold_path]
    for name, severity in EXAMPLE_SEVERITIES:
        operations = [(operator, severity) for operator in OPERATORS]
        target = folder / f"{name}.jsonl"
        write_records(
            simulate_records(gold, chunks, operations, seed=EXAMPLE_SEED, label=name), target
        )
        written.append(target)
    lines = []
    for line in gold_path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        data["covers"] = list(HUMAN_COVERS)
        data["extraction"] = {k: v for k, v in data["extraction"].items() if k in HUMAN_COVERS}
        lines.append(json.dumps(data) + "\n")
    human = folder / "human_gold.jsonl"
    atomic_write_text(human, "".join(lines))
    written.append(human)
    return written
