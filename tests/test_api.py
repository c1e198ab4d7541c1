"""The Python API (``import chatledger as cl``): the CLI's numbers, as typed results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import chatledger as cl
from chatledger.cli._app import main
from chatledger.core import ExtractionRecord, InputError
from chatledger.corpus import read_extractions
from chatledger.demo import write_bundled_corpus
from chatledger.simulate import OPERATORS, simulate_records, write_records


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("api")
    chunks_path, gold_path = write_bundled_corpus(folder)
    from chatledger.corpus import read_chunks

    gold = read_extractions(gold_path).records
    operations = [(operator, 0.3) for operator in OPERATORS]
    write_records(
        simulate_records(gold, read_chunks(chunks_path), operations, seed=7, label="cheap"),
        folder / "cheap.jsonl",
    )
    config = {
        "name": "api",
        "chunks": "chunks.jsonl",
        "reference": {"file": "gold.jsonl", "name": "gold"},
        "challengers": [{"file": "cheap.jsonl", "name": "cheap"}, {"model": "offline:rules"}],
        "layers": ["extraction", "downstream"],
    }
    (folder / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_score_gives_the_numbers_the_cli_prints(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = cl.score(corpus / "gold.jsonl", corpus / "cheap.jsonl", corpus / "chunks.jsonl")
    assert isinstance(report, cl.ScoreReport)
    args = ["--reference", "gold.jsonl", "--challenger", "cheap.jsonl", "--chunks", "chunks.jsonl"]
    assert main(["score", *(str(corpus / a) if a.endswith(".jsonl") else a for a in args),
                 "--format", "json"]) == 0  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    assert report.extraction_composite == printed["extraction_composite"]
    assert {k: f.score for k, f in report.fields.items()} == {
        k: v["score"] for k, v in printed["fields"].items()
    }
    # Unlike the streaming CLI, the report keeps every chunk's scores.
    assert len(report.chunks) == printed["chunks"] == 36
    assert report.challenger_model == printed["challenger"] == "simulated:cheap"


def test_records_in_memory_score_as_their_files_do(corpus: Path) -> None:
    from_files = cl.score(corpus / "gold.jsonl", corpus / "cheap.jsonl", corpus / "chunks.jsonl")
    gold = [json.loads(line) for line in (corpus / "gold.jsonl").read_text().splitlines()]
    cheap = list(read_extractions(corpus / "cheap.jsonl").records.values())
    chunks = [json.loads(line) for line in (corpus / "chunks.jsonl").read_text().splitlines()]
    in_memory = cl.score(gold, cheap, chunks)
    assert in_memory.extraction_composite == from_files.extraction_composite
    assert in_memory.fields.keys() == from_files.fields.keys()
    assert all(isinstance(r, ExtractionRecord) for r in cheap)


def test_a_bad_line_in_memory_is_counted_not_dropped(corpus: Path) -> None:
    gold = [json.loads(line) for line in (corpus / "gold.jsonl").read_text().splitlines()]
    broken = [dict(row, model="cheap") for row in gold]
    broken[4] = {"chunk_id": broken[4]["chunk_id"], "model": "cheap", "extraction": {"topics": 7}}
    report = cl.score(gold, broken, corpus / "chunks.jsonl")
    assert report.invalid == 1 and report.n_chunks == 36
    assert any("<challenger>:5" in str(p) and "topics" in str(p) for p in report.problems)
    # The 35 others are the reference itself: every field scores 1 on them, 0 on the broken one.
    assert report.fields["topics"].score == pytest.approx(35 / 36)


def test_mistakes_raise_input_errors_naming_the_place(corpus: Path) -> None:
    with pytest.raises(InputError, match="challenger extraction file not found"):
        cl.score(corpus / "gold.jsonl", corpus / "nope.jsonl")
    with pytest.raises(InputError, match=r"<chunks>:2 \[participants\]"):
        cl.score(
            corpus / "gold.jsonl",
            corpus / "cheap.jsonl",
            [
                {"chunk_id": "a", "conversation_id": "c", "participants": ["x"], "messages": []},
                {"chunk_id": "b", "conversation_id": "c", "participants": 3, "messages": []},
            ],
        )
    with pytest.raises(InputError, match="item 1 is a int"):
        cl.score([1], corpus / "cheap.jsonl")


def test_run_returns_the_record_it_wrote_and_gate_reads_it(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    record = cl.run(corpus / "run.yaml", out=out)
    assert isinstance(record, cl.ConversationRun)
    assert record == cl.read_run_record(out)
    assert [m.name for m in record.models] == ["cheap", "offline:rules"]
    assert record.chunk_ids and len(record.chunk_ids) == record.chunks == 36
    verdict = cl.gate(
        out,
        out,
        rules="{overall: {max_drop: 0.0}}",
        baseline_model="cheap",
        candidate_model="offline:rules",
    )
    assert isinstance(verdict, cl.GateResult)
    cheap, rules = record.model("cheap"), record.model("offline:rules")
    assert verdict.outcomes[0].difference == pytest.approx(rules.overall - cheap.overall)
    # The reason stands alone: the figure first, the rule last.
    reason = verdict.outcomes[0].reason
    assert reason.startswith("overall changed ") and reason.endswith("(rule: max_drop 0)")
    assert not (out / "report.html").exists()
    cl.run(corpus / "run.yaml", out=out, report=True)
    assert (out / "report.html").is_file()


def test_importing_chatledger_loads_none_of_the_api() -> None:
    code = (
        "import sys, chatledger as cl; "
        "assert 'chatledger._api' not in sys.modules and 'numpy' not in sys.modules; "
        "cl.score; assert 'chatledger._api' in sys.modules and 'numpy' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"aggregate": "mcro"}, "aggregate='mcro' is not one of: macro, micro"),
        ({"matcher": "bogus"}, "matcher='bogus' is not one of: token_set, guarded"),
        ({"schema": "v2"}, "schema='v2' is not one of: v1, v3"),
    ],
)
def test_an_argument_out_of_its_choices_is_an_input_error_listing_them(
    corpus: Path, kwargs: dict[str, str], message: str
) -> None:
    with pytest.raises(InputError) as refused:
        cl.score(corpus / "gold.jsonl", corpus / "cheap.jsonl", **kwargs)  # type: ignore[arg-type]
    assert message in str(refused.value)
    assert isinstance(refused.value, cl.ChatLedgerError)


def test_run_and_gate_arguments_are_checked(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="report=1 is not one of: True, False"):
        cl.run(corpus / "run.yaml", out=tmp_path / "r", report=1)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="baseline is a int, not a path"):
        cl.gate(3, tmp_path, rules="{overall: {max_drop: 0}}")  # type: ignore[arg-type]
    assert not (tmp_path / "r").exists()


def test_dir_and_help_show_the_lazy_names() -> None:
    code = (
        "import chatledger as cl, pydoc, sys; "
        "names = dir(cl); "
        "assert {'score', 'run', 'gate', 'ScoreReport', 'GateResult'} <= set(names), names; "
        "assert 'import_module' not in names and 'chatledger._api' not in sys.modules; "
        "text = pydoc.render_doc(cl, renderer=pydoc.plaintext); "
        "assert 'score(reference' in text and 'gate(baseline' in text and 'run(config' in text"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
