"""``chatledger export inspect``: a run as an inspect_ai ``.eval`` log, read back with inspect's
own reader (issue 17). inspect_ai is the extra ``inspect``, which ``make test`` installs: the
test fails, never skips, without it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log, read_eval_log_headers_async

from chatledger.cli._app import main
from chatledger.interop import INSPECT_EXTRA, export_inspect_log
from chatledger.record import ConversationRun, read_run_record
from chatledger.runs import RUN_LEVEL, execute_run, load_run_config

EXAMPLES = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "examples"
CHUNKS = 6


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _corpus(folder: Path) -> None:
    """Six chunks, each its own conversation (k = 6: enough for an interval), from the bundled
    example; ``cheap`` the example's
    challenger, ``broken`` the reference with one invalid line."""
    chunk = json.loads((EXAMPLES / "chunks.jsonl").read_text())
    ref = json.loads((EXAMPLES / "reference.jsonl").read_text())
    chal = json.loads((EXAMPLES / "challenger.jsonl").read_text())
    chunks, refs, chals = [], [], []
    for n in range(CHUNKS):
        suffix = f"-d{n}"
        c = copy.deepcopy(chunk)
        c["chunk_id"] += suffix
        c["conversation_id"] = f"conv-{n}"
        for m in c["messages"]:
            m["id"] += suffix
            m["timestamp"] = m["timestamp"].replace("2026-04-10", f"2026-04-1{n}")
        chunks.append(c)
        for src, out in ((ref, refs), (chal, chals)):
            text = json.dumps(src).replace('"ex-1"', f'"ex-1{suffix}"')
            for k in range(1, 6):
                text = text.replace(f'"ex1-m{k}"', f'"ex1-m{k}{suffix}"')
            out.append(json.loads(text))
    _write_jsonl(folder / "chunks.jsonl", chunks)
    _write_jsonl(folder / "gold.jsonl", refs)
    _write_jsonl(folder / "cheap.jsonl", chals)
    broken = [dict(r, model="broken") for r in refs]
    lines = [json.dumps(r) for r in broken]
    lines[1] = lines[1][:40]  # not JSON: an invalid extraction of the second chunk
    (folder / "broken.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = {
        "name": "inspect-test",
        "chunks": "chunks.jsonl",
        "reference": {"file": "gold.jsonl", "name": "gold"},
        "challengers": [{"file": "cheap.jsonl", "name": "cheap"}, {"file": "broken.jsonl"}],
        "layers": ["extraction", "judge", "downstream"],
        "judges": ["grounding"],
        "stats": {"bootstrap_resamples": 200},
    }
    (folder / "run.yaml").write_text(json.dumps(config), encoding="utf-8")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inspect-run")
    _corpus(folder)
    out = folder / "run"
    execute_run(load_run_config(folder / "run.yaml"), out)
    return out


@pytest.fixture(scope="module")
def exported(run_dir: Path) -> tuple[Path, EvalLog]:
    result = export_inspect_log(run_dir, run_dir.parent / "logs" / "run.eval")
    assert result.samples == CHUNKS * 2 and result.chunks == CHUNKS
    assert result.notes == []
    return result.path, read_eval_log(str(result.path))


def _record(run_dir: Path) -> ConversationRun:
    run = read_run_record(run_dir)
    assert isinstance(run, ConversationRun)
    return run


def _per_chunk(run_dir: Path) -> dict[tuple[str, str, str, str], float]:
    table = pq.read_table(run_dir / "scores.parquet").to_pylist()
    return {
        (r["model"], r["chunk_id"], r["layer"], r["field"]): r["value"]
        for r in table
        if r["chunk_id"] != RUN_LEVEL and r["component"] == "score"
    }


def test_the_log_holds_the_numbers_of_run_json(
    run_dir: Path, exported: tuple[Path, EvalLog]
) -> None:
    _, log = exported
    run = _record(run_dir)
    assert log.status == "success" and log.results is not None
    scores = {(s.scorer, s.name): s for s in log.results.scores}
    assert {m for m, _ in scores} == {"cheap", "broken"}
    for model in run.models:
        name = model.name

        def metric(figure: str, metric: str, name: str = name) -> float:
            return scores[(name, f"{name}/{figure}")].metrics[metric].value

        assert metric("overall", "run_json") == model.overall
        for layer, value in model.layers.items():
            assert metric(layer, "run_json") == value
        for fname, value in model.fields.items():
            assert metric(fname, "run_json") == value
        assert metric("validity", "run_json") == model.validity_rate
        assert run.stats is not None
        # The overall has an interval over 6 conversations, and the log carries it; a field
        # with few reference items has none in run.json (issue 27), and none in the log.
        overall = run.stats.interval(name, "overall")
        assert overall is not None
        assert metric("overall", "ci_low") == overall.low
        assert metric("overall", "ci_high") == overall.high
        claims = scores[(name, f"{name}/claims")].metrics
        interval = run.stats.interval(name, "extraction.claims")
        if interval is None:
            assert "ci_low" not in claims and "ci_high" not in claims
        else:
            assert metric("claims", "ci_low") == interval.low
            assert metric("claims", "ci_high") == interval.high
    figures = log.results.metadata["chatledger"]["models"]  # type: ignore[index]
    assert figures["cheap"]["fields"] == run.model("cheap").fields
    assert figures["broken"]["overall"] == run.model("broken").overall
    assert log.results.headline is not None
    assert log.results.headline.scorer == run.model_names[0]


def test_one_sample_per_chunk_and_model_with_the_table_s_values(
    run_dir: Path, exported: tuple[Path, EvalLog]
) -> None:
    _, log = exported
    run = _record(run_dir)
    samples = log.samples or []
    assert len(samples) == run.chunks * len(run.models) == CHUNKS * 2
    assert log.results is not None and log.results.total_samples == len(samples)
    table = _per_chunk(run_dir)
    seen = set()
    for sample in samples:
        model, chunk_id = sample.metadata["model"], sample.metadata["chunk_id"]
        seen.add((model, chunk_id))
        assert sample.id == f"{model}/{chunk_id}"
        fields = sample.scores["fields"].value  # type: ignore[index]
        layers = sample.scores["layers"].value  # type: ignore[index]
        assert isinstance(fields, dict) and isinstance(layers, dict)
        assert set(fields) == set(run.model(model).fields)
        for fname, value in fields.items():
            assert value == table[(model, chunk_id, "extraction", fname)]
        assert layers["extraction"] == table[(model, chunk_id, "extraction", "composite")]
        assert layers["judge"] == table[(model, chunk_id, "judge", "composite")]
        assert layers["validity"] == table[(model, chunk_id, "extraction", "validity")]
        n = int(chunk_id.rsplit("-d", 1)[1])
        assert sample.metadata["conversation_id"] == f"conv-{n}"
        assert f"(ex1-m1-d{n})" in str(sample.input)  # the chunk's conversation
        assert '"topics"' in str(sample.target)
    assert len(seen) == len(samples)
    invalid = next(s for s in samples if s.id == "broken/ex-1-d1")
    assert invalid.metadata["status"] == "invalid"
    assert invalid.output.completion.startswith("(invalid extraction")
    assert invalid.scores is not None and invalid.scores["layers"].value == {
        "extraction": 0.0,
        "validity": 0.0,
        "judge": table[("broken", "ex-1-d1", "judge", "composite")],
    }


def test_mean_and_stderr_are_inspect_s_over_each_model_s_samples(
    run_dir: Path, exported: tuple[Path, EvalLog]
) -> None:
    _, log = exported
    assert log.results is not None
    table = _per_chunk(run_dir)
    score = next(s for s in log.results.scores if s.name == "cheap/claims")
    values = [
        v
        for (m, _c, layer, f), v in table.items()
        if (m, layer, f) == ("cheap", "extraction", "claims")
    ]
    assert len(values) == CHUNKS and score.scored_samples == CHUNKS
    mean = sum(values) / len(values)
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    assert score.metrics["mean"].value == pytest.approx(mean)
    assert score.metrics["stderr"].value == pytest.approx((variance / len(values)) ** 0.5)
    # Fields run.json averages over chunks: the mean is run.json's figure.
    assert score.metrics["mean"].value == pytest.approx(score.metrics["run_json"].value)


def test_inspect_view_s_listing_reads_it(exported: tuple[Path, EvalLog]) -> None:
    import asyncio

    path, _ = exported
    infos = list_eval_logs(str(path.parent))
    assert [Path(i.name.removeprefix("file://")).name for i in infos] == [path.name]
    headers = asyncio.run(read_eval_log_headers_async(infos))
    assert headers[0].eval.task == "inspect-test"
    assert headers[0].samples is None and headers[0].results is not None


def test_cli_writes_the_log_and_reports_json(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", "inspect", str(run_dir), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["log"] == str(run_dir / "inspect.eval")
    assert (report["samples"], report["chunks"]) == (CHUNKS * 2, CHUNKS)
    assert sorted(report["models"]) == ["broken", "cheap"]
    assert read_eval_log(report["log"], header_only=True).status == "success"


def test_cli_refuses_what_is_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nothing-here"
    assert main(["export", "inspect", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("error: ") and str(missing) in err[0] and len(err) <= 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["export", "inspect", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert str(empty) in err[0] and "not a run directory" in err[0]
    assert not list(tmp_path.rglob("*.eval"))


def test_cli_refuses_a_structbench_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    emails, run_dir = tmp_path / "emails.jsonl", tmp_path / "sb-run"
    assert main(["structbench", "generate", "--n", "2", "--out", str(emails)]) == 0
    predictions = str(tmp_path / "base.jsonl")
    argv = ["structbench", "baseline", "--dataset", str(emails), "--out", predictions,
            "--run-dir", str(run_dir), "--resamples", "0"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["export", "inspect", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(run_dir) in err[0] and "structbench run" in err[0]
    assert not (run_dir / "inspect.eval").exists()


def test_a_missing_extra_is_one_line_naming_the_install(run_dir: Path, tmp_path: Path) -> None:
    # inspect_ai made unimportable in a fresh process, as on an install without the extra.
    code = (
        "import sys; sys.modules['inspect_ai'] = None; sys.modules['inspect_ai.log'] = None\n"
        "from chatledger.cli._app import main\n"
        f"sys.exit(main(['export', 'inspect', {str(run_dir)!r}, '--out', "
        f"{str(tmp_path / 'x.eval')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and INSPECT_EXTRA in lines[0]
    assert not (tmp_path / "x.eval").exists()


def test_help_does_not_import_inspect(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "chatledger", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and "export" in done.stdout
    assert "inspect_ai" not in done.stderr and "chatledger.interop" not in done.stderr
