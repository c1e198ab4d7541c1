"""The tidy long score table (``scores.parquet``): one row per (model, chunk, layer, field,
component). Written one challenger at a time, so memory holds one model's rows at most.

The rows go to a temporary file beside the target, which replaces it only when the writer is
left without an exception: an interrupted or failed run never leaves half a table.

pyarrow is imported when a table is written or read, not with the module: the readers of a
run's statistics (gate, stats) use the row shape and never the table."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from chatledger.core import atomic_path

if TYPE_CHECKING:
    import pyarrow as pa

# The Parquet writer's largest row group (a larger table is written as several): a model's
# rows given in parts are regrouped to these bounds, so the file has the same bytes.
MAX_ROW_GROUP_ROWS = 1024 * 1024
RUN_LEVEL = "__run__"  # chunk_id of rows that describe the whole run, not one chunk

Row = tuple[str, str, str, str, str, float]


@functools.cache
def score_schema() -> pa.Schema:
    """The table's columns, one per element of :data:`Row`."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("model", pa.string(), nullable=False),
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("layer", pa.string(), nullable=False),
            pa.field("field", pa.string(), nullable=False),
            pa.field("component", pa.string(), nullable=False),
            pa.field("value", pa.float64(), nullable=False),
        ]
    )


def rows_table(rows: list[Row]) -> pa.Table:
    """Rows as a table of :func:`score_schema` (columns of no rows when there are none)."""
    import pyarrow as pa

    schema = score_schema()
    columns: list[Sequence[object]] = (
        list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    )
    arrays = [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


class ScoreTableWriter:
    """Appends each model's rows as one row group; deterministic bytes for the same rows.

    ``with ScoreTableWriter(path) as writer:`` — the table appears at ``path`` when the block
    ends without an exception (or at :meth:`close`); :meth:`discard` drops it.
    """

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self._stack = contextlib.ExitStack()
        temporary = self._stack.enter_context(atomic_path(path))
        self._writer = pq.ParquetWriter(
            temporary, score_schema(), compression="zstd", write_statistics=True
        )
        self.rows_written = 0

    def write(self, rows: list[Row]) -> None:
        if not rows:
            return
        self._writer.write_table(rows_table(rows))
        self.rows_written += len(rows)

    def write_model(self, parts: Iterable[pa.RecordBatch | pa.Table]) -> None:
        """One model's rows, given as record batches (read back from its stages' files), as
        the same row groups :meth:`write` of all of them at once makes: groups of
        :data:`MAX_ROW_GROUP_ROWS` rows and the rest (the Parquet writer splits a table so).
        At most one group's rows are held at a time."""
        import pyarrow as pa

        held: list[pa.Table] = []
        count = 0
        for part in parts:
            table = part if isinstance(part, pa.Table) else pa.Table.from_batches([part])
            while table.num_rows:
                take = min(table.num_rows, MAX_ROW_GROUP_ROWS - count)
                held.append(table.slice(0, take))
                table = table.slice(take)
                count += take
                if count == MAX_ROW_GROUP_ROWS:
                    self._write_group(held)
                    held, count = [], 0
        if count:
            self._write_group(held)

    def _write_group(self, tables: list[pa.Table]) -> None:
        import pyarrow as pa

        table = pa.concat_tables(tables)
        self._writer.write_table(table)
        self.rows_written += table.num_rows

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
    import pyarrow.parquet as pq

    return pq.read_table(path)
