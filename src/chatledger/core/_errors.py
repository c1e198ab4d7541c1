"""Errors a user can act on: each names the file, line and field it is about."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError


class ChatLedgerError(Exception):
    """A problem with the user's input or configuration; the CLI prints it without a traceback.

    ``exit_code`` is what the CLI exits with: 2 for a user mistake (the default), 1 for an
    environment fault (:class:`EnvironmentFault`), 130 for an interruption. ``hint`` is an
    optional second line telling the user what to do.
    """

    exit_code: int = 2
    hint: str | None = None


class EnvironmentFault(ChatLedgerError):
    """The machine, not the user, stopped the work: a full disk, a read-only folder, a server
    that kept failing, a spending cap reached. Rerunning after the fault is fixed resumes."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class Interrupted(ChatLedgerError):
    """The user pressed Ctrl-C (or sent SIGINT/SIGTERM); the message says what was finished."""

    exit_code = 130

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class InputError(ChatLedgerError):
    """Bad input at a known place (file, optional line, optional field path)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.detail = message
        super().__init__(self._render())

    def at_line(self, line: int) -> None:
        """Name ``line`` too (found after the error was raised, e.g. a config key's line)."""
        self.line = line
        self.args = (self._render(),)

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path
            if self.line is not None:
                where += f":{self.line}"
        if self.field:
            where = f"{where} [{self.field}]" if where else f"[{self.field}]"
        return f"{where}: {self.detail}" if where else self.detail


def first_validation_error(exc: ValidationError, prefix: str = "") -> tuple[str, str]:
    """(dot path of the first error, a readable message) for a pydantic ValidationError.

    The path starts with ``prefix`` when given; the message drops pydantic's "Value error, "
    lead-in, says "unknown key" for a forbidden extra key, and counts the other errors.
    """
    err = exc.errors(include_url=False)[0]
    parts = [prefix] if prefix else []
    parts.extend(str(p) for p in err["loc"])
    message = "unknown key" if err["type"] == "extra_forbidden" else str(err["msg"])
    message = message.removeprefix("Value error, ")
    if exc.error_count() > 1:
        message += f" (+{exc.error_count() - 1} more)"
    return ".".join(parts), message
