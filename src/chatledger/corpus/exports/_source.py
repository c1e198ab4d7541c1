"""An export as a set of named files, whatever it came as: one file, a folder, or a ``.zip``.

Apps hand out exports in all three shapes (WhatsApp: a ``.txt`` or the ``.zip`` it is shared
as; Slack: a folder or a zip; Telegram Desktop: a folder with ``result.json``). Readers see only
:class:`ExportSource`: member names relative to the export's root with ``/`` separators, opened
as binary streams or decoded as text. A zip is read in place (never extracted), and a member
name that would climb out of the export (``../``, an absolute path) is refused.

**Text** is UTF-8 unless the bytes say otherwise: a UTF-8 byte-order mark is dropped, and UTF-16
is recognised by its byte-order mark or, without one, by the NUL bytes in the high byte of its
ASCII characters — on one side of the byte pairs only (what some Windows tools write for WhatsApp
and CSV). Other encodings are named with :class:`Decoding` (``--encoding cp1252``: what desktop
tools write when they do not write UTF-8). A byte the encoding cannot read is a counted problem
on its line — recorded with the line, the column and the byte, and replaced by U+FFFD — not a
refusal of the file, unless :attr:`Decoding.strict` (``--strict``) says to stop at the first one.
"""

from __future__ import annotations

import codecs
import io
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from chatledger.core import InputError

_HEAD = 65536
_SNIFF = 4096
# Undecodable bytes come out of the decoder as U+DC00 + the byte (the "mark" error handler
# below): lone surrogates, which no correct decoding ever produces, so they are found again
# on their line once the line is split off.
_MARKED = re.compile("[\udc00-\udcff]")
_ERRORS = "chatledger-mark"
_seen = [0]  # how many undecodable stretches the handler has met (any stream)


