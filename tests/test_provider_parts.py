"""The provider layer's parts on their own: prices, budget, cache, JSON repair, validation."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from chatledger.core import InputError
from chatledger.providers import (
    Budget,
    BudgetExceeded,
    CallSettings,
    ChatMessage,
    CompletionCache,
    CompletionRequest,
    ModelIdError,
    ModelPrice,
    OutputSchema,
    PriceTable,
    ProviderError,
    ProviderHub,
    RawReply,
    TokenBucket,
    cache_key,
    check_reply,
    default_cache_dir,
    extract_json,
    validator_for,
)

SCHEMA = OutputSchema.model_validate(
    {
        "name": "person",
        "schema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
            "required": ["name", "age"],
        },
    }
)


# --- prices ----------------------------------------------------------------------------------


def test_the_default_price_table_prices_the_flagship_models() -> None:
    table = PriceTable.default()
    assert table.price("anthropic:claude-opus-4-6") == ModelPrice(5.0, 25.0)
    assert table.price("openai:gpt-5.2") == ModelPrice(1.75, 14.0)
    # Self-hosted servers are free unless a price file says otherwise.
    assert table.price("openai-compatible:http://127.0.0.1:8000/v1:qwen3") == ModelPrice(0, 0)
    assert table.price("anthropic:claude-unknown") is None
    # 1M input + 1M output on opus 4.6 = $5 + $25.
    assert ModelPrice(5.0, 25.0).cost(1_000_000, 1_000_000) == pytest.approx(30.0)


def test_exact_ids_beat_patterns_and_longer_patterns_beat_shorter(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {
                "usd_per_million_tokens": {
                    "openai-compatible:*": {"input": 0, "output": 0},
                    "openai-compatible:https://openrouter.ai/*": {"input": 1, "output": 2},
                    "openai-compatible:https://openrouter.ai/api/v1:big": {"input": 9, "output": 9},
                }
            }
        ),
        encoding="utf-8",
    )
    table = PriceTable.from_file(path)
    assert table.price("openai-compatible:https://openrouter.ai/api/v1:big") == ModelPrice(9, 9)
    assert table.price("openai-compatible:https://openrouter.ai/api/v1:small") == ModelPrice(1, 2)
    assert table.price("openai-compatible:http://localhost:1/v1:m") == ModelPrice(0, 0)
    overridden = table.with_overrides({"openai-compatible:*": ModelPrice(3, 4)})
    assert overridden.price("openai-compatible:http://localhost:1/v1:m") == ModelPrice(3, 4)


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"input": -1, "output": 1}, "m.input"),
        ({"input": 1, "output": "2"}, "m.output"),
        ({"input": 1}, "m.output"),
        ({"input": 1, "output": 1, "cached": 0.1}, "m"),
    ],
)
def test_a_bad_price_entry_names_its_field(tmp_path: Path, entry: object, field: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"m": entry}), encoding="utf-8")
    with pytest.raises(InputError) as info:
        PriceTable.from_file(path)
    assert info.value.field == field and info.value.path == str(path)


# --- budget ----------------------------------------------------------------------------------


def test_reservations_hold_money_until_settled() -> None:
    budget = Budget(cap_usd=0.10)
    first = budget.reserve("m", 0.06)
    # 0.06 held + 0.05 asked = 0.11 > 0.10: a second concurrent call may not start.
    with pytest.raises(BudgetExceeded) as info:
        budget.reserve("m", 0.05)
    assert info.value.committed_usd == pytest.approx(0.06)
    budget.settle(first, 0.01)  # it really cost 1 cent
    assert budget.spent_usd == pytest.approx(0.01)
    # 0.01 spent + 0.05 = 0.06 ≤ 0.10 now.
    second = budget.reserve("m", 0.05)
    assert budget.remaining_usd == pytest.approx(0.04)
    budget.release(second)
    assert budget.remaining_usd == pytest.approx(0.09)


def test_a_budget_without_cap_only_counts() -> None:
    budget = Budget()
    budget.settle(budget.reserve("m", 1e9), 2.5)
    assert (budget.spent_usd, budget.remaining_usd) == (2.5, None)


# --- cache -----------------------------------------------------------------------------------


def test_cache_key_is_canonical_sha256() -> None:
    a = cache_key({"model": "m", "parameters": {"max_tokens": 5, "temperature": None}})
    b = cache_key({"parameters": {"temperature": None, "max_tokens": 5}, "model": "m"})
    assert a == b and len(a) == 64 and int(a, 16) >= 0
    assert a != cache_key({"model": "m", "parameters": {"max_tokens": 6, "temperature": None}})


def test_cache_location_explicit_then_env_then_user_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(tmp_path / "env"))
    assert default_cache_dir() == tmp_path / "env"
    with CompletionCache(tmp_path / "explicit") as cache:
        assert cache.path == tmp_path / "explicit" / "completions.sqlite3"
    monkeypatch.delenv("CHATLEDGER_CACHE_DIR")
    assert default_cache_dir().name == "chatledger"


def test_the_cache_is_sqlite_in_wal_mode_and_persists(tmp_path: Path) -> None:
    hello = RawReply(text="hello", input_tokens=3)
    with CompletionCache(tmp_path) as cache:
        cache.put("k1", "openai:gpt-5.2", hello)
        assert cache.get("k1") == hello
        assert cache.get("missing") is None
        assert (cache.hits, cache.misses, len(cache)) == (1, 1, 1)
    with CompletionCache(tmp_path) as reopened:
        assert reopened.get("k1") == hello
    conn = sqlite3.connect(tmp_path / "completions.sqlite3")
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # The row is the reply's JSON, keys sorted, an empty usage_warnings left out (so that a
    # version without the field reads it).
    (row,) = conn.execute("SELECT reply FROM completions WHERE key = 'k1'").fetchone()
    assert row == (
        '{"cost_usd":null,"finish_reason":null,"input_tokens":3,"latency_s":0.0,'
        '"output_tokens":0,"structured":null,"text":"hello"}'
    )
    conn.close()


def test_a_damaged_cache_row_is_asked_again_and_an_unknown_reply_is_an_error(
    tmp_path: Path,
) -> None:
    with CompletionCache(tmp_path) as cache:
        cache.put("k1", "m", RawReply(text="hello"))
        cache.put("k2", "m", RawReply(text="hello"))
        conn = sqlite3.connect(tmp_path / "completions.sqlite3")
        with conn:
            conn.execute("UPDATE completions SET reply = '{\"text\": ' WHERE key = 'k1'")
            conn.execute(
                'UPDATE completions SET reply = \'{"text": "x", "new": 1}\' WHERE key = \'k2\''
            )
        conn.close()
        assert cache.get("k1") is None  # not JSON: a miss, the call is made again
        with pytest.raises(ValidationError):  # a reply of another version: never paid twice
            cache.get("k2")


# --- structured output -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"name": "Ness", "age": 40}', {"name": "Ness", "age": 40}),
        ('```json\n{"name": "Ness", "age": 40}\n```', {"name": "Ness", "age": 40}),
        ('<think>maybe {"x": 1}</think>\n{"name": "Sam", "age": 3}', {"name": "Sam", "age": 3}),
        ('Sure! {"name": "Sam", "age": 3} Anything else?', {"name": "Sam", "age": 3}),
        ('{"name": "Sam", "age": 3,}', {"name": "Sam", "age": 3}),  # trailing comma
        ('{"name": "Sam", "age": 3', {"name": "Sam", "age": 3}),  # truncated
        ('```json\n{"name": "Sam", "age": 3', {"name": "Sam", "age": 3}),  # cut inside a fence
    ],
)
def test_json_is_found_and_repaired(text: str, value: object) -> None:
    assert extract_json(text) == (value, None)


@pytest.mark.parametrize(
    "text", ["", "   ", "I cannot help with that.", "nonsense {{{", "<think>x"]
)
def test_text_without_json_is_reported(text: str) -> None:
    assert extract_json(text) == (None, "the reply contains no JSON")


def test_validation_errors_say_where() -> None:
    parsed, error = check_reply('{"name": "Sam", "age": -2}', None, SCHEMA)
    assert parsed is None
    assert error == (
        "the JSON does not match the schema 'person' at age: -2 is less than the minimum of 0"
    )
    _, missing = check_reply('{"name": "Sam"}', None, SCHEMA)
    assert missing is not None and "at (root): 'age' is a required property" in missing
    # A tool call's input is validated too.
    assert check_reply("", {"name": "Sam", "age": 1}, SCHEMA) == ({"name": "Sam", "age": 1}, None)


def test_one_validator_per_schema() -> None:
    same = OutputSchema.model_validate(SCHEMA.model_dump(by_alias=True))
    assert validator_for(SCHEMA) is validator_for(same)


def test_an_invalid_schema_is_refused_up_front() -> None:
    with pytest.raises(ValidationError, match="not a valid Draft 2020-12 JSON Schema"):
        OutputSchema.model_validate({"name": "x", "schema": {"type": "no-such-type"}})
    with pytest.raises(ValidationError):
        OutputSchema.model_validate({"name": "has spaces", "schema": {}})


# --- requests, settings, rate limit ----------------------------------------------------------


def test_requests_check_their_model_id_and_turns() -> None:
    with pytest.raises(ValidationError, match="provider prefix"):
        CompletionRequest.from_prompt("gpt-5.2", "hi")
    with pytest.raises(ValidationError, match="at least one user message"):
        CompletionRequest(
            model="openai:gpt-5.2", messages=(ChatMessage(role="system", content="s"),)
        )
    with pytest.raises(ValidationError, match="system messages must come before"):
        CompletionRequest(
            model="openai:gpt-5.2",
            messages=(
                ChatMessage(role="user", content="u"),
                ChatMessage(role="system", content="s"),
            ),
        )
    request = CompletionRequest.from_prompt("openai:gpt-5.2", "u", system="s")
    assert request.system_text == "s" and [m.role for m in request.turns] == ["user"]
    # Round-trips through JSON, as run files need.
    assert CompletionRequest.model_validate_json(request.model_dump_json()) == request
    assert isinstance(ModelIdError("x"), Exception)


def test_settings_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="max_attempts >= 1"):
        CallSettings(max_attempts=0)
    with pytest.raises(ValueError, match="cannot be negative"):
        CallSettings(backoff_initial_s=-1)


def test_token_bucket_spaces_starts() -> None:
    bucket = TokenBucket(rate=50.0)

    async def five() -> float:
        started = time.monotonic()
        for _ in range(5):
            await bucket.acquire()
        return time.monotonic() - started

    # First token is there at once; the other 4 come every 1/50 s: ≥ 0.08 s.
    assert asyncio.run(five()) >= 0.079


# --- optional SDKs ---------------------------------------------------------------------------


def test_importing_the_providers_loads_no_sdk() -> None:
    code = (
        "import sys, chatledger.providers; "
        "print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("model", "extra"),
    [("anthropic:claude-opus-4-6", "anthropic"), ("openai:gpt-5.2", "openai")],
)
def test_a_missing_sdk_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, model: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, extra, None)  # makes `import <extra>` fail
    monkeypatch.setenv("ANTHROPIC_API_KEY", "unused")
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    hub = ProviderHub(base_urls={"anthropic": "http://127.0.0.1:9", "openai": "http://127.0.0.1:9"})
    with pytest.raises(ProviderError, match=rf"pip install 'chatledger\[{extra}\]'"):
        asyncio.run(hub.complete(CompletionRequest.from_prompt(model, "hi")))


def test_run_sync_works_with_and_without_a_running_loop() -> None:
    import asyncio

    from chatledger.providers import run_sync

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_sync(answer()) == 42  # no loop: plain asyncio.run

    async def inside_a_notebook() -> int:
        # asyncio.run would raise here ("cannot be called from a running event loop").
        return run_sync(answer())

    assert asyncio.run(inside_a_notebook()) == 42
