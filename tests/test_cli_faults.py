"""Faults a user does not cause: Ctrl-C, a read-only folder, a full disk. Each ends with one line
and an honest exit code (130 interrupted, 1 environment), and leaves every file whole: an
interrupted extraction resumes without repeating a finished call, and a failed write never
replaces a good file with half of one."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply
from fakes.scripted_models import openai_extractor, write_chunks
from test_cli_errors import RUN_YAML, _copy_examples, assert_one_error_line, chatledger

IS_ROOT = os.geteuid() == 0


def start(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    environment = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    environment.update(env or {})
    return subprocess.Popen(
        [sys.executable, "-m", "chatledger", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def wait_for_lines(path: Path, n: int, process: subprocess.Popen[str], limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text(encoding="utf-8").count("\n") >= n:
            return
        if process.poll() is not None:
            raise AssertionError(f"ended early: {process.communicate()}")
        time.sleep(0.05)
    raise AssertionError(f"{path} never had {n} line(s)")


@pytest.fixture
def slow_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        fake.always(OPENAI_PATH, Reply(body=openai_extractor(), delay_s=0.4))
        yield fake


@pytest.fixture
def stalling_server() -> Iterator[FakeLLMServer]:
    """Two quick answers, then none until :func:`unstall`: the command is surely still
    extracting when the test's Ctrl-C arrives, however late a loaded machine delivers it (with
    every call 0.4 s, a full run on a busy machine finished first and exited 0)."""
    with FakeLLMServer() as fake:
        quick = Reply(body=openai_extractor(), delay_s=0.1)
        fake.script(OPENAI_PATH, quick, quick)
        fake.always(OPENAI_PATH, Reply(body=openai_extractor(), delay_s=600))
        yield fake


def unstall(server: FakeLLMServer) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))


def test_ctrl_c_during_extract_exits_130_and_a_rerun_repeats_no_finished_call(
    stalling_server: FakeLLMServer, tmp_path: Path
) -> None:
    write_chunks(tmp_path / "chunks.jsonl", 8)
    model = f"openai-compatible:{stalling_server.url}/v1:fake"
    args = ("extract", "--model", model, "--chunks", "chunks.jsonl", "--out", "out.jsonl",
            "--cache-dir", "cache", "--concurrency", "1")  # fmt: skip
    process = start(*args, cwd=tmp_path)
    wait_for_lines(tmp_path / "out.jsonl", 2, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    result_lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert result_lines[0].startswith("error: interrupted:") and "out.jsonl" in result_lines[0]
    assert result_lines[-1].startswith("hint: ") and "resume" in result_lines[-1]
    written = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    finished = {json.loads(line)["chunk_id"] for line in written}  # every line is whole JSON
    assert 2 <= len(finished) < 8
    calls_before = stalling_server.calls()
    unstall(stalling_server)

    rerun = chatledger(*args, "--format", "json", cwd=tmp_path)
    assert rerun.code == 0, rerun.err
    summary = json.loads(rerun.out)
    assert summary["already_done"] == len(finished)
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["chunk_id"] for line in lines) == [
        f"ex-1-d{i}" for i in range(8)
    ]
    # The rerun asked only for what was not written; a call that finished after Ctrl-C but
    # before its line was written is answered by the cache, not the server.
    new_calls = stalling_server.calls() - calls_before
    assert new_calls <= 8 - len(finished)
    assert summary["live_calls"] == new_calls


def test_ctrl_c_during_run_exits_130_and_the_rerun_finishes(
    stalling_server: FakeLLMServer, tmp_path: Path
) -> None:
    write_chunks(tmp_path / "chunks.jsonl", 6)
    (tmp_path / "reference.jsonl").write_text(
        "".join(
            json.dumps({"chunk_id": f"ex-1-d{i}", "model": "gold", "extraction": {}}) + "\n"
            for i in range(6)
        ),
        encoding="utf-8",
    )
    model = f"openai-compatible:{stalling_server.url}/v1:fake"
    config = (
        "chunks: chunks.jsonl\nreference: {file: reference.jsonl, name: gold}\n"
        f"challengers:\n  - {{model: '{model}', name: cheap}}\n"
        "layers: [extraction]\ncache_dir: cache\nconcurrency: 1\n"
        "stats: {bootstrap_resamples: 100}\n"
    )
    (tmp_path / "run.yaml").write_text(config, encoding="utf-8")
    process = start("run", "run.yaml", "--out", "run", cwd=tmp_path)
    deadline = time.monotonic() + 60
    while stalling_server.calls() < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[0].startswith("error: interrupted while") and lines[-1].startswith("hint: ")
    assert not (tmp_path / "run" / "run.json").exists()

    unstall(stalling_server)
    finished = chatledger("run", "run.yaml", "--out", "run", "--format", "json", cwd=tmp_path)
    assert finished.code == 0, finished.err
    assert json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))["models"]


def test_sigterm_is_an_interruption_too(slow_server: FakeLLMServer, tmp_path: Path) -> None:
    # 30 chunks at 0.4 s each: still extracting when the signal comes, however busy the machine.
    write_chunks(tmp_path / "chunks.jsonl", 30)
    model = f"openai-compatible:{slow_server.url}/v1:fake"
    process = start(
        "extract", "--model", model, "--chunks", "chunks.jsonl", "--out", "out.jsonl",
        "--cache-dir", "cache", "--concurrency", "1", cwd=tmp_path,
    )  # fmt: skip
    wait_for_lines(tmp_path / "out.jsonl", 1, process)
    process.terminate()
    _, err = process.communicate(timeout=60)
    # Stopped as Ctrl-C stops it, but told apart by the status a SIGTERM gives: 128 + 15.
    assert process.returncode == 143, err
    assert err.startswith("error: interrupted:"), err


# --- a read-only folder and a full disk (real mounts when running as root) ----------------------


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _remount_read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


needs_root = pytest.mark.skipif(
    not IS_ROOT, reason="mounting a small or read-only tmpfs needs root (CI runs as root)"
)


@needs_root
def test_a_read_only_out_folder_is_one_line_exit_1(tmp_path: Path) -> None:
    _copy_examples(tmp_path)
    (tmp_path / "run.yaml").write_text(RUN_YAML, encoding="utf-8")
    with tmpfs(tmp_path / "ro", "1m") as ro:
        _remount_read_only(ro)
        result = chatledger("run", "run.yaml", "--out", "ro/run", cwd=tmp_path)
        assert_one_error_line(result, 1, "ro/run", "Read-only file system")
        generated = chatledger("structbench", "generate", "--n", "3", "--out", "ro/e.jsonl",
                               cwd=tmp_path)  # fmt: skip
        assert_one_error_line(generated, 1, "Read-only file system")


@needs_root
def test_a_read_only_cache_folder_is_one_line_exit_1(tmp_path: Path) -> None:
    _copy_examples(tmp_path)
    with tmpfs(tmp_path / "ro", "1m") as ro:
        _remount_read_only(ro)
        result = chatledger(
            "extract", "--model", "openai-compatible:http://127.0.0.1:9/v1:m", "--chunks",
            "chunks.jsonl", "--out", "out.jsonl", "--cache-dir", "ro/cache", cwd=tmp_path,
        )  # fmt: skip
        assert_one_error_line(result, 1, "ro/cache")


@needs_root
def test_a_full_disk_leaves_no_half_file(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "tiny", "64k"):
        result = chatledger(
            "structbench", "generate", "--n", "200", "--out", "tiny/e.jsonl", cwd=tmp_path
        )
        assert_one_error_line(result, 1, "tiny/e.jsonl", "No space left on device")
        assert list((tmp_path / "tiny").iterdir()) == []


@needs_root
def test_a_full_disk_during_extract_names_the_file(tmp_path: Path) -> None:
    _copy_examples(tmp_path)
    with tmpfs(tmp_path / "tiny", "64k") as tiny:
        with (tiny / "filler").open("wb", buffering=0) as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        result = chatledger(
            "extract", "--model", "offline:rules", "--chunks", "chunks.jsonl",
            "--out", "tiny/out.jsonl", cwd=tmp_path,
        )  # fmt: skip
        assert_one_error_line(result, 1, "tiny/out.jsonl", "No space left on device")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (the kept stages included) → its hash."""
    return {str(p.relative_to(folder)): _sha(p) for p in folder.rglob("*") if p.is_file()}


