"""`--format json` prints nothing but JSON, on every command that prints results."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from chatledger.cli._app import main

EXAMPLES = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "examples"


def _json_of(argv: list[str]) -> object:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())  # raises if anything but one JSON value was printed


@pytest.fixture(scope="module")
def demo_dir(demo_json: tuple[Path, dict[str, Any]]) -> Path:
    """The session's demo; its own `demo --format json` printed nothing but JSON (checked
    where it is made, conftest.demo_json)."""
    return demo_json[0]


def test_every_results_command_prints_only_json(demo_dir: Path, tmp_path: Path) -> None:
    ref, chal, chunks = (
        EXAMPLES / n for n in ("reference.jsonl", "challenger.jsonl", "chunks.jsonl")
    )
    run_dir = tmp_path / "demo-run"  # `report` writes into it: a copy of the shared run
    shutil.copytree(demo_dir / "run", run_dir)
    config = tmp_path / "run.yaml"
    config.write_text(
        json.dumps({"chunks": str(chunks), "reference": str(ref), "challengers": [str(chal)]})
    )
    commands = [
        ["schema", "v3"],
        ["score", "--reference", str(ref), "--challenger", str(chal), "--chunks", str(chunks)],
        ["downstream", "--reference", str(ref), "--challenger", str(chal), "--chunks", str(chunks)],
        ["pipeline", "--extractions", str(ref), "--chunks", str(chunks)],
        ["report-day", "--extractions", str(ref), "--chunks", str(chunks)],
        ["run", str(config), "--out", str(tmp_path / "r")],
        ["stats", str(run_dir)],
        ["report", str(run_dir)],
        ["compare", str(run_dir), str(run_dir)],
        ["audit", "--reference", str(ref), "--chunks", str(chunks)],
        [
            "structbench",
            "score",
            "--predictions",
            str(demo_dir / "structbench" / "predictions" / "rule_baseline.jsonl"),
        ],
    ]
    for argv in commands:
        if argv[0] != "schema":
            argv = [*argv, "--format", "json"]
        data = _json_of(argv)
        assert isinstance(data, dict | list), argv
