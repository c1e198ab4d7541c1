"""A ``local:`` model's server that stops in the middle of a run, over real HTTP (issue 31).

The server is the stand-in llama-server (tests/fakes/fake_llama_server.py, started by
ChatLedger as it starts llama-server), stopped by the test after it answered some calls of a
36-chunk ``chatledger extract``:

- its port closed while its process lives on (SIGUSR1): the run stops with one line saying the
  server ChatLedger started stopped answering after N calls — never "start the model server
  first", which is for a server the user runs — and the same command resumes after the N;
- killed (SIGKILL): ChatLedger starts another and the run finishes;
- killed, and it cannot start again: one line saying so, with N, and that a rerun resumes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chatledger.demo import write_examples
from docs_blocks import stand_in_local_models

MODEL = "local:qwen2.5-coder-0.5b"
CHUNKS = 36
ARGS = ("--chunks", "chunks.jsonl", "--out", "local.jsonl")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_examples(tmp_path)
    return tmp_path


def _env(folder: Path, calls: Path, *, before: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(stand_in_local_models(folder / "models", before=before))
    env.update(
        CHATLEDGER_CACHE_DIR=str(folder / "cache"),
        FAKE_LLAMA_CALLS=str(calls),
        FAKE_LLAMA_DELAY="0.05",  # the run is still going when the test stops the server
        COLUMNS="120",
    )
    return env


def _extract(folder: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "chatledger", "extract", "--model", MODEL, *ARGS],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stop_after(calls: Path, answered: int, process: subprocess.Popen[str], sig: int) -> int:
    """Send ``sig`` to the stand-in once the run has written ``answered`` of its answers; its
    pid. Counted in the run's output, not in the stand-in's log of calls: the stand-in logs a
    call before its answer reaches the run, so a server stopped at its log's count may have
    taken the last answer with it (seen in CI: 4 lines written after 5 calls logged)."""
    output = calls.parent / "local.jsonl"
    deadline = time.monotonic() + 120
    while not (output.is_file() and _lines(calls.parent) >= answered):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the stand-in answered too few calls"
        time.sleep(0.02)
    pid = int(Path(f"{calls}.pid").read_text())
    os.kill(pid, sig)
    return pid


def _lines(folder: Path) -> int:
    """The run's complete output lines (a line being written is not counted)."""
    return (folder / "local.jsonl").read_bytes().count(b"\n")


def test_a_server_that_stops_answering_is_reported_with_its_calls_and_a_rerun_resumes(
    folder: Path,
) -> None:
    calls = folder / "calls.log"
    process = _extract(folder, _env(folder, calls))
    _stop_after(calls, 5, process, signal.SIGUSR1)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 1, (out, err)
    written = _lines(folder)
    assert 5 <= written < CHUNKS
    assert "Traceback" not in err
    first = err.strip().splitlines()[0]
    assert f"{MODEL}: the server ChatLedger started at http://127.0.0.1:" in first, err
    assert f"stopped answering after {written} calls (connection refused)" in first, err
    assert f"the {written} calls it answered are cached: run the same command again" in err
    assert "start the model server first" not in err
    # The same command resumes after them: the rest only, with a new server.
    os.remove(calls)
    process = _extract(folder, _env(folder, calls))
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (out, err)
    assert _lines(folder) == CHUNKS
    assert len(calls.read_text().splitlines()) == CHUNKS - written


def test_a_killed_server_is_started_again_and_the_run_finishes(folder: Path) -> None:
    calls = folder / "calls.log"
    process = _extract(folder, _env(folder, calls))
    killed = _stop_after(calls, 5, process, signal.SIGKILL)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (out, err)
    assert _lines(folder) == CHUNKS
    assert int(Path(f"{calls}.pid").read_text()) != killed  # another server answered the rest


def test_a_killed_server_that_cannot_start_again_says_so(folder: Path) -> None:
    calls = folder / "calls.log"
    starts = folder / "starts"
    # The second start fails, as a model that no longer fits in memory would.
    before = (
        f'if [ -e "{starts}" ]; then echo "cannot load the model: out of memory" >&2; exit 1; fi\n'
        f'touch "{starts}"\n'
    )
    process = _extract(folder, _env(folder, calls, before=before))
    _stop_after(calls, 5, process, signal.SIGKILL)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 1, (out, err)
    written = _lines(folder)
    assert 5 <= written < CHUNKS
    assert "Traceback" not in err
    assert (
        f"{MODEL}: the server stopped after {written} calls and could not be started again" in err
    ), err
    assert "cannot load the model: out of memory" in err
    assert f"the {written} calls it answered are cached: run the same command again" in err
