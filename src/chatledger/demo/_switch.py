"""The run ChatLedger's users make: "we run the 1.5B in production — what breaks if we switch to
a cheaper model?", on real recorded outputs.

Reference: the recorded Qwen2.5-Coder-1.5B (the model in production). Challengers: the recorded
cheaper models (Qwen2.5-Coder-0.5B, SmolLM2-135M). All three layers and the statistics, written
beside the demo's main run (which scores every model against the hand-written gold). Offline:
the outputs are replayed from ``data/recorded``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from chatledger.core import RECORDED_PREFIX, atomic_write_json
from chatledger.demo._recorded import recorded_manifest
from chatledger.runs import RunResult, execute_run, load_run_config

PRODUCTION_MODEL = "qwen2.5-coder-1.5b"
SWITCH_DIR = "switch"


def switch_challengers(names: list[str]) -> tuple[str, list[str]] | None:
    """(production, cheaper models) among the recorded ``names``; None without the production
    model or without a cheaper one."""
    if PRODUCTION_MODEL not in names:
        return None
    cheaper = [n for n in names if n != PRODUCTION_MODEL]
    return (PRODUCTION_MODEL, cheaper) if cheaper else None


def prepare_switch(out_dir: Path) -> Path | None:
    """The switch run's config, over the demo's corpus and copied recordings (``prepare_demo``
    wrote both); None when the recordings do not hold the production model and a cheaper one."""
    manifest = recorded_manifest()
    if manifest is None:
        return None
    found = switch_challengers([m.name for m in manifest.models if m.corpus is not None])
    if found is None:
        return None
    production, cheaper = found

    def entry(name: str) -> dict[str, str]:
        return {
            "file": f"challengers/recorded-{name}.jsonl",
            "name": f"{RECORDED_PREFIX}{name}",
        }

    config = {
        "name": f"switch: {production} in production, cheaper: {', '.join(cheaper)}",
        "chunks": "corpus/chunks.jsonl",
        "reference": entry(production),
        "challengers": [entry(name) for name in cheaper],
        "layers": ["extraction", "judge", "downstream"],
        "judges": ["grounding"],
        "seed": 2026,
    }
    path = out_dir / "switch.yaml"
    atomic_write_json(path, config)
    return path


def run_switch(
    out_dir: Path, on_progress: Callable[[str, int, int], None] | None = None
) -> RunResult | None:
    """Run the switch comparison into ``out_dir/switch`` (None when it cannot be made)."""
    config = prepare_switch(out_dir)
    if config is None:
        return None
    return execute_run(load_run_config(config), out_dir / SWITCH_DIR, on_progress=on_progress)
