"""The ``claude -p`` provider, against a fake ``claude`` script put first on PATH."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from chatledger.providers import (
    Budget,
    CallSettings,
    ChatMessage,
    ClaudeCliProvider,
    CompletionCache,
    CompletionRequest,
    OutputSchema,
    ProviderError,
    ProviderHub,
)

FAKE = Path(__file__).resolve().parent / "fakes" / "fake_claude.py"
FAST = CallSettings(timeout_s=5.0, max_attempts=2, backoff_initial_s=0.01, backoff_max_s=0.02)
SCHEMA = OutputSchema.model_validate(
    {
        "name": "topics",
        "schema": {
            "type": "object",
            "properties": {"topics": {"type": "array", "items": {"type": "string"}}},
            "required": ["topics"],
        },
    }
)


class FakeClaude:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def script(self, *replies: dict[str, Any]) -> None:
        (self.folder / "replies.json").write_text(json.dumps(list(replies)), encoding="utf-8")

    def calls(self) -> list[dict[str, Any]]:
        path = self.folder / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClaude:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "claude"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n', encoding="utf-8")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_DIR", str(tmp_path))
    return FakeClaude(tmp_path)


def result(text: str, **extra: Any) -> dict[str, Any]:
    body = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": text,
        "total_cost_usd": 0.0123,
        "usage": {
            "input_tokens": 40,
            "cache_creation_input_tokens": 1000,
            "cache_read_input_tokens": 2000,
            "output_tokens": 60,
        },
    }
    body.update(extra)
    return {"result": body}


def run(provider: ClaudeCliProvider, request: CompletionRequest) -> Any:
    return asyncio.run(provider.complete(request))


def test_runs_claude_print_mode_and_reads_its_json(fake_claude: FakeClaude) -> None:
    fake_claude.script(result("Paris."))
    budget = Budget(cap_usd=1.0)
    request = CompletionRequest.from_prompt(
        "claude-cli:sonnet", "Capital of France?", system="Be brief.", max_tokens=100
    )
    completion = run(ClaudeCliProvider(settings=FAST, budget=budget), request)

    assert completion.text == "Paris."
    # input = 40 + 1000 cache writes + 2000 cache reads = 3040; the CLI's own cost is used.
    assert (completion.input_tokens, completion.output_tokens) == (3040, 60)
    assert completion.cost_usd == pytest.approx(0.0123)
    assert budget.spent_usd == pytest.approx(0.0123)
    (call,) = fake_claude.calls()
    assert call["argv"] == [
        "-p",
        "--output-format",
        "json",
        "--model",
        "sonnet",
        "--system-prompt",
        "Be brief.",
    ]
    assert call["stdin"] == "Capital of France?"


def test_structured_output_is_asked_in_the_prompt_and_re_asked(fake_claude: FakeClaude) -> None:
    fake_claude.script(
        result('{"topics": "budget"}'), result('```json\n{"topics": ["budget"]}\n```')
    )
    request = CompletionRequest.from_prompt("claude-cli:haiku", "Topics?", output_schema=SCHEMA)
    completion = run(ClaudeCliProvider(settings=FAST), request)

    assert completion.parsed == {"topics": ["budget"]}
    assert completion.structured_mode == "prompt" and completion.calls == 2
    first, second = fake_claude.calls()
    system = first["argv"][first["argv"].index("--system-prompt") + 1]
    assert "JSON Schema named 'topics'" in system
    # The re-ask carries the conversation as a transcript, then the validation error.
    assert '<assistant>\n{"topics": "budget"}\n</assistant>' in second["stdin"]
    assert "at topics: 'budget' is not of type 'array'" in second["stdin"]
    # Two CLI-reported costs of $0.0123 each.
    assert completion.cost_usd == pytest.approx(0.0246)


def test_the_cache_spares_a_second_run(fake_claude: FakeClaude, tmp_path: Path) -> None:
    fake_claude.script(result("once"))
    hub = ProviderHub(settings=FAST, cache=CompletionCache(tmp_path / "cache"))
    request = CompletionRequest.from_prompt("claude-cli:sonnet", "hi")
    first = asyncio.run(hub.complete(request))
    second = asyncio.run(hub.complete(request))
    assert (first.text, second.text) == ("once", "once")
    assert second.cached and second.cost_usd == 0.0
    assert len(fake_claude.calls()) == 1


def test_an_error_result_raises_a_provider_error(fake_claude: FakeClaude) -> None:
    fake_claude.script(result("Credit balance is too low", is_error=True, subtype="success"))
    with pytest.raises(ProviderError, match="claude -p failed: Credit balance is too low"):
        run(ClaudeCliProvider(settings=FAST), CompletionRequest.from_prompt("claude-cli:opus", "x"))


def test_a_crash_without_json_reports_stderr(fake_claude: FakeClaude) -> None:
    fake_claude.script({"raw": "", "stderr": "unknown option --model", "exit": 2})
    with pytest.raises(ProviderError, match=r"exited with status 2 .*unknown option --model"):
        run(ClaudeCliProvider(settings=FAST), CompletionRequest.from_prompt("claude-cli:opus", "x"))


def test_a_hung_cli_is_killed_and_retried(fake_claude: FakeClaude) -> None:
    # The deadline leaves the fake CLI (a Python script) time to start on a loaded machine:
    # with 0.5 s the second, prompt attempt timed out too at load 7.
    fake_claude.script({"sleep": 60, **result("late")}, result("second try"))
    settings = CallSettings(timeout_s=3.0, max_attempts=2, backoff_initial_s=0.01)
    completion = run(
        ClaudeCliProvider(settings=settings), CompletionRequest.from_prompt("claude-cli:opus", "x")
    )
    assert completion.text == "second try"
    assert len(fake_claude.calls()) == 2


def test_a_missing_executable_is_reported(fake_claude: FakeClaude) -> None:
    provider = ClaudeCliProvider(settings=FAST, executable="claude-not-installed")
    with pytest.raises(ProviderError, match="'claude-not-installed' was not found on PATH"):
        run(provider, CompletionRequest.from_prompt("claude-cli:opus", "x"))


def test_multi_turn_requests_become_one_transcript(fake_claude: FakeClaude) -> None:
    fake_claude.script(result("4"))
    request = CompletionRequest(
        model="claude-cli:sonnet",
        messages=(
            ChatMessage(role="user", content="2+2?"),
            ChatMessage(role="assistant", content="5"),
            ChatMessage(role="user", content="Check again."),
        ),
    )
    run(ClaudeCliProvider(settings=FAST), request)
    (call,) = fake_claude.calls()
    assert "--system-prompt" not in call["argv"]
    assert call["stdin"] == (
        "The conversation so far:\n\n<user>\n2+2?\n</user>\n\n<assistant>\n5\n</assistant>\n\n"
        "Now reply to this message:\n\nCheck again."
    )
