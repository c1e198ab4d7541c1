"""The on-disk cache of model calls: SQLite in WAL mode, content-addressed.

The key is the SHA-256 of the canonical JSON of everything that determines a call's answer —
provider, model (with its server URL), parameters, the messages as sent, the schema and how it
was sent, and the sample index — so re-running the same work costs nothing and a changed prompt
misses. Rows hold only the reply (text, tokens, finish reason, cost); never a key or a header.

The same file holds the leases of calls in flight (:mod:`chatledger.providers._lease`), so a
call missing in several processes at once is paid by one of them and waited for by the others;
the spend ledgers (see :mod:`chatledger.providers._ledger`): what every
process using this cache has spent and holds, so a budget cap bounds them all together; and the
batches submitted in batch mode (:mod:`chatledger.providers._batch_store`), so a restart polls
them instead of paying for them again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import platformdirs

from chatledger.core import EnvironmentFault
from chatledger.providers._batch_store import BATCH_SCHEMA, BatchStore
from chatledger.providers._lease import LEASE_SCHEMA, CallLeases, LeaseSettings
from chatledger.providers._ledger import (
    DEFAULT_LEDGER,
    LEDGER_SCHEMA,
    LedgerTotals,
    SpendLedger,
    all_ledgers,
)
from chatledger.providers._reply import RawReply

CACHE_DIR_ENV = "CHATLEDGER_CACHE_DIR"
CACHE_FILE = "completions.sqlite3"
# Bump when the stored reply's shape or the key's contents change, so old rows simply miss.
# (Fields added to a reply with a default, as usage_warnings was, need no bump: old rows read.)
KEY_VERSION = 1


def default_cache_dir() -> Path:
    """``$CHATLEDGER_CACHE_DIR`` if set, else the user's cache directory for chatledger."""
    from_env = os.environ.get(CACHE_DIR_ENV, "").strip()
    if from_env:
        return Path(from_env).expanduser()
    return Path(platformdirs.user_cache_dir("chatledger", appauthor=False))


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces, non-ASCII kept (UTF-8 hashed)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class EncodedJson:
    """A part of a cache key given as its canonical JSON already (a large schema, encoded once
    per schema rather than once per call): :func:`cache_key` puts the text in as it is."""

    text: str


