"""The selection's Parquet tables: ``screening.parquet`` (one row per screened field) and
``tournament.parquet`` (one row per chunk a trial evaluated: its score and the running mean it
reported, so the pruning can be read off the table)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chatledger.core import atomic_path
from chatledger.select._record import SCREENING_TABLE, TOURNAMENT_TABLE, ScreenRow, TournamentRow


def _write(path: Path, table: pa.Table) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def write_screening_table(out_dir: Path, rows: Sequence[ScreenRow]) -> Path:
    names = list(ScreenRow.model_fields)
    columns = {n: [getattr(r, n) for r in rows] for n in names}
    path = out_dir / SCREENING_TABLE
    _write(path, pa.table(columns))
    return path


def write_tournament_table(out_dir: Path, rows: Sequence[TournamentRow]) -> Path:
    schema = pa.schema(
        [
            ("schema_name", pa.string()),
            ("style", pa.string()),
            ("n_fields", pa.int32()),
            ("step", pa.int32()),
            ("chunk_id", pa.string()),
            ("score", pa.float64()),
            ("running_mean", pa.float64()),
            ("pruned", pa.bool_()),
            ("rank", pa.int32()),
        ]
    )
    records = []
    for row in rows:
        total = 0.0
        pairs = zip(row.chunk_ids, row.scores, strict=True)
        for step, (chunk_id, score) in enumerate(pairs, start=1):
            total += score
            records.append(
                {
                    "schema_name": row.schema_name,
                    "style": row.style,
                    "n_fields": len(row.fields),
                    "step": step,
                    "chunk_id": chunk_id,
                    "score": score,
                    "running_mean": total / step,
                    "pruned": row.pruned,
                    "rank": row.rank,
                }
            )
    path = out_dir / TOURNAMENT_TABLE
    _write(path, pa.Table.from_pylist(records, schema=schema))
    return path