@needs_root
def test_a_full_disk_during_run_keeps_the_previous_report(tmp_path: Path) -> None:
    _copy_examples(tmp_path)
    (tmp_path / "run.yaml").write_text(RUN_YAML, encoding="utf-8")
    with tmpfs(tmp_path / "disk", "40m") as disk:
        first = chatledger("run", "run.yaml", "--out", "disk/run", cwd=tmp_path)
        assert first.code == 0, first.err
        report = disk / "run" / "report.html"
        before = _tree(disk / "run")
        # Fill the disk: the second run's files no longer fit.
        with (disk / "filler").open("wb") as filler, contextlib.suppress(OSError):
            while True:
                filler.write(b"\0" * 1_048_576)
                filler.flush()
        again = chatledger("run", "run.yaml", "--out", "disk/run", cwd=tmp_path)
        assert_one_error_line(again, 1, "No space left on device")
        after = _tree(disk / "run")
        assert after == before  # every file is the old, whole one; no .part file is left
        assert report.read_text(encoding="utf-8").rstrip().endswith("</html>")


def test_a_corrupt_cache_database_is_one_line_exit_1(tmp_path: Path) -> None:
    _copy_examples(tmp_path)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "completions.sqlite3").write_bytes(b"not a database\n" * 100)
    result = chatledger(
        "extract", "--model", "openai-compatible:http://127.0.0.1:9/v1:m", "--chunks",
        "chunks.jsonl", "--out", "out.jsonl", "--cache-dir", "cache", cwd=tmp_path,
    )  # fmt: skip
    assert_one_error_line(result, 1, "cache/completions.sqlite3", "cannot open the call cache")
    assert result.err_lines[1].startswith("hint: move the file away")
    assert not (tmp_path / "out.jsonl").exists()


