"""Providers over real HTTP, against the scripted server in tests/fakes on 127.0.0.1.

Both official SDKs talk to the fake server exactly as they would to the real APIs; every test
points them there explicitly (and the environment's base URLs point there too), so no request
can leave the machine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import Usage
from chatledger.providers import (
    AnthropicProvider,
    Budget,
    BudgetExceeded,
    CallSettings,
    ChatMessage,
    Completion,
    CompletionCache,
    CompletionRequest,
    MissingApiKeyError,
    ModelPrice,
    OpenAIProvider,
    OutputSchema,
    PriceTable,
    Provider,
    ProviderError,
    ProviderHub,
)
from fakes.llm_server import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    FakeLLMServer,
    Reply,
    anthropic_body,
    error_body,
    openai_body,
    sdk_server,
)

ANTHROPIC_KEY = "sk-ant-test-SECRET-4f1b9c"
OPENAI_KEY = "sk-openai-test-SECRET-77d2e0"
# Small delays so the whole file runs in a few seconds; the retry-after test waits 1 s.
FAST = CallSettings(
    timeout_s=2.0, max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.05, max_reasks=2
)
# Round prices make the cost arithmetic in the tests easy to check by hand.
PRICES = PriceTable(
    {
        "anthropic:claude-opus-4-6": ModelPrice(5.0, 25.0),
        "openai:gpt-5.2": ModelPrice(1.75, 14.0),
        "openai-compatible:*": ModelPrice(10.0, 30.0),
    }
)
SCORE_SCHEMA = OutputSchema.model_validate(
    {
        "name": "verdict",
        "schema": {
            "type": "object",
            "properties": {
                "score": {"type": "integer", "minimum": 0, "maximum": 100},
                "label": {"type": "string", "enum": ["none", "fabricated"]},
            },
            "required": ["score", "label"],
            "additionalProperties": False,
        },
    }
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with sdk_server(
        monkeypatch, tmp_path / "cache", anthropic_key=ANTHROPIC_KEY, openai_key=OPENAI_KEY
    ) as fake:
        yield fake


def anthropic(server: FakeLLMServer, **shared: Any) -> AnthropicProvider:
    shared.setdefault("settings", FAST)
    shared.setdefault("prices", PRICES)
    return AnthropicProvider(base_url=server.url, **shared)


def openai(server: FakeLLMServer, **shared: Any) -> OpenAIProvider:
    shared.setdefault("settings", FAST)
    shared.setdefault("prices", PRICES)
    return OpenAIProvider(base_url=server.url + "/v1", **shared)


def compatible_model(server: FakeLLMServer) -> str:
    return f"openai-compatible:{server.url}/v1:qwen3"


def hub(server: FakeLLMServer, **shared: Any) -> ProviderHub:
    shared.setdefault("settings", FAST)
    shared.setdefault("prices", PRICES)
    return ProviderHub(base_urls={"anthropic": server.url, "openai": server.url + "/v1"}, **shared)


def complete(provider: Provider, *requests: CompletionRequest) -> Completion:
    """Answer the requests in order on a fresh event loop, closing the provider's clients after;
    returns the last completion."""

    async def go() -> Completion:
        async with provider:
            completions = [await provider.complete(r) for r in requests]
        return completions[-1]

    return asyncio.run(go())


def anthropic_key_sent(headers: dict[str, str]) -> str:
    """The SDK sends the key as ``x-api-key`` or, in recent versions, as a bearer token."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def ask(model: str, text: str = "Rate this.", **kw: Any) -> CompletionRequest:
    return CompletionRequest.from_prompt(model, text, system="You are terse.", **kw)


# --- plain calls -----------------------------------------------------------------------------


def test_openai_call_reports_text_tokens_and_cost(server: FakeLLMServer) -> None:
    server.script(
        OPENAI_PATH, Reply(body=openai_body("hello", prompt_tokens=1000, completion_tokens=300))
    )
    completion = complete(openai(server), ask("openai:gpt-5.2", max_tokens=500))

    assert completion.text == "hello"
    # 1000 input tokens is within the bound for these 24 bytes (3·8 + 1024 = 1048).
    assert (completion.input_tokens, completion.output_tokens) == (1000, 300)
    assert completion.usage_warnings == ()
    # gpt-5.2 at $1.75 / $14 per Mtok: 1000·1.75e-6 + 300·14e-6 = 0.00175 + 0.0042 = 0.00595
    assert completion.cost_usd == pytest.approx(0.00595)
    assert completion.finish_reason == "stop"
    assert not completion.cached and completion.calls == 1 and completion.ok
    sent = server.requests[0]
    assert sent.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert sent.body["model"] == "gpt-5.2"
    assert sent.body["max_completion_tokens"] == 500
    assert "temperature" not in sent.body  # left to the provider unless asked for
    assert sent.body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Rate this."},
    ]
    assert completion.usage() == Usage(
        input_tokens=1000,
        output_tokens=300,
        cost_usd=completion.cost_usd,
        latency_s=completion.latency_s,
    )


