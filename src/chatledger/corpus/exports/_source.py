"""An export as a set of named files, whatever it came as: one file, a folder, or a ``.zip``.

Apps hand out exports in all three shapes (WhatsApp: a ``.txt`` or the ``.zip`` it is shared
as; Slack: a folder or a zip; Telegram Desktop: a folder with ``result.json``). Readers see only
:class:`ExportSource`: member names relative to the export's root with ``/`` separators, opened
as binary streams. A zip is read in place (never extracted), and a member name that would climb
out of the export (``../``, an absolute path) is refused.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO

from chatledger.core import InputError


class ExportSource:
    """The files of one export. ``with ExportSource.open_path(p) as source: …``"""

    def __init__(self, path: Path, archive: zipfile.ZipFile | None = None) -> None:
        self.path = path
        self._archive = archive

    @classmethod
    @contextmanager
    def open_path(cls, path: str | Path) -> Iterator[ExportSource]:
        where = Path(path)
        if not where.exists():
            raise InputError("no such file or folder", path=where)
        if where.is_file() and zipfile.is_zipfile(where):
            try:
                archive = zipfile.ZipFile(where)
            except (zipfile.BadZipFile, OSError) as exc:
                raise InputError(f"cannot read the zip file: {exc}", path=where) from None
            with archive:
                yield cls(where, archive)
            return
        yield cls(where)

    @property
    def is_single_file(self) -> bool:
        return self._archive is None and self.path.is_file()

    @property
    def is_zip(self) -> bool:
        return self._archive is not None

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

    def read_text(self, name: str) -> str:
        """A member decoded as UTF-8 (a leading BOM dropped); bad bytes are an InputError."""
        data = self.read_bytes(name)
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}: not UTF-8 ({exc.reason} at byte {exc.start})",
                             path=self.path) from None  # fmt: skip

    @contextmanager
    def text_lines(self, name: str) -> Iterator[Iterator[str]]:
        """A member's lines, decoded as UTF-8 as they are read (for exports too big to hold)."""
        with self.open(name) as raw:
            reader = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline="")
            yield _lines_naming(reader, self.path, name)

    def local_path(self) -> Path | None:
        """The file on disk, for readers that need one (SQLite); None inside a zip."""
        return self.path if self._archive is None and self.path.is_file() else None

    def describe(self, name: str | None = None) -> str:
        return f"{self.path}:{name}" if name and not self.is_single_file else str(self.path)


def _lines_naming(reader: io.TextIOWrapper, path: Path, name: str) -> Iterator[str]:
    number = 0
    try:
        for number, line in enumerate(reader, start=1):  # noqa: B007  (number used below)
            yield line
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not UTF-8 ({exc.reason}) after line {number}", path=path
        ) from None


def _safe(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not name.startswith("/") and ".." not in parts and "\\" not in name
