"""A command imports only what it uses: ``chatledger --help`` loads none of the scoring,
report or model machinery, and each command leaves out what belongs to others (read from
``python -X importtime``, which lists every module a process imported)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "examples"
REPORT_STACK = {"plotly", "jinja2", "pyarrow", "duckdb"}
MODEL_STACK = {"openai", "anthropic", "httpx", "tenacity"}
SCORING_STACK = {"scipy", "numpy", "rapidfuzz", "pydantic", "krippendorff", "vaderSentiment"}


def imported(*args: str, cwd: Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "chatledger", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert "chatledger" in names  # the listing was read
    return names


def test_help_imports_no_machinery(tmp_path: Path) -> None:
    heavy = REPORT_STACK | MODEL_STACK | SCORING_STACK | {"yaml", "jsonschema", "json_repair"}
    assert imported("--help", cwd=tmp_path) & heavy == set()


@pytest.mark.parametrize(
    ("args", "forbidden"),
    [
        (("schema",), REPORT_STACK | MODEL_STACK | {"scipy", "numpy", "rapidfuzz"}),
        (
            (
                "score",
                "--reference",
                str(EXAMPLES / "reference.jsonl"),
                "--challenger",
                str(EXAMPLES / "challenger.jsonl"),
                "--chunks",
                str(EXAMPLES / "chunks.jsonl"),
            ),
            REPORT_STACK | MODEL_STACK,
        ),
        (
            (
                "downstream",
                "--reference",
                str(EXAMPLES / "reference.jsonl"),
                "--challenger",
                str(EXAMPLES / "challenger.jsonl"),
                "--chunks",
                str(EXAMPLES / "chunks.jsonl"),
            ),
            REPORT_STACK | MODEL_STACK,
        ),
        (
            ("structbench", "generate", "--n", "3", "--out", "e.jsonl"),
            REPORT_STACK | MODEL_STACK | {"scipy", "numpy"},
        ),
    ],
    ids=["schema", "score", "downstream", "structbench generate"],
)
def test_a_command_leaves_out_what_it_does_not_use(
    args: tuple[str, ...], forbidden: set[str], tmp_path: Path
) -> None:
    assert imported(*args, cwd=tmp_path) & forbidden == set()
