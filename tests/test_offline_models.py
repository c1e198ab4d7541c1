"""Offline extractors are models: ``--model offline:rules`` and ``{model: offline:rules}``.

No provider, no key, no call cache, no network: every socket connection is refused in these
tests, and the call cache folder the environment names must never appear.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.cli._app import main
from chatledger.core import InputError, RecordStatus
from chatledger.corpus import read_chunks, read_extractions
from chatledger.extraction import chunk_hash, extract_chunks, validate_model_id
from chatledger.extractors import RuleBasedExtractor
from chatledger.providers import ModelIdError
from chatledger.runs import execute_run, load_run_config

DATA = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data"
PART1 = DATA / "corpus" / "parts"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No network at all; the default call cache under tmp_path/default-cache."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an offline extractor opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    cache = tmp_path / "default-cache"
    monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(cache))
    yield cache


def example_chunks(tmp_path: Path, n: int = 3) -> Path:
    """The corpus part 1's first ``n`` chunks."""
    lines = (PART1 / "part1_chunks.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    path = tmp_path / "chunks.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_extract(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    capsys.readouterr()
    code = main(["extract", *argv, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else None, captured.err


def test_extract_with_offline_rules_writes_model_lines_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunks = example_chunks(tmp_path)
    out = tmp_path / "rules.jsonl"
    argv = ("--model", "offline:rules", "--chunks", str(chunks), "--out", str(out))
    code, summary, err = run_extract(capsys, *argv, "--cache-dir", str(tmp_path / "c"))

    assert code == 0, err
    assert (summary["planned"], summary["written"], summary["invalid"]) == (3, 3, 0)
    assert (summary["live_calls"], summary["cached_calls"], summary["billed_usd"]) == (0, 0, 0.0)
    assert summary["prompt_style"] == "none"
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    by_id = {c.chunk_id: c for c in read_chunks(chunks)}
    rules = RuleBasedExtractor()
    assert [x["chunk_id"] for x in lines] == list(by_id)
    for line in lines:
        assert (line["model"], line["sample"], line["prompt_style"]) == ("offline:rules", 0, "none")
        assert line["extraction"] == rules.extract(by_id[line["chunk_id"]]).model_dump(mode="json")
        usage = line["usage"]
        assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (0, 0, 0.0)
        assert (usage["calls"], usage["cached"], usage["billed_usd"]) == (0, False, 0.0)
        assert usage["latency_s"] > 0
        assert line["fingerprint"]["chunk"] == chunk_hash(by_id[line["chunk_id"]])
        assert line["fingerprint"]["extractor"].startswith("offline:rules (chatledger ")
    assert summary["latency_s"] == pytest.approx(sum(x["usage"]["latency_s"] for x in lines))
    # The reader takes the lines like any model's.
    source = read_extractions(out)
    assert source.problems == [] and source.model == "offline:rules"
    assert all(r.status is RecordStatus.OK for r in source.records.values())

    code, summary, _ = run_extract(capsys, *argv, "--cache-dir", str(tmp_path / "c"))
    assert code == 0 and (summary["already_done"], summary["written"]) == (3, 0)


def test_library_extraction_touches_no_provider_and_no_cache(tmp_path: Path, offline: Path) -> None:
    chunks = read_chunks(example_chunks(tmp_path, 2))
    summary = extract_chunks("offline:rules", chunks, tmp_path / "out.jsonl", samples=2)
    assert summary.complete and summary.progress.written == 4  # 2 chunks × 2 samples
    assert not offline.exists()  # no call cache was opened
    samples = read_extractions(tmp_path / "out.jsonl")
    assert samples.sample_count == 2
    # Deterministic: both samples of a chunk are the same extraction.
    for chunk_id, record in samples.records.items():
        assert samples.sample_records(1)[chunk_id].extraction == record.extraction


def test_a_changed_chunk_or_a_new_extractor_version_is_redone_for_free(tmp_path: Path) -> None:
    path = example_chunks(tmp_path, 3)
    out = tmp_path / "out.jsonl"
    chunks = read_chunks(path)
    first, second, third = (c.chunk_id for c in chunks)
    extract_chunks("offline:rules", chunks, out)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    # The first line from another chatledger version: superseded, not refused (redoing an
    # offline extraction is free); the third chunk's text changes.
    lines[0]["fingerprint"]["extractor"] = "offline:rules (chatledger 0.0.1)"
    out.write_text("".join(json.dumps(x) + "\n" for x in lines))
    changed = chunks[2].model_copy(
        update={"messages": [chunks[2].messages[0].model_copy(update={"text": "Bye."})]}
    )
    summary = extract_chunks("offline:rules", [chunks[0], chunks[1], changed], out)

    assert (summary.progress.superseded, summary.progress.written) == (2, 2)
    again = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["chunk_id"] for x in again] == [second, first, third]
    assert again[0] == lines[1]  # the current line is kept as it was
    assert again[1]["fingerprint"]["extractor"] == lines[1]["fingerprint"]["extractor"]
    assert again[2]["fingerprint"]["chunk"] == chunk_hash(changed)
    assert again[2]["extraction"]["summary"] == "Bye."


def test_unknown_offline_extractor_is_one_line_naming_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunks = example_chunks(tmp_path, 1)
    code, _, err = run_extract(
        capsys, "--model", "offline:foo", "--chunks", str(chunks), "--out", str(tmp_path / "o")
    )
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.endswith("unknown offline extractor 'offline:foo' (known: offline:rules)")
    assert not (tmp_path / "o").exists()
    with pytest.raises(ModelIdError, match="must start with a provider prefix"):
        validate_model_id("rules")  # not offline: the provider check still applies
    assert validate_model_id("offline:rules") == "offline:rules"


def test_a_prompt_style_for_an_offline_extractor_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunks = example_chunks(tmp_path, 1)
    code, _, err = run_extract(
        capsys,
        *("--model", "offline:rules", "--chunks", str(chunks), "--out", str(tmp_path / "o")),
        *("--prompt-style", "field-guide"),
    )
    assert code == 2
    assert "offline:rules is an offline extractor: it reads no prompt, so prompt_style" in err


def write_config(tmp_path: Path, challenger: dict[str, Any], **extra: Any) -> Path:
    shutil.copy(PART1 / "part1_chunks.jsonl", tmp_path / "chunks.jsonl")
    shutil.copy(PART1 / "part1_gold.jsonl", tmp_path / "gold.jsonl")
    config = {
        "name": "offline",
        "chunks": "chunks.jsonl",
        "reference": {"file": "gold.jsonl", "name": "gold"},
        "challengers": [challenger],
        "layers": ["extraction", "downstream"],
        "stats": {"bootstrap_resamples": 100, "dirichlet_draws": 100},
        **extra,
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_a_run_config_source_can_be_an_offline_extractor(tmp_path: Path, offline: Path) -> None:
    as_model = tmp_path / "model"
    as_model.mkdir()
    config = write_config(as_model, {"model": "offline:rules", "name": "rules"})
    result = execute_run(load_run_config(config), as_model / "out")
    run = json.loads((as_model / "out" / "run.json").read_text())

    # The same extraction handed over as a file scores exactly the same.
    as_file = tmp_path / "file"
    as_file.mkdir()
    RuleBasedExtractor().extract_file(PART1 / "part1_chunks.jsonl", as_file / "rules.jsonl")
    baseline = execute_run(
        load_run_config(write_config(as_file, {"file": "rules.jsonl", "name": "rules"})),
        as_file / "out",
    )
    assert result.models[0].layers == baseline.models[0].layers
    assert result.models[0].name == "rules"

    extracted = as_model / "out" / "extractions" / "rules.jsonl"
    n_chunks = len(read_chunks(as_model / "chunks.jsonl"))
    assert len(extracted.read_text().splitlines()) == n_chunks
    usage = run["models"][0]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (0, 0, 0)
    assert usage["latency_s"] > 0 and usage["cached_chunks"] == 0
    assert run["model_calls"] is None  # no provider hub was built…
    assert not offline.exists()  # …and no call cache opened

    # A rerun finds every line in place.
    execute_run(load_run_config(config), as_model / "out")
    assert len(extracted.read_text().splitlines()) == n_chunks


def test_a_relative_out_reaches_the_units_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Workers of a cluster may run in another folder: the extracted file they read is named by
    # its absolute path (issue 34), whatever --out the run was given.
    config = write_config(tmp_path, {"model": "offline:rules", "name": "rules"})
    monkeypatch.chdir(tmp_path)
    result = execute_run(load_run_config(config), Path("out"))
    assert result.out_dir == tmp_path / "out"
    inputs = json.loads((tmp_path / "out" / "run.json").read_text())["inputs"]
    (extracted,) = [i["path"] for i in inputs if i["role"] == "challenger:rules"]
    assert extracted == str(tmp_path / "out" / "extractions" / "rules.jsonl")


@pytest.mark.parametrize(
    ("challenger", "message"),
    [
        (
            {"model": "offline:foo"},
            "unknown offline extractor 'offline:foo' (known: offline:rules)",
        ),
        (
            {"model": "offline:rules", "temperature": 0.2},
            "[challengers.0.temperature]: offline:rules is an offline extractor: it reads no "
            "prompt, so temperature does not apply",
        ),
    ],
    ids=["unknown", "temperature"],
)
def test_run_config_offline_mistakes(
    tmp_path: Path, challenger: dict[str, Any], message: str
) -> None:
    config = write_config(tmp_path, challenger)
    with pytest.raises(InputError) as caught:
        execute_run(load_run_config(config), tmp_path / "out")
    assert message in str(caught.value)
    assert str(config) in str(caught.value)
    assert not (tmp_path / "out" / "extractions").exists()
