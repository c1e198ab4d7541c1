"""The CLI's promise, one row per way a user (or a fault) can break it: a user mistake exits 2
with one line naming file, line and field (plus at most one hint line), an environment fault
exits 1, and nothing prints a traceback. Every row runs the real ``chatledger`` in a subprocess,
as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "examples"


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def chatledger(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Outcome:
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k != "CHATLEDGER_DEBUG"
    }
    environment.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


def assert_one_error_line(result: Outcome, code: int, *fragments: str) -> None:
    """Exit ``code``; stderr is ``error: …`` and at most one ``hint: …``; no traceback."""
    assert "Traceback" not in result.err, result.err
    assert result.code == code, (result.code, result.err)
    lines = result.err_lines
    assert 1 <= len(lines) <= 2, lines
    assert lines[0].startswith("error: "), lines
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), lines
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


# --- the files every row can use -------------------------------------------------------------


def _copy_examples(work: Path) -> None:
    for name in ("chunks.jsonl", "reference.jsonl", "challenger.jsonl"):
        shutil.copy(EXAMPLES / name, work / name)


RUN_YAML = """\
name: errors
chunks: chunks.jsonl
reference: {file: reference.jsonl, name: gold}
challengers:
  - {file: challenger.jsonl, name: cheap}
layers: [extraction, downstream]
stats: {bootstrap_resamples: 200}
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    _copy_examples(tmp_path)
    (tmp_path / "run.yaml").write_text(RUN_YAML, encoding="utf-8")
    (tmp_path / "a-file").write_text("not a folder\n", encoding="utf-8")
    return tmp_path


def _write(path: Path, text: str | bytes) -> None:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


# --- the table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """``args`` may say ``{w}`` for the work folder."""

    args: tuple[str, ...]
    code: int
    says: tuple[str, ...] = ()
    setup: Callable[[Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)


SCORE = ("score", "--reference", "reference.jsonl", "--challenger", "challenger.jsonl")

CASES: dict[str, Case] = {
    # 1. usage errors: Typer/Click's own, one line + hint, exit 2
    "score without options": Case(("score",), 2, ("Missing option '--reference'",)),
    "schema v2": Case(("schema", "v2"), 2, ("'v2' is not one of 'v1', 'v3'",)),
    "score --schema v9": Case((*SCORE, "--schema", "v9"), 2, ("'--schema'", "v9")),
    "extract --samples 0": Case(
        (
            "extract",
            "--model",
            "offline:rules",
            "--chunks",
            "chunks.jsonl",
            "--out",
            "o.jsonl",
            "--samples",
            "0",
        ),
        2,
        ("'--samples'",),
    ),
    "an unknown option": Case((*SCORE, "--bogus"), 2, ("No such option: --bogus",)),
    "an unknown command": Case(("nosuch",), 2, ("No such command 'nosuch'",)),
    "bare chatledger": Case((), 2, ("missing command", "score")),
    "bare structbench": Case(("structbench",), 2, ("missing command", "generate")),
    "structbench generate --n 0": Case(
        ("structbench", "generate", "--n", "0", "--out", "x.jsonl"), 2, ("'--n'",)
    ),
    # 4. file system mistakes: the path is named, exit 2
    "a reference that does not exist": Case(
        ("score", "--reference", "nope.jsonl", "--challenger", "challenger.jsonl"),
        2,
        ("nope.jsonl", "file not found"),
    ),
    "run --out naming a file": Case(("run", "run.yaml", "--out", "a-file"), 2, ("a-file",)),
    "structbench generate --out .": Case(
        ("structbench", "generate", "--n", "3", "--out", "."), 2, ("is a folder",)
    ),
    "corpus import --out naming a file": Case(
        ("corpus", "import", "casino", "{w}/casino.json", "--out", "a-file"),
        2,
        ("a-file",),
        setup=lambda w: _write(w / "casino.json", "[]"),
    ),
    "extract --out naming a folder": Case(
        ("extract", "--model", "offline:rules", "--chunks", "chunks.jsonl", "--out", "."),
        2,
        ("is a folder",),
    ),
    "run config not found": Case(("run", "missing.yaml"), 2, ("missing.yaml",)),
    # 12. mixing the two tasks, and a model run with no key
    "structbench run without an API key": Case(
        (
            "structbench",
            "run",
            "--model",
            "openai:gpt-5.2",
            "--strategy",
            "zero_shot",
            "--out",
            "p.jsonl",
            "--limit",
            "2",
            "--no-cache",
        ),
        2,
        ("OPENAI_API_KEY",),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_mistake_is_one_line_with_its_exit_code(name: str, work: Path) -> None:
    case = CASES[name]
    if case.setup is not None:
        case.setup(work)
    args = [a.replace("{w}", str(work)) for a in case.args]
    result = chatledger(*args, cwd=work, env=case.env)
    assert_one_error_line(result, case.code, *case.says)
    # Nothing half-written was left where the row pointed an output.
    assert not list(work.glob("**/.*.part"))


def test_a_usage_error_prints_nothing_on_stdout_but_bare_commands_show_help(work: Path) -> None:
    assert chatledger("score", cwd=work).out == ""
    bare = chatledger(cwd=work)
    assert "Usage: chatledger" in bare.out and bare.code == 2


# --- 5. rich markup in data ---------------------------------------------------------------------

EVIL = "[/bold]evil"


def _evil_challenger(work: Path) -> None:
    line = json.loads((work / "challenger.jsonl").read_text(encoding="utf-8"))
    line["model"] = EVIL
    _write(work / "challenger.jsonl", json.dumps(line) + "\n")


def test_markup_in_a_model_name_is_printed_as_written(work: Path) -> None:
    _evil_challenger(work)
    scored = chatledger(*SCORE, "--chunks", "chunks.jsonl", cwd=work)
    assert scored.code == 0, scored.err
    assert EVIL in scored.out
    (work / "run.yaml").write_text(RUN_YAML.replace(", name: cheap", ""), encoding="utf-8")
    ran = chatledger("run", "run.yaml", "--out", "run1", cwd=work)
    assert ran.code == 0, ran.err
    assert EVIL in ran.out
    again = chatledger("run", "run.yaml", "--out", "run2", cwd=work)
    assert again.code == 0, again.err
    compared = chatledger("compare", "run1", "run2", cwd=work)
    assert compared.code == 0 and EVIL in compared.out, compared.err
    stats = chatledger("stats", "run1", cwd=work)
    assert stats.code == 0 and EVIL in stats.out, stats.err
    assert "Traceback" not in scored.err + ran.err + compared.err + stats.err


def test_a_conversation_run_and_a_structbench_run_are_not_compared(work: Path) -> None:
    assert chatledger("run", "run.yaml", "--out", "conv", cwd=work).code == 0
    generated = chatledger("structbench", "generate", "--n", "7", "--out", "e.jsonl", cwd=work)
    assert generated.code == 0, generated.err
    baseline = chatledger(
        "structbench", "baseline", "--dataset", "e.jsonl", "--out", "b.jsonl",
        "--run-dir", "sb", "--resamples", "0", cwd=work,
    )  # fmt: skip
    assert baseline.code == 0, baseline.err
    result = chatledger("compare", "conv", "sb", cwd=work)
    assert_one_error_line(result, 2, "cannot compare a conversation run", "structbench run")
