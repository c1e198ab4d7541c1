"""Issue 34: a run assembles each stage from its spooled batch results in chunk order, writing
rows, judgement lines and per-chunk values to the stage's files as it goes. What it writes is
what the whole-file functions compute over every chunk at once, even when conversations
interleave (batches of whole conversations then hold chunks far apart)."""

from __future__ import annotations

import io
import itertools
import json
import pickle
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from chatledger.corpus import read_chunks, read_extractions
from chatledger.demo import prepare_demo
from chatledger.judge import JUDGES
from chatledger.runs import _execute as execute_module
from chatledger.runs import _tables as tables_module
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._judging import judge_challenger, judge_rows
from chatledger.runs._rows import extraction_rows
from chatledger.runs._tables import ScoreTableWriter, rows_table, score_schema
from chatledger.runs._units import BatchResult
from chatledger.scoring import score_records
from chatledger.stats import resample_counts


def _interleave(chunks_path: Path) -> list[str]:
    """Rewrite the chunks file with the conversations' chunks dealt round-robin (c1's first,
    c2's first, …, c1's second, …); returns the conversations in their new order."""
    lines = chunks_path.read_text(encoding="utf-8").splitlines()
    by_conversation: dict[str, list[str]] = {}
    for line in lines:
        by_conversation.setdefault(json.loads(line)["conversation_id"], []).append(line)
    dealt = [
        part[i]
        for i in range(max(map(len, by_conversation.values())))
        for part in by_conversation.values()
        if i < len(part)
    ]
    assert sorted(dealt) == sorted(lines) and dealt != lines
    chunks_path.write_text("\n".join(dealt) + "\n", encoding="utf-8")
    return list(by_conversation)


