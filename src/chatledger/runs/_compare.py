"""What changed between two run directories, per model, layer and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chatledger.core import InputError


def load_run_json(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        raise InputError("not a run directory (no run.json)", path=run_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"not a readable run.json ({type(exc).__name__})", path=path) from None
    if not isinstance(data, dict) or "models" not in data:
        raise InputError("run.json has no 'models'", path=path)
    return data


def _delta(a: float | None, b: float | None) -> dict[str, float | None]:
    diff = None if a is None or b is None else b - a
    return {"before": a, "after": b, "delta": diff}


STRUCTBENCH_METRICS = ("DOC", "MK", "MV", "WV", "micro_f1")


def _normalised(model: dict[str, Any]) -> dict[str, Any]:
    """A structbench row compared like a conversation model: overall = WV, metrics as a group."""
    if "overall" in model or "WV" not in model:
        return model
    metrics = {k: model[k] for k in STRUCTBENCH_METRICS if isinstance(model.get(k), int | float)}
    return {**model, "overall": model["WV"], "metrics": metrics}


def compare_runs(before_dir: str | Path, after_dir: str | Path) -> dict[str, Any]:
    """Per model present in either run: overall, layer, field and consumer scores before/after
    (for structbench runs: DOC, MK, MV, WV and micro F1, with WV as the overall score)."""
    runs = load_run_json(before_dir), load_run_json(after_dir)
    tasks = [str(run.get("task") or "conversation") for run in runs]
    if tasks[0] != tasks[1]:
        raise InputError(
            f"cannot compare a {tasks[0]} run ({before_dir}) with a {tasks[1]} run: "
            "their scores measure different things",
            path=after_dir,
        )
    before = {m["name"]: _normalised(m) for m in runs[0]["models"]}
    after = {m["name"]: _normalised(m) for m in runs[1]["models"]}
    models: dict[str, Any] = {}
    for name in [*before, *(n for n in after if n not in before)]:
        a, b = before.get(name, {}), after.get(name, {})
        entry: dict[str, Any] = {"overall": _delta(a.get("overall"), b.get("overall"))}
        for group in ("layers", "metrics", "fields", "consumers"):
            ga, gb = a.get(group, {}), b.get(group, {})
            keys = [*ga, *(k for k in gb if k not in ga)]
            entry[group] = {k: _delta(ga.get(k), gb.get(k)) for k in keys}
        models[name] = entry
    return {
        "before": str(before_dir),
        "after": str(after_dir),
        "only_before": [n for n in before if n not in after],
        "only_after": [n for n in after if n not in before],
        "models": models,
    }
