"""``units.jsonl``: the finished extractions of a selection, append-only (issue 16).

Each unit is written and flushed the moment it finishes, so a killed selection loses at most the
line being written: a torn last line (no newline) is cut off on open and that unit asked again —
the provider's cache answers it without a new paid call. A line in the middle that is not a unit
is the user's file broken: an error naming the file and line, never silently skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from chatledger.core import InputError, describe_os_error, first_validation_error
from chatledger.select._record import UNITS_FILE, UnitLine


class UnitStore:
    """The units of one selection directory, by key; :meth:`append` adds one for good."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / UNITS_FILE
        self.units: dict[str, UnitLine] = {}
        self._handle: IO[str] | None = None
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            # A torn last line: the process died while writing it. Cut it off.
            keep = raw.rfind(b"\n") + 1
            with self.path.open("r+b") as handle:
                handle.truncate(keep)
            raw = raw[:keep]
        for number, text in enumerate(raw.decode("utf-8").splitlines(), start=1):
            if not text.strip():
                continue
            try:
                line = UnitLine.model_validate(json.loads(text))
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"not a JSON line: {exc.msg}", path=self.path, line=number
                ) from None
            except ValidationError as exc:
                where, msg = first_validation_error(exc)
                raise InputError(msg, path=self.path, line=number, field=where or None) from None
            self.units[line.key] = line

    def get(self, key: str) -> UnitLine | None:
        return self.units.get(key)

    def append(self, line: UnitLine) -> None:
        try:
            if self._handle is None:
                self._handle = self.path.open("a", encoding="utf-8")
            self._handle.write(line.model_dump_json() + "\n")
            self._handle.flush()  # in the OS's hands: a killed process loses nothing
        except OSError as exc:
            raise describe_os_error(exc) from None
        self.units[line.key] = line

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
