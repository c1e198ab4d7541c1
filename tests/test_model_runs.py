"""Runs that name models: extraction inside the run, cost beside quality, repeat variance, keys.

Reference and challenger are two models on the scripted server (tests/fakes, 127.0.0.1); the
reference answers with the bundled reference extraction, the challenger with the bundled
challenger extraction — except that its second sample of each chunk is the reference's, so the
repeat variance has something to measure.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.cli._app import main
from chatledger.core import InputError
from chatledger.runs import execute_run, load_run_config
from fakes.llm_server import ANTHROPIC_PATH, OPENAI_PATH, FakeLLMServer, Reply, openai_body
from fakes.scripted_models import (
    anthropic_verdict,
    asked_chunk,
    extraction_for,
    write_chunks,
)

# Inline prices for the fake server, USD per Mtok: $3 in, $15 out.
PRICES = {"openai-compatible:*": {"input": 3.0, "output": 15.0}}
# Per call: reference 2000 in / 500 out → 2000·3e-6 + 500·15e-6 = 0.006 + 0.0075 = $0.0135;
# challenger 1000 in / 200 out → 0.003 + 0.003 = $0.006.
USAGE = {"ref-model": (2000, 500), "cheap-model": (1000, 200)}


class Models:
    """The two scripted models: a per-(model, chunk) counter makes a chunk's second
    challenger request (its sample 1; one call at a time keeps samples in order) the
    reference's extraction."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        model, chunk_id = body["model"], asked_chunk(body)
        with self._lock:
            self.seen[(model, chunk_id)] += 1
            nth = self.seen[(model, chunk_id)]
        which = "challenger" if model == "cheap-model" and nth % 2 == 1 else "reference"
        tokens_in, tokens_out = USAGE[model]
        return openai_body(
            json.dumps(extraction_for(chunk_id, which)),
            prompt_tokens=tokens_in,
            completion_tokens=tokens_out,
            model=model,
        )


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
        monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(tmp_path / "default-cache"))
        yield fake


