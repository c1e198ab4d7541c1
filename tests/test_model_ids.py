"""Model ids: provider prefix, and OpenAI-compatible ids whose URL has colons of its own."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from chatledger.providers import ModelId, ModelIdError, parse_model_id


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("anthropic:claude-opus-4-6", ModelId("anthropic", "claude-opus-4-6")),
        ("openai:gpt-5.2", ModelId("openai", "gpt-5.2")),
        ("claude-cli:sonnet", ModelId("claude-cli", "sonnet")),
        # A model name may itself contain ':' after the provider prefix (fine-tuned ids do).
        ("openai:ft:gpt-5-mini:acme::abc123", ModelId("openai", "ft:gpt-5-mini:acme::abc123")),
        (
            "openai-compatible:http://127.0.0.1:8000/v1:qwen3",
            ModelId("openai-compatible", "qwen3", "http://127.0.0.1:8000/v1"),
        ),
        # Ollama tags: the model is everything after the URL, colons included.
        (
            "openai-compatible:http://localhost:11434/v1:qwen3:8b",
            ModelId("openai-compatible", "qwen3:8b", "http://localhost:11434/v1"),
        ),
        # No path: the port ends the URL.
        (
            "openai-compatible:http://127.0.0.1:8000:qwen3",
            ModelId("openai-compatible", "qwen3", "http://127.0.0.1:8000"),
        ),
        # No port, no path.
        (
            "openai-compatible:http://gpu-box:llama-3.1-8b",
            ModelId("openai-compatible", "llama-3.1-8b", "http://gpu-box"),
        ),
        # IPv6 literal: the colons inside the brackets belong to the host.
        (
            "openai-compatible:http://[::1]:8000/v1:qwen3",
            ModelId("openai-compatible", "qwen3", "http://[::1]:8000/v1"),
        ),
        # https, a deeper path with a trailing slash, and a model with '/' (OpenRouter style).
        (
            "openai-compatible:https://openrouter.ai/api/v1/:meta-llama/llama-3.3-70b-instruct",
            ModelId(
                "openai-compatible",
                "meta-llama/llama-3.3-70b-instruct",
                "https://openrouter.ai/api/v1/",
            ),
        ),
    ],
)
def test_parses_and_round_trips(text: str, expected: ModelId) -> None:
    parsed = parse_model_id(text)
    assert parsed == expected
    assert str(parsed) == text


def test_endpoint_groups_models_of_one_server() -> None:
    a = parse_model_id("openai-compatible:http://127.0.0.1:8000/v1:qwen3")
    b = parse_model_id("openai-compatible:http://127.0.0.1:8000/v1:llama3")
    assert a.endpoint == b.endpoint == "openai-compatible:http://127.0.0.1:8000/v1"
    assert parse_model_id("anthropic:claude-opus-4-6").endpoint == "anthropic"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("gpt-5.2", "provider prefix"),
        ("mistral:large", "provider prefix"),
        ("anthropic:", "empty or blank model"),
        ("anthropic: claude", "empty or blank model"),
        ("openai-compatible:qwen3", "openai-compatible:<http(s)://"),
        ("openai-compatible:http://127.0.0.1:8000/v1", "openai-compatible:<http(s)://"),
        ("openai-compatible:http://127.0.0.1:8000/v1:", "openai-compatible:<http(s)://"),
        ("openai-compatible:http://localhost:8000", "openai-compatible:<http(s)://"),
        ("openai-compatible:ftp://host/v1:m", "openai-compatible:<http(s)://"),
        # Credentials never go in a model id: keys come from the environment.
        ("openai-compatible:http://user:pw@host/v1:m", "no credentials"),
        ("openai-compatible:http://user@host:m", "no credentials"),
        ("openai-compatible:http://host:99999/v1:m", "out of range"),
    ],
)
def test_rejects_with_a_useful_message(text: str, says: str) -> None:
    with pytest.raises(ModelIdError) as info:
        parse_model_id(text)
    assert says in str(info.value)


_label = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)


@given(
    host=st.one_of(
        st.lists(_label, min_size=1, max_size=3).map(".".join),
        st.sampled_from(["[::1]", "[fe80::1]", "127.0.0.1"]),
    ),
    port=st.one_of(st.none(), st.integers(min_value=1, max_value=65535)),
    path=st.one_of(st.none(), st.lists(_label, max_size=3).map(lambda p: "/" + "/".join(p))),
    # Model names with ':' (Ollama tags), '/' and '.' must survive.
    model=st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._/-", min_size=1, max_size=10),
        min_size=1,
        max_size=3,
    ).map(":".join),
)
def test_any_compatible_id_round_trips(
    host: str, port: int | None, path: str | None, model: str
) -> None:
    # With neither port nor path, a model starting "<digits>:" or "<digits>/" would read as a
    # port; that spelling is documented as ambiguous, so it is not generated.
    head = model.split(":")[0].split("/")[0]
    assume(not (port is None and path is None and (head.isdigit() or model.isdigit())))
    base_url = f"http://{host}" + (f":{port}" if port is not None else "") + (path or "")
    text = f"openai-compatible:{base_url}:{model}"
    parsed = parse_model_id(text)
    assert (parsed.base_url, parsed.model) == (base_url, model)
    assert str(parsed) == text
