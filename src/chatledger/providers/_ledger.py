"""Spend ledgers: what every process using one cache database has spent and holds, by name.

A ledger lives in the completion cache's SQLite file (two tables next to ``completions``, which
they leave untouched). Its total is every settled call ever recorded under its name, across
processes and invocations, until it is reset; its holds are the reservations of calls in flight
in any process. A :class:`Budget` bound to a ledger lets a call start only if

    spent (all settled calls of the ledger) + held (live reservations of every process)
        + this call's worst case  <=  cap

and the check and the new hold are one ``BEGIN IMMEDIATE`` transaction, so two processes cannot
both pass the check on the same money. A hold names its process (host, pid and a per-process
token); a hold whose process is gone on this host, or that has outlived the longest a call may
take (``expires_at``), was left by a crash and no longer counts: it is deleted by the next
reservation. Processes on other hosts sharing a cache directory are judged by age only (and
SQLite over a network file system is not safe anyway).

The API for showing and resetting a ledger (``chatledger budget show|reset``)::

    cache = CompletionCache(cache_dir)            # the cache the runs use
    cache.ledger("default").totals()   -> LedgerTotals (spent_usd, calls, tokens, reserved_usd, …)
    cache.ledger("default").reset()    -> LedgerTotals  (what was cleared; live holds are kept)
    cache.ledgers()                    -> list[LedgerTotals], every ledger with spend or holds
    Budget(cap_usd=5.0, name="nightly")           # ProviderHub(cache=cache, budget=...) binds it
                                                  # to cache.ledger("nightly")
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chatledger.core import InputError
from chatledger.providers._errors import BudgetExceeded

if TYPE_CHECKING:
    from chatledger.providers._cache import CompletionCache

log = logging.getLogger("chatledger.providers")

DEFAULT_LEDGER = "default"
# A hold taken without saying how long its call may last counts for this long at most.
DEFAULT_HOLD_S = 3600.0
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

LEDGER_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS spend_ledgers ("
    " name TEXT PRIMARY KEY, spent_usd REAL NOT NULL, calls INTEGER NOT NULL,"
    " input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,"
    " created_at REAL NOT NULL, updated_at REAL NOT NULL)",
    # AUTOINCREMENT: an id is never reused, so settling a hold that was swept as stale can
    # never delete another call's hold.
    "CREATE TABLE IF NOT EXISTS spend_reservations ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, ledger TEXT NOT NULL, model TEXT NOT NULL,"
    " amount_usd REAL NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,"
    " process TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS spend_reservations_ledger ON spend_reservations (ledger)",
)

_INSERT_HOLD = (
    "INSERT INTO spend_reservations (ledger, model, amount_usd, host, pid, process,"
    " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
# An uncapped ledger sweeps stale holds once per this many holds (a capped one on every hold).
_SWEEP_EVERY = 1000

# Tells this process from an earlier one that had the same pid (whose holds are stale).
_PROCESS_TOKEN = uuid.uuid4().hex
_HOST = socket.gethostname()


def check_ledger_name(name: str) -> str:
    """``name`` if it can name a ledger, else an :class:`InputError` saying what can."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise InputError(
            f"{name!r} cannot name a spend ledger: use 1 to 64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            field="budget name",
        )
    return name


@dataclass(frozen=True)
class LedgerTotals:
    """One ledger as it stands: settled spend, and what calls in flight hold."""

    name: str
    spent_usd: float
    calls: int
    input_tokens: int
    output_tokens: int
    reserved_usd: float
    reservations: int
    # Seconds since the epoch of the last settled call (None: nothing recorded yet).
    updated_at: float | None

    @property
    def committed_usd(self) -> float:
        return self.spent_usd + self.reserved_usd


