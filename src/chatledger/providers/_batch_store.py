"""Submitted batches, kept in the completion cache's SQLite file so a restart resumes them.

Two tables next to ``completions`` (which they leave untouched): ``batches`` (one row per batch
a provider accepted: its id, endpoint, model, size and whether its results were read) and
``batch_requests`` (the cache key of every request in it). A run that asks for a key that is in
a batch still open on the same endpoint polls that batch instead of submitting the request
again — whether the batch was submitted by this process or by one that was killed.

A batch is marked ended only after its replies are in the cache, so a crash between the two
costs a second read of the results, never a second payment.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from chatledger.providers._cache import CompletionCache

BATCH_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS batches ("
    " batch_id TEXT PRIMARY KEY, endpoint TEXT NOT NULL, model TEXT NOT NULL,"
    " requests INTEGER NOT NULL, state TEXT NOT NULL,"
    " created_at REAL NOT NULL, updated_at REAL NOT NULL)",
    # Primary key (key, batch_id): looking a key up is an index search.
    "CREATE TABLE IF NOT EXISTS batch_requests ("
    " key TEXT NOT NULL, batch_id TEXT NOT NULL, PRIMARY KEY (key, batch_id))",
)
# SQLite's default limit on the parameters of one statement is 999 (older builds).
_KEYS_PER_QUERY = 500

BatchState = Literal["submitted", "ended"]


class BatchRecord(BaseModel):
    """One row of ``batches``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    batch_id: str = Field(min_length=1)
    endpoint: str
    model: str
    requests: int = Field(ge=0)
    state: BatchState
    created_at: float
    updated_at: float


class BatchStore:
    """The batches of one cache database."""

    def __init__(self, cache: CompletionCache) -> None:
        self.cache = cache

    def record(self, batch_id: str, *, endpoint: str, model: str, keys: Sequence[str]) -> None:
        """A batch the provider accepted, with the cache keys of its requests."""
        now = time.time()
        row = BatchRecord(
            batch_id=batch_id,
            endpoint=endpoint,
            model=model,
            requests=len(keys),
            state="submitted",
            created_at=now,
            updated_at=now,
        )
        with self.cache._immediate() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO batches (batch_id, endpoint, model, requests, state,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (row.batch_id, row.endpoint, row.model, row.requests, row.state, now, now),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO batch_requests (key, batch_id) VALUES (?, ?)",
                [(key, batch_id) for key in keys],
            )

    def open_batches_for(self, endpoint: str, keys: Iterable[str]) -> dict[str, str]:
        """For each key in a batch of ``endpoint`` that is still open, that batch's id (the
        newest one, should a key be in two)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, tuple[float, str]] = {}
        with self.cache._snapshot() as conn:
            for start in range(0, len(wanted), _KEYS_PER_QUERY):
                part = wanted[start : start + _KEYS_PER_QUERY]
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    "SELECT r.key, b.batch_id, b.created_at FROM batch_requests r"
                    " JOIN batches b ON b.batch_id = r.batch_id"
                    f" WHERE b.endpoint = ? AND b.state = 'submitted' AND r.key IN ({marks})",
                    (endpoint, *part),
                ).fetchall()
                for key, batch_id, created_at in rows:
                    if key not in found or created_at > found[key][0]:
                        found[key] = (float(created_at), str(batch_id))
        return {key: batch_id for key, (_, batch_id) in found.items()}

    def mark_ended(self, batch_id: str) -> None:
        """The batch's results were read and its replies stored: nothing to resume."""
        with self.cache._immediate() as conn:
            conn.execute(
                "UPDATE batches SET state = 'ended', updated_at = ? WHERE batch_id = ?",
                (time.time(), batch_id),
            )

    def batches(self, endpoint: str | None = None) -> list[BatchRecord]:
        """Every recorded batch (of ``endpoint``), oldest first."""
        query = (
            "SELECT batch_id, endpoint, model, requests, state, created_at, updated_at FROM batches"
        )
        params: tuple[str, ...] = ()
        if endpoint is not None:
            query += " WHERE endpoint = ?"
            params = (endpoint,)
        with self.cache._snapshot() as conn:
            rows = conn.execute(query + " ORDER BY created_at", params).fetchall()
        return [
            BatchRecord(
                batch_id=r[0],
                endpoint=r[1],
                model=r[2],
                requests=r[3],
                state=r[4],
                created_at=r[5],
                updated_at=r[6],
            )
            for r in rows
        ]
