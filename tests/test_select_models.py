"""Schema selection with a real model interface: the scripted OpenAI-compatible server on
127.0.0.1 (tests/fakes) answers each screening call from its request — the fields asked are the
response format's properties, the sample is the request's seed — with faults injected: a 429
with retry-after, a fenced reply, a reply that never validates."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.select import load_select_config, run_selection
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body
from fakes.scripted_models import asked_chunk, extraction_for, write_chunks

PRICES = {"openai-compatible:*": {"input": 3.0, "output": 15.0}}
# Per call 1000 in / 200 out at $3 / $15 per Mtok: 0.003 + 0.003 = $0.006.
CALL_USD = 0.006
BROKEN = ("ex-1-d1", 1)  # (chunk, seed) whose reply never validates
FENCED = ("ex-1-d0", 2)  # (chunk, seed) answered inside a Markdown fence


def answer(body: dict[str, Any]) -> dict[str, Any]:
    chunk_id, seed = asked_chunk(body), int(body["seed"])
    asked = list(body["response_format"]["json_schema"]["schema"]["properties"])
    reference = extraction_for(chunk_id)
    values = {name: reference.get(name, []) for name in asked}
    if "topic_shifts" in values:
        # Consistent in two samples of three: the third finds no shift.
        shift = {"from_topic": "setlist", "to_topic": "travel", "message_id": None}
        values["topic_shifts"] = [shift] if seed < 2 else []
    text = json.dumps(values)
    if (chunk_id, seed) == BROKEN:
        text = '{"claims": "not a list"}'
    elif (chunk_id, seed) == FENCED:
        text = f"Here you are:\n```json\n{text}\n```"
    return openai_body(text, prompt_tokens=1000, completion_tokens=200, model=body["model"])


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-select-secret-123")
        monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(tmp_path / "default-cache"))
        yield fake


def write_config(tmp_path: Path, server: FakeLLMServer, **extra: Any) -> Path:
    write_chunks(tmp_path / "chunks.jsonl", 2)
    config = {
        "version": 1,
        "chunks": "chunks.jsonl",
        "extractor": f"openai-compatible:{server.url}/v1:cheap-model",
        "screen": {"k": 3, "fields": ["qa_pairs", "topic_shifts"]},
        "prices": PRICES,
        "cache_dir": "cache",
        "concurrency": 1,
        **extra,
    }
    path = tmp_path / "select.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_a_model_screen_over_http_with_faults(server: FakeLLMServer, tmp_path: Path) -> None:
    server.script(OPENAI_PATH, Reply(status=429, body={"error": {"message": "slow down"}},
                                     headers={"retry-after": "0"}))  # fmt: skip
    server.always(OPENAI_PATH, Reply(body=answer))
    out = tmp_path / "select"
    unlimited = write_config(tmp_path, server, max_tokens=300)
    record = run_selection(load_select_config(unlimited), out, until="screen")

    bodies = server.bodies(OPENAI_PATH)
    # Each sample is its own request: seeds 0, 1, 2 per chunk, the temperature of the config.
    seeds = sorted((asked_chunk(b), b["seed"]) for b in bodies)
    assert {(c, s) for c, s in seeds} == {(c, s) for c in ("ex-1-d0", "ex-1-d1") for s in (0, 1, 2)}
    assert all(b["temperature"] == 0.7 for b in bodies)
    # The 429 was retried; the broken reply was asked again (2 re-asks) and still broke.
    broken_calls = sum(1 for b in bodies if (asked_chunk(b), b["seed"]) == BROKEN)
    assert broken_calls == 3
    assert len(bodies) == 1 + 5 + broken_calls

    usage = record.usage["screen"]
    assert usage.units == 6 and usage.invalid == 1 and usage.failed == 0
    assert usage.calls == 5 + broken_calls
    assert usage.cost_usd == pytest.approx(usage.calls * CALL_USD)
    lines = [json.loads(x) for x in (out / "units.jsonl").read_text().splitlines()]
    assert len(lines) == 6  # the invalid answer is recorded, never dropped
    bad = [x for x in lines if x["error"]]
    assert [(b["chunk_id"], b["sample"]) for b in bad] == [BROKEN]

    rows = {r.name: r for r in record.screening}
    # 6 runs, one of them invalid: 5 runs hold each field.
    assert rows["qa_pairs"].runs == 5 and rows["qa_pairs"].invalid == 1
    # Q/A pairs are the same in every valid run: consistency 1. Topic shifts: chunk d0 has
    # runs [shift], [shift], [] → pairs 1, 0, 0 → 1/3; chunk d1 (sample 1 invalid) has
    # [shift], [] → 0. Mean over chunks (1/3 + 0) / 2 = 1/6.
    assert rows["qa_pairs"].consistency == pytest.approx(1.0)
    assert rows["topic_shifts"].consistency == pytest.approx(1 / 6)

    # The API key never reaches a file the selection writes.
    for path in out.rglob("*"):
        if path.is_file():
            assert b"sk-select-secret-123" not in path.read_bytes()


def test_lost_units_come_from_the_cache_without_a_new_call(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(OPENAI_PATH, Reply(body=answer))
    config = write_config(tmp_path, server)
    out = tmp_path / "select"
    first = run_selection(load_select_config(config), out, until="screen")
    calls = server.calls()
    # The units file is lost: every call is answered by the provider's cache.
    (out / "units.jsonl").unlink()
    again = run_selection(load_select_config(config), out, until="screen")
    assert server.calls() == calls
    assert again.usage["screen"].cached_calls == again.usage["screen"].calls > 0
    assert again.usage["screen"].cost_usd == 0.0
    assert again.screening == first.screening


def test_the_budget_stops_a_screen_and_a_rerun_finishes_it(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    from chatledger.providers import BudgetExceeded

    server.always(OPENAI_PATH, Reply(body=lambda b: answer({**b, "seed": 0})))
    config = write_config(tmp_path, server, budget_usd=0.05, max_tokens=300)
    out = tmp_path / "select"
    with pytest.raises(BudgetExceeded):
        run_selection(load_select_config(config), out, until="screen")
    written = (out / "units.jsonl").read_text().splitlines()
    # Each call holds up to $0.0341 until it settles at $0.006: 3 calls fit under $0.05.
    assert len(written) == 3
    calls = server.calls()
    # The same config without the cap: the written units are kept, the rest asked.
    unlimited = write_config(tmp_path, server, max_tokens=300)
    record = run_selection(load_select_config(unlimited), out, until="screen")
    assert record.usage["screen"].reused == len(written)
    assert server.calls() == calls + 6 - len(written)
    assert len((out / "units.jsonl").read_text().splitlines()) == 6