def test_a_server_over_reporting_usage_is_billed_at_most_max_tokens(tmp_path: Path) -> None:
    # Output at $10 per Mtok. The server claims 1,000,000 output tokens ($10) for a request
    # that allowed 1,000 ($0.01): billed $0.01, the line says why, and the $0.10 cap holds.
    _copy_examples(tmp_path)
    prices = {"openai-compatible:*": {"input": 0.0, "output": 10.0}}
    (tmp_path / "prices.json").write_text(json.dumps(prices), encoding="utf-8")
    with FakeLLMServer() as server:
        server.always(OPENAI_PATH, Reply(body=openai_extractor(completion_tokens=1_000_000)))
        result = chatledger(
            "extract", "--model", f"openai-compatible:{server.url}/v1:fake", "--chunks",
            "chunks.jsonl", "--out", "out.jsonl", "--cache-dir", "cache", "--prices",
            "prices.json", "--max-tokens", "1000", "--budget-usd", "0.10", "--format", "json",
            cwd=tmp_path,
        )  # fmt: skip
    assert result.code == 0, result.err
    assert json.loads(result.out)["billed_usd"] == pytest.approx(0.01)
    (line,) = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    usage = json.loads(line)["usage"]
    assert usage["output_tokens"] == 1000 and usage["billed_usd"] == pytest.approx(0.01)
    assert any("1000000 output tokens reported" in w for w in usage["warnings"])


# --- a server that is not there; outputs only once there is something to write (issue 31) ------


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_connection_is_one_line_naming_the_url_after_one_retry(tmp_path: Path) -> None:
    _copy_examples(tmp_path)
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = chatledger(
        "extract", "--model", f"openai-compatible:{url}:m", "--chunks", "chunks.jsonl",
        "--out", "out/x.jsonl", "--cache-dir", "cache", "--max-attempts", "5", cwd=tmp_path,
    )  # fmt: skip
    assert_one_error_line(result, 1, f"nothing is listening at {url} (connection refused)")
    assert "chatledger serve-local MODEL" in result.err_lines[1]
    # Two tries of the first chunk (not five), and no other chunk tried: the run stopped.
    assert result.err.count("retrying") == 0  # warnings go to the log, not to stderr
    assert not (tmp_path / "out" / "x.jsonl").exists()  # nothing to write: no empty file


