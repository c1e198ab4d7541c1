"""Errors a user can act on: each names the file, line and field it is about."""

from __future__ import annotations

from pathlib import Path


class ChatLedgerError(Exception):
    """A problem with the user's input or configuration; the CLI prints it without a traceback."""


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

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path
            if self.line is not None:
                where += f":{self.line}"
        if self.field:
            where = f"{where} [{self.field}]" if where else f"[{self.field}]"
        return f"{where}: {self.detail}" if where else self.detail