def _mark(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _seen[0] += 1
    return "".join(chr(0xDC00 + b) for b in exc.object[exc.start : exc.end]), exc.end


codecs.register_error(_ERRORS, _mark)


@dataclass(frozen=True)
class Decoding:
    """How an export's text is decoded: ``encoding`` None is UTF-8 (or UTF-16 when the bytes
    say so); ``strict`` stops at the first byte that does not decode instead of counting it."""

    encoding: str | None = None
    strict: bool = False

    def __post_init__(self) -> None:
        if self.encoding is not None:
            try:
                codecs.lookup(self.encoding)
            except LookupError:
                raise InputError(
                    f"unknown encoding {self.encoding!r} (e.g. cp1252, latin-1, utf-16)",
                    field="--encoding",
                ) from None


@dataclass(frozen=True)
class BadBytes:
    """The first undecodable byte of a line: where it is and what it was."""

    where: str
    line: int
    column: int
    byte: int
    encoding: str

    @property
    def as_utf8(self) -> bool:
        """Whether the byte failed as UTF-8 (the case ``--encoding cp1252`` may fix; a bad
        byte of UTF-16 is a damaged file, not another encoding)."""
        return _label(self.encoding) == "UTF-8"

    def describe(self) -> str:
        return (
            f"{self.where}:{self.line}: byte 0x{self.byte:02X} at column {self.column} is not "
            f"{_label(self.encoding)}"
        )


def _label(codec: str) -> str:
    name = codecs.lookup(codec).name
    return {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "utf-16": "UTF-16",
            "utf-16-le": "UTF-16", "utf-16-be": "UTF-16"}.get(name, name)  # fmt: skip


def detect_codec(head: bytes, given: str | None) -> str:
    """The codec to read a member with, from its first bytes (and ``--encoding``)."""
    if given is not None:
        return "utf-8-sig" if codecs.lookup(given).name == "utf-8" else given
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    sample = head[: _SNIFF - _SNIFF % 2]
    if len(sample) >= 4:
        even, odd = sample[0::2], sample[1::2]
        # UTF-8 text has no NUL byte. UTF-16 has one in the high byte of every ASCII character
        # — the dates, times and separators every chat line starts with, a third of a Russian
        # chat's characters and more — and almost never in the low byte: NULs on one side only.
        nul_even, nul_odd = even.count(0), odd.count(0)
        if nul_odd >= 0.1 * len(odd) and nul_even <= nul_odd / 20:
            return "utf-16-le"
        if nul_even >= 0.1 * len(even) and nul_odd <= nul_even / 20:
            return "utf-16-be"
    return "utf-8-sig"


class ExportSource:
    """The files of one export. ``with ExportSource.open_path(p) as source: …``"""

    def __init__(
        self, path: Path, archive: zipfile.ZipFile | None = None, decoding: Decoding | None = None
    ) -> None:
        self.path = path
        self._archive = archive
        self.decoding = decoding or Decoding()
        # (member, line) → the line's first bad byte; a member read twice counts once.
        self._bad: dict[tuple[str, int], BadBytes] = {}

    @classmethod
    @contextmanager
    def open_path(
        cls, path: str | Path, decoding: Decoding | None = None
    ) -> Iterator[ExportSource]:
        where = Path(path)
        if not where.exists():
            raise InputError("no such file or folder", path=where)
        if where.is_file() and zipfile.is_zipfile(where):
            try:
                archive = zipfile.ZipFile(where)
            except (zipfile.BadZipFile, OSError) as exc:
                raise InputError(f"cannot read the zip file: {exc}", path=where) from None
            with archive:
                yield cls(where, archive, decoding)
            return
        yield cls(where, None, decoding)

    @property
    def is_single_file(self) -> bool:
        return self._archive is None and self.path.is_file()

    @property
    def is_zip(self) -> bool:
        return self._archive is not None

    @property
    def bad_bytes(self) -> list[BadBytes]:
        """Every line that held bytes its encoding cannot read, in the order met."""
        return list(self._bad.values())

    def names(self) -> list[str]:
        """Every member file, relative to the root, sorted (a single file: its own name)."""
        if self._archive is not None:
            return sorted(n for n in self._archive.namelist() if not n.endswith("/") and _safe(n))
        if self.path.is_file():
            return [self.path.name]
        return sorted(
            p.relative_to(self.path).as_posix() for p in self.path.rglob("*") if p.is_file()
        )

    def has(self, name: str) -> bool:
        return name in set(self.names())

    @contextmanager
    def open(self, name: str) -> Iterator[IO[bytes]]:
        """The member ``name`` as a binary stream."""
        if not _safe(name):
            raise InputError(f"member {name!r} leaves the export", path=self.path)
        if self._archive is not None:
            try:
                with self._archive.open(name) as handle:
                    yield handle
            except KeyError:
                raise InputError(f"no member {name!r} in the zip", path=self.path) from None
            return
        target = self.path if self.path.is_file() else self.path / name
        with target.open("rb") as handle:
            yield handle

    def read_bytes(self, name: str) -> bytes:
        with self.open(name) as handle:
            return handle.read()

    def head(self, name: str, size: int = _HEAD) -> str:
        """The first ``size`` bytes of a member as text, for telling formats apart (bytes that
        do not decode are dropped; nothing is recorded)."""
        with self.open(name) as handle:
            data = handle.read(size)
        codec = detect_codec(data, self.decoding.encoding)
        return data.decode(codec, errors="ignore")

    def read_text(self, name: str) -> str:
        """A member decoded whole (a leading BOM dropped); undecodable bytes are recorded and
        replaced (or, with ``strict``, an InputError naming the line)."""
        data = self.read_bytes(name)
        codec = detect_codec(data[:_SNIFF], self.decoding.encoding)
        before = _seen[0]
        text = data.decode(codec, errors=_ERRORS)
        if _seen[0] == before:
            return text
        where = self.describe(name)
        for match in _MARKED.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            if (where, line) not in self._bad:
                column = match.start() - text.rfind("\n", 0, match.start())
                self._record(BadBytes(where, line, column, ord(match.group()) & 0xFF, codec))
        return _MARKED.sub("\ufffd", text)

    @contextmanager
    def text_lines(self, name: str) -> Iterator[Iterator[str]]:
        """A member's lines, decoded as they are read (for exports too big to hold)."""
        with self.open(name) as raw:
            stream = io.BufferedReader(raw, _HEAD)  # type: ignore[type-var]
            codec = detect_codec(stream.peek(_SNIFF)[:_SNIFF], self.decoding.encoding)
            reader = io.TextIOWrapper(stream, encoding=codec, errors=_ERRORS, newline="")
            yield self._lines(reader, self.describe(name), codec)

    def _lines(self, reader: io.TextIOWrapper, where: str, codec: str) -> Iterator[str]:
        before = _seen[0]
        for number, line in enumerate(reader, start=1):
            # Only after the decoder met a bad byte is a line searched for its mark.
            if _seen[0] != before and _MARKED.search(line):
                match = _MARKED.search(line)
                assert match is not None
                self._record(
                    BadBytes(where, number, match.start() + 1, ord(match.group()) & 0xFF, codec)
                )
                line = _MARKED.sub("\ufffd", line)
            yield line

    def _record(self, bad: BadBytes) -> None:
        if self.decoding.strict:
            hint = (
                " (if the file is Latin-1 or CP-1252, pass --encoding cp1252)"
                if bad.as_utf8 and self.decoding.encoding is None
                else ""
            )
            raise InputError(
                f"byte 0x{bad.byte:02X} at column {bad.column} is not {_label(bad.encoding)}{hint}",
                path=bad.where,
                line=bad.line,
            )
        self._bad.setdefault((bad.where, bad.line), bad)

    def local_path(self) -> Path | None:
        """The file on disk, for readers that need one (SQLite); None inside a zip."""
        return self.path if self._archive is None and self.path.is_file() else None

    def describe(self, name: str | None = None) -> str:
        return f"{self.path}:{name}" if name and not self.is_single_file else str(self.path)


def _safe(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not name.startswith("/") and ".." not in parts and "\\" not in name
