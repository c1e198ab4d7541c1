"""Mistakes a stranger made on a fresh install: each is one exact line and exit 2 (or the
promised exit), never a traceback, never data dropped or changed without a word.

Found by running every command of the README from a fresh clone (no extras) against bad
input; each row here failed before its fix.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from test_cli_errors import EXAMPLES, RUN_YAML, assert_one_error_line, chatledger


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for name in ("chunks.jsonl", "reference.jsonl", "challenger.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    (tmp_path / "run.yaml").write_text(RUN_YAML, encoding="utf-8")
    return tmp_path


def _only_error(result_err: str) -> str:
    lines = [line for line in result_err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


# --- a key written twice: YAML and JSON keep the last one silently ---------------------------


def test_a_gate_rule_written_twice_is_refused_not_overwritten(work: Path) -> None:
    # Before: the second `overall` replaced the first, the max_drop rule vanished and the
    # gate passed (exit 0) on the min rule alone.
    (work / "gate.yaml").write_text(
        "overall: {max_drop: 0.02}\nlayers.extraction: {min: 0.1}\noverall: {min: 0.1}\n",
        encoding="utf-8",
    )
    result = chatledger("gate", "r", "r", "--rules", "gate.yaml", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: gate.yaml:3:1: duplicate key 'overall' (first on line 1)"
    )


def test_a_run_config_key_written_twice_is_refused(work: Path) -> None:
    # Before: the second `challengers:` replaced the first list without a word.
    (work / "run.yaml").write_text(
        RUN_YAML + "challengers:\n  - {file: reference.jsonl, name: other}\n", encoding="utf-8"
    )
    result = chatledger("run", "run.yaml", "--out", "r", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: run.yaml:8:1: duplicate key 'challengers' (first on line 4)"
    )


def test_a_nested_duplicate_key_names_its_own_line(work: Path) -> None:
    (work / "run.yaml").write_text(
        RUN_YAML.replace(
            "stats: {bootstrap_resamples: 200}",
            "stats:\n  bootstrap_resamples: 200\n  bootstrap_resamples: 5",
        ),
        encoding="utf-8",
    )
    result = chatledger("run", "run.yaml", "--out", "r", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: run.yaml:9:3: duplicate key 'bootstrap_resamples' (first on line 8)"
    )


def test_a_json_gate_rules_file_with_a_key_twice_is_refused(work: Path) -> None:
    (work / "gate.json").write_text(
        json.dumps({"overall": {"max_drop": 0.02}})[:-1] + ', "overall": {"min": 0.1}}',
        encoding="utf-8",
    )
    result = chatledger("gate", "r", "r", "--rules", "gate.json", cwd=work)
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == "error: gate.json: duplicate key 'overall'"


# --- wording -----------------------------------------------------------------------------------


def test_a_truncated_chunks_line_reads_once_at(work: Path) -> None:
    # Before: "not valid JSON (Unterminated string starting at at column 85)".
    text = (work / "chunks.jsonl").read_text(encoding="utf-8")
    (work / "chunks.jsonl").write_text(text[:84] + '"abc', encoding="utf-8")
    result = chatledger(
        "score", "--reference", "reference.jsonl", "--challenger", "challenger.jsonl",
        "--chunks", "chunks.jsonl", cwd=work,
    )  # fmt: skip
    assert_one_error_line(result, 2)
    assert _only_error(result.err) == (
        "error: chunks.jsonl:1: not valid JSON (Unterminated string starting at column 85)"
    )