def test_a_refused_connection_is_tried_twice_not_max_attempts() -> None:
    import asyncio

    from chatledger.providers import CallSettings, CompletionRequest, OpenAICompatibleProvider
    from chatledger.providers._errors import ServerUnreachableError

    url = f"http://127.0.0.1:{free_port()}/v1"
    sent: list[int] = []
    provider = OpenAICompatibleProvider(
        base_url=url,
        settings=CallSettings(max_attempts=5, backoff_initial_s=0.01, backoff_max_s=0.02),
    )
    send = provider._send

    async def counting(call: object) -> object:
        sent.append(1)
        return await send(call)  # type: ignore[arg-type]

    provider._send = counting  # type: ignore[method-assign]

    async def go() -> None:
        async with provider:
            await provider.complete(
                CompletionRequest.from_prompt(f"openai-compatible:{url}:m", "q")
            )

    with pytest.raises(ServerUnreachableError, match="nothing is listening at") as refused:
        asyncio.run(go())
    assert len(sent) == 2
    assert refused.value.exit_code == 1


def test_a_secret_in_a_query_string_is_never_echoed(tmp_path: Path) -> None:
    _copy_examples(tmp_path)
    model = "openai-compatible:http://127.0.0.1:9/v1?key=sk-SECRET-0451&x=1:m"
    result = chatledger(
        "extract", "--model", model, "--chunks", "chunks.jsonl", "--out", "x.jsonl", cwd=tmp_path
    )
    assert_one_error_line(result, 2, "/v1?key=***&x=***")
    assert "SECRET-0451" not in result.err + result.out


def test_extract_without_a_key_leaves_no_file_and_run_no_empty_folder(tmp_path: Path) -> None:
    _copy_examples(tmp_path)
    result = chatledger(
        "extract", "--model", "openai:gpt-5.2", "--chunks", "chunks.jsonl",
        "--out", "x.jsonl", "--cache-dir", "cache", cwd=tmp_path,
    )  # fmt: skip
    assert_one_error_line(result, 2, "OPENAI_API_KEY is not set")
    assert not (tmp_path / "x.jsonl").exists()
    config = RUN_YAML.replace(
        "{file: challenger.jsonl, name: cheap}", "{model: openai:gpt-5.2, name: paid}"
    )
    assert config != RUN_YAML
    (tmp_path / "run.yaml").write_text(config, encoding="utf-8")
    ran = chatledger("run", "run.yaml", "--out", "run", cwd=tmp_path)
    assert ran.code == 2, ran.err
    assert not (tmp_path / "run" / "extractions").exists()


def test_a_piped_leaderboard_cuts_no_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped (no terminal, no COLUMNS), the leaderboard is as wide as its content: rich fitted
    it to 80 columns and cut headers and values ("extrac…", "0.8…")."""
    monkeypatch.delenv("COLUMNS", raising=False)
    _copy_examples(tmp_path)
    config = RUN_YAML.replace(
        "{file: challenger.jsonl, name: cheap}",
        "{file: challenger.jsonl, name: a-challenger-with-a-rather-long-name}\n"
        "  - {model: offline:rules}",
    )
    (tmp_path / "run.yaml").write_text(config, encoding="utf-8")
    result = chatledger("run", "run.yaml", "--out", "run", cwd=tmp_path)
    assert result.code == 0, result.err
    table = result.out.split("layer weights")[0]
    header = next(line for line in table.splitlines() if "model" in line)
    assert "…" not in table
    assert all(word in header for word in ("overall", "extraction", "downstream", "$/chunk"))
    assert max(len(line) for line in table.splitlines()) > 80
