"""Batch mode over real HTTP: the OpenAI Batch API and Anthropic Message Batches of the fake
server in tests/fakes (127.0.0.1 only), through the official SDKs.

Prices are the test's own round numbers; each cost is worked out by hand in a comment.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.corpus import read_chunks
from chatledger.extraction import SCHEMA_NAME, extract_chunks
from chatledger.providers import (
    BatchSettings,
    Budget,
    CallSettings,
    Completion,
    CompletionCache,
    CompletionRequest,
    ModelPrice,
    OutputSchema,
    PriceTable,
    ProviderError,
    ProviderHub,
)
from fakes.llm_server import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    BatchPlan,
    FakeLLMServer,
    Reply,
    anthropic_body,
    openai_body,
    sdk_server,
)
from fakes.scripted_models import asked_chunk, extraction_for, openai_extractor, write_chunks

ANTHROPIC_KEY = "sk-ant-test-BATCH-SECRET-5a1c"
OPENAI_KEY = "sk-openai-test-BATCH-SECRET-90be"
OPENAI_MODEL = "openai:gpt-5.2"
ANTHROPIC_MODEL = "anthropic:claude-opus-4-6"
FAST = CallSettings(timeout_s=5.0, max_attempts=3, backoff_initial_s=0.01, backoff_max_s=0.05)
# Gather for 50 ms, poll every 10–40 ms: a batch test takes a fraction of a second.
QUICK = BatchSettings(window_s=0.05, max_gather_s=1.0, poll_initial_s=0.01, poll_max_s=0.04)
# USD per million tokens, and half of it through a batch API.
#   openai:gpt-5.2      2 in / 10 out  -> batch 1 / 5
#   anthropic:opus      4 in / 20 out  -> batch 2 / 10
PRICES = PriceTable(
    {OPENAI_MODEL: ModelPrice(2.0, 10.0), ANTHROPIC_MODEL: ModelPrice(4.0, 20.0)},
    {"openai:*": 0.5, "anthropic:*": 0.5},
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with sdk_server(
        monkeypatch, tmp_path / "env-cache", anthropic_key=ANTHROPIC_KEY, openai_key=OPENAI_KEY
    ) as fake:
        # 1000 tokens in, 100 out for every answer.
        fake.always(
            OPENAI_PATH,
            Reply(body=lambda b: openai_body(_echo(b), prompt_tokens=1000, completion_tokens=100)),
        )
        fake.always(
            ANTHROPIC_PATH,
            Reply(
                body=lambda b: anthropic_body(text=_echo(b), input_tokens=1000, output_tokens=100)
            ),
        )
        yield fake


def _echo(body: dict[str, Any]) -> str:
    return "echo: " + str(body["messages"][-1]["content"])


def hub_for(
    server: FakeLLMServer, cache_dir: Path, *, batch: BatchSettings | None = QUICK, **kw: Any
) -> ProviderHub:
    return ProviderHub(
        settings=FAST,
        cache=CompletionCache(cache_dir),
        budget=kw.pop("budget", Budget()),
        prices=PRICES,
        base_urls={"openai": server.url + "/v1", "anthropic": server.url},
        batch=batch,
        **kw,
    )


def ask(hub: ProviderHub, model: str, prompts: list[str], **kw: Any) -> list[Any]:
    async def go() -> list[Any]:
        try:
            requests = [
                CompletionRequest.from_prompt(model, p, max_tokens=200, **kw) for p in prompts
            ]
            return list(
                await asyncio.gather(*(hub.complete(r) for r in requests), return_exceptions=True)
            )
        finally:
            await hub.aclose()

    return asyncio.run(go())


def paths(server: FakeLLMServer) -> list[str]:
    return [r.path for r in server.requests]


# One answer: 1000 in, 100 out.
#   openai list:  1000·2 + 100·10 = 3000 per million = $0.003;  batch: $0.0015
#   anthropic list: 1000·4 + 100·20 = 6000 per million = $0.006; batch: $0.003
OPENAI_BATCH_CALL = 0.0015
ANTHROPIC_BATCH_CALL = 0.003


@pytest.mark.parametrize(
    ("model", "per_call"),
    [(OPENAI_MODEL, OPENAI_BATCH_CALL), (ANTHROPIC_MODEL, ANTHROPIC_BATCH_CALL)],
)
def test_a_batch_that_partly_fails(
    server: FakeLLMServer, tmp_path: Path, model: str, per_call: float
) -> None:
    """2 of 5 requests error: 3 completions at the batch price, 2 ProviderErrors, their holds
    released; a rerun sends only the 2 in a new batch, the 3 come from the cache."""
    server.plan_batches(BatchPlan(running_polls=2, errored=frozenset({1, 3})))
    prompts = [f"question {i}" for i in range(5)]
    hub = hub_for(server, tmp_path / "cache")
    results = ask(hub, model, prompts)
    answered = [r for r in results if isinstance(r, Completion)]
    failed = [r for r in results if isinstance(r, ProviderError)]
    assert [r.text for r in answered] == [
        "echo: question 0",
        "echo: question 2",
        "echo: question 4",
    ]
    assert len(failed) == 2 and all("scripted failure" in str(e) for e in failed)
    assert all(r.cost_usd == pytest.approx(per_call) and not r.cached for r in answered)
    assert hub.budget is not None
    assert hub.budget.spent_usd == pytest.approx(3 * per_call)
    assert hub.budget.live_calls == 3
    totals = hub.budget.ledger_totals()
    assert totals.reserved_usd == 0 and totals.spent_usd == pytest.approx(3 * per_call)
    stats = hub.batch_stats()
    assert (stats.batches_submitted, stats.requests, stats.succeeded, stats.failed) == (1, 5, 3, 2)
    # Not one per-call request: everything went through the batch endpoints.
    assert OPENAI_PATH not in paths(server) and ANTHROPIC_PATH not in paths(server)

    rerun = hub_for(server, tmp_path / "cache")
    again = ask(rerun, model, prompts)
    assert all(isinstance(r, Completion) for r in again)
    assert [r.cached for r in again] == [True, False, True, False, True]
    assert len(server.batches) == 2
    second = list(server.batches.values())[1]
    assert len(second.requests) == 2
    assert rerun.budget is not None and rerun.budget.spent_usd == pytest.approx(2 * per_call)


def test_an_openai_batch_that_expires_keeps_its_finished_half(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.plan_batches(BatchPlan(running_polls=1, outcome="expired", done=2))
    hub = hub_for(server, tmp_path / "cache")
    results = ask(hub, OPENAI_MODEL, [f"q{i}" for i in range(4)])
    assert [r.text for r in results[:2]] == ["echo: q0", "echo: q1"]
    assert all(isinstance(r, ProviderError) and "batch_expired" in str(r) for r in results[2:])
    assert hub.budget is not None and hub.budget.spent_usd == pytest.approx(2 * OPENAI_BATCH_CALL)
    # Both files were read: the output (2 lines) and the error file (2 lines).
    assert paths(server).count("/v1/files/file-0003/content") == 1
    assert paths(server).count("/v1/files/file-0004/content") == 1


def test_an_anthropic_batch_that_expires_keeps_its_finished_half(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.plan_batches(BatchPlan(running_polls=3, outcome="expired", done=2))
    hub = hub_for(server, tmp_path / "cache")
    results = ask(hub, ANTHROPIC_MODEL, [f"q{i}" for i in range(4)])
    assert [r.text for r in results[:2]] == ["echo: q0", "echo: q1"]
    assert all(isinstance(r, ProviderError) and "expired" in str(r) for r in results[2:])
    batch = next(iter(server.batches.values()))
    assert batch.polls >= 4  # three times in progress, then ended (and results re-reads it)
    assert hub.budget is not None
    assert hub.budget.spent_usd == pytest.approx(2 * ANTHROPIC_BATCH_CALL)


def test_an_openai_batch_that_fails_as_a_whole_fails_each_request(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.plan_batches(BatchPlan(running_polls=0, validating_polls=0, outcome="failed"))
    hub = hub_for(server, tmp_path / "cache")
    results = ask(hub, OPENAI_MODEL, ["a", "b"])
    assert all(isinstance(r, ProviderError) for r in results)
    assert "the batch failed (invalid_request: scripted failure)" in str(results[0])
    assert hub.budget is not None and hub.budget.spent_usd == 0
    assert hub.budget.ledger_totals().reserved_usd == 0


def test_a_submitted_batch_is_polled_again_after_a_restart_not_resubmitted(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """The first process gives up while its batch runs (as a killed one would); the second,
    with the same cache, finds the batch by its requests' keys and polls it."""
    server.plan_batches(BatchPlan(running_polls=10**6))
    first = hub_for(server, tmp_path / "cache")

    async def abandon() -> None:
        request = CompletionRequest.from_prompt(OPENAI_MODEL, "q", max_tokens=200)
        task = asyncio.ensure_future(first.complete(request))
        while not server.batches or next(iter(server.batches.values())).polls < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await first.aclose()

    asyncio.run(abandon())
    assert first.budget is not None and first.budget.ledger_totals().reserved_usd == 0
    (batch,) = server.batches.values()
    batch.finish_now()
    second = hub_for(server, tmp_path / "cache")
    (result,) = ask(second, OPENAI_MODEL, ["q"])
    assert isinstance(result, Completion) and result.text == "echo: q"
    assert len(server.batches) == 1  # no new batch
    assert server.calls("/v1/files") == 1 and server.calls("/v1/batches") == 1
    assert second.batch_stats().batches_resumed == 1
    assert second.budget is not None and second.budget.spent_usd == pytest.approx(OPENAI_BATCH_CALL)
    records = CompletionCache(tmp_path / "cache").batches().batches()
    assert [(r.batch_id, r.state, r.requests) for r in records] == [(batch.id, "ended", 1)]


