"""Provider faults over real HTTP against the scripted server in tests/fakes (127.0.0.1 only).

A 200 that is not a reply (HTML, invalid UTF-8, JSON of another shape) is retried, then comes
back as an invalid completion; a hung or stalled server ends each attempt at ``timeout_s``; a
server over-reporting usage is billed no more than the request allowed, and flagged; a re-ask
the budget refuses keeps the paid reply; a model id with credentials never echoes them.

Tests that talk to a server that never answers run under a generous guard (``GUARD_S``): it
turns a hang into a failure instead of a stuck test run, and is not a timing assertion.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import ChatLedgerError
from chatledger.extraction import aextract_chunks, extract_chunks
from chatledger.providers import (
    AnthropicProvider,
    Budget,
    BudgetExceeded,
    CallSettings,
    Completion,
    CompletionCache,
    CompletionRequest,
    ModelIdError,
    ModelPrice,
    OpenAIProvider,
    OutputSchema,
    PriceTable,
    Provider,
    ProviderError,
    ProviderHub,
    parse_model_id,
    redact_model_id,
)
from conftest import make_chunk
from fakes.llm_server import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    FakeLLMServer,
    Reply,
    anthropic_body,
    openai_body,
    sdk_server,
)

ANTHROPIC_KEY = "sk-ant-test-SECRET-faults-1"
OPENAI_KEY = "sk-openai-test-SECRET-faults-2"
GUARD_S = 60.0
FAST = CallSettings(
    timeout_s=2.0, max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.05, max_reasks=2
)
# A small timeout, two attempts: what a run with --timeout 0.3 does against a hung server.
HUNG = CallSettings(timeout_s=0.3, max_attempts=2, backoff_initial_s=0.01, backoff_max_s=0.02)
PRICES = PriceTable(
    {
        "anthropic:claude-opus-4-6": ModelPrice(5.0, 25.0),
        "openai:gpt-5.2": ModelPrice(1.75, 14.0),
        "openai-compatible:*": ModelPrice(10.0, 30.0),
    }
)
SCHEMA = OutputSchema.model_validate(
    {
        "name": "verdict",
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "integer"}},
            "required": ["score"],
            "additionalProperties": False,
        },
    }
)
HTML = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
BAD_UTF8 = b'{"choices": [{"message": {"content": "\xff\xfe\xc3"}}]}\xff'


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with sdk_server(
        monkeypatch, tmp_path / "cache", anthropic_key=ANTHROPIC_KEY, openai_key=OPENAI_KEY
    ) as fake:
        yield fake


def provider(server: FakeLLMServer, kind: str, **shared: Any) -> Provider:
    shared.setdefault("settings", FAST)
    shared.setdefault("prices", PRICES)
    if kind == "anthropic":
        return AnthropicProvider(base_url=server.url, **shared)
    return OpenAIProvider(base_url=server.url + "/v1", **shared)


MODEL = {"anthropic": "anthropic:claude-opus-4-6", "openai": "openai:gpt-5.2"}
PATH = {"anthropic": ANTHROPIC_PATH, "openai": OPENAI_PATH}


def good_body(kind: str, text: str = '{"score": 7}') -> dict[str, Any]:
    if kind == "anthropic":
        return anthropic_body(text=text, input_tokens=10, output_tokens=5)
    return openai_body(text, prompt_tokens=10, completion_tokens=5)


def complete(p: Provider, *requests: CompletionRequest) -> Completion:
    """Answer the requests in order on a fresh loop (closing the clients), under the guard."""

    async def go() -> Completion:
        async with p:
            completions = [await p.complete(r) for r in requests]
        return completions[-1]

    async def guarded() -> Completion:
        return await asyncio.wait_for(go(), GUARD_S)

    return asyncio.run(guarded())


def ask(model: str, **kw: Any) -> CompletionRequest:
    return CompletionRequest.from_prompt(model, "Rate this.", system="Be terse.", **kw)


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- a 200 that is not a reply -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (Reply(body=HTML, content_type="text/html"), "the reply is not JSON"),
        (Reply(body=HTML), "the reply is not JSON"),  # HTML labelled as JSON
        (Reply(body=BAD_UTF8), "the reply is not UTF-8 text"),
        (Reply(body=b"\xc3\x28 garbage \xff"), "the reply is not UTF-8 text"),
        (Reply(body=[1, 2]), "the reply is not a JSON object"),
        (Reply(body=b"null"), "the reply is not a JSON object"),
    ],
    ids=["html", "html-as-json", "bad-utf8-json", "bad-utf8", "array", "null"],
)
def test_a_200_that_is_not_a_reply_is_retried_then_an_invalid_completion(
    server: FakeLLMServer, tmp_path: Path, kind: str, reply: Reply, problem: str
) -> None:
    server.script(PATH[kind], reply, reply, reply)
    budget = Budget(cap_usd=1.0)
    cache = CompletionCache(tmp_path / "c")
    completion = complete(
        provider(server, kind, budget=budget, cache=cache), ask(MODEL[kind], output_schema=SCHEMA)
    )

    assert server.calls() == 3  # FAST: three attempts
    assert completion.parsed is None and not completion.ok
    assert completion.error is not None
    assert completion.error.startswith(f"{MODEL[kind]}: gave up after 3 attempts; last error: ")
    assert problem in completion.error
    assert completion.text.startswith("[unreadable reply] ")
    # Nothing readable was billed, nothing held, nothing cached (a re-run asks again).
    assert (completion.cost_usd, completion.input_tokens, completion.output_tokens) == (0, 0, 0)
    assert (budget.spent_usd, budget.reserved_usd) == (0.0, 0.0)
    assert not completion.cached and completion.calls == 1
    assert len(cache) == 0
    cache.close()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_json_of_the_wrong_shape_is_a_malformed_reply(server: FakeLLMServer, kind: str) -> None:
    shapes: dict[str, list[Any]] = {
        "openai": [
            {"hello": "world"},
            {"choices": []},
            {"choices": [{"message": "hi"}]},
            {"choices": [{"message": {"content": 42}}]},
            {"error": {"message": "upstream overloaded"}},  # an error object sent with 200
        ],
        "anthropic": [
            {"hello": "world"},
            {"content": "hi"},
            {"content": ["hi"]},
            {"type": "error", "error": {"message": "overloaded"}},
        ],
    }
    for body in shapes[kind]:
        server.script(PATH[kind], *[Reply(body=body)] * 3)
        completion = complete(provider(server, kind), ask(MODEL[kind]))
        assert completion.error is not None and "gave up after 3 attempts" in completion.error
        assert "the reply has no" in completion.error or "not text" in completion.error
    assert server.calls() == 3 * len(shapes[kind])


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_one_html_page_then_a_reply_recovers(server: FakeLLMServer, kind: str) -> None:
    server.script(
        PATH[kind],
        Reply(body=HTML, content_type="text/html"),
        Reply(body=good_body(kind)),
    )
    completion = complete(provider(server, kind), ask(MODEL[kind], output_schema=SCHEMA))
    assert completion.ok and completion.parsed == {"score": 7}
    assert server.calls() == 2 and completion.calls == 1


def test_an_unreadable_reply_quotes_the_body_without_the_key(server: FakeLLMServer) -> None:
    page = f"<html><p>key {OPENAI_KEY} rejected</p></html>".encode()
    server.script(OPENAI_PATH, *[Reply(body=page, content_type="text/html")] * 3)
    completion = complete(provider(server, "openai"), ask("openai:gpt-5.2"))
    assert completion.error is not None
    assert "<html><p>key [redacted] rejected</p></html>" in completion.error
    assert OPENAI_KEY not in completion.error and OPENAI_KEY not in completion.text


def test_an_unreadable_re_ask_keeps_the_paid_reply_before_it(server: FakeLLMServer) -> None:
    server.script(
        OPENAI_PATH,
        Reply(body=openai_body("not json at all", prompt_tokens=10, completion_tokens=5)),
        *[Reply(body=HTML, content_type="text/html")] * 3,
    )
    completion = complete(provider(server, "openai"), ask("openai:gpt-5.2", output_schema=SCHEMA))
    assert completion.text == "not json at all"
    assert completion.error is not None
    assert "the reply is not JSON" in completion.error
    assert "after 1 invalid replies; last: the reply contains no JSON" in completion.error
    # The paid reply is billed: 10·1.75e-6 + 5·14e-6 = 0.0000875
    assert completion.cost_usd == pytest.approx(0.0000875)
    assert completion.calls == 2


def test_extraction_writes_an_unreadable_reply_as_an_invalid_line(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(OPENAI_PATH, Reply(body=HTML, content_type="text/html"))
    chunks = [make_chunk(chunk_id=f"c-{i}") for i in range(2)]
    out = tmp_path / "out.jsonl"
    cache = CompletionCache(tmp_path / "c")
    hub = ProviderHub(settings=FAST, cache=cache)
    summary = extract_chunks(f"openai-compatible:{server.url}/v1:m", chunks, out, hub=hub)
    cache.close()
    assert summary.failures == [] and summary.progress.written == 2
    assert summary.progress.invalid == 2
    assert server.calls() == 2 * 3
    lines = read_lines(out)
    assert [line["extraction"] for line in lines] == [None, None]
    assert all("the reply is not JSON" in line["error"] for line in lines)


# --- timeouts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "reply",
    [
        Reply(delay_s=3600),  # accepts the request, never answers
        Reply(body=openai_body("x"), stall_s=3600),  # the headers and half the body, then stops
        # A byte every 50 ms: no single read waits 0.3 s, but the reply takes a minute.
        Reply(body=openai_body("x" * 1000), drip_s=0.05),
    ],
    ids=["hung", "stalled-body", "drip"],
)
def test_a_hung_server_ends_each_attempt_at_the_timeout(
    server: FakeLLMServer, kind: str, reply: Reply
) -> None:
    server.always(PATH[kind], reply)
    budget = Budget(cap_usd=1.0)
    with pytest.raises(ProviderError) as info:
        complete(provider(server, kind, settings=HUNG, budget=budget), ask(MODEL[kind]))
    assert server.calls() == 2  # max_attempts, then it gave up
    assert str(info.value) == (
        f"{MODEL[kind]}: gave up after 2 attempts; last error: timed out after 0.3 s"
    )
    assert (budget.spent_usd, budget.reserved_usd) == (0.0, 0.0)


def test_the_hub_honours_timeout_s_for_a_compatible_server(server: FakeLLMServer) -> None:
    server.always(OPENAI_PATH, Reply(delay_s=3600))
    hub = ProviderHub(settings=HUNG, prices=PRICES)
    with pytest.raises(ProviderError, match="gave up after 2 attempts"):
        complete(hub, ask(f"openai-compatible:{server.url}/v1:qwen3"))
    assert server.calls() == 2


def test_an_extraction_against_a_hung_server_ends_with_failed_calls(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(OPENAI_PATH, Reply(delay_s=3600))
    chunks = [make_chunk(chunk_id=f"c-{i}") for i in range(3)]

    async def run() -> Any:
        async with ProviderHub(settings=HUNG) as hub:
            model = f"openai-compatible:{server.url}/v1:m"
            extraction = aextract_chunks(model, chunks, tmp_path / "out.jsonl", hub=hub)
            return await asyncio.wait_for(extraction, GUARD_S)

    summary = asyncio.run(run())
    assert summary.progress.failed == 3 and summary.progress.written == 0
    assert server.calls() == 3 * 2
    with pytest.raises(ChatLedgerError, match=r"3 call\(s\) to .* failed"):
        summary.raise_if_incomplete()


# --- usage a server reports ----------------------------------------------------------------------


def test_a_server_over_reporting_output_is_billed_at_most_max_tokens(
    server: FakeLLMServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The case: 1,000,000 completion tokens claimed under max_tokens 1000, $0.10 cap.
    server.script(
        OPENAI_PATH, Reply(body=openai_body("hi", prompt_tokens=10, completion_tokens=1_000_000))
    )
    budget = Budget(cap_usd=0.10)
    cache = CompletionCache(tmp_path / "c")
    model = f"openai-compatible:{server.url}/v1:qwen3"
    caplog.set_level(logging.WARNING, logger="chatledger.providers")
    hub = ProviderHub(settings=FAST, prices=PRICES, cache=cache, budget=budget)
    completion = complete(hub, ask(model, max_tokens=1000))

    assert completion.output_tokens == 1000 and completion.input_tokens == 10
    # $10 / $30 per Mtok: 10·10e-6 + 1000·30e-6 = 0.0001 + 0.03 = 0.0301 (not $30)
    assert completion.cost_usd == pytest.approx(0.0301)
    assert budget.spent_usd == pytest.approx(0.0301)
    assert budget.spent_usd <= 0.10
    totals = cache.ledger().totals()
    assert totals.spent_usd == pytest.approx(0.0301) and totals.output_tokens == 1000
    assert completion.usage_clamped
    assert completion.usage_warnings == (
        "1000000 output tokens reported under max_tokens 1000: billed 1000",
    )
    assert any("1000000 output tokens reported" in r.getMessage() for r in caplog.records)
    cache.close()


@pytest.mark.parametrize(
    ("usage", "billed_in", "billed_out", "warning"),
    [
        # "Rate this." + "Be terse." = 19 bytes → estimate 7 tokens → bound 3·7 + 1024 = 1045.
        ({"prompt_tokens": 10**12, "completion_tokens": 5}, 1045, 5, "input tokens reported"),
        ({"prompt_tokens": -40, "completion_tokens": 5}, 1045, 5, "no input token count"),
        ({"prompt_tokens": 10, "completion_tokens": -1}, 10, 200, "no output token count"),
        ({"prompt_tokens": "10", "completion_tokens": 2.5}, 1045, 200, "no input token count"),
        ({"prompt_tokens": 10.0, "completion_tokens": 5.0}, 10, 5, None),
        (None, 1045, 200, "no input token count"),
    ],
    ids=["absurd-input", "negative-input", "negative-output", "not-numbers", "floats", "absent"],
)
def test_unverifiable_counts_are_billed_at_their_bound_and_flagged(
    server: FakeLLMServer,
    usage: dict[str, Any] | None,
    billed_in: int,
    billed_out: int,
    warning: str | None,
) -> None:
    body = openai_body("hi")
    if usage is None:
        del body["usage"]
    else:
        body["usage"] = usage
    server.script(OPENAI_PATH, Reply(body=body))
    completion = complete(provider(server, "openai"), ask("openai:gpt-5.2", max_tokens=200))
    assert (completion.input_tokens, completion.output_tokens) == (billed_in, billed_out)
    assert completion.cost_usd == pytest.approx(billed_in * 1.75e-6 + billed_out * 14e-6)
    if warning is None:
        assert not completion.usage_clamped
    else:
        assert any(warning in w for w in completion.usage_warnings)


def test_anthropic_negative_and_absurd_counts_do_not_crash(server: FakeLLMServer) -> None:
    server.script(
        ANTHROPIC_PATH,
        Reply(body=anthropic_body(text="a", input_tokens=-3, output_tokens=10**9)),
    )
    completion = complete(provider(server, "anthropic"), ask(MODEL["anthropic"], max_tokens=50))
    assert (completion.input_tokens, completion.output_tokens) == (1045, 50)
    assert len(completion.usage_warnings) == 2


def test_a_cached_clamped_reply_keeps_its_flag(server: FakeLLMServer, tmp_path: Path) -> None:
    server.script(
        OPENAI_PATH, Reply(body=openai_body("hi", prompt_tokens=1, completion_tokens=999))
    )
    cache = CompletionCache(tmp_path / "c")
    first = complete(provider(server, "openai", cache=cache), ask("openai:gpt-5.2", max_tokens=9))
    again = complete(provider(server, "openai", cache=cache), ask("openai:gpt-5.2", max_tokens=9))
    assert server.calls() == 1 and again.cached
    assert first.output_tokens == again.output_tokens == 9
    assert again.usage_warnings == first.usage_warnings != ()
    cache.close()


def test_an_unflagged_reply_is_cached_in_the_old_shape(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    # Rows without warnings keep the shape earlier versions read (their RawReply forbids
    # unknown fields), so a cache shared with an older install keeps working.
    server.script(OPENAI_PATH, Reply(body=openai_body("hi", prompt_tokens=1, completion_tokens=1)))
    cache = CompletionCache(tmp_path / "c")
    complete(provider(server, "openai", cache=cache), ask("openai:gpt-5.2"))
    cache.close()
    with sqlite3.connect(tmp_path / "c" / "completions.sqlite3") as conn:
        (stored,) = conn.execute("SELECT reply FROM completions").fetchone()
    assert "usage_warnings" not in json.loads(stored)


# --- a re-ask the budget refuses ---------------------------------------------------------------


def test_a_re_ask_refused_by_the_budget_keeps_the_paid_reply(server: FakeLLMServer) -> None:
    # $10 / $30 per Mtok, max_tokens 1000. The first call (prompt and schema: estimate
    # 43 tokens, bound 3·43 + 1024 = 1153) may cost at most 1153·10e-6 + 1000·30e-6 = $0.04153
    # ≤ $0.045. Its reply costs 100·10e-6 + 200·30e-6 = $0.007 and does not validate. The re-ask
    # sends the longer conversation (estimate 92, bound 1300: worst $0.043) and would need
    # 0.007 + 0.043 = $0.050 > $0.045, so it is refused — and the paid reply is returned.
    server.script(
        OPENAI_PATH,
        Reply(body=openai_body('{"score": "high"}', prompt_tokens=100, completion_tokens=200)),
    )
    budget = Budget(cap_usd=0.045)
    model = f"openai-compatible:{server.url}/v1:qwen3"
    hub = ProviderHub(settings=FAST, prices=PRICES, budget=budget)
    completion = complete(hub, ask(model, max_tokens=1000, output_schema=SCHEMA))

    assert server.calls() == 1
    assert completion.text == '{"score": "high"}' and completion.parsed is None
    assert completion.error is not None
    assert completion.error.startswith("no valid JSON after 1 replies; last: ")
    assert "; no re-ask: budget cap $0.0450 would be passed" in completion.error
    assert completion.cost_usd == pytest.approx(0.007) == budget.spent_usd
    stop = completion.budget_stop
    assert stop is not None and stop.cap_usd == 0.045
    assert isinstance(stop.exception(), BudgetExceeded)
    assert str(stop.exception()).startswith("budget cap $0.0450 would be passed")


def test_an_extraction_writes_the_refused_re_ask_as_invalid_and_stops(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    # Every reply is invalid (no JSON). The first call of chunk c-0 fits the cap, its re-ask
    # does not: its line is written (invalid, with what it cost) and no other chunk starts.
    server.always(OPENAI_PATH, Reply(body=openai_body("no", prompt_tokens=0, completion_tokens=1)))
    prices = PriceTable({"openai-compatible:*": ModelPrice(0.0, 10.0)})
    # Output $10/Mtok, max_tokens 1000: worst case $0.01 per call; each reply costs $0.00001.
    budget = Budget(cap_usd=0.0100095)
    chunks = [make_chunk(chunk_id=f"c-{i}") for i in range(3)]
    out = tmp_path / "out.jsonl"
    hub = ProviderHub(
        settings=CallSettings(concurrency=1, max_attempts=1), prices=prices, budget=budget
    )
    summary = extract_chunks(
        f"openai-compatible:{server.url}/v1:m", chunks, out, hub=hub, max_tokens=1000
    )
    assert server.calls() == 1
    assert summary.stopped is not None and not summary.complete
    assert str(summary.stopped).startswith("budget cap $0.0100 would be passed")
    lines = read_lines(out)
    assert [line["chunk_id"] for line in lines] == ["c-0"]
    assert lines[0]["extraction"] is None and "no re-ask: budget cap" in lines[0]["error"]
    assert lines[0]["usage"]["billed_usd"] == pytest.approx(0.00001)


# --- credentials in a model id -----------------------------------------------------------------

SECRET = "hunter2-SECRET"


@pytest.mark.parametrize(
    "model_id",
    [
        f"openai-compatible:http://user:{SECRET}@127.0.0.1:8000/v1:m",
        f"openai-compatible:https://{SECRET}@example.invalid/v1:m",
        f"openai-compatible:http://user:pa/{SECRET}@127.0.0.1:8000/v1:m",  # '/' in the password
        f"openai-compatible:http://user:pa@{SECRET}@127.0.0.1:8000/v1:m",  # '@' in the password
        f"openai-compatible:user:{SECRET}@127.0.0.1:8000/v1:m",  # no scheme
        f"http://user:{SECRET}@127.0.0.1:8000/v1:m",  # no provider prefix
        f"openai-compat:http://user:{SECRET}@127.0.0.1:8000/v1:m",  # misspelt prefix
    ],
)
def test_a_model_id_with_credentials_is_refused_without_echoing_them(
    server: FakeLLMServer, tmp_path: Path, model_id: str
) -> None:
    with pytest.raises(ModelIdError) as info:
        parse_model_id(model_id)
    assert SECRET not in str(info.value)
    assert "***@" in str(info.value)
    # A request built from it: pydantic's error must not quote the input either.
    with pytest.raises(ValueError) as request_error:
        CompletionRequest.from_prompt(model_id, "hi")
    assert SECRET not in str(request_error.value)
    # Nor does an extraction (the id is checked before anything is sent).
    with pytest.raises(ChatLedgerError) as extract_error:
        extract_chunks(model_id, [make_chunk()], tmp_path / "out.jsonl")
    assert SECRET not in str(extract_error.value)
    assert server.calls() == 0


def test_the_url_credentials_message_shows_the_redacted_id() -> None:
    with pytest.raises(ModelIdError) as info:
        parse_model_id(f"openai-compatible:http://user:{SECRET}@127.0.0.1:8000/v1:m")
    assert str(info.value) == (
        "model id 'openai-compatible:http://***@127.0.0.1:8000/v1:m': no credentials in the "
        "URL; put the key in OPENAI_COMPATIBLE_API_KEY"
    )


def test_redact_model_id_leaves_ids_without_credentials_alone() -> None:
    plain = "openai-compatible:http://127.0.0.1:8000/v1:qwen3:8b"
    assert redact_model_id(plain) == plain
    assert redact_model_id("anthropic:claude-opus-4-6") == "anthropic:claude-opus-4-6"
    # An '@' in the model name after the URL is not a credential: the id is accepted.
    assert parse_model_id("openai-compatible:http://127.0.0.1:8000/v1:m@v2").model == "m@v2"
