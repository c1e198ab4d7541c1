"""``chatledger examples DIR``: the files the README's and the docs' examples name.

- ``chunks.jsonl`` and ``gold.jsonl``: the bundled corpus (36 chunks) and its gold;
- ``cheap.jsonl`` and ``model-a.jsonl``: two simulated challengers, every corruption operator at
  severity 0.3 and 0.1 (seed 7), named ``simulated:cheap`` and ``simulated:model-a``;
- ``human_gold.jsonl``: a partial human gold — the gold's claims, decisions, action items and
  open questions, with ``covers`` naming them;
- ``gold-ness.jsonl`` and ``gold-sam.jsonl``: two made-up annotators' files as the annotation
  page writes them, both prefilled from ``cheap.jsonl`` and covering claims and action items:
  Ness keeps the prefilled items the gold has (by text) and adds the gold's missing ones; Sam
  keeps every prefilled claim and, of the action items, what Ness keeps, and adds nothing.

Written the same on every machine, offline, in about a second.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chatledger.core import (
    ExtractionRecord,
    ExtractionV3,
    InputError,
    atomic_write_text,
    prepare_output_dir,
)
from chatledger.corpus import read_extractions
from chatledger.demo._bundled import write_bundled_corpus

EXAMPLE_SEVERITIES = (("cheap", 0.3), ("model-a", 0.1))
EXAMPLE_SEED = 7
HUMAN_COVERS = ("claims", "decisions", "action_items", "open_questions")
ANNOTATORS = ("ness", "sam")
ANNOTATED_FIELDS = ("claims", "action_items")


def write_examples(out_dir: Path, *, overwrite: bool = False) -> list[Path]:
    """Write the example files into ``out_dir`` (made if missing); returns their paths.

    A file of that name already there with other content (the user's own ``chunks.jsonl``)
    is refused, naming it, unless ``overwrite``: the files are written in a folder beside
    them first and moved in only when none would replace something else."""
    folder = prepare_output_dir(out_dir)
    with tempfile.TemporaryDirectory(prefix=".examples-", dir=folder) as staging:
        staged = _write_examples(Path(staging))
        targets = [folder / path.name for path in staged]
        if not overwrite:
            for path, target in zip(staged, targets, strict=True):
                if target.exists() and (
                    not target.is_file() or target.read_bytes() != path.read_bytes()
                ):
                    raise InputError(
                        "is already there with other content: not overwritten (choose an "
                        "empty folder, or pass --overwrite)",
                        path=target,
                    )
        for path, target in zip(staged, targets, strict=True):
            os.replace(path, target)
    return targets


def _write_examples(folder: Path) -> list[Path]:
    from chatledger.corpus import read_chunks
    from chatledger.simulate import OPERATORS, simulate_records, write_records

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
    cheap = read_extractions(folder / "cheap.jsonl").records
    for annotator in ANNOTATORS:
        target = folder / f"gold-{annotator}.jsonl"
        atomic_write_text(target, "".join(_annotated(annotator, gold, cheap)))
        written.append(target)
    return written


def _annotated(
    annotator: str, gold: Mapping[str, ExtractionRecord], prefill: Mapping[str, ExtractionRecord]
) -> list[str]:
    """The lines ``annotator`` leaves (see the module's docstring), one per chunk."""
    from chatledger.annotate import Annotation, GoldLine, ItemDecision

    lines = []
    for chunk_id, record in gold.items():
        reference = record.extraction
        offered = prefill[chunk_id].extraction if chunk_id in prefill else None
        if reference is None or offered is None:
            continue
        fields: dict[str, list[Any]] = {}
        decisions: dict[str, list[ItemDecision]] = {}
        added: dict[str, list[int]] = {}
        for name in ANNOTATED_FIELDS:
            truth = [item.model_dump(mode="json") for item in getattr(reference, name)]
            known = {item["text"] for item in truth}
            kept: list[Any] = []
            decisions[name] = []
            for index, item in enumerate(getattr(offered, name)):
                if (annotator == "sam" and name == "claims") or item.text in known:
                    decisions[name].append(
                        ItemDecision(prefill_index=index, decision="accepted", item_index=len(kept))
                    )
                    kept.append(item.model_dump(mode="json"))
                else:
                    decisions[name].append(ItemDecision(prefill_index=index, decision="deleted"))
            if annotator == "ness":
                have = {item["text"] for item in kept}
                missing = [item for item in truth if item["text"] not in have]
                added[name] = list(range(len(kept), len(kept) + len(missing)))
                kept += missing
            fields[name] = kept
        line = GoldLine(
            chunk_id=chunk_id,
            model=f"human:{annotator}",
            covers=list(ANNOTATED_FIELDS),
            extraction=ExtractionV3.model_validate(fields),
            annotation=Annotation(
                annotator=annotator,
                prefill="simulated:cheap",
                updated_at="2026-01-01T00:00:00Z",
                decisions=decisions,
                added={k: v for k, v in added.items() if v},
            ),
        )
        lines.append(line.model_dump_json(exclude_none=False) + "\n")
    return lines
