"""``--batch`` on the command line (extract, run, structbench run) against the fake server's batch
endpoints on 127.0.0.1, including a real SIGKILL of an extraction while it polls its batch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.cli._app import main
from chatledger.core import ExtractionV3
from fakes.llm_server import OPENAI_PATH, BatchPlan, FakeLLMServer, Reply, sdk_server
from fakes.scripted_models import extraction_for, openai_extractor, write_chunks

OPENAI_KEY = "sk-openai-test-CLI-BATCH-SECRET-3c7d"
ANTHROPIC_KEY = "sk-ant-test-CLI-BATCH-SECRET-81fa"
MODEL = "openai:gpt-5.2"
# The built-in price of gpt-5.2: $1.75 in / $14 out per million, half in a batch. Each answer is
# 1000 in / 400 out: per call 1000·1.75 + 400·14 = 7,350 per million = $0.00735; batch $0.003675.
BATCH_CALL = 0.003675


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with sdk_server(
        monkeypatch, tmp_path / "cache", anthropic_key=ANTHROPIC_KEY, openai_key=OPENAI_KEY
    ) as fake:
        fake.always(OPENAI_PATH, Reply(body=openai_extractor(prompt_tokens=1000)))
        yield fake


def extract_args(tmp_path: Path, n_chunks: int = 6) -> list[str]:
    chunks = tmp_path / "chunks.jsonl"
    if not chunks.exists():
        write_chunks(chunks, n_chunks)
    return [
        "extract",
        "--model",
        MODEL,
        "--chunks",
        str(chunks),
        "--out",
        str(tmp_path / "out.jsonl"),
        "--batch",
        "--batch-poll",
        "0.02",
    ]


def test_extract_batch_says_it_used_batches(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.plan_batches(BatchPlan(running_polls=2))
    assert main([*extract_args(tmp_path), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["batch"] == {
        "batches": 1,
        "submitted": 1,
        "resumed": 0,
        "requests": 6,
        "succeeded": 6,
        "failed": 0,
        "price_share": 0.5,
        "per_call_endpoints": [],
    }
    assert summary["billed_usd"] == pytest.approx(6 * BATCH_CALL)
    assert server.calls(OPENAI_PATH) == 0
    # The table form of a rerun (everything is in the file: nothing to batch).
    (tmp_path / "out.jsonl").unlink()
    assert main(extract_args(tmp_path)) == 0
    table = capsys.readouterr().out
    assert "batch price" in table and "50% of list (50% discount)" in table
    assert len(server.batches) == 1  # the rerun replayed the cache


def test_extract_batch_with_failures_exits_1_in_one_line(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.plan_batches(BatchPlan(running_polls=1, errored=frozenset({0, 4})))
    assert main(extract_args(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "2 call(s) to openai:gpt-5.2 failed" in err and "Traceback" not in err
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 4
    # The rerun sends only the two in a new batch.
    assert main(extract_args(tmp_path)) == 0
    assert [len(b.requests) for b in server.batches.values()] == [6, 2]


def test_extract_batch_on_a_compatible_server_falls_back(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = extract_args(tmp_path, n_chunks=2)
    args[2] = f"openai-compatible:{server.url}/v1:local"
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "off: no batch API" in captured.out
    assert server.calls(OPENAI_PATH) == 2 and not server.batches


def test_a_kill_while_polling_resumes_without_resubmitting(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """SIGKILL ``chatledger extract --batch`` while its batch is in progress; the same
    command again creates no batch and no upload, polls the one it had submitted, and writes
    the same lines a per-call run would."""
    server.plan_batches(BatchPlan(running_polls=10**6))  # runs until the test ends it
    argv = [sys.executable, "-m", "chatledger", *extract_args(tmp_path), "--format", "json"]
    env = dict(os.environ)
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            batches = list(server.batches.values())
            if batches and batches[0].polls >= 3:
                break
            time.sleep(0.02)
        else:
            raise AssertionError("the batch was never polled")
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
    assert process.returncode == -signal.SIGKILL
    out = tmp_path / "out.jsonl"
    assert not out.exists() or out.read_text() == ""
    (batch,) = server.batches.values()
    uploads, creates = server.calls("/v1/files"), server.calls("/v1/batches")
    assert (uploads, creates) == (1, 1)

    batch.finish_now()
    rerun = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    summary: dict[str, Any] = json.loads(rerun.stdout)
    assert summary["batch"]["submitted"] == 0 and summary["batch"]["resumed"] == 1
    assert summary["written"] == 6 and summary["billed_usd"] == pytest.approx(6 * BATCH_CALL)
    assert len(server.batches) == 1
    assert (server.calls("/v1/files"), server.calls("/v1/batches")) == (1, 1)
    assert server.calls(OPENAI_PATH) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line["chunk_id"] for line in lines) == [f"ex-1-d{i}" for i in range(6)]
    for line in lines:  # what the server answered for that chunk, as a per-call run writes it
        expected = ExtractionV3.model_validate(extraction_for(line["chunk_id"]))
        assert line["extraction"] == expected.model_dump(mode="json")
    # No key in anything written (cache database, extraction file, output).
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert OPENAI_KEY.encode() not in data and ANTHROPIC_KEY.encode() not in data, path
    assert OPENAI_KEY not in rerun.stdout + rerun.stderr


def test_structbench_run_batch(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.always(
        OPENAI_PATH,
        Reply(body=lambda b: _chat('{"name": "x"}')),
    )
    code = main(
        [
            "structbench",
            "run",
            "--model",
            MODEL,
            "--strategy",
            "zero_shot",
            "--out",
            str(tmp_path / "pred.jsonl"),
            "--limit",
            "5",
            "--resamples",
            "10",
            "--batch",
            "--batch-poll",
            "0.02",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    (batch,) = server.batches.values()
    assert len(batch.requests) == 5  # all five documents in one batch, not four at a time
    assert "batch mode: batches (submitted + resumed) 1 (1 + 0)" in captured.out
    assert server.calls(OPENAI_PATH) == 0


def _chat(content: str) -> dict[str, Any]:
    from fakes.llm_server import openai_body

    return openai_body(content, prompt_tokens=1000, completion_tokens=400)


@pytest.mark.parametrize("how", ["config", "flag"])
def test_run_in_batch_mode(server: FakeLLMServer, tmp_path: Path, how: str) -> None:
    """``batch: true`` in the run config, or ``chatledger run --batch``."""
    write_chunks(tmp_path / "chunks.jsonl", 3)
    config = {
        "chunks": "chunks.jsonl",
        "reference": {"model": MODEL, "name": "ref"},
        "challengers": [{"model": "openai:gpt-5-mini", "name": "mini"}],
        "cache_dir": "cache",
        "batch_poll_s": 0.02,
        "stats": {"bootstrap_resamples": 100, "dirichlet_draws": 100},
    }
    if how == "config":
        config["batch"] = True
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    flag = ["--batch"] if how == "flag" else []
    out = str(tmp_path / "out")
    assert main(["run", str(path), "--out", out, "--no-report", "--format", "json", *flag]) == 0
    # One batch per model (OpenAI's rule), three requests each, nothing sent per call.
    assert sorted(len(b.requests) for b in server.batches.values()) == [3, 3]
    assert server.calls(OPENAI_PATH) == 0
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    # gpt-5.2 at half price: 3 × $0.003675; gpt-5-mini ($0.25 / $2): 1000·0.125 + 400·1
    # = 525 per million = $0.000525 a call, 3 × = $0.001575.
    assert run["reference"]["usage"]["cost_usd"] == pytest.approx(3 * BATCH_CALL)
    assert run["model_calls"]["spent_usd"] == pytest.approx(3 * BATCH_CALL + 3 * 0.000525)
