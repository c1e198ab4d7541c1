"""``chatledger structbench`` commands, and ``structbench run`` over real HTTP against the
scripted OpenAI-compatible server in tests/fakes (127.0.0.1 only)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.cli._app import main
from chatledger.structbench import (
    STRATEGIES,
    generate_documents,
    read_dataset,
    read_predictions,
    write_dataset,
)
from chatledger.structbench.prompting._prompts import FACTS_SYSTEM
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body

TOP_KEYS = ("DOC", "MK", "MV", "WV", "n", "by_depth")


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "emails.jsonl"
    write_dataset(generate_documents(8, seed=3), path)
    return path


def test_generate_writes_a_readable_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "d.jsonl"
    code, stdout, _ = run_cli(
        capsys,
        "structbench",
        "generate",
        "--n",
        "10",
        "--seed",
        "5",
        "--out",
        str(out),
        "--format",
        "json",
    )
    assert code == 0
    info = json.loads(stdout)
    assert info["n"] == 10 and info["seed"] == 5
    # 10 documents cycle 7 kinds: indices 0–6 at depth 1, 7–9 at depth 2.
    assert info["by_depth"] == {"1": 7, "2": 3}
    assert len(read_dataset(out)) == 10


def test_score_prints_the_specified_json(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    documents = read_dataset(dataset)
    predictions = tmp_path / "p.jsonl"
    lines = [{"id": d.id, "output": json.dumps(d.ground_truth)} for d in documents[:6]]
    lines[0]["output"] = "```json\n" + lines[0]["output"] + "\n```"
    lines[1]["output"] = lines[1]["output"][:25]  # truncated
    predictions.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    code, stdout, _ = run_cli(
        capsys,
        "structbench",
        "score",
        "--dataset",
        str(dataset),
        "--predictions",
        str(predictions),
        "--format",
        "json",
        "--resamples",
        "50",
    )
    assert code == 0
    out = json.loads(stdout)
    assert list(out)[:6] == list(TOP_KEYS)
    # 8 documents: 5 exact (one fenced), 1 truncated, 2 without a prediction.
    assert out["n"] == 8
    assert out["DOC"] == out["MV"] == out["MK"] == out["WV"] == 5 / 8
    assert out["bad_output_counts"]["fenced"] == 1
    assert out["bad_output_counts"]["truncated"] == 1
    assert out["bad_output_counts"]["missing"] == 2
    assert set(out["intervals"]) >= {"DOC", "MK", "MV", "WV"}
    assert "micro_f1" in out and "by_strategy" not in out


def test_score_records_a_bad_predictions_line_and_goes_on(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Predictions are model output: a line without "output" is counted and named, not fatal.
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"id": "x"}\n', encoding="utf-8")
    args = ("structbench", "score", "--dataset", str(dataset), "--predictions", str(predictions))
    code, stdout, _ = run_cli(capsys, *args, "--format", "json", "--resamples", "0")
    assert code == 0
    out = json.loads(stdout)
    assert out["invalid_lines"] == 1
    assert out["problems"] == [
        f"{predictions}:1 [output]: missing or not a string (the raw model text) (document 'x')"
    ]
    assert out["bad_output_counts"]["missing"] == out["n"]  # nothing usable: all missing
    code, stdout, _ = run_cli(capsys, *args, "--resamples", "0")
    assert code == 0
    assert "1 unusable line(s), scored as missing; first: " in stdout
    assert "p.jsonl:1 [output]" in stdout


def test_baseline_writes_predictions_and_scores_them(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "base.jsonl"
    code, stdout, _ = run_cli(
        capsys,
        "structbench",
        "baseline",
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--format",
        "json",
        "--resamples",
        "0",
    )
    assert code == 0
    report = json.loads(stdout)
    assert report["n"] == 8
    assert 0.0 < report["MV"] < 1.0
    assert set(report["by_strategy"]) == {"rule_baseline"}
    assert {p.strategy for p in read_predictions(out)} == {"rule_baseline"}


# --- structbench run against the fake OpenAI-compatible server ---------------------------------


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
        monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(tmp_path / "cache"))
        yield fake


def answering(dataset: Path) -> Any:
    """A model that knows the answers: it finds the email (or the two-step facts) in the prompt
    and replies with the ground truth — fenced when no schema was sent, to exercise parsing."""
    documents = read_dataset(dataset)

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        prompt = messages[-1]["content"]
        if messages[0]["content"] == FACTS_SYSTEM:
            document = next(d for d in documents if d.input in prompt)
            return openai_body(f"document: {document.id}")
        document = next(d for d in documents if d.input in prompt or f"document: {d.id}" in prompt)
        answer = json.dumps(document.ground_truth)
        if "response_format" not in body and "validates against" not in prompt:
            answer = f"```json\n{answer}\n```"
        return openai_body(answer)

    return reply


@pytest.mark.parametrize("strategy", STRATEGIES.names())
def test_run_each_strategy_over_http(
    strategy: str,
    server: FakeLLMServer,
    dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.script(OPENAI_PATH, *[Reply(body=answering(dataset)) for _ in range(20)])
    out = tmp_path / f"{strategy}.jsonl"
    model = f"openai-compatible:{server.url}/v1:qwen3"
    code, stdout, stderr = run_cli(
        capsys,
        "structbench",
        "run",
        "--model",
        model,
        "--strategy",
        strategy,
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--limit",
        "3",
        "--format",
        "json",
        "--resamples",
        "0",
    )
    assert code == 0, stderr
    report = json.loads(stdout)
    assert report["n"] == 3
    assert (report["DOC"], report["MK"], report["MV"], report["WV"]) == (1.0, 1.0, 1.0, 1.0)
    predictions = read_predictions(out)
    assert [p.strategy for p in predictions] == [strategy] * 3
    assert all(p.model == model for p in predictions)
    bodies = server.bodies(OPENAI_PATH)
    calls_per_document = 2 if strategy == "two_step" else 1
    assert len(bodies) == 3 * calls_per_document
    first = bodies[0]
    if strategy == "provider_schema":
        assert first["response_format"]["type"] == "json_schema"
    else:
        assert "response_format" not in first
    if strategy == "one_shot":
        assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant", "user"]
    if strategy == "zero_shot":
        assert report["bad_output_counts"]["fenced"] == 3
        assert "JSON Schema" not in first["messages"][-1]["content"]


def test_run_counts_a_failed_call_as_missing(
    server: FakeLLMServer, dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One good answer, then the server answers 400 (not retried) for the second document.
    server.script(
        OPENAI_PATH,
        Reply(body=answering(dataset)),
        Reply(status=400, body={"error": {"message": "bad request"}}),
    )
    model = f"openai-compatible:{server.url}/v1:qwen3"
    code, stdout, stderr = run_cli(
        capsys,
        "structbench",
        "run",
        "--model",
        model,
        "--strategy",
        "schema_in_prompt",
        "--dataset",
        str(dataset),
        "--out",
        str(tmp_path / "p.jsonl"),
        "--limit",
        "2",
        "--concurrency",
        "1",
        "--format",
        "json",
        "--resamples",
        "0",
    )
    # The scores are printed, then the run ends with exit 1: a call failed and a rerun retries.
    assert code == 1
    report = json.loads(stdout)
    assert report["n"] == 2 and report["MV"] == 0.5
    assert report["bad_output_counts"]["missing"] == 1
    assert "got no answer" in stderr


def test_run_rejects_an_unknown_strategy(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run_cli(
        capsys,
        "structbench",
        "run",
        "--model",
        "openai:gpt-5.2",
        "--strategy",
        "telepathy",
        "--dataset",
        str(dataset),
        "--out",
        "unused.jsonl",
    )
    assert code == 2
    assert "telepathy" in stderr and "[strategy]" in stderr
