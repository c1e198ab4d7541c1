"""The scale benchmark's corpus generator writes as it goes (issue 34): the same bytes as the
whole-file path it replaced (every record generated, then the simulated challengers made from
the whole challenger file), so corpora and the results measured on them stay comparable."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from chatledger.corpus import read_chunks, read_extractions
from chatledger.simulate import simulate_records, write_records
from synthetic_corpus import synthetic


def _synthetic() -> ModuleType:
    return synthetic()


def test_the_streamed_corpus_has_the_whole_file_bytes(tmp_path: Path) -> None:
    synthetic = _synthetic()
    streamed = tmp_path / "streamed"
    config = synthetic.write_run_corpus(streamed, 30, "bench")
    whole = tmp_path / "whole"
    chunks_path, _, challenger_path = synthetic.generate(30, seed=0).write(whole)
    chunks = read_chunks(chunks_path)
    challenger = read_extractions(challenger_path).records
    edits = (("b", [("drop", 0.2)]), ("c", [("paraphrase", 0.3), ("flip_polarity", 0.3)]))
    for label, ops in edits:
        records = simulate_records(challenger, chunks, ops, seed=1, label=label)
        write_records(records, whole / f"challenger_{label}.jsonl")
    names = ["chunks", "reference", "challenger", "challenger_b", "challenger_c"]
    for name in names:
        written = (streamed / f"{name}.jsonl").read_bytes()
        assert written == (whole / f"{name}.jsonl").read_bytes(), name
        assert written.count(b"\n") == 30, name
    assert config == streamed / "run.yaml"
    assert sorted(p.name for p in streamed.iterdir()) == sorted(
        [*(f"{n}.jsonl" for n in names), "run.yaml"]
    )