def test_streamed_stages_are_what_the_whole_file_functions_compute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = prepare_demo(tmp_path / "demo")
    _interleave(tmp_path / "demo" / "corpus" / "chunks.jsonl")
    data = json.loads(config.read_text(encoding="utf-8"))
    data["challengers"] = data["challengers"][1:2]  # a recorded model's (some chunks invalid)
    config.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(execute_module, "MIN_BATCH_CHUNKS", 5)  # several batches per model
    loaded = load_run_config(config)
    out = tmp_path / "run"
    result = execute_run(loaded, out, executor="local")
    assert result.record is not None
    scored = [s for s in result.record.stages if s.stage == "score"]
    # 36 chunks in batches of whole conversations of ≥ 5 chunks (36 / (8 × 1 worker)).
    assert [s.units for s in scored] == [6]

    chunks = read_chunks(loaded.chunks)
    assert loaded.reference is not None
    reference = read_extractions(loaded.reference).records
    table = pq.read_table(out / "scores.parquet").to_pylist()
    lines = (out / "judgements.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    for challenger, name in zip(loaded.challengers, ["recorded:qwen2.5-coder-1.5b"], strict=True):
        assert challenger is not None
        records = read_extractions(challenger).records
        report = score_records(
            reference,
            records,
            chunks,
            execute_module._scoring_config(loaded),
            challenger_model=name,
        )
        rows = [tuple(r.values()) for r in table if r["model"] == name]
        overall = next(i for i, r in enumerate(rows) if r[2:5] == ("overall", "composite", "score"))
        rows = rows[: overall + 1]  # the model's own rows; the statistics' rows follow
        extraction = [r for r in rows if r[2] == "extraction"]
        assert extraction == extraction_rows(name, report)
        handle = io.StringIO()
        judged = judge_challenger(name, [JUDGES.get("grounding")()], chunks, records, handle)
        assert [r for r in rows if r[2] == "judge"] == judge_rows(
            name, [c.chunk_id for c in chunks], judged
        )
        assert [x for x in lines if json.loads(x)["model"] == name] == handle.getvalue().splitlines(
            keepends=True
        )
        model = next(m for m in result.models if m.name == name)
        assert model.layers["extraction"] == report.extraction_composite
        assert model.layers["judge"] == judged.composite
        # Layer order in the table: every extraction row, downstream's, the judge's, overall.
        layers = [r[2] for r in rows]
        assert layers == sorted(layers, key=["extraction", "downstream", "judge", "overall"].index)


def test_the_spool_gives_chunks_in_order_holding_one_batch_when_conversations_follow(
    tmp_path: Path,
) -> None:
    spool = execute_module._BatchSpool(tmp_path)
    reads: list[tuple[int, ...]] = []
    read = spool._read

    def counting(offset: int, size: int) -> BatchResult:
        found = read(offset, size)
        reads.append(found.positions)
        return found

    spool._read = counting  # type: ignore[method-assign]
    # Interleaved: batch A holds 0, 2, 3 and 6; batch B 1, 4, 5; batch C 7, 8 (added first).
    for positions in ((7, 8), (6, 0, 3, 2), (4, 1, 5)):
        result = BatchResult(positions)
        spool.add("m", "judge", positions, pickle.dumps(result))
    seen = list(spool.in_order("m", "judge"))
    assert [p for p, _, _, _ in seen] == list(range(9))
    assert [(p, first, last) for p, _, first, last in seen if first or last] == [
        (0, True, False),
        (1, True, False),
        (5, False, True),
        (6, False, True),
        (7, True, False),
        (8, False, True),
    ]
    assert reads == [(6, 0, 3, 2), (4, 1, 5), (7, 8)]  # each read once, when first needed
    assert list(spool.in_order("m", "judge")) == []  # forgotten once read
    spool.close()


def test_a_models_rows_in_parts_make_the_row_groups_of_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [("m", f"c{i:04d}", "extraction", "f", "score", i / 7) for i in range(2_500)]
    monkeypatch.setattr(tables_module, "MAX_ROW_GROUP_ROWS", 1_000)
    whole = pq.ParquetWriter(
        tmp_path / "whole.parquet", score_schema(), compression="zstd", write_statistics=True
    )
    whole.write_table(rows_table(rows), row_group_size=1_000)
    whole.write_table(rows_table(rows[:10]), row_group_size=1_000)
    whole.close()
    with ScoreTableWriter(tmp_path / "parts.parquet") as writer:
        parts = [rows_table(rows[i : i + 333]) for i in range(0, len(rows), 333)]
        writer.write_model([p.to_batches()[0] for p in parts[:-1]] + parts[-1:])
        writer.write_model([rows_table(rows[:10])])
    written = pq.ParquetFile(tmp_path / "parts.parquet").metadata
    assert [written.row_group(i).num_rows for i in range(written.num_row_groups)] == [
        1_000,
        1_000,
        500,
        10,
    ]
    assert (tmp_path / "parts.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()


def test_resample_counts_come_one_batch_at_a_time_as_drawn_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chatledger.stats import _resample

    monkeypatch.setattr(_resample, "_BATCH_BYTES", 8 * 4 * 3)  # 3 resamples of 4 units a batch
    # The draws of the list it returned before: one generator, batches of 3 then 2 resamples.
    rng = np.random.default_rng(7)
    expected = []
    for size in (3, 2):
        idx = rng.integers(0, 4, (size, 4))
        expected.append([np.bincount(row, minlength=4).tolist() for row in idx])
    counts = resample_counts(4, 5, 7)
    assert not isinstance(counts, list)  # a generator: ~32 MB at a time, not B × units × 8
    assert [batch.tolist() for batch in counts] == expected


def test_a_live_spool_gives_each_batch_as_it_arrives_and_ends_with_the_last(
    tmp_path: Path,
) -> None:
    # What the stages' threads read while the units run (the parallel executors): the chunks of
    # a batch come as soon as it is added — the next batch's first chunk is known in advance —
    # and the reading ends with the last expected batch, before the spool completes.
    spool = execute_module._BatchSpool(tmp_path, live=True)
    batches = [(0, 2), (1, 3, 4), (5, 6)]  # the first two interleave
    spool.expect(batches)
    reader = spool.in_order("m", "extraction")
    spool.add("m", "extraction", batches[0], pickle.dumps(BatchResult(batches[0])))
    position, result, first, last = next(reader)  # 1 is not in the first batch: it waits
    assert (position, result.positions, first, last) == (0, batches[0], True, False)
    spool.add("m", "extraction", batches[1], pickle.dumps(BatchResult(batches[1])))
    assert [p for p, *_ in itertools.islice(reader, 4)] == [1, 2, 3, 4]
    spool.add("m", "extraction", batches[2], pickle.dumps(BatchResult(batches[2])))
    assert [(p, first, last) for p, _, first, last in reader] == [
        (5, True, False),
        (6, False, True),
    ]
    with pytest.raises(RuntimeError, match="not expected"):  # a batch out of order
        spool.add("m", "judge", batches[1], pickle.dumps(BatchResult(batches[1])))
    waiting = spool.each("m", "downstream")
    spool.abort()  # the run stopped: a reader waiting for a batch ends
    with pytest.raises(execute_module._SpoolAborted):
        next(waiting)
    spool.close()
