"""``chatledger extract`` over real HTTP against the scripted server in tests/fakes (127.0.0.1).

The server answers with the bundled hand-written v3 extraction, rewritten to the ids of the
chunk each request is about; prices come from a price file so the dollar figures are round.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.cli._app import main
from chatledger.core import ExtractionV3, InputError, RecordStatus
from chatledger.corpus import read_chunks, read_extractions
from chatledger.extraction import (
    PROMPT_STYLES,
    SCHEMA_NAME,
    chunk_hash,
    finished_lines,
    get_prompt_style,
    lock_path,
    output_lock,
    render_chunk,
)
from chatledger.extraction._lines import drop_lines
from conftest import example_chunk
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body
from fakes.scripted_models import (
    asked_chunk,
    extraction_for,
    openai_extractor,
    write_chunks,
)

# USD per million tokens. 1000 prompt + 400 completion tokens per call (the responder's usage):
#   1000·2e-6 + 400·10e-6 = 0.002 + 0.004 = $0.006 per call.
PRICES = {"usd_per_million_tokens": {"openai-compatible:*": {"input": 2.0, "output": 10.0}}}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
        monkeypatch.setenv("CHATLEDGER_CACHE_DIR", str(tmp_path / "default-cache"))
        yield fake


def model_id(server: FakeLLMServer, name: str = "fake-extractor") -> str:
    return f"openai-compatible:{server.url}/v1:{name}"


def extract(
    server: FakeLLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    n_chunks: int = 3,
    price_table: dict[str, Any] = PRICES,
) -> tuple[int, dict[str, Any] | None, str]:
    """Run ``chatledger extract --format json``; returns (exit code, summary, stderr)."""
    chunks = tmp_path / "chunks.jsonl"
    if not chunks.exists():
        write_chunks(chunks, n_chunks)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(price_table), encoding="utf-8")
    capsys.readouterr()
    code = main(
        [
            "extract",
            "--model",
            model_id(server),
            "--chunks",
            str(chunks),
            "--out",
            str(tmp_path / "out.jsonl"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--prices",
            str(prices),
            "--format",
            "json",
            *extra,
        ]
    )
    captured = capsys.readouterr()
    summary = json.loads(captured.out) if captured.out.strip() else None
    return code, summary, captured.err


def out_lines(tmp_path: Path) -> list[dict[str, Any]]:
    text = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


# --- prompt styles ---------------------------------------------------------------------------


def test_three_styles_all_send_the_v3_schema() -> None:
    chunk = example_chunk()
    assert {"plain", "field-guide", "example"} <= set(PROMPT_STYLES.names())
    requests = {
        name: get_prompt_style(name).request(chunk, "openai:gpt-5.2", max_tokens=3000)
        for name in ("plain", "field-guide", "example")
    }
    for request in requests.values():
        assert request.output_schema is not None
        assert request.output_schema.name == SCHEMA_NAME
        assert not request.output_schema.strict  # v3 leaves empty fields optional
        schema = json.dumps(request.output_schema.json_schema)
        assert "x-vocabulary" not in schema and "negotiation_patterns" in schema
        assert request.max_tokens == 3000
        assert request.messages[-1].content.startswith(f"Chunk id: {chunk.chunk_id}")
    # The field guide lists every extracted field with its enumerations written out.
    guide = requests["field-guide"].system_text
    assert "16. negotiation_patterns:" in guide
    assert "polarity one of [pro, con, neutral]" in guide
    # One-shot: the example exchange sits between the rules and the real chunk.
    roles = [m.role for m in requests["example"].messages]
    assert roles == ["system", "user", "assistant", "user"]
    answer = json.loads(requests["example"].messages[2].content)
    assert ExtractionV3.model_validate(answer).claims[0].subject == "ballad"


def test_the_chunk_is_rendered_with_ids_participants_and_times() -> None:
    text = render_chunk(example_chunk())
    assert "Participants: Jordan Pike, Mei Chen" in text
    assert "[ex1-m1] Jordan Pike (2026-04-10T17:30:00Z): Rehearsal at 7 still on?" in text


# --- end to end ------------------------------------------------------------------------------


def test_extract_writes_one_line_per_chunk_with_usage(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    code, summary, _ = extract(server, tmp_path, capsys)

    assert code == 0 and summary is not None
    assert server.calls(OPENAI_PATH) == 3
    # 3 calls at $0.006 (see PRICES): $0.018; tokens 3·1000 in, 3·400 out.
    assert summary["written"] == 3 and summary["invalid"] == 0 and summary["complete"]
    assert (summary["input_tokens"], summary["output_tokens"]) == (3000, 1200)
    assert summary["billed_usd"] == pytest.approx(0.018)
    lines = out_lines(tmp_path)
    assert sorted(line["chunk_id"] for line in lines) == ["ex-1-d0", "ex-1-d1", "ex-1-d2"]
    hashes = {c.chunk_id: chunk_hash(c) for c in read_chunks(tmp_path / "chunks.jsonl")}
    prompts = set()
    for line in lines:
        assert set(line) == {
            "chunk_id",
            "model",
            "sample",
            "prompt_style",
            "extraction",
            "usage",
            "fingerprint",
        }
        fingerprint = line["fingerprint"]
        assert fingerprint["chunk"] == hashes[line["chunk_id"]]
        assert (fingerprint["max_tokens"], fingerprint["temperature"]) == (4096, None)
        assert fingerprint["options"] == {}
        prompts.add(fingerprint["prompt"])
        assert (line["model"], line["sample"], line["prompt_style"]) == (
            model_id(server),
            0,
            "plain",
        )
        expected = ExtractionV3.model_validate(extraction_for(line["chunk_id"]))
        assert ExtractionV3.model_validate(line["extraction"]) == expected
        usage = line["usage"]
        assert (usage["input_tokens"], usage["output_tokens"]) == (1000, 400)
        assert usage["cost_usd"] == pytest.approx(0.006) and usage["latency_s"] > 0
        assert (usage["calls"], usage["cached"]) == (1, False)
    # The three chunks differ (ids, times), the prompt template is one.
    assert len(set(hashes.values())) == 3 and len(prompts) == 1
    # The request asked for the schema through response_format, for the right chunk.
    body = server.bodies(OPENAI_PATH)[0]
    assert body["response_format"]["json_schema"]["name"] == SCHEMA_NAME
    assert asked_chunk(body).startswith("ex-1-d")

    # The same command again has nothing left to do.
    code, summary, _ = extract(server, tmp_path, capsys)
    assert code == 0 and summary is not None
    assert (summary["already_done"], summary["written"]) == (3, 0)
    assert server.calls(OPENAI_PATH) == 3


def test_fenced_json_is_read(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor(fenced=True)))
    code, summary, _ = extract(server, tmp_path, capsys, n_chunks=2)
    assert code == 0 and summary is not None
    assert summary["written"] == 2 and summary["invalid"] == 0
    assert server.calls() == 2  # no re-ask needed
    assert all(line["extraction"]["claims"] for line in out_lines(tmp_path))


def test_a_schema_violation_is_fixed_by_a_re_ask(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def bad(body: dict[str, Any]) -> dict[str, Any]:
        extraction = extraction_for(asked_chunk(body))
        extraction["claims"][0]["polarity"] = "maybe"
        return openai_body(json.dumps(extraction), prompt_tokens=1000, completion_tokens=400)

    server.script(OPENAI_PATH, Reply(body=bad))
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    code, summary, _ = extract(server, tmp_path, capsys, n_chunks=1)

    assert code == 0 and summary is not None and summary["invalid"] == 0
    assert server.calls() == 2
    reask = server.bodies(OPENAI_PATH)[1]["messages"][-1]["content"]
    assert "'maybe' is not one of ['pro', 'con', 'neutral']" in reask
    (line,) = out_lines(tmp_path)
    assert line["extraction"]["claims"][0]["polarity"] == "con"
    # Both calls are accounted: 2·1000 in, 2·400 out, 2·$0.006.
    usage = line["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["calls"]) == (2000, 800, 2)
    assert usage["cost_usd"] == pytest.approx(0.012)


def test_output_that_never_validates_is_an_invalid_line_the_scorer_counts(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse_d1(body: dict[str, Any]) -> dict[str, Any]:
        chunk_id = asked_chunk(body)
        if chunk_id == "ex-1-d1":
            return openai_body("I cannot extract that.", prompt_tokens=100, completion_tokens=10)
        return openai_extractor()(body)

    server.always(OPENAI_PATH, Reply(body=refuse_d1))
    code, summary, _ = extract(server, tmp_path, capsys, n_chunks=2)

    assert code == 0 and summary is not None
    assert (summary["written"], summary["invalid"]) == (2, 1)
    assert server.calls() == 1 + 3  # d0 once; d1 once + 2 re-asks, then given up
    bad = next(line for line in out_lines(tmp_path) if line["chunk_id"] == "ex-1-d1")
    assert bad["extraction"] is None
    assert bad["error"] == "no valid JSON after 3 replies; last: the reply contains no JSON"
    assert bad["usage"]["input_tokens"] == 300  # what the failure cost is kept
    records = read_extractions(tmp_path / "out.jsonl").records
    assert records["ex-1-d1"].status is RecordStatus.INVALID
    assert records["ex-1-d1"].usage.input_tokens == 300

    reference = tmp_path / "reference.jsonl"
    reference.write_text(
        "".join(
            json.dumps({"chunk_id": c, "model": "ref", "extraction": extraction_for(c)}) + "\n"
            for c in ("ex-1-d0", "ex-1-d1")
        )
    )
    capsys.readouterr()
    assert (
        main(
            [
                "score",
                "--reference",
                str(reference),
                "--challenger",
                str(tmp_path / "out.jsonl"),
                "--chunks",
                str(tmp_path / "chunks.jsonl"),
                "--format",
                "json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert (report["invalid"], report["missing"]) == (1, 0)
    # d0 is the reference itself (1.0 on every field but confidence), d1 is invalid (0): every
    # field but confidence averages (1 + 0) / 2 = 0.5. Confidence: d0's 5 items (0.9, 0.85, 0.9
    # | 0.8 | 0.6), all correct: ECE = 3/5·(1 − 0.88333) + 1/5·0.2 + 1/5·0.4 = 0.07 + 0.04 +
    # 0.08 = 0.19, times the usable share 1/2: (1 − 0.19)·0.5 = 0.405.
    # Composite = 0.958·0.5 + 0.042·0.405 = 0.479 + 0.01701 = 0.49601.
    assert report["fields"]["claims"]["score"] == pytest.approx(0.5)
    assert report["fields"]["confidence"]["score"] == pytest.approx(0.405)
    assert report["extraction_composite"] == pytest.approx(0.49601)


# --- budget and resuming ---------------------------------------------------------------------


def test_a_budget_stop_resumes_with_zero_repeated_calls(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Output at $1000 per Mtok ($0.001 a token), input free. Each call's worst case is its
    # max_tokens: 1000 · $0.001 = $1.00; each reply uses 100 tokens = $0.10. One call at a time
    # under a $1.25 cap: call 1 needs 0 + 1.00, call 2 0.10 + 1.00, call 3 0.20 + 1.00 = 1.20 —
    # all fit; call 4 would need 0.30 + 1.00 = 1.30 > 1.25, so nothing more is sent.
    prices = {"openai-compatible:*": {"input": 0.0, "output": 1000.0}}
    server.always(OPENAI_PATH, Reply(body=openai_extractor(completion_tokens=100)))

    def run(*extra: str) -> tuple[int, dict[str, Any] | None, str]:
        args = ("--concurrency", "1", "--max-tokens", "1000", *extra)
        return extract(server, tmp_path, capsys, *args, n_chunks=6, price_table=prices)

    code, summary, err = run("--budget-usd", "1.25")
    assert code == 1  # the environment (the cap) stopped the work; a rerun resumes
    assert "stopped by the budget: budget cap $1.2500 would be passed" in err
    assert summary is not None and summary["written"] == 3 and not summary["complete"]
    assert summary["billed_usd"] == pytest.approx(0.30)
    assert server.calls() == 3
    assert len(out_lines(tmp_path)) == 3

    code, summary, _ = run()
    assert code == 0 and summary is not None
    assert (summary["already_done"], summary["written"]) == (3, 3)
    # Six chunks, six calls in all: nothing finished was asked again.
    assert server.calls() == 6
    assert sorted(line["chunk_id"] for line in out_lines(tmp_path)) == [
        f"ex-1-d{i}" for i in range(6)
    ]


def test_a_line_lost_to_a_kill_is_replayed_from_the_cache(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    assert extract(server, tmp_path, capsys)[0] == 0
    assert server.calls() == 3
    # A kill after the call finished (and was cached) but mid-way through writing its line:
    # the last line is cut in half.
    out = tmp_path / "out.jsonl"
    lines = out.read_text().splitlines(keepends=True)
    lost = json.loads(lines[-1])["chunk_id"]
    out.write_text("".join(lines[:-1]) + lines[-1][:57])
    assert finished_lines(out, model=model_id(server), prompt_style="plain") == {
        (json.loads(line)["chunk_id"], 0) for line in lines[:-1]
    }

    code, summary, _ = extract(server, tmp_path, capsys)
    assert code == 0 and summary is not None
    assert server.calls() == 3  # the lost line came from the cache, not the server
    assert (summary["written"], summary["cached_calls"], summary["billed_usd"]) == (1, 1, 0.0)
    replayed = out_lines(tmp_path)[-1]
    assert replayed["chunk_id"] == lost
    # A cached line still says what the answer costs at list price ($0.006), paid $0 now.
    assert replayed["usage"]["cached"] is True
    assert replayed["usage"]["cost_usd"] == pytest.approx(0.006)
    assert replayed["usage"]["billed_usd"] == 0.0
    assert len(read_extractions(out).records) == 3


def test_samples_are_separate_calls_and_separate_lines(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    code, summary, _ = extract(server, tmp_path, capsys, "--samples", "2", n_chunks=2)
    assert code == 0 and summary is not None and summary["written"] == 4
    assert server.calls() == 4  # each sample has its own cache entry
    source = read_extractions(tmp_path / "out.jsonl")
    assert source.problems == []  # a sample-1 line is not a duplicate of its sample 0
    assert sorted(source.records) == ["ex-1-d0", "ex-1-d1"]
    assert source.sample_count == 2
    assert sorted(source.sample_records(1)) == ["ex-1-d0", "ex-1-d1"]


def test_another_models_file_is_not_appended_to(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out.jsonl").write_text(
        json.dumps({"chunk_id": "ex-1-d0", "model": "openai:gpt-5.2", "extraction": {}}) + "\n"
    )
    code, _, err = extract(server, tmp_path, capsys)
    assert code == 2
    expected = "out.jsonl:1 [model]: the file already holds extractions with model 'openai:gpt-5.2'"
    assert expected in err.replace("\n", "")
    assert server.calls() == 0


def test_unknown_prompt_style_is_refused_before_any_call(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = extract(server, tmp_path, capsys, "--prompt-style", "poetic")
    assert code == 2 and "unknown prompt style 'poetic'" in err
    assert server.calls() == 0


def test_read_chunks_of_the_fake_corpus(tmp_path: Path) -> None:
    chunks = read_chunks(write_chunks(tmp_path / "k.jsonl", 2))
    assert [c.chunk_id for c in chunks] == ["ex-1-d0", "ex-1-d1"]
    assert chunks[1].messages[0].id == "ex1-m1-d1"


def test_reader_keeps_sample_0_for_scoring_and_the_rest_apart(tmp_path: Path) -> None:
    good = extraction_for("ex-1-d0")
    rows = [
        {"chunk_id": "ex-1-d0", "model": "m", "sample": 1, "extraction": good},  # finished first
        {"chunk_id": "ex-1-d0", "model": "m", "sample": 0, "extraction": good},
        {"chunk_id": "ex-1-d0", "model": "m", "sample": 1, "extraction": good},  # a duplicate
        {"chunk_id": "ex-1-d1", "model": "m", "sample": 0, "extraction": None, "error": "gave up"},
        {"chunk_id": "ex-1-d2", "model": "m", "sample": -1, "extraction": good},
    ]
    path = tmp_path / "x.jsonl"
    path.write_text(
        "".join(json.dumps(r) + "\n" for r in rows) + '{"chunk_id": "ex-1-d3", "sample": 2'
    )
    source = read_extractions(path)
    assert source.records["ex-1-d0"].status is RecordStatus.OK
    assert source.sample_records(1)["ex-1-d0"].status is RecordStatus.OK
    assert source.records["ex-1-d1"].status is RecordStatus.INVALID
    assert "ex-1-d2" not in source.records  # an unreadable sample index has no record
    # The truncated last line is recovered as sample 2 of ex-1-d3, invalid.
    assert source.sample_records(2)["ex-1-d3"].status is RecordStatus.INVALID
    assert source.sample_count == 3
    assert [(p.line, p.field) for p in source.problems] == [
        (3, "chunk_id"),
        (4, "extraction"),
        (5, "sample"),
        (6, ""),
    ]
    assert source.problems[1].message == "no valid extraction: gave up"
    assert "duplicate chunk_id 'ex-1-d0' sample 1 ignored (first on line 1)" in str(
        source.problems[0]
    )


def test_a_real_kill_then_rerun_redoes_no_finished_call(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    """SIGKILL a running `chatledger extract` (a separate process) mid-way, run it again with
    the same arguments, and count at the server: no chunk whose call had finished is asked
    again, and every chunk ends up with exactly one line."""
    import os
    import signal
    import subprocess
    import sys
    import time

    n_chunks = 8
    server.always(OPENAI_PATH, Reply(body=openai_extractor(), delay_s=0.25))
    chunks = write_chunks(tmp_path / "chunks.jsonl", n_chunks)
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "CHATLEDGER_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("OPENAI_COMPATIBLE_API_KEY", None)
    argv = [
        sys.executable,
        "-c",
        "from chatledger.cli import main; main()",
        "extract",
        "--model",
        model_id(server),
        "--chunks",
        str(chunks),
        "--out",
        str(out),
        "--concurrency",
        "1",
        "--format",
        "json",
    ]
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and len(out.read_text().splitlines()) >= 3:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    done_before = {json.loads(line)["chunk_id"] for line in out.read_text().splitlines()[:-1]}
    calls_before = server.calls()
    assert 3 <= calls_before < n_chunks  # killed part-way

    rerun = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    asked_again = [asked_chunk(b) for b in server.bodies(OPENAI_PATH)[calls_before:]]
    assert not set(asked_again) & done_before  # nothing finished was asked again
    # At most the one call in flight at the kill is repeated (it never finished).
    assert server.calls() <= n_chunks + 1
    final = [json.loads(line)["chunk_id"] for line in out.read_text().splitlines()]
    assert sorted(final) == sorted(f"ex-1-d{i}" for i in range(n_chunks))


# --- stale work and two writers (the resume key covers what changes the answer) ---------------


def rewrite_chunk_text(chunks_path: Path, chunk_id: str, text: str) -> None:
    """Give the first message of ``chunk_id`` another text (ids unchanged)."""
    rows = [json.loads(line) for line in chunks_path.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["chunk_id"] == chunk_id:
            row["messages"][0]["text"] = text
    chunks_path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_changed_chunk_is_extracted_again_and_its_old_line_dropped(
    server: FakeLLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    assert extract(server, tmp_path, capsys)[0] == 0
    assert server.calls() == 3
    old_lines = {line["chunk_id"]: line for line in out_lines(tmp_path)}

    # Same chunk ids, same message ids: only the text of ex-1-d1's first message changes.
    chunks_path = tmp_path / "chunks.jsonl"
    rewrite_chunk_text(chunks_path, "ex-1-d1", "Rehearsal at 8 instead?")
    code, summary, _ = extract(server, tmp_path, capsys)

    assert code == 0 and summary is not None
    # Exactly one new call, for the changed chunk, with the new text in its prompt.
    assert server.calls() == 4
    body = server.bodies(OPENAI_PATH)[3]
    assert asked_chunk(body) == "ex-1-d1"
    assert "Rehearsal at 8 instead?" in body["messages"][-1]["content"]
    assert (summary["already_done"], summary["superseded"], summary["written"]) == (2, 1, 1)
    lines = out_lines(tmp_path)
    # The kept lines stay in the order the first run finished them (concurrent calls: either
    # order); the new one is appended.
    assert sorted(line["chunk_id"] for line in lines[:2]) == ["ex-1-d0", "ex-1-d2"]
    assert lines[2]["chunk_id"] == "ex-1-d1"
    new_chunks = {c.chunk_id: c for c in read_chunks(chunks_path)}
    assert lines[2]["fingerprint"]["chunk"] == chunk_hash(new_chunks["ex-1-d1"])
    assert lines[2]["fingerprint"]["chunk"] != old_lines["ex-1-d1"]["fingerprint"]["chunk"]
    assert lines[:2] == [old_lines[line["chunk_id"]] for line in lines[:2]]  # kept as they were
    # The reader sees one line per chunk: the stale one is gone, not shadowing the new one.
    source = read_extractions(tmp_path / "out.jsonl")
    assert source.problems == [] and len(source.records) == 3
    warning = "1 chunk(s) changed since they were extracted (ex-1-d1)"
    assert any(warning in r.getMessage() for r in caplog.records)

    # And then the file is current: nothing to do.
    code, summary, _ = extract(server, tmp_path, capsys)
    assert code == 0 and summary is not None
    assert (summary["already_done"], summary["superseded"], summary["written"]) == (3, 0, 0)
    assert server.calls() == 4


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            ("--max-tokens", "1000"),
            "out.jsonl:1 [fingerprint.max_tokens]: the file was written with max_tokens 4096, "
            "not 1000: choose another output file or delete it",
        ),
        (
            ("--temperature", "0.5"),
            "out.jsonl:1 [fingerprint.temperature]: the file was written with temperature "
            "unset, not 0.5: choose another output file or delete it",
        ),
    ],
    ids=["max-tokens", "temperature"],
)
def test_a_new_request_parameter_is_refused_in_one_line(
    server: FakeLLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    expected: str,
) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    assert extract(server, tmp_path, capsys)[0] == 0
    before = (tmp_path / "out.jsonl").read_bytes()

    code, summary, err = extract(server, tmp_path, capsys, *extra)
    assert code == 2 and summary is None
    [line] = err.strip().splitlines()
    assert line.endswith(expected), line
    assert "Traceback" not in err
    assert server.calls() == 3  # nothing asked
    assert (tmp_path / "out.jsonl").read_bytes() == before  # nothing written


def test_another_prompt_text_is_refused(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file written with another prompt template (another chatledger version, another
    # vocabulary): its lines carry another prompt hash.
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    assert extract(server, tmp_path, capsys, n_chunks=2)[0] == 0
    lines = out_lines(tmp_path)
    lines[1]["fingerprint"]["prompt"] = "0" * 16
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))

    code, _, err = extract(server, tmp_path, capsys, n_chunks=2)
    assert code == 2
    assert (
        "out.jsonl:2 [fingerprint.prompt]: the file was written with another prompt for prompt "
        "style 'plain' (another chatledger version or vocabulary)" in err
    )
    assert server.calls() == 2


def test_a_file_without_fingerprints_is_refused(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = {
        "chunk_id": "ex-1-d0",
        "model": model_id(server),
        "sample": 0,
        "prompt_style": "plain",
        "extraction": extraction_for("ex-1-d0"),
    }
    (tmp_path / "out.jsonl").write_text(json.dumps(line) + "\n")
    code, _, err = extract(server, tmp_path, capsys)
    assert code == 2
    assert "out.jsonl:1 [fingerprint]: the file holds lines without a fingerprint" in err
    assert server.calls() == 0


def test_a_line_that_is_not_json_is_dropped_and_its_chunk_redone(
    server: FakeLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.always(OPENAI_PATH, Reply(body=openai_extractor()))
    assert extract(server, tmp_path, capsys)[0] == 0
    out = tmp_path / "out.jsonl"
    lines = out.read_text().splitlines(keepends=True)
    broken = json.loads(lines[1])["chunk_id"]
    out.write_text(lines[0] + '{"chunk_id": "' + broken + '", "model": oops\n' + lines[2])

    code, summary, _ = extract(server, tmp_path, capsys)
    assert code == 0 and summary is not None and summary["written"] == 1
    assert server.calls() == 3  # its call is in the cache
    assert [json.loads(x)["chunk_id"] for x in out.read_text().splitlines()][-1] == broken
    source = read_extractions(out)
    assert source.problems == [] and source.records[broken].status is RecordStatus.OK


def test_dropping_lines_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    drop_lines(path, {2})
    assert path.read_bytes() == b"one\nthree\n"

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.replace", fail)
    with pytest.raises(OSError):
        drop_lines(path, {1})
    assert path.read_bytes() == b"one\nthree\n"  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"]  # no temporary left


def extract_argv(server: FakeLLMServer, chunks: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "chatledger",
        "extract",
        "--model",
        model_id(server),
        "--chunks",
        str(chunks),
        "--out",
        str(out),
        "--concurrency",
        "1",
        "--format",
        "json",
    ]


def test_two_processes_writing_one_file_the_second_refuses(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    n_chunks = 6
    # The first call is answered at once; the others wait until the second process is done,
    # so the first is surely still writing when the second starts, however slow the machine.
    release = threading.Event()
    answer = openai_extractor()

    def gated(body: dict[str, Any]) -> dict[str, Any]:
        if server.calls() > 1:
            release.wait(60)
        return answer(body)

    server.always(OPENAI_PATH, Reply(body=gated))
    chunks = write_chunks(tmp_path / "chunks.jsonl", n_chunks)
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "CHATLEDGER_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("OPENAI_COMPATIBLE_API_KEY", None)
    argv = extract_argv(server, chunks, out)
    first = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (out.exists() and out.read_text()):
            time.sleep(0.02)  # the first has the lock and has written a line
        assert out.read_text(), "the first process wrote nothing"

        second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        [line] = second.stderr.strip().splitlines()
        assert f"out.jsonl: is being written by another chatledger process (pid {first.pid})" in (
            line
        )
        assert first.poll() is None  # the first was still at work when the second gave up
    finally:
        release.set()
        stdout, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    assert json.loads(stdout)["written"] == n_chunks
    # Each chunk exactly once, each asked exactly once; the lock file is gone.
    final = [json.loads(x)["chunk_id"] for x in out.read_text().splitlines()]
    assert sorted(final) == [f"ex-1-d{i}" for i in range(n_chunks)]
    assert server.calls() == n_chunks
    assert not lock_path(out).exists()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from chatledger.extraction import output_lock\n"
            "with output_lock(sys.argv[1]):\n"
            "    print('locked', flush=True)\n"
            "    time.sleep(60)\n",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        busy = rf"another chatledger process \(pid {holder.pid}\)"
        with pytest.raises(InputError, match=busy), output_lock(out):
            pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    assert lock_path(out).exists()  # a killed holder cannot remove it…
    with output_lock(out):  # …but the kernel released its lock
        assert lock_path(out).read_text() == f"{os.getpid()}\n"
    assert not lock_path(out).exists()
