"""``chatledger demo``: the whole benchmark on the bundled corpus, offline, with no API key.

Reference: the hand-written gold. Challengers: the offline rule-based extractor (a real, free
"model") and three *simulated* models — the gold passed through every corruption operator at a
light, medium and heavy severity, so their ranking must follow severity. Then the rule-based
extractor is scored against the human gold of the AMI and CaSiNo samples on the fields those
annotations cover.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatledger.core import (
    RECORDED_PREFIX,
    InputError,
    atomic_write_json,
    atomic_write_text,
    missing_modules,
    prepare_output_dir,
)
from chatledger.corpus import read_chunks, read_extractions
from chatledger.demo._bundled import HUMAN_SAMPLES, human_sample, write_bundled_corpus
from chatledger.demo._local_structbench import local_structbench
from chatledger.demo._recorded import recorded_dir, recorded_manifest
from chatledger.demo._selection import demo_selection
from chatledger.demo._sequential import SequentialDemo, sequential_demo
from chatledger.demo._switch import run_switch
from chatledger.demo._what_breaks import write_what_breaks
from chatledger.extractors import get_extractor
from chatledger.record import (
    ConversationRun,
    FieldCounts,
    HumanGoldSample,
    WhatBreaks,
    read_run_record,
)
from chatledger.report import build_report
from chatledger.runs import RunResult, execute_run, load_run_config
from chatledger.scoring import FieldCountsDict, ScoringConfig, score_records
from chatledger.simulate import (
    LADDER,
    OPERATORS,
    simulate_with_truth,
    truth_path,
    write_records,
    write_truth,
)
from chatledger.structbench import structbench_demo

SEVERITIES: tuple[tuple[str, float], ...] = LADDER
OFFLINE_EXTRACTOR = "offline:rules"


@dataclass
class HumanAgreement:
    corpus: str
    chunks: int
    composite: float
    fields: dict[str, float]
    aggregate: str = "micro"
    # Per field: matched / reference / predicted items, both-empty chunks, macro and micro.
    field_counts: dict[str, FieldCountsDict] = field(default_factory=dict)


@dataclass
class DemoResult:
    run: RunResult
    human: list[HumanAgreement] = field(default_factory=list)
    report: Path | None = None
    structbench: dict[str, Any] = field(default_factory=dict)
    # The recorded local models × strategies on the emails they were recorded on (None: none).
    structbench_local: dict[str, Any] | None = None
    # Schema selection on the bundled corpus: simulated, then each recorded local model.
    selection: list[dict[str, Any]] = field(default_factory=list)
    # The switch run: the recorded 1.5B as reference, the cheaper recorded models as
    # challengers (None when the recordings do not hold them).
    switch: RunResult | None = None
    switch_report: Path | None = None
    # Production → each cheaper model: paired against the gold, agreement with production.
    what_breaks: WhatBreaks | None = None
    # Why the selections were left out (the optional extra "select" is not installed), if so.
    selection_skipped: str | None = None
    # Issue 33: an early-stopped comparison and a prediction-powered interval (CaSiNo).
    spend_less: SequentialDemo | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": str(self.run.out_dir),
            "report": str(self.report) if self.report else None,
            "structbench": self.structbench,
            "structbench_local": self.structbench_local,
            "selection": self.selection,
            "selection_skipped": self.selection_skipped,
            "switch": self._switch_dict(),
            "spend_less": self.spend_less.to_dict() if self.spend_less is not None else None,
            "leaderboard": [m.to_dict() for m in self.run.leaderboard()],
            "layer_weights_used": self.run.layer_weights_used,
            "renormalisation": self.run.renormalisation_note,
            "human_gold": [
                {
                    "corpus": h.corpus,
                    "model": OFFLINE_EXTRACTOR,
                    "chunks": h.chunks,
                    "composite": h.composite,
                    "fields": h.fields,
                    "aggregate": h.aggregate,
                    "field_counts": h.field_counts,
                }
                for h in self.human
            ],
        }

    def _switch_dict(self) -> dict[str, Any] | None:
        if self.switch is None:
            return None
        return {
            "run": str(self.switch.out_dir),
            "report": str(self.switch_report) if self.switch_report else None,
            "reference": self.switch.reference_name,
            "leaderboard": [m.to_dict() for m in self.switch.leaderboard()],
            "what_breaks": (
                self.what_breaks.model_dump(mode="json") if self.what_breaks is not None else None
            ),
        }


def prepare_demo(out_dir: Path) -> Path:
    """Write the corpus, the challengers and the run config; return the config's path."""
    chunks_path, gold_path = write_bundled_corpus(out_dir / "corpus")
    challengers = prepare_output_dir(out_dir / "challengers")
    get_extractor(OFFLINE_EXTRACTOR).extract_file(chunks_path, challengers / "offline-rules.jsonl")
    chunks = read_chunks(chunks_path)
    gold = read_extractions(gold_path).records
    entries: list[dict[str, str]] = [
        {"file": "challengers/offline-rules.jsonl", "name": OFFLINE_EXTRACTOR}
    ]
    entries += _recorded_challengers(challengers)
    for label, severity in SEVERITIES:
        operations = [(name, severity) for name in OPERATORS]
        records, truth = simulate_with_truth(gold, chunks, operations, seed=2026, label=label)
        target = challengers / f"simulated-{label}.jsonl"
        write_records(records, target)
        write_truth(truth.values(), truth_path(target))  # what each item underwent
        entries.append(
            {"file": f"challengers/simulated-{label}.jsonl", "name": f"simulated:{label}"}
        )
    config = {
        "name": "chatledger-demo",
        "chunks": "corpus/chunks.jsonl",
        "reference": {"file": "corpus/gold.jsonl", "name": "gold:hand-written"},
        "challengers": entries,
        "layers": ["extraction", "judge", "downstream"],
        "judges": ["grounding"],
        "seed": 2026,
    }
    path = out_dir / "demo.yaml"
    atomic_write_json(path, config)
    return path


