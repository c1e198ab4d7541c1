"""The demo's two ways of spending less (issue 33), on CaSiNo's 47 bundled dialogues.

* **An early-stopped comparison**: ``chatledger decide`` between two simulated models scored
  against the human gold (light and heavy corruption of it), the rule
  ``layers.extraction max_drop 0.05``, batches of 5 dialogues in a seeded order: it stops as
  soon as the anytime-valid sequence lies below the allowance.
* **A prediction-powered interval**: offline:rules' agreement with humans when humans
  annotated 10 of the 47 dialogues (a seeded choice) and a reference model scored all 47. The
  reference is a stand-in for a strong model, ``simulated:light`` (the gold lightly
  corrupted), so the demo needs no API key; ``ppi.json`` holds the PPI interval beside the
  human-only one on the same 10.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chatledger.core import atomic_write_text, prepare_output_dir
from chatledger.corpus import read_chunks, read_extractions
from chatledger.demo._bundled import human_sample
from chatledger.extractors import get_extractor
from chatledger.gating import load_gate_rules
from chatledger.gating._sequential import SequentialResult, run_until_decided
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._ppi import PPIRecord
from chatledger.simulate import LADDER, OPERATORS, simulate_with_truth, write_records

SEED = 2026
ANNOTATED = 10
RULES = (
    "{baseline_model: 'simulated:light', candidate_model: 'simulated:heavy', "
    "rules: {layers.extraction: {max_drop: 0.05}}}"
)


@dataclass
class SequentialDemo:
    decision: SequentialResult
    ppi: PPIRecord

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision.model_dump(mode="json"),
            "ppi": self.ppi.model_dump(mode="json"),
        }


def sequential_demo(out_dir: Path) -> SequentialDemo:
    work = prepare_output_dir(out_dir / "spend-less")
    chunks_path, gold_path = human_sample("casino", work)
    folder = chunks_path.parent
    chunks = read_chunks(chunks_path)
    gold = read_extractions(gold_path).records
    severity = dict(LADDER)
    for label in ("light", "heavy"):
        operations = [(name, severity[label]) for name in OPERATORS]
        records, _ = simulate_with_truth(gold, chunks, operations, seed=SEED, label=label)
        write_records(records, folder / f"simulated-{label}.jsonl")
    compare = {
        "name": "casino-decide",
        "chunks": "chunks.jsonl",
        "reference": {"file": "gold.jsonl", "name": "human:casino"},
        "challengers": [
            {"file": "simulated-light.jsonl", "name": "simulated:light"},
            {"file": "simulated-heavy.jsonl", "name": "simulated:heavy"},
        ],
        "layers": ["extraction"],
        "seed": SEED,
    }
    atomic_write_text(folder / "decide.yaml", json.dumps(compare, indent=2) + "\n")
    decision = run_until_decided(
        folder / "decide.yaml", load_gate_rules(RULES), work / "decide", batch_size=5, seed=SEED
    )
    # PPI: humans on ANNOTATED dialogues (a seeded choice), the stand-in reference on all.
    lines = gold_path.read_text(encoding="utf-8").splitlines(keepends=True)
    chosen = sorted(np.random.default_rng(SEED).choice(len(lines), ANNOTATED, replace=False))
    atomic_write_text(folder / "human-sample.jsonl", "".join(lines[i] for i in chosen))
    get_extractor("offline:rules").extract_file(chunks_path, folder / "offline-rules.jsonl")
    ppi_config = {
        "name": "casino-ppi",
        "chunks": "chunks.jsonl",
        "reference": {"file": "simulated-light.jsonl", "name": "simulated:light"},
        "challengers": [{"file": "offline-rules.jsonl", "name": "offline:rules"}],
        "layers": ["extraction"],
        "human_gold": {"file": "human-sample.jsonl", "name": "human:casino", "ppi": True},
        "seed": SEED,
    }
    atomic_write_text(folder / "ppi.yaml", json.dumps(ppi_config, indent=2) + "\n")
    execute_run(load_run_config(folder / "ppi.yaml"), work / "ppi")
    ppi = PPIRecord.read(work / "ppi")
    assert ppi is not None
    return SequentialDemo(decision=decision, ppi=ppi)


def sequential_lines(demo: SequentialDemo) -> list[str]:
    d = demo.decision
    lines = [
        f"Spend only what the decision needs (CaSiNo, {d.conversations_available} dialogues "
        "against their human gold):"
    ]
    for r in d.rules:
        when = f"after {r.decided_after}" if r.decided_after is not None else "not yet"
        lines.append(
            f"  decide {d.baseline_model} → {d.candidate_model}, {r.rule.name}: {r.decision} "
            f"{when} of {d.conversations_available} dialogues "
            f"(difference {r.estimate:+.3f}, anytime-valid [{r.lower:+.3f}, {r.upper:+.3f}])"
        )
    fields = demo.ppi.predictor_fields
    predictor = demo.ppi.predictor + (f" on the gold's {', '.join(fields)}" if fields else "")
    for m in demo.ppi.models:
        lines.append(
            f"  PPI: {m.model}'s agreement with humans, {m.annotated} of "
            f"{m.annotated + m.others} dialogues annotated, {predictor} against "
            f"simulated:light on all: {m.estimate:.3f} [{m.low:.3f}, {m.high:.3f}] vs humans "
            f"alone [{m.human_low:.3f}, {m.human_high:.3f}] — worth {m.labels_worth:.0f} "
            "human-annotated dialogues"
        )
    return lines
