"""Turning an HTTP error from any API — or a 200 that is not a reply — into the provider layer's
own errors."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from chatledger.providers._errors import (
    MalformedReplyError,
    ProviderError,
    RetryableError,
    SchemaRejectedError,
)
from chatledger.providers._retry import RETRYABLE_STATUS, parse_retry_after
from chatledger.providers._secrets import redact

_MAX_DETAIL_CHARS = 300
# How much of a malformed body an error quotes: enough to tell a proxy's HTML page from an
# error object, short enough for one log line.
_SNIPPET_CHARS = 60
_SDK_PREFIX = re.compile(r"^Error code: \d+ - ")
# Words a server's 400 uses when it is the structured-output request it cannot handle.
_SCHEMA_WORDS = ("response_format", "json_schema", "schema", "tool", "structured")


def error_for_status(
    status: int,
    headers: object,
    detail: str,
    *,
    secrets: Iterable[str | None],
    key_variable: str,
    schema_sent: bool,
) -> Exception:
    """The error to raise for an HTTP ``status``; ``detail`` (the server's text) is redacted."""
    # The SDKs prefix the server's message with "Error code: 404 - "; the status is said once.
    text = _SDK_PREFIX.sub("", redact(detail, secrets))
    if len(text) > _MAX_DETAIL_CHARS:
        text = text[:_MAX_DETAIL_CHARS] + "…"
    if status in RETRYABLE_STATUS:
        return RetryableError(f"HTTP {status}", retry_after_s=parse_retry_after(headers))
    if status in (401, 403):
        # The server's text is left out on purpose: some echo part of the key back.
        return ProviderError(f"authentication failed (HTTP {status}): check {key_variable}")
    if schema_sent and status in (400, 422) and any(w in text.lower() for w in _SCHEMA_WORDS):
        return SchemaRejectedError(f"HTTP {status}: {text}")
    return ProviderError(f"HTTP {status}: {text}")


def malformed_reply(problem: str, body: object, *, secrets: Iterable[str | None]) -> Exception:
    """The (retryable) error for a 200 whose ``body`` is not a reply: says ``problem`` and
    quotes the start of the body, with any secret removed and non-printing bytes escaped."""
    if isinstance(body, bytes):
        text = body.decode("utf-8", errors="replace")
    elif isinstance(body, str):
        text = body
    else:
        text = json.dumps(body, ensure_ascii=False)
    # The whole body is redacted before it is cut, so no cut can leave part of a key behind.
    snippet = " ".join(redact(text, secrets).split())[:_SNIPPET_CHARS]
    return MalformedReplyError(f"{problem} (HTTP 200, body starts {snippet!r})")