def _recorded_challengers(challengers: Path) -> list[dict[str, str]]:
    """The recorded real local models (``data/recorded``), copied beside the other challengers
    and named ``recorded:<model>`` so the report labels them *local model, recorded*."""
    manifest = recorded_manifest()
    if manifest is None:
        return []
    entries = []
    for model in manifest.models:
        if model.corpus is None:
            continue
        source = recorded_dir() / model.corpus.file
        target = challengers / f"recorded-{model.name}.jsonl"
        atomic_write_text(target, source.read_text(encoding="utf-8"))
        entries.append(
            {"file": f"challengers/{target.name}", "name": f"{RECORDED_PREFIX}{model.name}"}
        )
    return entries


def human_agreement(out_dir: Path) -> list[HumanAgreement]:
    """The offline extractor against the human gold samples, on the fields each covers."""
    results = []
    extractor = get_extractor(OFFLINE_EXTRACTOR)
    for name in HUMAN_SAMPLES:
        chunks_path, gold_path = human_sample(name, out_dir / "human")
        predictions = out_dir / "human" / name / "offline-rules.jsonl"
        extractor.extract_file(chunks_path, predictions)
        report = score_records(
            read_extractions(gold_path).records,
            read_extractions(predictions).records,
            read_chunks(chunks_path),
            ScoringConfig.default("v3"),
            reference_model=f"human:{name}",
            challenger_model=OFFLINE_EXTRACTOR,
        )
        results.append(
            HumanAgreement(
                corpus=name,
                chunks=len(report.chunks),
                composite=report.extraction_composite,
                fields={k: s.score for k, s in report.fields.items()},
                aggregate=report.aggregate,
                field_counts={k: s.counts() for k, s in report.fields.items()},
            )
        )
    return results


def _note_human_gold(run_dir: Path, result: DemoResult) -> None:
    """The demo's reference is hand-written gold; the AMI/CaSiNo agreement goes beside it."""
    record = read_run_record(run_dir)
    if not isinstance(record, ConversationRun):
        raise InputError("the demo's run is not a conversation run", path=run_dir)
    samples = [
        HumanGoldSample(
            corpus=h.corpus,
            model=OFFLINE_EXTRACTOR,
            chunks=h.chunks,
            composite=h.composite,
            fields=h.fields,
            aggregate="micro" if h.aggregate == "micro" else "macro",
            field_counts={k: FieldCounts(**v) for k, v in h.field_counts.items()},
        )
        for h in result.human
    ]
    noted = record.model_copy(update={"reference_is_human": True, "human_gold_samples": samples})
    noted.write(run_dir)


def run_demo(
    out_dir: Path,
    on_progress: Callable[[str, int, int], None] | None = None,
    *,
    selection: bool = True,
) -> DemoResult:
    """The whole demo; ``selection=False`` leaves out the schema selections (a caller that
    only reads the run: the report's tests)."""
    config_path = prepare_demo(out_dir)
    run = execute_run(load_run_config(config_path), out_dir / "run", on_progress=on_progress)
    result = DemoResult(run=run, human=human_agreement(out_dir))
    _note_human_gold(run.out_dir, result)
    result.report = build_report(run.out_dir)
    result.switch = run_switch(out_dir, on_progress=on_progress)
    if result.switch is not None:
        production = result.switch.reference_name
        result.what_breaks = write_what_breaks(
            run.out_dir,
            result.switch.out_dir,
            production,
            [m.name for m in result.switch.leaderboard()],
        )
        result.switch_report = build_report(result.switch.out_dir)
    if on_progress:
        on_progress("decide and PPI on CaSiNo's 47 dialogues", 0, 1)
    result.spend_less = sequential_demo(out_dir)
    if on_progress:
        on_progress("structbench: offline baseline on 1,000 emails", 0, 1)
    result.structbench = structbench_demo(out_dir / "structbench").to_dict()
    local = local_structbench(out_dir / "structbench")
    result.structbench_local = local.to_dict() if local is not None else None
    missing = missing_modules("select") if selection else []
    if missing:
        result.selection_skipped = (
            f"schema selection left out: it needs the optional extra 'select' "
            f"({', '.join(missing)} not installed): pip install 'chatledger[select]'"
        )
    elif selection:
        corpus = out_dir / "corpus"
        found = demo_selection(
            out_dir, corpus / "chunks.jsonl", corpus / "gold.jsonl", on_progress=on_progress
        )
        result.selection = found.to_dict()
    return result