class SpendLedger:
    """One named ledger in a :class:`CompletionCache`'s database (get it with
    ``cache.ledger(name)``). Safe to use from several threads and processes at once."""

    def __init__(self, cache: CompletionCache, name: str = DEFAULT_LEDGER) -> None:
        self.cache = cache
        self.name = check_ledger_name(name)
        # Uncapped holds taken since the last sweep may still skip it (0: sweep on the next).
        self._unswept = 0

    def __repr__(self) -> str:
        return f"SpendLedger({self.name!r}, {str(self.cache.path)!r})"

    def reserve(
        self, model: str, amount_usd: float, *, cap_usd: float | None, hold_s: float
    ) -> int:
        """Hold ``amount_usd`` for a call about to start and return the hold's id, or raise
        :class:`BudgetExceeded` if that could pass ``cap_usd`` (None: hold, never refuse)."""
        now = time.time()
        expires_at = now + hold_s
        row = (self.name, model, amount_usd, _HOST, os.getpid(), _PROCESS_TOKEN, now, expires_at)
        if cap_usd is None and self._unswept > 0:
            # Nothing to check: the hold is one insert (its own transaction). Holds left by
            # crashed processes are swept on this ledger's first hold, every _SWEEP_EVERY
            # holds after it, and before every check against a cap.
            self._unswept -= 1
            with self.cache._lock, self.cache._guard("write to"):
                cursor = self.cache._conn.execute(_INSERT_HOLD, row)
            assert cursor.lastrowid is not None
            return cursor.lastrowid
        self._unswept = _SWEEP_EVERY
        with self.cache._immediate() as conn:
            _sweep(conn, now)
            # After the sweep every hold left is live: the ledger's holds are summed in SQL.
            spent, held = conn.execute(
                "SELECT (SELECT spent_usd FROM spend_ledgers WHERE name = ?),"
                " (SELECT TOTAL(amount_usd) FROM spend_reservations WHERE ledger = ?)",
                (self.name, self.name),
            ).fetchone()
            spent = float(spent) if spent is not None else 0.0
            held = float(held)
            if cap_usd is not None and spent + held + amount_usd > cap_usd:
                raise BudgetExceeded(
                    cap_usd=cap_usd,
                    committed_usd=spent + held,
                    worst_case_usd=amount_usd,
                    model=model,
                    ledger=self.name,
                )
            cursor = conn.execute(_INSERT_HOLD, row)
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    def settle(
        self, hold_id: int, cost_usd: float, *, input_tokens: int = 0, output_tokens: int = 0
    ) -> None:
        """The call behind ``hold_id`` finished: drop the hold, record what it cost. The cost
        is recorded even if the hold was meanwhile swept as stale or the ledger reset."""
        now = time.time()
        with self.cache._immediate() as conn:
            conn.execute("DELETE FROM spend_reservations WHERE id = ?", (hold_id,))
            conn.execute(
                "INSERT INTO spend_ledgers (name, spent_usd, calls, input_tokens, output_tokens,"
                " created_at, updated_at) VALUES (?, ?, 1, ?, ?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET"
                " spent_usd = spent_usd + excluded.spent_usd, calls = calls + 1,"
                " input_tokens = input_tokens + excluded.input_tokens,"
                " output_tokens = output_tokens + excluded.output_tokens,"
                " updated_at = excluded.updated_at",
                (self.name, cost_usd, input_tokens, output_tokens, now, now),
            )

    def release(self, hold_id: int) -> None:
        """The call behind ``hold_id`` failed before it was billed: drop the hold."""
        with self.cache._immediate() as conn:
            conn.execute("DELETE FROM spend_reservations WHERE id = ?", (hold_id,))

    def totals(self) -> LedgerTotals:
        """The ledger now; holds of processes that are gone are not counted. Reads only."""
        with self.cache._snapshot() as conn:
            return _totals(conn, self.name, time.time())

    def reset(self) -> LedgerTotals:
        """Forget the ledger's spend (the cap starts again from $0) and return what it was.
        Holds of calls still in flight stay: those calls settle into the fresh ledger."""
        with self.cache._immediate() as conn:
            now = time.time()
            _sweep(conn, now)
            before = _totals(conn, self.name, now)
            conn.execute("DELETE FROM spend_ledgers WHERE name = ?", (self.name,))
        return before


def all_ledgers(cache: CompletionCache) -> list[LedgerTotals]:
    """Every ledger with recorded spend or a live hold, by name."""
    now = time.time()
    with cache._snapshot() as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM spend_ledgers")}
        holds = conn.execute(
            "SELECT ledger, host, pid, process, expires_at FROM spend_reservations"
        ).fetchall()
        names |= {row[0] for row in holds if _live(row[1], row[2], row[3], row[4], now)}
        return [_totals(conn, name, now) for name in sorted(names)]


def _held(conn: sqlite3.Connection, name: str, now: float | None = None) -> tuple[float, int]:
    """Total and count of the ledger's holds (only the live ones when ``now`` is given)."""
    rows = conn.execute(
        "SELECT amount_usd, host, pid, process, expires_at FROM spend_reservations"
        " WHERE ledger = ?",
        (name,),
    ).fetchall()
    if now is not None:
        rows = [r for r in rows if _live(r[1], r[2], r[3], r[4], now)]
    return sum(float(r[0]) for r in rows), len(rows)


def _totals(conn: sqlite3.Connection, name: str, now: float) -> LedgerTotals:
    row = conn.execute(
        "SELECT spent_usd, calls, input_tokens, output_tokens, updated_at FROM spend_ledgers"
        " WHERE name = ?",
        (name,),
    ).fetchone()
    held, holds = _held(conn, name, now)
    if row is None:
        return LedgerTotals(name, 0.0, 0, 0, 0, held, holds, None)
    return LedgerTotals(
        name, float(row[0]), int(row[1]), int(row[2]), int(row[3]), held, holds, float(row[4])
    )


def _sweep(conn: sqlite3.Connection, now: float) -> None:
    """Delete the holds crashed processes left behind (see the module docstring). This
    process's own holds that have not expired are live: only the others are read (a run with
    128 calls in flight would otherwise read and check all 128 holds for every new call)."""
    rows = conn.execute(
        "SELECT id, host, pid, process, expires_at, amount_usd FROM spend_reservations"
        " WHERE expires_at < ? OR process != ? OR pid != ? OR host != ?",
        (now, _PROCESS_TOKEN, os.getpid(), _HOST),
    ).fetchall()
    stale = [r for r in rows if not _live(r[1], r[2], r[3], r[4], now)]
    if not stale:
        return
    conn.executemany("DELETE FROM spend_reservations WHERE id = ?", [(r[0],) for r in stale])
    log.info(
        "released $%.4f held by %d call(s) of processes that are gone",
        sum(float(r[5]) for r in stale),
        len(stale),
    )


def _live(host: str, pid: int, process: str, expires_at: float, now: float) -> bool:
    if expires_at < now:
        return False
    if host != _HOST:
        return True  # another machine's process cannot be asked; its hold ends by age
    if pid == os.getpid():
        return process == _PROCESS_TOKEN
    return _pid_alive(pid)


def _pid_alive(pid: int) -> bool:
    if os.name == "nt":
        # os.kill on Windows terminates the process instead of probing it: go by age only.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists but is not ours to signal (PermissionError)
    return True
