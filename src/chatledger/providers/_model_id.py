"""Model ids: ``provider:model``, with the server's URL inside for OpenAI-compatible servers.

    anthropic:claude-opus-4-6
    openai:gpt-5.2
    openai-compatible:http://127.0.0.1:8000/v1:qwen3
    openai-compatible:http://localhost:11434/v1:qwen3:8b     (Ollama tag: model "qwen3:8b")
    claude-cli:sonnet
    local:qwen2.5-coder-0.5b                                  (a local GGUF model ChatLedger serves)
    local:/models/my-model.Q4_K_M.gguf

The base URL of an OpenAI-compatible id contains colons of its own (scheme, port, IPv6 host), so
the id is not split on colons blindly: the URL is read as scheme://host[:port][/path] and the
model is everything after the first ':' that follows the URL (its path, or its port when it has
no path). The model part may therefore contain ':' itself, as Ollama tags do; a ':' inside the
URL path is not supported (no OpenAI-compatible server uses one). Digits right after a path-less
host are always the port: ``http://h:8000:m`` is model ``m`` on port 8000.

Credentials in the URL are refused (keys come only from the environment), and no error ever
repeats them: every message quotes the id through :func:`redact_model_id`, which replaces
whatever stands before an ``@``, and every query parameter's value, with ``***``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from chatledger.core import ChatLedgerError

ANTHROPIC = "anthropic"
OPENAI = "openai"
OPENAI_COMPATIBLE = "openai-compatible"
CLAUDE_CLI = "claude-cli"
LOCAL = "local"
PROVIDER_KINDS = (ANTHROPIC, OPENAI, OPENAI_COMPATIBLE, CLAUDE_CLI, LOCAL)

_EXAMPLES = (
    "anthropic:claude-opus-4-6, openai:gpt-5.2, "
    "openai-compatible:http://127.0.0.1:8000/v1:qwen3, claude-cli:sonnet, "
    "local:qwen2.5-coder-0.5b"
)

# scheme://host[:port][/path]:model — host is a bracketed IPv6 literal or a name/IPv4 without
# ':', '/', '@'. Port and path are possessive (``?+``): digits after the host that end at '/',
# ':' or the end are the port, never the start of the model, so "http://h:8000/v1" is refused
# for having no model instead of being read as model "8000/v1".
_COMPATIBLE_ID = re.compile(
    r"""
    (?P<base_url>
        (?P<scheme>https?)://
        (?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/@\[\]?#]+)
        (?::(?P<port>[0-9]{1,5})(?=[/:]|$))?+
        (?P<path>/[^\s:?#@]*)?+
    )
    :(?P<model>\S+)
    """,
    re.VERBOSE,
)


class ModelIdError(ChatLedgerError, ValueError):
    """A model id that cannot be read (a ValueError too, so pydantic fields report it)."""


@dataclass(frozen=True)
class ModelId:
    """A parsed model id. ``str(model_id)`` gives back the id it was parsed from."""

    provider: str
    model: str
    base_url: str | None = None

    def __str__(self) -> str:
        if self.base_url is not None:
            return f"{self.provider}:{self.base_url}:{self.model}"
        return f"{self.provider}:{self.model}"

    @property
    def endpoint(self) -> str:
        """Which server the calls go to: calls to one endpoint share one concurrency limit.
        Each local model is served by a server of its own."""
        if self.provider == LOCAL:
            return f"{self.provider}:{self.model}"
        return f"{self.provider}:{self.base_url}" if self.base_url else self.provider


# A query parameter's value (``?key=…``, ``&token=…``): up to the next parameter, a space, a
# fragment or a quote — the model name after it may go too, the secret never stays.
_QUERY_VALUE = re.compile(r"([?&][^=&\s'\"?#]*=)[^&\s'\"#]*")


def redact_model_id(text: str) -> str:
    """``text`` fit to quote in a message: every query parameter's value replaced by ``***``
    (``/v1?key=secret:m`` → ``/v1?key=***``), and with an ``@`` in it, everything from the
    start of the URL's authority (or of the part after the provider prefix) up to the last
    ``@`` — ``http://user:secret@host:8000/v1:m`` becomes ``http://***@host:8000/v1:m``. The
    last ``@``, because a password may hold one itself."""
    if "=" in text:
        text = _QUERY_VALUE.sub(r"\1***", text)
    at = text.rfind("@")
    if at < 0:
        return text
    scheme = text.rfind("://", 0, at)
    if scheme >= 0:
        start = scheme + 3
    else:
        colon = text.find(":", 0, at)
        start = colon + 1 if colon >= 0 else 0
    return f"{text[:start]}***{text[at:]}"


@lru_cache(maxsize=1024)
def parse_model_id(text: str) -> ModelId:
    """Read a model id; raise :class:`ModelIdError` saying what is wrong and what is expected.
    The message never holds credentials a URL in ``text`` carried (see redact_model_id).
    Each call reads the id three times (request, hub, provider): ids read are kept (a
    ``ModelId`` is immutable; a refused id is not kept)."""
    provider, sep, rest = text.partition(":")
    shown = redact_model_id(text)
    if not sep or provider not in PROVIDER_KINDS:
        raise ModelIdError(
            f"model id {shown!r} must start with a provider prefix "
            f"({', '.join(p + ':' for p in PROVIDER_KINDS)}), e.g. {_EXAMPLES}"
        )
    if provider == OPENAI_COMPATIBLE:
        return _parse_compatible(shown, rest)
    if not rest or rest != rest.strip() or any(ch.isspace() for ch in rest):
        raise ModelIdError(f"model id {shown!r} has an empty or blank model name after {provider}:")
    return ModelId(provider=provider, model=rest)


def _parse_compatible(shown: str, rest: str) -> ModelId:
    """``shown`` is the whole id as messages may quote it (redacted)."""
    if "@" in rest:
        # Credentials (user:password@host), wherever the URL's parts would put them; an
        # '@' has no other place in an OpenAI-compatible id's URL.
        authority = rest.partition("://")[2].partition("/")[0]
        if "@" in authority or "@" in rest.partition("://")[2].rpartition(":")[0]:
            raise ModelIdError(
                f"model id {shown!r}: no credentials in the URL; put the key in "
                "OPENAI_COMPATIBLE_API_KEY"
            )
    match = _COMPATIBLE_ID.fullmatch(rest)
    if match is None:
        raise ModelIdError(
            f"model id {shown!r}: an OpenAI-compatible id is "
            "openai-compatible:<http(s)://host[:port][/path]>:<model>, "
            "e.g. openai-compatible:http://127.0.0.1:8000/v1:qwen3 "
            "(no credentials in the URL, no ':' in its path)"
        )
    port = match.group("port")
    if port is not None and not 0 < int(port) < 65536:
        raise ModelIdError(f"model id {shown!r}: port {port} is out of range")
    return ModelId(
        provider=OPENAI_COMPATIBLE, model=match.group("model"), base_url=match.group("base_url")
    )