def test_anthropic_structured_output_goes_through_a_forced_tool(server: FakeLLMServer) -> None:
    verdict = {"score": 80, "label": "none"}
    server.script(
        ANTHROPIC_PATH,
        Reply(body=anthropic_body(tool=("verdict", verdict), input_tokens=1200, output_tokens=40)),
    )
    request = ask("anthropic:claude-opus-4-6", output_schema=SCORE_SCHEMA, temperature=0.0)
    completion = complete(anthropic(server), request)

    assert completion.parsed == verdict
    assert completion.structured_mode == "native" and completion.error is None
    assert json.loads(completion.text) == verdict
    # opus 4.6 at $5 / $25 per Mtok: 1200·5e-6 + 40·25e-6 = 0.006 + 0.001 = 0.007
    assert completion.cost_usd == pytest.approx(0.007)
    sent = server.requests[0]
    assert anthropic_key_sent(sent.headers) == ANTHROPIC_KEY
    assert sent.body["system"] == "You are terse."
    assert sent.body["tools"][0]["name"] == "verdict"
    assert sent.body["tools"][0]["input_schema"] == SCORE_SCHEMA.json_schema
    assert sent.body["tool_choice"] == {"type": "tool", "name": "verdict"}
    assert sent.body["temperature"] == 0.0  # sent because the request set it


def test_openai_structured_output_uses_strict_json_schema(server: FakeLLMServer) -> None:
    server.script(OPENAI_PATH, Reply(body=openai_body('{"score": 12, "label": "fabricated"}')))
    completion = complete(openai(server), ask("openai:gpt-5.2", output_schema=SCORE_SCHEMA))
    assert completion.parsed == {"score": 12, "label": "fabricated"}
    assert server.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": SCORE_SCHEMA.json_schema, "strict": True},
    }


# --- retries ---------------------------------------------------------------------------------


