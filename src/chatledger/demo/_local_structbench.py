"""structbench on real local models, in the demo: the recorded outputs of each local model under
the five prompting strategies, on the seeded sample of shipped emails they were recorded on,
scored beside the rule baseline on the same sample — with the strategy-vs-model comparison
(``stats.factor_effects``) in its run and report. Offline: the outputs are replayed from
``data/recorded/structbench/``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatledger.core import InputError
from chatledger.demo._recorded import recorded_dir, recorded_manifest
from chatledger.record import METRICS, StructbenchRun, read_run_record
from chatledger.report import build_structbench_report
from chatledger.structbench import (
    ValidatorCache,
    baseline_predictions,
    load_prediction_file,
    read_dataset,
    shipped_dataset_path,
    write_predictions,
    write_structbench_run,
)


@dataclass
class LocalStructbench:
    run_dir: Path
    report: Path
    run: StructbenchRun

    def to_dict(self) -> dict[str, Any]:
        effects = self.run.strategy_vs_model
        return {
            "run": str(self.run_dir),
            "report": str(self.report),
            "n": self.run.n,
            "leaderboard": [
                {"name": m.name} | {k: m.metric(k) for k in METRICS} for m in self.run.models
            ],
            "strategy_vs_model": effects.model_dump(mode="json") if effects else None,
            "grid_pairs": grid.model_dump(mode="json") if (grid := self.run.grid_pairs) else None,
        }


def local_structbench(out_dir: Path, *, n_resamples: int = 1000) -> LocalStructbench | None:
    """Score the recorded local-model outputs into ``out_dir/local``; None when none ship."""
    manifest = recorded_manifest()
    if manifest is None or not manifest.structbench_sample:
        return None
    folders = [recorded_dir() / m.structbench.file for m in manifest.models if m.structbench]
    files = sorted(p for folder in folders for p in folder.glob("*.jsonl"))
    if not files:
        return None
    dataset = shipped_dataset_path()
    wanted = set(manifest.structbench_sample)
    documents = [d for d in read_dataset(dataset) if d.id in wanted]
    if len(documents) != len(wanted):
        raise InputError(
            "the recorded sample names documents the shipped set does not have",
            path=recorded_dir() / "manifest.json",
            field="structbench_sample",
        )
    baseline = out_dir / "local-predictions" / "rule_baseline.jsonl"
    write_predictions(baseline_predictions(documents), baseline)
    run = write_structbench_run(
        out_dir / "local",
        documents,
        [load_prediction_file(baseline), *(load_prediction_file(p) for p in files)],
        dataset_path=dataset,
        n_resamples=n_resamples,
        name=f"structbench: recorded local models on {len(documents)} emails",
        validators=ValidatorCache(),
    )
    record = read_run_record(run.out_dir)
    if not isinstance(record, StructbenchRun):
        raise InputError("not a structbench run directory (run.json task)", path=run.out_dir)
    return LocalStructbench(run.out_dir, build_structbench_report(run.out_dir), record)