def test_a_batch_reply_is_replayed_by_a_later_per_call_run(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    ask(hub_for(server, tmp_path / "cache"), ANTHROPIC_MODEL, ["x", "y"])
    per_call = hub_for(server, tmp_path / "cache", batch=None)
    results = ask(per_call, ANTHROPIC_MODEL, ["x", "y"])
    assert [r.text for r in results] == ["echo: x", "echo: y"]
    assert all(r.cached for r in results)
    assert server.calls(ANTHROPIC_PATH) == 0


SCHEMA = OutputSchema.model_validate(
    {
        "name": "answer",
        "schema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
            "additionalProperties": False,
        },
    }
)


@pytest.mark.parametrize("model", [OPENAI_MODEL, ANTHROPIC_MODEL])
def test_an_invalid_reply_is_re_asked_in_the_next_batch(
    server: FakeLLMServer, tmp_path: Path, model: str
) -> None:
    def openai_reply(body: dict[str, Any]) -> dict[str, Any]:
        first = len(body["messages"]) <= 2  # system + user: the first ask
        return openai_body(
            '{"n": "one"}' if first else '{"n": 1}', prompt_tokens=1000, completion_tokens=100
        )

    def anthropic_reply(body: dict[str, Any]) -> dict[str, Any]:
        first = len(body["messages"]) == 1
        answer = {"n": "one"} if first else {"n": 1}
        return anthropic_body(tool=("answer", answer), input_tokens=1000, output_tokens=100)

    server.always(OPENAI_PATH, Reply(body=openai_reply))
    server.always(ANTHROPIC_PATH, Reply(body=anthropic_reply))
    hub = hub_for(server, tmp_path / "cache")
    (result,) = ask(hub, model, ["count"], output_schema=SCHEMA, system="answer in JSON")
    assert isinstance(result, Completion)
    assert result.parsed == {"n": 1} and result.error is None and result.calls == 2
    assert len(server.batches) == 2  # the re-ask went in a second batch
    per_call = OPENAI_BATCH_CALL if model == OPENAI_MODEL else ANTHROPIC_BATCH_CALL
    assert result.cost_usd == pytest.approx(2 * per_call)