def test_429_waits_the_retry_after_the_server_asked_for(
    server: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.script(
        OPENAI_PATH,
        Reply(
            status=429,
            body=error_body("slow down", "rate_limit_error"),
            headers={"retry-after": "1"},
        ),
        Reply(body=openai_body("ok")),
    )
    caplog.set_level(logging.WARNING, logger="chatledger.providers")
    completion = complete(openai(server), ask("openai:gpt-5.2"))

    assert completion.text == "ok"
    assert server.calls(OPENAI_PATH) == 2
    gap = server.requests[1].at - server.requests[0].at
    # Our own back-off is ≤ 0.05 s here, so a gap of ~1 s can only be the server's retry-after.
    assert 0.95 <= gap < 2.0
    assert "HTTP 429" in caplog.text and "retrying in 1.00 s" in caplog.text


def test_500_is_retried_and_only_the_success_is_billed(server: FakeLLMServer) -> None:
    server.script(
        ANTHROPIC_PATH,
        Reply(status=500, body=error_body("boom", "api_error")),
        Reply(body=anthropic_body(text="fine", input_tokens=100, output_tokens=10)),
    )
    budget = Budget(cap_usd=1.0)
    completion = complete(anthropic(server, budget=budget), ask("anthropic:claude-opus-4-6"))
    assert completion.text == "fine"
    assert server.calls(ANTHROPIC_PATH) == 2
    # 100·5e-6 + 10·25e-6 = 0.0005 + 0.00025 = 0.00075
    assert budget.spent_usd == pytest.approx(0.00075)
    assert budget.reserved_usd == 0.0


def test_a_timeout_is_retried_without_waiting_for_the_slow_reply(server: FakeLLMServer) -> None:
    settings = CallSettings(
        timeout_s=0.3, max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.05
    )
    server.script(
        OPENAI_PATH,
        Reply(body=openai_body("too late"), delay_s=60.0),
        Reply(body=openai_body("in time")),
    )
    started = time.monotonic()
    completion = complete(openai(server, settings=settings), ask("openai:gpt-5.2"))
    elapsed = time.monotonic() - started

    assert completion.text == "in time"
    assert server.calls(OPENAI_PATH) == 2
    # Gave up after the 0.3 s timeout and did not sit out the 60 s reply: a bound far from
    # both, so a loaded machine cannot make it flaky (no timing is measured here, only which).
    assert 0.3 <= elapsed < 30.0


def test_retries_run_out_into_a_provider_error(server: FakeLLMServer) -> None:
    server.script(OPENAI_PATH, *[Reply(status=503, body=error_body("down"))] * 3)
    budget = Budget(cap_usd=1.0)
    with pytest.raises(ProviderError, match="gave up after 3 attempts; last error: HTTP 503"):
        complete(openai(server, budget=budget), ask("openai:gpt-5.2"))
    assert server.calls(OPENAI_PATH) == 3
    assert (budget.spent_usd, budget.reserved_usd) == (0.0, 0.0)  # the hold was released


def test_client_errors_are_not_retried(server: FakeLLMServer) -> None:
    server.script(OPENAI_PATH, Reply(status=404, body=error_body("no such model")))
    with pytest.raises(ProviderError, match="HTTP 404: no such model"):
        complete(openai(server), ask("openai:gpt-5.2"))
    assert server.calls(OPENAI_PATH) == 1


# --- structured output: parse, repair, re-ask ------------------------------------------------


def test_fenced_json_is_parsed(server: FakeLLMServer) -> None:
    fenced = 'Here you go:\n```json\n{"score": 55, "label": "none"}\n```\n'
    server.script(OPENAI_PATH, Reply(body=openai_body(fenced)))
    completion = complete(hub(server), ask(compatible_model(server), output_schema=SCORE_SCHEMA))
    assert completion.parsed == {"score": 55, "label": "none"}
    assert server.calls() == 1


def test_truncated_json_is_repaired_when_it_then_validates(server: FakeLLMServer) -> None:
    truncated = '{"label": "none", "score": 70'
    server.script(OPENAI_PATH, Reply(body=openai_body(truncated, finish_reason="length")))
    completion = complete(hub(server), ask(compatible_model(server), output_schema=SCORE_SCHEMA))
    assert completion.parsed == {"label": "none", "score": 70}
    assert completion.finish_reason == "length"
    assert server.calls() == 1


def test_truncated_json_missing_a_field_is_re_asked(server: FakeLLMServer) -> None:
    server.script(
        OPENAI_PATH,
        Reply(body=openai_body('{"score": 70, "lab', finish_reason="length")),
        Reply(body=openai_body('{"score": 70, "label": "none"}')),
    )
    completion = complete(hub(server), ask(compatible_model(server), output_schema=SCORE_SCHEMA))
    assert completion.parsed == {"score": 70, "label": "none"}
    assert server.calls() == 2
    reask = server.requests[1].body["messages"]
    assert reask[-2] == {"role": "assistant", "content": '{"score": 70, "lab'}
    assert "'label' is a required property" in reask[-1]["content"]


def test_a_schema_violation_is_fixed_by_one_re_ask(server: FakeLLMServer) -> None:
    server.script(
        ANTHROPIC_PATH,
        Reply(
            body=anthropic_body(
                tool=("verdict", {"score": "high", "label": "none"}),
                input_tokens=1000,
                output_tokens=20,
            )
        ),
        Reply(
            body=anthropic_body(
                tool=("verdict", {"score": 90, "label": "none"}),
                input_tokens=1100,
                output_tokens=20,
            )
        ),
    )
    completion = complete(
        anthropic(server), ask("anthropic:claude-opus-4-6", output_schema=SCORE_SCHEMA)
    )
    assert server.calls(ANTHROPIC_PATH) == 2
    assert completion.parsed == {"score": 90, "label": "none"}
    assert completion.calls == 2
    # Tokens and dollars add up over both calls:
    # (1000 + 1100)·5e-6 + (20 + 20)·25e-6 = 0.0105 + 0.001 = 0.0115
    assert (completion.input_tokens, completion.output_tokens) == (2100, 40)
    assert completion.cost_usd == pytest.approx(0.0115)
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert "at score: 'high' is not of type 'integer'" in second[-1]["content"]


def test_a_reply_that_never_parses_comes_back_unparsed_with_an_error(
    server: FakeLLMServer,
) -> None:
    server.script(OPENAI_PATH, *[Reply(body=openai_body("I cannot help with that."))] * 3)
    completion = complete(openai(server), ask("openai:gpt-5.2", output_schema=SCORE_SCHEMA))
    # 1 call + max_reasks (2) re-asks, then give up without raising.
    assert server.calls(OPENAI_PATH) == 3
    assert completion.parsed is None and not completion.ok
    assert completion.error == ("no valid JSON after 3 replies; last: the reply contains no JSON")
    assert completion.text == "I cannot help with that."


def test_a_server_that_refuses_the_schema_gets_it_in_the_prompt(server: FakeLLMServer) -> None:
    server.script(
        OPENAI_PATH,
        Reply(status=400, body=error_body("response_format json_schema is not supported")),
        Reply(body=openai_body('{"score": 1, "label": "none"}')),
        Reply(body=openai_body('{"score": 2, "label": "none"}')),
    )
    providers = hub(server)
    model = compatible_model(server)

    async def twice() -> list[Any]:
        async with providers:
            first = await providers.complete(ask(model, "one", output_schema=SCORE_SCHEMA))
            second = await providers.complete(ask(model, "two", output_schema=SCORE_SCHEMA))
        return [first, second]

    first, second = asyncio.run(twice())
    assert (first.parsed, second.parsed) == (
        {"score": 1, "label": "none"},
        {"score": 2, "label": "none"},
    )
    assert first.structured_mode == second.structured_mode == "prompt"
    # 400, fallback, then the second request goes straight to the prompt: 3 calls, not 4.
    assert server.calls() == 3
    fallback = server.requests[1].body
    assert "response_format" not in fallback
    assert fallback["max_tokens"] == 4096  # compatible servers get max_tokens
    assert "JSON Schema named 'verdict'" in fallback["messages"][0]["content"]


# --- cache -----------------------------------------------------------------------------------


def test_a_second_identical_call_is_served_from_the_cache(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.script(
        OPENAI_PATH,
        Reply(
            body=openai_body(
                '{"score": 3, "label": "none"}', prompt_tokens=1000, completion_tokens=100
            )
        ),
        Reply(body=openai_body('{"score": 4, "label": "none"}')),
    )
    cache = CompletionCache()  # from $CHATLEDGER_CACHE_DIR
    budget = Budget(cap_usd=1.0)
    request = ask("openai:gpt-5.2", output_schema=SCORE_SCHEMA)

    first = complete(openai(server, cache=cache, budget=budget), request)
    # A new provider and a new event loop (as a re-run would have) still hit the cache.
    second = complete(openai(server, cache=cache, budget=budget), request)

    assert server.calls() == 1
    assert cache.path == tmp_path / "cache" / "completions.sqlite3"
    assert second.cached and not first.cached
    assert second.parsed == first.parsed == {"score": 3, "label": "none"}
    assert (second.input_tokens, second.output_tokens) == (1000, 100)
    assert second.cost_usd == 0.0
    # Only the live call is spent: 1000·1.75e-6 + 100·14e-6 = 0.00175 + 0.0014 = 0.00315
    assert budget.spent_usd == pytest.approx(0.00315)
    assert (budget.live_calls, budget.cached_calls) == (1, 1)
    # Another sample of the same question is a different cache entry.
    third = complete(openai(server, cache=cache), request.model_copy(update={"sample_index": 1}))
    assert server.calls() == 2 and not third.cached and third.sample_index == 1


def test_a_cached_re_ask_conversation_replays_without_calls(server: FakeLLMServer) -> None:
    server.script(
        OPENAI_PATH,
        Reply(body=openai_body('{"score": "x", "label": "none"}')),
        Reply(body=openai_body('{"score": 5, "label": "none"}')),
    )
    cache = CompletionCache()
    request = ask("openai:gpt-5.2", output_schema=SCORE_SCHEMA)
    first = complete(openai(server, cache=cache), request)
    again = complete(openai(server, cache=cache), request)
    assert server.calls() == 2
    assert first.calls == again.calls == 2
    assert again.cached and again.parsed == {"score": 5, "label": "none"}


# --- budget ----------------------------------------------------------------------------------


def test_the_budget_refuses_the_call_that_could_pass_the_cap(server: FakeLLMServer) -> None:
    # openai-compatible:* is priced $10 / $30 per Mtok here. Each reply uses 100 in + 200 out:
    #   cost = 100·10e-6 + 200·30e-6 = 0.001 + 0.006 = $0.007.
    # Worst case before a call: the most it can be billed. max_tokens = 1000 out; input at its
    # bound: "q1" is 2 bytes → estimate ceil(2/3) = 1 token → bound 3·1 + 1024 = 1027 tokens:
    #   1027·10e-6 + 1000·30e-6 = 0.01027 + 0.03 = $0.04027.
    # Cap $0.06: call 1 needs 0 + 0.04027, call 2 0.007 + 0.04027, call 3 0.014 + 0.04027 =
    # 0.05427 — all fit; call 4 would need 0.021 + 0.04027 = 0.06127 > 0.06: it never starts.
    server.script(
        OPENAI_PATH,
        *[Reply(body=openai_body("a", prompt_tokens=100, completion_tokens=200))] * 4,
    )
    budget = Budget(cap_usd=0.06)
    providers = hub(server, budget=budget)
    model = compatible_model(server)

    async def until_refused() -> int:
        done = 0
        async with providers:
            for i in range(1, 5):
                request = CompletionRequest.from_prompt(model, f"q{i}", max_tokens=1000)
                try:
                    await providers.complete(request)
                except BudgetExceeded:
                    break
                done += 1
        return done

    assert asyncio.run(until_refused()) == 3
    assert server.calls() == 3
    assert budget.spent_usd == pytest.approx(0.021)
    assert budget.reserved_usd == 0.0


def test_budget_exceeded_says_what_it_would_have_cost(server: FakeLLMServer) -> None:
    budget = Budget(cap_usd=0.01)
    request = CompletionRequest.from_prompt("anthropic:claude-opus-4-6", "hi", max_tokens=1000)
    with pytest.raises(BudgetExceeded) as info:
        complete(anthropic(server, budget=budget), request)
    # "hi" = 2 bytes → estimate 1 input token → bound 3·1 + 1024 = 1027:
    # 1027·5e-6 + 1000·25e-6 = 0.005135 + 0.025 = 0.030135 > 0.01
    assert info.value.worst_case_usd == pytest.approx(0.030135)
    assert "budget cap $0.0100 would be passed" in str(info.value)
    assert server.calls() == 0


# --- keys ------------------------------------------------------------------------------------


def test_api_keys_never_reach_logs_errors_or_the_cache(
    server: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.script(
        ANTHROPIC_PATH,
        Reply(status=429, body=error_body("slow"), headers={"retry-after": "0"}),
        Reply(body=anthropic_body(tool=("verdict", {"score": 9, "label": "none"}))),
    )
    # A server that echoes the key back in its authentication error.
    server.script(
        OPENAI_PATH, Reply(status=401, body=error_body(f"Incorrect API key: {OPENAI_KEY}"))
    )
    caplog.set_level(logging.DEBUG)  # every logger, the SDKs' and httpx's included
    cache = CompletionCache()
    providers = hub(server, cache=cache)

    async def calls() -> str:
        await providers.complete(ask("anthropic:claude-opus-4-6", output_schema=SCORE_SCHEMA))
        try:
            await providers.complete(ask("openai:gpt-5.2"))
        except ProviderError as exc:
            return str(exc)
        finally:
            await providers.aclose()
        raise AssertionError("the 401 should have raised")

    message = asyncio.run(calls())
    cache.close()

    assert message == "authentication failed (HTTP 401): check OPENAI_API_KEY"
    # The keys were really used…
    assert anthropic_key_sent(server.requests[0].headers) == ANTHROPIC_KEY
    assert server.requests[-1].headers["authorization"] == f"Bearer {OPENAI_KEY}"
    # …and appear nowhere else.
    records = caplog.records
    assert records, "debug logging should have produced records"
    for record in records:
        text = record.getMessage() + repr(record.args) + (record.exc_text or "")
        assert ANTHROPIC_KEY not in text and OPENAI_KEY not in text
    files = list(cache.path.parent.iterdir())
    assert files
    for file in files:
        data = file.read_bytes()
        assert ANTHROPIC_KEY.encode() not in data and OPENAI_KEY.encode() not in data


def test_a_missing_key_names_the_variable_and_sends_nothing(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingApiKeyError, match="ANTHROPIC_API_KEY is not set"):
        complete(anthropic(server), ask("anthropic:claude-opus-4-6"))
    assert server.calls() == 0


def test_compatible_servers_need_no_key_but_use_one_when_set(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.script(OPENAI_PATH, Reply(body=openai_body("a")), Reply(body=openai_body("b")))
    model = compatible_model(server)
    complete(hub(server), ask(model))
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "local-key")
    complete(hub(server), ask(model, "again"))
    auth = [r.headers["authorization"] for r in server.requests]
    assert auth[1] == "Bearer local-key"
    assert OPENAI_KEY not in auth[0]  # the OpenAI key is never sent to another server


# --- limits ----------------------------------------------------------------------------------


def test_concurrency_is_capped_per_provider(server: FakeLLMServer) -> None:
    server.script(OPENAI_PATH, *[Reply(body=openai_body("x"), delay_s=0.15)] * 6)
    settings = CallSettings(timeout_s=2.0, concurrency=2)
    provider = openai(server, settings=settings)

    async def six() -> None:
        async with provider:
            await asyncio.gather(
                *(provider.complete(ask("openai:gpt-5.2", f"q{i}")) for i in range(6))
            )

    started = time.monotonic()
    asyncio.run(six())
    assert server.max_in_flight == 2
    # 6 calls, 2 at a time, 0.15 s each: at least 3 rounds = 0.45 s.
    assert time.monotonic() - started >= 0.45


def test_requests_per_second_is_enforced(server: FakeLLMServer) -> None:
    server.script(OPENAI_PATH, *[Reply(body=openai_body("x"))] * 6)
    settings = CallSettings(timeout_s=2.0, concurrency=5, requests_per_second=10.0)
    provider = openai(server, settings=settings)

    async def warm_then_five() -> None:
        async with provider:
            # The first call also builds the SDK client; keep that cost out of the timing.
            await provider.complete(ask("openai:gpt-5.2", "warm-up"))
            await asyncio.gather(
                *(provider.complete(ask("openai:gpt-5.2", f"q{i}")) for i in range(5))
            )

    asyncio.run(warm_then_five())
    starts = sorted(r.at for r in server.requests[1:])
    # A bucket of 1 refilled at 10/s: the 5 starts are 0.1 s apart, spanning 4 · 0.1 = 0.4 s
    # (0.1 s of slack for the client's own work between taking a token and sending).
    assert starts[-1] - starts[0] >= 0.3


def test_the_hub_shares_one_provider_per_endpoint(server: FakeLLMServer) -> None:
    providers = hub(server)
    assert providers.provider_for("openai:gpt-5.2") is providers.provider_for("openai:gpt-5-mini")
    a = providers.provider_for(f"openai-compatible:{server.url}/v1:qwen3")
    b = providers.provider_for(f"openai-compatible:{server.url}/v1:llama3")
    c = providers.provider_for("openai-compatible:http://127.0.0.1:9/v1:qwen3")
    assert a is b and a is not c
    with pytest.raises(ProviderError, match="cannot call"):
        asyncio.run(a.complete(ask("openai:gpt-5.2")))


def test_a_provider_can_be_used_from_one_event_loop_after_another(
    server: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.script(OPENAI_PATH, Reply(body=openai_body("a")), Reply(body=openai_body("b")))
    provider = openai(server)
    # Not closed in between: asyncio.run's shutdown closes the first loop's SDK client.
    first = asyncio.run(provider.complete(ask("openai:gpt-5.2", "one")))
    second = asyncio.run(provider.complete(ask("openai:gpt-5.2", "two")))
    assert (first.text, second.text) == ("a", "b")
    assert "Event loop is closed" not in caplog.text


def test_multi_turn_messages_are_sent_in_order(server: FakeLLMServer) -> None:
    server.script(ANTHROPIC_PATH, Reply(body=anthropic_body(text="3")))
    request = CompletionRequest(
        model="anthropic:claude-opus-4-6",
        messages=(
            ChatMessage(role="system", content="Count."),
            ChatMessage(role="user", content="1"),
            ChatMessage(role="assistant", content="2"),
            ChatMessage(role="user", content="next"),
        ),
        max_tokens=10,
    )
    complete(anthropic(server), request)
    body = server.requests[0].body
    assert body["system"] == "Count."
    assert [m["content"] for m in body["messages"]] == ["1", "2", "next"]
    assert "temperature" not in body and "tools" not in body
