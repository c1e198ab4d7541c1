"""The demo's schema selection: the whole pipeline on the bundled corpus, offline — on the seeded
simulated extractor (labelled simulated everywhere), and on the recorded answers of a real local
model where they were recorded (``data/recorded/select/``: 3 seeded samples per chunk at
temperature 0.7, v3 fields only)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatledger.core import atomic_write_json, atomic_write_text
from chatledger.demo._recorded import recorded_dir
from chatledger.report import build_selection_report
from chatledger.select import SelectionRecord, load_select_config, run_selection

SELECT_RECORDED = "select"  # the folder of recorded screening answers under data/recorded


@dataclass
class SelectionSummary:
    extractor: str
    directory: Path
    report: Path
    record: SelectionRecord

    def to_dict(self) -> dict[str, Any]:
        record = self.record
        return {
            "extractor": self.extractor,
            "simulated": record.simulated,
            "directory": str(self.directory),
            "report": str(self.report),
            "screened": len(record.screening),
            "passed": [r.name for r in record.screening if r.passed],
            "failed": {r.name: r.reason for r in record.screening if not r.passed},
            "variants": {v.field: [v.before, v.after, v.best] for v in record.variants},
            "winner": record.tournament.winner if record.tournament else None,
            "pruned_share": record.tournament.pruned_share if record.tournament else None,
            "notes": list(record.notes),
        }


@dataclass
class DemoSelection:
    runs: list[SelectionSummary] = field(default_factory=list)

    def to_dict(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.runs]


def _select(config: dict[str, Any], folder: Path, name: str) -> SelectionSummary:
    path = folder / f"{name}.json"
    atomic_write_json(path, config)
    out = folder / name
    record = run_selection(load_select_config(path), out)
    return SelectionSummary(record.extractor, out, build_selection_report(out, record), record)


def demo_selection(
    out_dir: Path,
    chunks: Path,
    gold: Path,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> DemoSelection:
    """Selections written under ``out_dir`` (``select/`` and ``select-<model>/``)."""
    base = {
        "version": 1,
        "chunks": str(chunks.relative_to(out_dir)),
        "reference": str(gold.relative_to(out_dir)),
    }
    result = DemoSelection()
    if on_progress:
        on_progress("schema selection: simulated extractor", 0, 1)
    result.runs.append(_select({**base, "extractor": "simulated"}, out_dir, "select"))
    recorded = recorded_dir() / SELECT_RECORDED
    for source in sorted(recorded.glob("*.jsonl")) if recorded.is_dir() else []:
        if on_progress:
            on_progress(f"schema selection: recorded {source.stem}", 0, 1)
        copy = out_dir / "select-recorded" / source.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(copy, source.read_text(encoding="utf-8"))
        config = {
            **base,
            "extractor": {"recorded": str(copy.relative_to(out_dir))},
            "screen": {"k": 3, "chunks": 8},
        }
        result.runs.append(_select(config, out_dir, f"select-{source.stem}"))
    return result