def test_an_invalid_reply_that_stays_invalid_is_an_error_not_dropped(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    server.always(
        OPENAI_PATH,
        Reply(body=lambda b: openai_body("not json", prompt_tokens=1000, completion_tokens=100)),
    )
    hub = hub_for(server, tmp_path / "cache")
    (result,) = ask(hub, OPENAI_MODEL, ["count"], output_schema=SCHEMA)
    assert isinstance(result, Completion)
    assert result.parsed is None and result.error is not None and result.calls == 3
    assert len(server.batches) == 3  # the ask and two re-asks
    assert result.cost_usd == pytest.approx(3 * OPENAI_BATCH_CALL)


def test_the_same_request_twice_at_once_is_sent_and_paid_once(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    hub = hub_for(server, tmp_path / "cache")
    results = ask(hub, OPENAI_MODEL, ["same", "same", "other"])
    assert [r.text for r in results] == ["echo: same", "echo: same", "echo: other"]
    (batch,) = server.batches.values()
    assert len(batch.requests) == 2
    assert sorted(r.cached for r in results) == [False, False, True]
    assert hub.budget is not None and hub.budget.spent_usd == pytest.approx(2 * OPENAI_BATCH_CALL)


def test_a_provider_without_batches_falls_back_to_per_call_with_a_note(
    server: FakeLLMServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = f"openai-compatible:{server.url}/v1:local-model"
    caplog.set_level(logging.WARNING, logger="chatledger.providers")
    hub = hub_for(server, tmp_path / "cache")
    results = ask(hub, model, ["a", "b", "c"])
    assert [r.text for r in results] == ["echo: a", "echo: b", "echo: c"]
    assert server.calls(OPENAI_PATH) == 3 and not server.batches
    assert "openai-compatible has no batch API" in caplog.text
    assert hub.batch_fallbacks() == [f"openai-compatible:{server.url}/v1"]
    assert hub.provider_for(model).requests_at_once() == FAST.concurrency


def anthropic_extractor(body: dict[str, Any]) -> dict[str, Any]:
    extraction = extraction_for(asked_chunk(body))
    return anthropic_body(tool=(SCHEMA_NAME, extraction), input_tokens=1000, output_tokens=400)


@pytest.mark.parametrize("model", [OPENAI_MODEL, ANTHROPIC_MODEL])
def test_a_200_chunk_extraction_costs_half_in_batch_mode(
    server: FakeLLMServer, tmp_path: Path, model: str
) -> None:
    """The same 200 chunks, once per call and once in batch mode (separate caches): the run's
    dollar accounting — the lines' billed and list cost, the budget's spend, the ledger —
    says exactly half.

    Every answer is 1000 tokens in, 400 out:
      openai:gpt-5.2    per call 1000·2 + 400·10 = 6,000 per million = $0.006, × 200 = $1.20
                        batch    1000·1 + 400·5  = 3,000 per million = $0.003, × 200 = $0.60
      anthropic:opus    per call 1000·4 + 400·20 = 12,000 per million = $0.012, × 200 = $2.40
                        batch    1000·2 + 400·10 = 6,000 per million  = $0.006, × 200 = $1.20
    """
    server.always(OPENAI_PATH, Reply(body=openai_extractor(prompt_tokens=1000)))
    server.always(ANTHROPIC_PATH, Reply(body=anthropic_extractor))
    chunks = read_chunks(write_chunks(tmp_path / "chunks.jsonl", 200))
    expected = {OPENAI_MODEL: (1.20, 0.60), ANTHROPIC_MODEL: (2.40, 1.20)}[model]
    spent: list[float] = []
    for mode, batch in (("per-call", None), ("batch", QUICK)):
        hub = hub_for(server, tmp_path / f"cache-{mode}", batch=batch, budget=Budget(100.0))
        out = tmp_path / f"{mode}.jsonl"
        summary = extract_chunks(model, chunks, out, hub=hub)
        assert summary.complete and summary.progress.written == 200
        assert summary.progress.invalid == 0 and summary.progress.live_calls == 200
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        billed = sum(line["usage"]["billed_usd"] for line in lines)
        assert summary.progress.billed_usd == pytest.approx(billed)
        assert hub.budget is not None
        assert hub.budget.spent_usd == pytest.approx(billed)
        assert hub.budget.ledger_totals().spent_usd == pytest.approx(billed)
        spent.append(billed)
        assert hub.cache is not None
        hub.cache.close()
    per_call_usd, batch_usd = spent
    assert per_call_usd == pytest.approx(expected[0])
    assert batch_usd == pytest.approx(expected[1])
    assert batch_usd == pytest.approx(per_call_usd / 2)
    # The per-call run made 200 calls; the batch run none, in one batch of 200.
    path = OPENAI_PATH if model == OPENAI_MODEL else ANTHROPIC_PATH
    assert server.calls(path) == 200
    (batch,) = server.batches.values()
    assert len(batch.requests) == 200

    # Both files hold the same extractions.
    def extractions(name: str) -> dict[str, Any]:
        rows = [json.loads(x) for x in (tmp_path / name).read_text().splitlines()]
        return {row["chunk_id"]: row["extraction"] for row in rows}

    assert extractions("batch.jsonl") == extractions("per-call.jsonl")


def test_no_key_is_written_or_sent_in_a_batch(server: FakeLLMServer, tmp_path: Path) -> None:
    ask(hub_for(server, tmp_path / "cache"), OPENAI_MODEL, ["a"])
    ask(hub_for(server, tmp_path / "cache"), ANTHROPIC_MODEL, ["a"])
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert OPENAI_KEY.encode() not in data and ANTHROPIC_KEY.encode() not in data, path
    for file in server.batch_api.files.values():
        assert OPENAI_KEY.encode() not in file
    for request in server.requests:
        assert OPENAI_KEY not in json.dumps(request.body, default=str)
        assert ANTHROPIC_KEY not in json.dumps(request.body, default=str)
