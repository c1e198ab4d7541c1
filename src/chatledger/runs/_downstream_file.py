"""``downstream.json`` written one model at a time.

The file is ``{"reference": NAME, "models": {MODEL: OUTPUTS, ...}}`` as indented JSON (what
``atomic_write_json`` writes). Holding every model's outputs as parsed JSON until the end kept
the whole file's worth of Python dicts in the coordinator (113 MB of JSON at 10,000 chunks ×
3 challengers); each model's part is now turned into its text as soon as it is assembled and
written, and the bytes are the same: with ``indent=2`` a value nested two levels deep is its own
indented text with every line after the first shifted by four spaces (strings never hold a raw
newline: JSON escapes it)."""

from __future__ import annotations

from typing import IO, Any

from chatledger.core import dumps_json, iter_json

_NESTED = "\n    "  # a value inside "models": two levels of indent=2


class DownstreamWriter:
    """Writes ``downstream.json`` to an open text handle: the reference's name first, then each
    model's outputs with :meth:`add`, then :meth:`close`; the same bytes as
    ``atomic_write_json(path, {"reference": reference, "models": {...}})``."""

    def __init__(self, handle: IO[str], reference: str) -> None:
        self._handle = handle
        self._models = 0
        handle.write('{\n  "reference": ' + dumps_json(reference) + ',\n  "models": {')

    def add(self, model: str, outputs: Any) -> None:
        separator = _NESTED if self._models == 0 else "," + _NESTED
        self._handle.write(separator + dumps_json(model) + ": ")
        # In pieces as the encoder makes them (issue 34: the whole text, and its copy with the
        # lines shifted, were tens of MB per model at 10,000 chunks).
        for piece in iter_json(outputs):
            self._handle.write(piece.replace("\n", _NESTED))
        self._models += 1

    def add_text(self, model: str, text: IO[str]) -> None:
        """:meth:`add` of the outputs whose ``iter_json`` text ``text`` holds (a downstream
        stage's part file), copied a piece at a time."""
        separator = _NESTED if self._models == 0 else "," + _NESTED
        self._handle.write(separator + dumps_json(model) + ": ")
        while piece := text.read(1 << 20):
            self._handle.write(piece.replace("\n", _NESTED))
        self._models += 1

    def close(self) -> None:
        self._handle.write("}\n}\n" if self._models == 0 else "\n  }\n}\n")
