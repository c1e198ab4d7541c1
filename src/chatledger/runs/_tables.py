"""The tidy long score table (``scores.parquet``): one row per (model, chunk, layer, field,
component). Written one challenger at a time, so memory holds one model's rows at most.

The rows go to a temporary file beside the target, which replaces it only when the writer is
left without an exception: an interrupted or failed run never leaves half a table."""

from __future__ import annotations

import contextlib
from pathlib import Path
from types import TracebackType

import pyarrow as pa
import pyarrow.parquet as pq

from chatledger.core import atomic_path

RUN_LEVEL = "__run__"  # chunk_id of rows that describe the whole run, not one chunk

SCORE_SCHEMA = pa.schema(
    [
        pa.field("model", pa.string(), nullable=False),
        pa.field("chunk_id", pa.string(), nullable=False),
        pa.field("layer", pa.string(), nullable=False),
        pa.field("field", pa.string(), nullable=False),
        pa.field("component", pa.string(), nullable=False),
        pa.field("value", pa.float64(), nullable=False),
    ]
)

Row = tuple[str, str, str, str, str, float]


class ScoreTableWriter:
    """Appends each model's rows as one row group; deterministic bytes for the same rows.

    ``with ScoreTableWriter(path) as writer:`` — the table appears at ``path`` when the block
    ends without an exception (or at :meth:`close`); :meth:`discard` drops it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stack = contextlib.ExitStack()
        temporary = self._stack.enter_context(atomic_path(path))
        self._writer = pq.ParquetWriter(
            temporary, SCORE_SCHEMA, compression="zstd", write_statistics=True
        )
        self.rows_written = 0

    def write(self, rows: list[Row]) -> None:
        if not rows:
            return
        columns = list(zip(*rows, strict=True))
        table = pa.Table.from_arrays(
            [pa.array(col, type=f.type) for col, f in zip(columns, SCORE_SCHEMA, strict=True)],
            schema=SCORE_SCHEMA,
        )
        self._writer.write_table(table)
        self.rows_written += len(rows)

    def close(self) -> None:
        """Finish the table and put it in place."""
        self._writer.close()
        self._stack.close()

    def discard(self, exc: BaseException | None = None) -> None:
        """Drop the unfinished table; whatever was at ``path`` before stays."""
        self._writer.close()
        error = exc if exc is not None else RuntimeError("score table discarded")
        self._stack.__exit__(type(error), error, error.__traceback__)

    def __enter__(self) -> ScoreTableWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.close()
        else:
            self.discard(exc)


def read_score_table(path: Path) -> pa.Table:
    return pq.read_table(path)
