"""The tidy long score table (``scores.parquet``): one row per (model, chunk, layer, field,
component). Written one challenger at a time, so memory holds one model's rows at most."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

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
    """Appends each model's rows as one row group; deterministic bytes for the same rows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer = pq.ParquetWriter(
            path, SCORE_SCHEMA, compression="zstd", write_statistics=True
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
        """Finish the file (use ``contextlib.closing`` to be sure it is called)."""
        self._writer.close()


def read_score_table(path: Path) -> pa.Table:
    return pq.read_table(path)
