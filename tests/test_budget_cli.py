"""``--budget-usd`` bounds a ledger's spend across invocations, ``chatledger budget show``
reads it and ``chatledger budget reset`` starts a new period — end to end, over loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply
from fakes.scripted_models import openai_extractor, write_chunks
from test_cli_errors import assert_one_error_line, chatledger

# Output at $1000 per Mtok ($0.001 a token), input free: each reply of 100 tokens costs $0.10
# and each call's worst case is max_tokens 200 · $0.001 = $0.20.
PRICES = {"openai-compatible:*": {"input": 0.0, "output": 1000.0}}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        fake.always(OPENAI_PATH, Reply(body=openai_extractor(completion_tokens=100)))
        yield fake


def test_the_cap_is_cumulative_and_budget_reset_starts_a_new_period(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    write_chunks(tmp_path / "chunks.jsonl", 6)
    (tmp_path / "prices.json").write_text(json.dumps(PRICES), encoding="utf-8")
    model = f"openai-compatible:{server.url}/v1:fake"

    def extract(out: str) -> tuple[int, str]:
        result = chatledger(
            "extract", "--model", model, "--chunks", "chunks.jsonl", "--out", out,
            "--cache-dir", "cache", "--prices", "prices.json", "--max-tokens", "200",
            "--concurrency", "1", "--budget-usd", "0.35", "--budget-name", "trial",
            cwd=tmp_path,
        )  # fmt: skip
        return result.code, result.err

    # $0.35: calls 1 (0 + 0.20) and 2 (0.10 + 0.20) fit, call 3 (0.20 + 0.20) does not.
    code, err = extract("a.jsonl")
    assert code == 1 and "stopped by the budget" in err and "'trial'" in err
    assert server.calls() == 2
    # Another output, the same ledger: $0.20 spent + $0.20 worst case > $0.35, so not one
    # call — a second invocation cannot spend the cap again.
    code, _ = extract("b.jsonl")
    assert code == 1 and server.calls() == 2

    shown = chatledger("budget", "show", "--cache-dir", "cache", "--format", "json", cwd=tmp_path)
    ledgers = {row["name"]: row for row in json.loads(shown.out)["ledgers"]}
    assert ledgers["trial"]["calls"] == 2
    assert ledgers["trial"]["spent_usd"] == pytest.approx(0.20)
    assert ledgers["trial"]["calls_in_flight"] == 0

    # A ledger never spent under is named as missing, beside the ones there: not "cleared $0".
    other = chatledger("budget", "reset", "--cache-dir", "cache", "--format", "json", cwd=tmp_path)
    assert other.code == 0 and json.loads(other.out) == {
        "cache": str(Path("cache", "completions.sqlite3")),
        "reset": None,
        "ledgers": ["trial"],
    }
    reset = chatledger("budget", "reset", "--name", "trial", "--cache-dir", "cache", cwd=tmp_path)
    assert reset.code == 0 and "cleared $0.2000 over 2 call(s)" in reset.out
    code, _ = extract("a.jsonl")  # resumes a.jsonl: two new calls fit in the new period
    assert code == 1 and server.calls() == 4
    lines = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4


def test_a_bad_ledger_name_is_one_line(tmp_path: Path) -> None:
    result = chatledger("budget", "reset", "--name", "no spaces", "--cache-dir", "c", cwd=tmp_path)
    assert_one_error_line(result, 2, "cannot name a spend ledger")


def test_reset_without_a_ledger_says_so_naming_the_cache_and_creates_nothing(
    tmp_path: Path,
) -> None:
    result = chatledger("budget", "reset", "--cache-dir", "nothing-here", cwd=tmp_path)
    assert result.code == 0, result.err
    text = " ".join(result.out.split())  # the console may wrap a long path
    database = Path("nothing-here", "completions.sqlite3")  # as given: relative
    assert text == f"no ledger 'default' in {database} (no call cache there): nothing to reset"
    assert not (tmp_path / "nothing-here").exists()
