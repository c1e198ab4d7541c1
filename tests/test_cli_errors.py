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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply
from fakes.scripted_models import openai_extractor

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "examples"


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def chatledger(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    preexec_fn: Callable[[], object] | None = None,
) -> Outcome:
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
        preexec_fn=preexec_fn,
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
    """``args`` may say ``{w}`` for the work folder and ``{url}`` for the fake model server
    (whose replies ``serve`` scripts). A row with ``code`` 0 is input the tool promises to
    take — a bad line recorded and counted, not refused — and ``check`` reads its output."""

    args: tuple[str, ...]
    code: int
    says: tuple[str, ...] = ()
    setup: Callable[[Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    check: Callable[[Outcome, Path], None] | None = None
    serve: Callable[[FakeLLMServer], None] | None = None


SCORE = ("score", "--reference", "reference.jsonl", "--challenger", "challenger.jsonl")
SCORE_JSON = (*SCORE, "--chunks", "chunks.jsonl", "--format", "json")
REFERENCE_LINE = (EXAMPLES / "reference.jsonl").read_text(encoding="utf-8")


def _challenger(text: str | bytes) -> Callable[[Path], None]:
    return lambda w: _write(w / "challenger.jsonl", text)


def _recorded(invalid: int, problem: str, **counts: Any) -> Callable[[Outcome, Path], None]:
    """The line was scored as invalid (or its problem counted), named ``file:line``."""

    def check(result: Outcome, work: Path) -> None:
        report = json.loads(result.out)
        assert report["invalid"] == invalid
        assert any(problem in str(p) for p in report["problems"]), report["problems"]
        for key, value in counts.items():
            assert report[key] == value, (key, report[key])

    return check


def _reported_once(problem: str) -> Callable[[Outcome, Path], None]:
    """The line is the one problem of the file: not named again as an unknown chunk (its id
    is not UTF-8 either), and its chunk is missing."""

    def check(result: Outcome, work: Path) -> None:
        report = json.loads(result.out)
        assert report["problems"] == [problem]
        assert (report["invalid"], report["missing"]) == (0, 1)

    return check


def _long_chunk(work: Path) -> None:
    messages = [{"id": f"m-{i}", "speaker": "Ana", "text": f"note {i}"} for i in range(2001)]
    chunk = {"chunk_id": "long", "participants": ["Ana"], "messages": messages}
    _write(work / "chunks.jsonl", json.dumps(chunk) + "\n")
    line = json.dumps({"chunk_id": "long", "model": "m", "extraction": {"summary": "notes"}})
    _write(work / "reference.jsonl", line + "\n")
    _write(work / "challenger.jsonl", line + "\n")


def _config(text: str) -> Callable[[Path], None]:
    return lambda w: _write(w / "bad.yaml", text)


MINIMAL_CONFIG = "chunks: chunks.jsonl\nreference: {file: reference.jsonl}\n"
BOMB = MINIMAL_CONFIG + (
    "challengers: [challenger.jsonl]\nlayers: [extraction, judge]\njudges:\n"
    "  - name: grounding\n    options:\n"
    "      a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    "      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
)


def _extract(model: str, *extra: str) -> tuple[str, ...]:
    return ("extract", "--model", model, "--chunks", "chunks.jsonl", "--out", "out.jsonl",
            "--cache-dir", "cache", *extra)  # fmt: skip


FAKE = "openai-compatible:{url}/v1:fake"


def _html(server: FakeLLMServer) -> None:
    server.always(OPENAI_PATH, Reply(body="<html><body>502 gateway</body></html>"))


def _hung(server: FakeLLMServer) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor(), delay_s=30))