def cache_key(parts: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of ``parts`` plus the key version. A top-level part
    may be an :class:`EncodedJson`; the key is the same as for the value it encodes."""
    whole = {"v": KEY_VERSION, **parts}
    encoded = sorted(name for name, value in whole.items() if isinstance(value, EncodedJson))
    if not encoded:
        return hashlib.sha256(canonical_json(whole).encode("utf-8")).hexdigest()
    # canonical_json of the whole, written out: the keys in sorted order, each run of plain
    # parts between two encoded ones as one canonical object without its braces, and the
    # encoded parts' text put in as it is.
    pieces: list[str] = []
    plain: dict[str, Any] = {}
    for name in sorted(whole):
        value = whole[name]
        if isinstance(value, EncodedJson):
            if plain:
                pieces.append(canonical_json(plain)[1:-1])
                plain = {}
            pieces.append(f"{canonical_json(name)}:{value.text}")
        else:
            plain[name] = value
    if plain:
        pieces.append(canonical_json(plain)[1:-1])
    payload = "{" + ",".join(pieces) + "}"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _cache_hint(exc: sqlite3.Error) -> str:
    """What to do about a cache SQLite refused: a damaged file is moved away, but a full disk
    (or a write limit) or a folder that cannot be written is not the file's fault."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_IOERR", "SQLITE_FULL")):
        return (
            "the disk is full or failing (or a file size limit was reached): free some space and "
            "run the same command again; the cache and its calls are kept"
        )
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")):
        return (
            "the cache folder cannot be written: fix its permissions, or give another --cache-dir"
        )
    return (
        "move the file away to start a fresh cache (its calls are then asked again), or give "
        "another --cache-dir"
    )


class CompletionCache:
    """A key → JSON reply store shared by every provider (and by concurrent processes).

    A database that cannot be opened or written (not a database, corrupt, read-only, a full
    disk) raises :class:`EnvironmentFault` naming the file; a stored reply that is not JSON any
    more is a miss (the call is asked again), never a crash.
    """

    def __init__(
        self, cache_dir: str | Path | None = None, *, leases: LeaseSettings | None = None
    ) -> None:
        directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / CACHE_FILE
        # Re-entrant: writes inside transaction() (the same thread) take it again.
        self._lock = threading.RLock()
        with self._guard("open"):
            # Autocommit: each put is its own short transaction; WAL lets readers run alongside.
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=10000")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS completions ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, created_at REAL NOT NULL,"
                " reply TEXT NOT NULL)"
            )
            for statement in (*LEDGER_SCHEMA, *BATCH_SCHEMA, *LEASE_SCHEMA):
                self._conn.execute(statement)
        self.leases = CallLeases(self, leases)
        self.hits = 0
        self.misses = 0

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """SQLite's errors as the one-line fault the CLI prints."""
        try:
            yield
        except sqlite3.Error as exc:
            raise EnvironmentFault(
                f"{self.path}: cannot {action} the call cache ({exc})", hint=_cache_hint(exc)
            ) from None

    def get(self, key: str) -> RawReply | None:
        with self._lock, self._guard("read"):
            row = self._conn.execute(
                "SELECT reply FROM completions WHERE key = ?", (key,)
            ).fetchone()
        reply = self._decode(row[0]) if row is not None else None
        if reply is None:
            self.misses += 1
            return None
        self.hits += 1
        return reply

    @staticmethod
    def _decode(text: Any) -> RawReply | None:
        """A stored reply, or None for a damaged row (asked again; the new answer replaces it).
        A JSON object that is not a reply (a field this version does not know) is an error,
        as it always was: asking again would pay for an answer the cache holds."""
        try:
            reply = json.loads(text)
        except (TypeError, ValueError):
            return None
        return RawReply.model_validate(reply) if isinstance(reply, dict) else None

    def put(self, key: str, model: str, reply: RawReply) -> None:
        # An empty usage_warnings is left out, so the row reads in versions without it.
        unflagged = {"usage_warnings"} if not reply.usage_warnings else None
        row = reply.model_dump(mode="json", exclude=unflagged)
        with self._lock, self._guard("write to"):
            self._conn.execute(
                "INSERT OR REPLACE INTO completions (key, model, created_at, reply) "
                "VALUES (?, ?, ?, ?)",
                (key, model, time.time(), canonical_json(row)),
            )

    def ledger(self, name: str = DEFAULT_LEDGER) -> SpendLedger:
        """The spend ledger called ``name`` in this cache's database (created on first spend)."""
        return SpendLedger(self, name)

    def batches(self) -> BatchStore:
        """The batches submitted in batch mode, so that a restart polls them again."""
        return BatchStore(self)

    def ledgers(self) -> list[LedgerTotals]:
        """Every ledger in this cache with recorded spend or a call in flight, by name."""
        return all_ledgers(self)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Several writes as one transaction, one commit: every write of this cache (a reply,
        a ledger's spend, a lease's end) made by this thread inside it joins it."""
        with self._immediate():
            yield

    @contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        """One write transaction that takes the database's write lock at its start, so a
        check and the write that depends on it cannot interleave with another process. Inside
        :meth:`transaction` (the lock held, a transaction open: this thread's) it joins that
        one."""
        with self._lock, self._guard("write to"):
            if self._conn.in_transaction:
                yield self._conn
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: several queries see the same state."""
        with self._lock, self._guard("read"):
            if self._conn.in_transaction:  # inside this thread's transaction(): read in it
                yield self._conn
                return
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> CompletionCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
