"""structbench in the offline demo: the rule baseline on the shipped set, its run directory and
report. No model and no network; a few seconds."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatledger.report import build_structbench_report
from chatledger.structbench.aggregate import load_prediction_file
from chatledger.structbench.baseline import baseline_predictions
from chatledger.structbench.dataset import ValidatorCache, read_dataset, write_predictions
from chatledger.structbench.rundir import StructRun, write_structbench_run


@dataclass
class StructbenchDemo:
    predictions: Path
    run: StructRun
    report: Path
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "predictions": str(self.predictions),
            "run": str(self.run.out_dir),
            "report": str(self.report),
            "n": self.run.run.n,
            "leaderboard": self.run.leaderboard,
            "seconds": self.seconds,
        }


def structbench_demo(out_dir: str | Path, *, n_resamples: int = 1000) -> StructbenchDemo:
    """Write ``out_dir/predictions/rule_baseline.jsonl`` (the rule baseline on the shipped
    emails-v1 set), score it into the run directory ``out_dir/run`` and build its report."""
    from chatledger.structbench import shipped_dataset_path

    started = time.perf_counter()
    out = Path(out_dir)
    dataset = shipped_dataset_path()
    documents = read_dataset(dataset)
    predictions_path = out / "predictions" / "rule_baseline.jsonl"
    write_predictions(baseline_predictions(documents), predictions_path)
    run = write_structbench_run(
        out / "run",
        documents,
        [load_prediction_file(predictions_path)],
        dataset_path=dataset,
        n_resamples=n_resamples,
        name="structbench demo",
        validators=ValidatorCache(),
    )
    report = build_structbench_report(run.out_dir)
    return StructbenchDemo(predictions_path, run, report, time.perf_counter() - started)
