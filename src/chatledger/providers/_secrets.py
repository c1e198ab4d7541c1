"""API keys: read from the environment at call time, and scrubbed from any text we pass on.

A key is never stored on an object that is logged or serialised, never put in an exception
message, and never written to the cache (whose rows hold only completions).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from chatledger.providers._errors import MissingApiKeyError

REDACTED = "[redacted]"


def read_api_key(variable: str, provider: str, *, required: bool = True) -> str | None:
    """The key in ``variable``; a clear error naming the variable when a required key is missing."""
    value = os.environ.get(variable, "").strip()
    if value:
        return value
    if required:
        raise MissingApiKeyError(variable, provider)
    return None


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every occurrence of each secret replaced, for messages built from server
    replies (some servers echo part of the key back in authentication errors)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text
