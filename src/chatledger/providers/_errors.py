"""Errors of the provider layer. None of their messages ever contains an API key."""

from __future__ import annotations

from chatledger.core import ChatLedgerError, EnvironmentFault, MissingExtraError


class ProviderError(ChatLedgerError):
    """A model call failed for a reason that retrying will not fix (or retries ran out)."""


class MissingApiKeyError(ProviderError):
    """The environment variable holding a provider's key is not set."""

    def __init__(self, variable: str, provider: str) -> None:
        self.variable = variable
        super().__init__(
            f"{variable} is not set: export it to call {provider} models "
            "(keys are read only from the environment)"
        )


class MissingSdkError(MissingExtraError, ProviderError):
    """The SDK a provider calls through is an optional extra that is not installed: no call
    can succeed, so callers stop at the first (a user mistake, exit 2), as for a missing key."""

    def __init__(self, extra: str, provider: str) -> None:
        super().__init__(extra, f"calling {provider} models", [extra])


class BudgetExceeded(ChatLedgerError):
    """Starting the next call could pass the budget cap; nothing was sent.

    Callers catch this to stop a run cleanly, keeping everything finished so far.
    """

    def __init__(
        self,
        *,
        cap_usd: float,
        committed_usd: float,
        worst_case_usd: float,
        model: str,
        ledger: str | None = None,
    ):
        self.cap_usd = cap_usd
        self.committed_usd = committed_usd
        self.worst_case_usd = worst_case_usd
        self.model = model
        # The spend ledger the cap applies to (None: this process's budget only).
        self.ledger = ledger
        where = (
            f" in spend ledger {ledger!r} (every run sharing the cache counts)" if ledger else ""
        )
        super().__init__(
            f"budget cap ${cap_usd:.4f} would be passed: ${committed_usd:.4f} spent or reserved"
            f"{where} + up to ${worst_case_usd:.4f} for the next call to {model}"
        )


class PriceUnknownError(ChatLedgerError):
    """A budget is set but the price table has no entry for the model, so it cannot be enforced."""

    def __init__(self, model: str) -> None:
        self.model = model
        super().__init__(
            f"no price for {model!r} in the price table, so the budget cannot be enforced: "
            "add it (USD per million input/output tokens) to a price file"
        )


class RetryableError(EnvironmentFault):
    """A transient failure (429, 5xx, timeout, lost connection): the call may be tried again.

    Internal to the provider layer; after the last attempt it becomes a :class:`ProviderError`.
    Should one ever escape, it is what it is: the server or the network failed (exit 1).
    """

    def __init__(self, reason: str, *, retry_after_s: float | None = None) -> None:
        self.reason = reason
        self.retry_after_s = retry_after_s
        super().__init__(reason)


class ConnectionRefusedRetry(RetryableError):
    """Nothing listens at the server's address (the connection was refused, not timed out
    or overloaded): tried once more, then :class:`ServerUnreachableError`. Internal."""

    def __init__(self, url: str | None) -> None:
        super().__init__("connection refused")
        self.url = url


def connection_refused(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it, as an SDK wraps it) is a refused connection."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return True
        if "connection refused" in str(current).lower() or "errno 111" in str(current).lower():
            return True
        current = current.__cause__ or current.__context__
    return False


class MalformedReplyError(RetryableError):
    """The server answered 200 but the body is not a reply of its API (an HTML page from a
    proxy, invalid UTF-8, JSON of another shape). Retried like any transient failure.

    Internal; when the last attempt fails this way the call becomes
    :class:`UnreadableReplyError`.
    """


class UnreadableReplyError(ProviderError):
    """Every attempt got a 200 that could not be read as a reply. :class:`ManagedProvider`
    turns it into a completion with ``error`` set (an invalid output), never an exception."""

    def __init__(self, message: str, *, reason: str) -> None:
        # What the last attempt got, without the "gave up after n attempts" around it.
        self.reason = reason
        super().__init__(message)


class ReplyTooLargeError(UnreadableReplyError):
    """The reply's body was longer than ``CallSettings.max_reply_bytes``: cut off as it
    arrived, not retried (it would come back as long), not cached; the completion is an
    invalid output."""


class ServerUnreachableError(ProviderError):
    """Nothing listens at a model server's address: every call to it would fail the same
    way, so a run stops at once, with one line naming the URL and a hint saying how to start a
    server. An environment fault (exit 1): start the server and run the same command."""

    exit_code = 1

    def __init__(self, label: str, url: str | None) -> None:
        self.url = url
        where = url or "the model's server"
        super().__init__(f"{label}: nothing is listening at {where} (connection refused)")
        self.hint = (
            "start the model server first — 'chatledger serve-local MODEL' for a local GGUF "
            "model, or your server's own command (llama-server, ollama serve, vllm serve) — "
            "or fix the URL in the model id"
        )


class LocalServerStoppedError(ServerUnreachableError):
    """The server ChatLedger started for a ``local:`` model stopped answering in the middle of
    the work (its port refused connections while its process lived on). Nothing to start by
    hand: the calls it answered are cached, so the same command resumes after them."""

    def __init__(self, label: str, url: str | None, answered: int) -> None:
        super().__init__(label, url)
        self.answered = answered
        where = url or "its address"
        calls = f"{answered} call{'' if answered == 1 else 's'}"
        self.args = (
            f"{label}: the server ChatLedger started at {where} stopped answering after "
            f"{calls} (connection refused)",
        )
        self.hint = (
            f"the {calls} it answered are cached: run the same command again to resume (a new "
            "server is started); its log is in the cache folder's local-logs/"
        )


class SchemaRejectedError(ProviderError):
    """The server refused the structured-output mechanism (tool / response_format) itself.

    Internal: the provider falls back to putting the schema in the prompt.
    """


# Errors after which no later call of the same run can succeed (no key, no SDK, no price, no
# server): whoever runs calls stops the run at the first one instead of failing every call.
RUN_STOPPING_ERRORS: tuple[type[ChatLedgerError], ...] = (
    MissingApiKeyError,
    MissingSdkError,
    PriceUnknownError,
    ServerUnreachableError,
)
