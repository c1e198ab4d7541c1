"""One writer per extraction file: an exclusive advisory lock on a sidecar ``<out>.lock``.

Two processes appending to one ``--out`` would each skip only what the file held when they
started and then both write the rest (duplicated lines, both exiting 0). The lock is taken
before the file is read and held until the last line is written; a second writer fails at once
with one line naming the holder's pid.

The lock is ``fcntl.flock`` (non-blocking) on a sidecar file, not on the extraction file itself,
because resuming may replace the extraction file (a new inode) while the lock is held. The
sidecar holds the holder's pid and is removed on release; a process that locked a sidecar just
removed by its previous holder notices (the path no longer names the file it locked) and locks
the new one. The kernel drops the lock when a process dies, so a killed run leaves no stale
lock — at most a sidecar file, which the next run takes over. On a platform without ``fcntl``
(Windows) nothing is locked.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from chatledger.core import InputError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_SUFFIX = ".lock"


def lock_path(path: Path) -> Path:
    """The sidecar lock file of an extraction file (``out.jsonl`` → ``out.jsonl.lock``)."""
    return path.with_name(path.name + LOCK_SUFFIX)


def _holder(sidecar: Path) -> str:
    with contextlib.suppress(OSError, ValueError):
        pid = int(sidecar.read_text(encoding="ascii").strip() or "0")
        if pid > 0:
            return f" (pid {pid})"
    return ""


@contextlib.contextmanager
def output_lock(path: str | Path) -> Iterator[None]:
    """Hold the extraction file ``path`` for this process, or raise :class:`InputError` at once
    when another process holds it."""
    out = Path(path)
    if out.is_dir():
        raise InputError("is a directory, expected a .jsonl file", path=out)
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    # A folder made here and left empty (nothing was written: no key, nothing listening) is
    # removed again on release.
    created = not out.parent.exists()
    out.parent.mkdir(parents=True, exist_ok=True)
    sidecar = lock_path(out)
    while True:
        fd = os.open(sidecar, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise InputError(
                f"is being written by another chatledger process{_holder(sidecar)}: wait for "
                "it to finish, or choose another output file",
                path=out,
            ) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(sidecar).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the previous holder removed it between our open and our lock
    try:
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        except OSError as exc:
            exc.filename = exc.filename or str(sidecar)  # a full disk: name the file
            raise
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(sidecar)
        os.close(fd)
        if created:
            with contextlib.suppress(OSError):
                out.parent.rmdir()  # only if empty