def write_config(
    tmp_path: Path, server: FakeLLMServer, *, max_tokens: int = 4096, **extra: Any
) -> Path:
    write_chunks(tmp_path / "chunks.jsonl", 3)
    config = {
        "name": "models",
        "chunks": "chunks.jsonl",
        "reference": {
            "model": f"openai-compatible:{server.url}/v1:ref-model",
            "name": "ref",
            "max_tokens": max_tokens,
        },
        "challengers": [
            {
                "model": f"openai-compatible:{server.url}/v1:cheap-model",
                "name": "cheap",
                "samples": 2,
                "prompt_style": "field-guide",
                "max_tokens": max_tokens,
            }
        ],
        "layers": ["extraction", "downstream"],
        "prices": PRICES,
        "cache_dir": "cache",
        "concurrency": 1,
        "stats": {"bootstrap_resamples": 100, "dirichlet_draws": 100},
        **extra,
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_a_run_that_names_models_extracts_then_scores(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(OPENAI_PATH, Reply(body=Models()))
    config = write_config(tmp_path, server)
    result = execute_run(load_run_config(config), tmp_path / "out")
    run = json.loads((tmp_path / "out" / "run.json").read_text())

    # 3 reference calls + 3 chunks × 2 samples of the challenger.
    assert server.calls() == 9
    extractions = tmp_path / "out" / "extractions"
    assert sorted(p.name for p in extractions.iterdir()) == ["cheap.jsonl", "ref.jsonl"]
    first_cheap = next(b for b in server.bodies(OPENAI_PATH) if b["model"] == "cheap-model")
    assert "The fields:" in first_cheap["messages"][0]["content"]  # the field-guide style
    assert run["reference"]["name"] == "ref"
    assert run["reference"]["file"] == str(extractions / "ref.jsonl")

    # Tokens, dollars and latency per model (sample 0, which is what is scored):
    # reference 3 × (2000, 500) at $0.0135 = $0.0405; challenger 3 × (1000, 200) at $0.006
    # = $0.018, and its 3 extra samples cost another $0.018.
    ref_usage = run["reference"]["usage"]
    assert (ref_usage["input_tokens"], ref_usage["output_tokens"]) == (6000, 1500)
    assert ref_usage["cost_usd"] == pytest.approx(0.0405)
    assert ref_usage["cost_per_chunk_usd"] == pytest.approx(0.0135)
    assert ref_usage["latency_s"] > 0 and ref_usage["latency_per_chunk_s"] > 0
    (cheap,) = run["models"]
    assert cheap["name"] == "cheap"
    usage = cheap["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (3000, 600)
    assert usage["cost_usd"] == pytest.approx(0.018)
    assert usage["repeat_samples_cost_usd"] == pytest.approx(0.018)
    assert usage["latency_s"] > 0 and usage["cached_chunks"] == 0
    # Everything live: 0.0405 + 0.018 + 0.018 = $0.0765 spent.
    assert run["model_calls"]["spent_usd"] == pytest.approx(0.0765)
    assert run["model_calls"]["live_calls"] == 9

    # Repeat variance of the challenger: per chunk, sample 0 (its own extraction) scores c,
    # the extraction composite against the reference; sample 1 (the reference's extraction)
    # scores r = 0.958 + 0.042·(1 − ECE) with ECE = 0.19 over the 5 confidences (0.9, 0.85,
    # 0.9 | 0.8 | 0.6, all correct: 0.07 + 0.04 + 0.08) → r = 0.958 + 0.03402 = 0.99202.
    # All chunks alike, so the variance is all within chunks: sampling share 1, mean (c + r)/2,
    # per-chunk sd |r − c|/√2.
    c = result.models[0].layers["extraction"]
    r = 0.99202
    variance = run["stats"]["repeat_variance"]["cheap"]
    assert variance["samples"] == 2 and variance["chunks"] == 3
    assert variance["against"] == "the reference"
    assert variance["per_sample_mean"] == pytest.approx([c, r])
    assert variance["mean"] == pytest.approx((c + r) / 2)
    assert variance["chunk_sd_mean"] == pytest.approx((r - c) / math.sqrt(2))
    assert variance["sampling_share"] == pytest.approx(1.0)
    assert c < 0.9  # the challenger differs from the reference

    # The same config again: every line is in place, no call at all.
    execute_run(load_run_config(config), tmp_path / "out")
    assert server.calls() == 9
    # Into a new directory: every call comes from the cache — and the model still shows what
    # it costs (list price of its tokens), with the lines marked cached.
    execute_run(load_run_config(config), tmp_path / "again")
    assert server.calls() == 9
    again = json.loads((tmp_path / "again" / "run.json").read_text())
    assert again["models"][0]["usage"]["cost_usd"] == pytest.approx(0.018)
    assert again["models"][0]["usage"]["cached_chunks"] == 3
    assert again["model_calls"]["spent_usd"] == 0.0
    assert again["models"][0]["layers"] == pytest.approx(run["models"][0]["layers"])


def test_a_run_budget_stops_extraction_and_a_rerun_finishes_it(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.always(OPENAI_PATH, Reply(body=Models()))
    # Input free, output $15/Mtok: a call's worst case is max_tokens 1000 · 15e-6 = $0.015; a
    # reference call costs 500 · 15e-6 = $0.0075. One call at a time, the reference's first
    # (its tasks queue first): call 1 needs 0 + 0.015, call 2 0.0075 + 0.015 = 0.0225 — both
    # fit under $0.025; call 3 would need 0.015 + 0.015 = 0.030 > 0.025, so it is never sent.
    prices = {"openai-compatible:*": {"input": 0.0, "output": 15.0}}
    config = write_config(tmp_path, server, max_tokens=1000, prices=prices, budget_usd=0.025)
    code = main(["run", str(config), "--out", str(tmp_path / "out"), "--format", "json"])
    err = capsys.readouterr().err
    assert code == 1  # the cap (the environment) stopped it; a rerun continues
    assert "stopped by the budget: budget cap $0.0250 would be passed" in err.replace("\n", "")
    stopped_at = server.calls()
    assert stopped_at == 2
    assert not (tmp_path / "out" / "run.json").exists()
    lines = sum(
        len(p.read_text().splitlines()) for p in (tmp_path / "out" / "extractions").iterdir()
    )
    assert lines == stopped_at  # every paid call has its line

    data = json.loads(config.read_text())
    data.pop("budget_usd")
    config.write_text(json.dumps(data))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    assert server.calls() == 9  # the rest, and nothing twice


def test_model_sources_are_checked(server: FakeLLMServer, tmp_path: Path) -> None:
    bad = [
        ({"challengers": [{"model": "gpt-5"}]}, "must start with a provider prefix"),
        (
            {"challengers": [{"model": "openai:gpt-5", "file": "x.jsonl"}]},
            "give either 'file'",
        ),
        ({"challengers": [{"model": "openai:gpt-5", "prompt_style": "x"}]}, "unknown prompt"),
        ({"challengers": [{"file": "chunks.jsonl", "samples": 3}]}, "samples only apply"),
        ({"challengers": [{"model": "openai:gpt-5", "name": "ref"}]}, "both named 'ref'"),
    ]
    for overrides, message in bad:
        config = write_config(tmp_path, server, **overrides)
        with pytest.raises(InputError, match=message):
            execute_run(load_run_config(config), tmp_path / "out")
    assert server.calls() == 0


def test_no_api_key_appears_in_any_file_a_run_writes(
    server: FakeLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    compat_key = "sk-compat-ZX81-distinctive-4431"
    anthropic_key = "sk-ant-ZX81-distinctive-9902"
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", compat_key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    caplog.set_level("DEBUG")
    server.always(OPENAI_PATH, Reply(body=Models()))
    verdict = {"content_accuracy": 70, "completeness": 70, "hallucination": 70, "items": []}
    server.always(ANTHROPIC_PATH, Reply(body=anthropic_verdict(lambda _: verdict)))

    write_chunks(tmp_path / "chunks.jsonl", 2)
    model = f"openai-compatible:{server.url}/v1:cheap-model"
    extract_args = ["extract", "--model", model, "--chunks", str(tmp_path / "chunks.jsonl")]
    extract_args += ["--out", str(tmp_path / "extract" / "cheap.jsonl")]
    assert main([*extract_args, "--cache-dir", str(tmp_path / "cache")]) == 0
    config = write_config(
        tmp_path,
        server,
        layers=["extraction", "judge"],
        judges=[{"name": "haiku", "model": "anthropic:claude-haiku-4-5"}],
    )
    assert main(["run", str(config), "--out", str(tmp_path / "out")]) == 0

    # The keys were really sent…
    sent = [
        r.headers.get("authorization", "") + r.headers.get("x-api-key", "") for r in server.requests
    ]
    assert any(compat_key in s for s in sent) and any(anthropic_key in s for s in sent)
    # …and are in no file under the output folders or the caches, nor in any output or log.
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 8
    for path in files:
        data = path.read_bytes()
        assert compat_key.encode() not in data and anthropic_key.encode() not in data, path
    captured = capsys.readouterr()
    logs = "\n".join(r.getMessage() + repr(r.args) for r in caplog.records)
    for text in (captured.out, captured.err, logs):
        assert compat_key not in text and anthropic_key not in text
