"""Writing output files so that a failed write never leaves half a file where a good one was.

Every file ChatLedger writes whole (run.json, report.html, scores.parquet, chunks.jsonl, a
structbench dataset …) goes through :func:`atomic_writer` or :func:`atomic_path`: the bytes go to
a temporary file in the same folder, are flushed to disk, and only then renamed over the target
(``os.replace`` is atomic on POSIX). A full disk, a crash or Ctrl-C in the middle leaves the old
file (or no file), never a truncated one. Append-only files (extraction lines, which a rerun
resumes) are the one exception; their readers cut an unfinished last line.

:func:`describe_os_error` turns an ``OSError`` into the one-line error the CLI prints: a path
the user got wrong is an :class:`InputError` (exit 2), a machine that cannot take the write is an
:class:`EnvironmentFault` (exit 1).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from chatledger.core._errors import ChatLedgerError, EnvironmentFault, InputError

# Errors that mean "this path is wrong" (the user's to fix) rather than "the machine refused".
_PATH_MISTAKES = frozenset(
    {errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENOENT, errno.ENAMETOOLONG, errno.ELOOP}
)
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_NOT_WRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})

_umask_lock = threading.Lock()


def _file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give: 0o666 minus the umask (mkstemp makes
    0o600 files, which would silently make every written file private)."""
    with _umask_lock:
        mask = os.umask(0)
        os.umask(mask)
    return 0o666 & ~mask


def describe_os_error(exc: OSError, *, action: str = "write") -> ChatLedgerError:
    """The one-line error for an ``OSError`` raised while reading or writing a file."""
    where = exc.filename if exc.filename is not None else None
    reason = exc.strerror or str(exc)
    code = exc.errno
    if code in _NO_SPACE:
        return EnvironmentFault(
            f"{where}: cannot {action}: {reason}" if where else f"cannot {action}: {reason}",
            hint="free some space and run the same command again; finished work is kept",
        )
    if code in _NOT_WRITABLE:
        return EnvironmentFault(
            f"{where}: cannot {action}: {reason}" if where else f"cannot {action}: {reason}",
            hint="choose a folder you can write to (or fix its permissions)",
        )
    if code in _PATH_MISTAKES:
        return InputError(f"cannot {action}: {reason}", path=where)
    return EnvironmentFault(
        f"{where}: cannot {action}: {reason}" if where else f"cannot {action}: {reason}"
    )


def prepare_output_dir(path: str | Path, *, option: str = "--out") -> Path:
    """Create the folder ``path`` names (and its parents); refuse a path that is a file."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise InputError("is a file, expected a folder", path=folder, field=option)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def check_output_file(path: str | Path, *, option: str | None = "--out") -> Path:
    """Refuse an output file path that names a folder; create the folder it goes in."""
    target = Path(path)
    if target.is_dir():
        raise InputError("is a folder, expected a file name", path=target, field=option)
    if target.parent.exists() and not target.parent.is_dir():
        raise InputError("its folder is a file", path=target, field=option)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


@contextlib.contextmanager
def atomic_writer(path: str | Path, *, encoding: str = "utf-8") -> Iterator[IO[str]]:
    """``with atomic_writer(path) as handle:`` — the text file appears, complete, when the
    block ends without an exception; otherwise the target is untouched."""
    with atomic_path(path) as temporary, temporary.open("w", encoding=encoding, newline="") as text:
        yield text
        text.flush()
        os.fsync(text.fileno())


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that wants a file name (a parquet or
    SQLite writer); it replaces ``path`` when the block ends without an exception."""
    target = check_output_file(path, option=None)
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    except OSError as exc:
        # The user named the target, not our temporary file beside it (a folder such as
        # /proc that takes no new file would otherwise print '/proc/.x.jsonl.2371leut.part').
        exc.filename = str(target)
        raise
    temporary = Path(name)
    try:
        try:
            os.fchmod(fd, _file_mode())
        finally:
            os.close(fd)
        yield temporary
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        if isinstance(exc, OSError) and exc.filename in (None, name):
            # A write that failed (a full disk) says no file: it is this one.
            exc.filename = str(target)
        raise


def atomic_write_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_writer(path, encoding=encoding) as handle:
        handle.write(text)


def strict_json(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by ``None``: JSON has no NaN, and a file
    holding one is refused by strict readers (``jq``, browsers, other languages)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value


def dumps_json(value: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text of ``value`` (see :func:`strict_json`), UTF-8 characters kept."""
    return json.dumps(strict_json(value), indent=indent, ensure_ascii=False, allow_nan=False)


def iter_json(value: Any, *, indent: int = 2, level: int = 0) -> Iterator[str]:
    """:func:`dumps_json`'s text in pieces, without a strict copy of ``value`` or the whole
    text at once (a model's ``downstream.json`` part is tens of MB at 10,000 chunks): the
    encoder ``json.dumps`` uses for indented output, writing a NaN or infinity as ``null``.
    ``level``: the text of ``value`` nested that many levels deep in a document (its lines
    after the first indented as there)."""

    def floatstr(number: float) -> str:
        return float.__repr__(number) if math.isfinite(number) else "null"

    def refuse(found: object) -> Any:
        raise TypeError(f"Object of type {type(found).__name__} is not JSON serializable")

    encode = json.encoder._make_iterencode(  # type: ignore[attr-defined]
        {},
        refuse,
        json.encoder.encode_basestring,
        " " * indent,
        floatstr,
        ": ",
        ",",
        False,
        False,
        False,
    )
    yield from encode(value, level)


def atomic_write_json(path: str | Path, value: Any) -> None:
    """Write ``value`` as strict, indented JSON to ``path`` atomically."""
    atomic_write_text(path, dumps_json(value) + "\n")


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as temporary, temporary.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks (model files are gigabytes)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve_inside(base: Path, raw: str, *, what: str, config_path: Path) -> Path:
    """Resolve ``raw`` against ``base``; relative paths may not climb out of ``base``.

    ``~`` and ``~user`` are expanded and then treated like any absolute path (the config names
    the home folder explicitly); one that cannot be expanded is an error, never a folder named
    ``~`` inside ``base``. A path that no file system could hold (a NUL byte, a lone
    surrogate, a name too long) is an error naming the config file and the field.
    """

    def fail(message: str) -> InputError:
        return InputError(message, path=config_path, field=what)

    if "\0" in raw:
        raise fail("path contains a NUL byte")
    try:
        os.fsencode(raw)
    except UnicodeEncodeError:
        raise fail("path is not valid text (a lone surrogate)") from None
    if raw.startswith("~"):
        expanded = os.path.expanduser(raw)
        if expanded.startswith("~"):
            raise fail(f"cannot expand {raw.split('/', 1)[0]!r}: no such user or home folder")
        return Path(expanded)
    candidate = Path(raw)
    if candidate.is_absolute():
        return candidate
    try:
        resolved = (base / candidate).resolve()
        root = base.resolve()
    except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop
        raise fail(f"cannot resolve path: {getattr(exc, 'strerror', None) or exc}") from None
    if resolved != root and root not in resolved.parents:
        raise fail(
            f"path {raw!r} leaves the config's folder; write it as an absolute path to allow it"
        )
    return resolved
