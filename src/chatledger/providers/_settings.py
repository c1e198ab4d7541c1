"""How calls to one provider behave: timeouts, retries, re-asks and limits."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from chatledger.core import InputError

HttpClient = Literal["lean", "sdk"]

MAX_REPLY_BYTES_ENV = "CHATLEDGER_MAX_REPLY_BYTES"
DEFAULT_MAX_REPLY_BYTES = 2_000_000


def default_max_reply_bytes() -> int | None:
    """``$CHATLEDGER_MAX_REPLY_BYTES`` (0: no limit) if set, else 2,000,000."""
    text = os.environ.get(MAX_REPLY_BYTES_ENV, "").strip().replace("_", "")
    if not text:
        return DEFAULT_MAX_REPLY_BYTES
    if not text.isdigit():
        raise InputError(
            f"{MAX_REPLY_BYTES_ENV} is a number of bytes (0: no limit), not {text!r}",
            field=MAX_REPLY_BYTES_ENV,
        )
    return int(text) or None


@dataclass(frozen=True)
class CallSettings:
    """Defaults suit a paid API; tests shrink the delays."""

    # Seconds before one HTTP request (or one CLI run) is abandoned and retried.
    timeout_s: float = 120.0
    # Tries per model call, the first included: 429, 5xx, timeouts and lost connections retry.
    max_attempts: int = 5
    # Exponential back-off (with jitter) between tries when the server gives no retry-after.
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    # A server's retry-after is honoured up to this many seconds.
    max_retry_after_s: float = 300.0
    # Extra model calls that send a schema violation back; after them the completion is returned
    # unparsed with an error (never an exception).
    max_reasks: int = 2
    # Calls in flight at once to this provider, and request starts per second (None: no limit).
    concurrency: int = 4
    requests_per_second: float | None = None
    # How HTTP requests go out: "lean" posts the SDK's request (its URL and headers) on
    # chatledger's own keep-alive pool (see providers/_http.py; the SDK still sends it when a
    # proxy applies); "sdk" sends every request through the SDK.
    http_client: HttpClient = "lean"
    # The longest reply body read (None: no limit). A longer one is cut off as it arrives and
    # the call recorded as an invalid output, never cached (no model API sends megabytes for
    # one completion: it is a server gone wrong). Kept on the lean HTTP path and, through a
    # response hook, on the SDKs' (batch files excepted). $CHATLEDGER_MAX_REPLY_BYTES sets the
    # default.
    max_reply_bytes: int | None = field(default_factory=default_max_reply_bytes)

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.max_attempts < 1 or self.max_reasks < 0:
            raise ValueError("timeout_s > 0, max_attempts >= 1 and max_reasks >= 0 are required")
        if self.backoff_initial_s < 0 or self.backoff_max_s < 0 or self.max_retry_after_s < 0:
            raise ValueError("back-off and retry-after limits cannot be negative")
        if self.max_reply_bytes is not None and self.max_reply_bytes < 1024:
            raise ValueError("max_reply_bytes is at least 1024 (or None: no limit)")
        if self.http_client not in ("lean", "sdk"):
            raise ValueError("http_client is 'lean' or 'sdk'")


@dataclass(frozen=True)
class BatchSettings:
    """Batch mode (see providers/_batch.py): how requests are gathered into a batch and how
    long to wait between polls. Defaults suit the real APIs; tests shrink the waits."""

    # Submit once no new request has arrived for this long, or once max_requests are waiting
    # (or max_gather_s has passed since the first one, so a trickle still gets sent).
    window_s: float = 1.0
    max_gather_s: float = 30.0
    # Requests per batch (OpenAI takes 50,000 a file, Anthropic 100,000 a batch; both cap the
    # bytes too, which 10,000 extraction prompts stay well under).
    max_requests: int = 10_000
    # Waits between polls of one batch: the first, doubled after each poll up to the last.
    poll_initial_s: float = 5.0
    poll_max_s: float = 60.0
    # Give up polling after this long (the batch stays recorded: a rerun polls it again).
    # Both APIs end a batch within 24 hours.
    max_wait_s: float = 25 * 3600.0

    def __post_init__(self) -> None:
        if self.window_s < 0 or self.max_gather_s < self.window_s or self.max_requests < 1:
            raise ValueError("window_s >= 0, max_gather_s >= window_s, max_requests >= 1")
        if self.poll_initial_s <= 0 or self.poll_max_s < self.poll_initial_s:
            raise ValueError("poll_initial_s > 0 and poll_max_s >= poll_initial_s are required")
        if self.max_wait_s <= 0:
            raise ValueError("max_wait_s must be > 0")


# A local model on two CPU cores: one call at a time (its server has one slot), a long answer
# takes minutes (1.5B: ~22 tokens/s, so 4,096 tokens ≈ 3 minutes), and a failing local server
# is not helped by many retries. No re-asks: a grammar-constrained reply is always valid JSON of
# the schema, so the only failure is a reply cut off at max_tokens — asked again with the same
# limit, a small model loops into it again.
LOCAL_CALL_SETTINGS = CallSettings(
    timeout_s=900.0,
    max_attempts=3,
    backoff_initial_s=0.5,
    backoff_max_s=5.0,
    concurrency=1,
    max_reasks=0,
)