def _one_invalid_line(result: Outcome, work: Path) -> None:
    (line,) = (work / "out.jsonl").read_text(encoding="utf-8").splitlines()
    data = json.loads(line)
    assert data["extraction"] is None and "not JSON" in data["error"]
    assert json.loads(result.out)["invalid"] == 1


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
    # 6. loaders: a bad line of model output is recorded, counted and named; the run goes on
    "an invalid JSON escape": Case(
        SCORE_JSON,
        0,
        setup=_challenger('{"chunk_id": "c\\q", "model": "m", "extraction": {}}\n'),
        check=_recorded(0, "challenger.jsonl:1: not valid JSON (Invalid \\escape", missing=1),
    ),
    "a 5,000-digit integer": Case(
        SCORE_JSON,
        0,
        setup=_challenger(
            '{"chunk_id": "ex-1", "extraction": {}, "usage": {"input_tokens": '
            + "9" * 5000
            + "}}\n"
        ),
        check=_recorded(1, "challenger.jsonl:1: not valid JSON (a number with more than"),
    ),
    "deeply nested arrays": Case(
        SCORE_JSON,
        0,
        setup=_challenger(
            '{"chunk_id": "ex-1", "extraction": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
        ),
        check=_recorded(1, "challenger.jsonl:1: not valid JSON (nested too deeply)"),
    ),
    "invalid UTF-8 in an extraction": Case(
        SCORE_JSON,
        0,
        setup=_challenger(b'{"chunk_id": "ex-1", "extraction": {"summary": "\xff\xfe"}}\n'),
        check=_recorded(1, "challenger.jsonl:1: not UTF-8 (byte 0xff"),
    ),
    "the chunks file given as the extractions": Case(
        ("pipeline", "--extractions", "chunks.jsonl", "--chunks", "chunks.jsonl"),
        2,
        (
            "chunks.jsonl:1: a chunk line (messages, no extraction) where an extraction line is "
            'expected ({"chunk_id", "model", "extraction", "usage"}): is this the chunks file?',
        ),
    ),
    "invalid UTF-8 in an extraction's chunk id": Case(
        SCORE_JSON,
        0,
        setup=_challenger(b'{"chunk_id": "ex-1\xe9", "extraction": {"summary": "x"}}\n'),
        check=_reported_once("challenger.jsonl:1: not UTF-8 (byte 0xe9 at byte 19)"),
    ),
    "a UTF-8 BOM in an extraction file": Case(
        SCORE_JSON,
        0,
        setup=_challenger(b"\xef\xbb\xbf" + REFERENCE_LINE.encode()),
        check=lambda r, w: json.loads(r.out)["extraction_composite"] == 1.0 or AssertionError(),
    ),
    "message ids that are not in the chunk": Case(
        SCORE_JSON,
        0,
        setup=_challenger(REFERENCE_LINE.replace('"ex1-m3"', '"m-99"')),
        check=_recorded(0, "[extraction.decisions.0.evidence.0]: message id 'm-99' is not in"),
    ),
    "a reference chunk missing from the chunks file": Case(
        SCORE_JSON,
        0,
        setup=lambda w: _write(
            w / "reference.jsonl", REFERENCE_LINE + REFERENCE_LINE.replace('"ex-1"', '"ex-9"')
        ),
        check=lambda r, w: json.loads(r.out)["unknown_chunks"] == ["ex-9"] or AssertionError(),
    ),
    # 13. a chunk too long to score quickly is scored, and said to be too long
    "a chunk over 2,000 messages": Case(
        SCORE_JSON,
        0,
        setup=_long_chunk,
        check=lambda r, w: (
            "1 chunk(s) over 2,000 messages: 'long' (2,001 messages)" in r.err
            or AssertionError(r.err)
        ),
    ),
    "invalid UTF-8 in a chunks file": Case(
        (*SCORE, "--chunks", "chunks.jsonl"),
        2,
        ("chunks.jsonl:1: not UTF-8",),
        setup=lambda w: _write(
            w / "chunks.jsonl", (EXAMPLES / "chunks.jsonl").read_bytes().replace(b"Fifth", b"\xff")
        ),
    ),
    "a reference that is a JSON array": Case(
        SCORE,
        2,
        ("reference.jsonl", "JSON array, expected JSON Lines"),
        setup=lambda w: _write(w / "reference.jsonl", "[" + REFERENCE_LINE.strip() + "]\n"),
    ),
    "NaN in a weights file": Case(
        (*SCORE, "--weights", "w.yaml"),
        2,
        ("w.yaml:1 [weights.claims]", "not a finite number"),
        setup=lambda w: _write(w / "w.yaml", "weights: {claims: .nan}\n"),
    ),
    "invalid UTF-8 in structbench predictions": Case(
        (
            "structbench",
            "score",
            "--predictions",
            "p.jsonl",
            "--resamples",
            "0",
            "--format",
            "json",
        ),
        0,
        setup=lambda w: _write(w / "p.jsonl", b'{"id": "x", "output": "\xff"}\n'),
        check=lambda r, w: "p.jsonl:1" in r.out or AssertionError(r.out[:500]),
    ),
    # 9. configs: aliases refused at load, syntax errors and bad paths in one line
    "a YAML alias bomb": Case(
        ("run", "bad.yaml"), 2, ("bad.yaml:8:10", "aliases"), setup=_config(BOMB)
    ),
    "a YAML syntax error": Case(
        ("run", "bad.yaml"),
        2,
        ("bad.yaml:3:",),
        setup=_config(MINIMAL_CONFIG.replace("reference.jsonl}", "reference.jsonl") + "x: [1\n"),
    ),
    "a NUL byte in a config path": Case(
        ("run", "bad.yaml"),
        2,
        ("bad.yaml:1 [chunks]", "NUL"),
        setup=_config('chunks: "a\\0b"\nreference: {file: reference.jsonl}\nchallengers: [x]\n'),
    ),
    "an over-long config path": Case(
        ("run", "bad.yaml"),
        2,
        ("bad.yaml:1 [chunks]", "too long"),
        setup=_config(MINIMAL_CONFIG.replace("chunks.jsonl", "a" * 5000) + "challengers: [x]\n"),
    ),
    "a ~ path is not read inside the folder": Case(
        ("run", "bad.yaml"),
        2,
        ("bad.yaml:1 [chunks]", "file not found"),
        setup=_config(
            MINIMAL_CONFIG.replace("chunks.jsonl", "~/no-such-chunks.jsonl")
            + "challengers: [challenger.jsonl]\n"
        ),
    ),
    "a path that climbs out of the config folder": Case(
        ("run", "bad.yaml"),
        2,
        ("bad.yaml:1 [chunks]", "leaves the config's folder"),
        setup=_config(
            MINIMAL_CONFIG.replace("chunks.jsonl", "../chunks.jsonl")
            + "challengers: [challenger.jsonl]\n"
        ),
    ),
    # 10. a provider fault is retried then recorded; a hung server ends; secrets are not echoed
    "a 200 whose body is HTML": Case(
        _extract(FAKE, "--format", "json", "--max-attempts", "2"),
        0,
        serve=_html,
        check=_one_invalid_line,
    ),
    "a hung server ended by --timeout": Case(
        _extract(FAKE, "--timeout", "0.5", "--max-attempts", "2"),
        1,
        ("failed", "timed out"),
        serve=_hung,
    ),
    "a model URL with credentials": Case(
        _extract("openai-compatible:http://bob:s3cret@127.0.0.1:9/v1:m"),
        2,
        ("http://***@127.0.0.1:9/v1:m",),
    ),
    # 11. offline extractors are models
    "extract --model offline:rules": Case(
        _extract("offline:rules", "--format", "json"),
        0,
        check=lambda r, w: json.loads(r.out)["written"] == 1 or AssertionError(r.out),
    ),
    "an unknown offline extractor": Case(
        _extract("offline:nope"), 2, ("unknown offline extractor 'offline:nope'", "offline:rules")
    ),
    "a run config with {model: offline:rules}": Case(
        ("run", "bad.yaml", "--out", "r", "--no-report", "--format", "json"),
        0,
        setup=_config(MINIMAL_CONFIG + "challengers: [{model: offline:rules}]\n"),
        check=lambda r, w: (
            json.loads(r.out)["leaderboard"][0]["name"] == "offline:rules" or AssertionError(r.out)
        ),
    ),
    # 12. one weight rule, stated in the error
    "consumer weights that do not sum to 1": Case(
        ("run", "bad.yaml"),
        2,
        ("bad.yaml:4 [weights.consumers]", "sum to 1.600 after merging"),
        setup=_config(
            MINIMAL_CONFIG + "challengers: [challenger.jsonl]\n"
            "weights: {consumers: {drift: 0.5, loops: 0.5}}\n"
        ),
    ),
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


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.mark.parametrize("name", list(CASES))
def test_each_mistake_is_one_line_with_its_exit_code(
    name: str, work: Path, server: FakeLLMServer
) -> None:
    case = CASES[name]
    if case.setup is not None:
        case.setup(work)
    if case.serve is not None:
        case.serve(server)
    args = [a.replace("{w}", str(work)).replace("{url}", server.url) for a in case.args]
    result = chatledger(*args, cwd=work, env=case.env)
    if case.code == 0:
        assert result.code == 0, result.err
        assert "Traceback" not in result.err
        assert case.check is not None
        case.check(result, work)
    else:
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
    # compared with itself: the same names on both sides, as a second identical run gave
    compared = chatledger("compare", "run1", "run1", cwd=work)
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


def test_a_changed_request_on_the_same_out_is_refused_in_one_line(
    work: Path, server: FakeLLMServer
) -> None:
    # Row 7: the resume key covers the request; a new --max-tokens is not mixed into the file.
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    model = FAKE.replace("{url}", server.url)
    first = chatledger(*_extract(model, "--max-tokens", "4096"), cwd=work)
    assert first.code == 0, first.err
    again = chatledger(*_extract(model, "--max-tokens", "1000"), cwd=work)
    assert_one_error_line(again, 2, "out.jsonl:1 [fingerprint.max_tokens]", "4096, not 1000")
    assert server.calls() == 1
