"""The newcomer's own fault list (issue 31, docs/faults.md "New faults"): hostile inputs and
faults a user meets, each tried as the user would — the command line, in a folder holding what
``chatledger examples`` writes — and each ending in one line naming what is wrong (or in work
that goes on), never a traceback, a hang or all the memory of the machine."""

from __future__ import annotations

import json
import os
import resource
import shutil
from pathlib import Path

import pytest

from chatledger.corpus import _lines
from chatledger.demo import write_examples
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply
from fakes.scripted_models import openai_extractor
from test_cli_errors import Outcome, assert_one_error_line, chatledger

SCORE = ("score", "--reference", "gold.jsonl", "--challenger", "cheap.jsonl")
RUN_YAML = (
    "chunks: chunks.jsonl\nreference: {file: gold.jsonl, name: gold}\n"
    "challengers: [{file: cheap.jsonl}]\nlayers: [extraction]\n"
)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    write_examples(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples with RUN_YAML run into ``r`` once, by the command line: the tests that
    damage a finished run start from a copy of it (each ran the same run first)."""
    folder = tmp_path_factory.mktemp("finished")
    write_examples(folder)
    (folder / "run.yaml").write_text(RUN_YAML, encoding="utf-8")
    assert chatledger("run", "run.yaml", "--out", "r", cwd=folder).code == 0
    return folder


@pytest.fixture
def ran(finished: Path, tmp_path: Path) -> Path:
    shutil.copytree(finished, tmp_path, dirs_exist_ok=True)
    return tmp_path


def _limited(*args: str, cwd: Path, max_bytes: int, env: dict[str, str] | None = None) -> Outcome:
    """``chatledger ARGS`` unable to write a file past ``max_bytes`` (RLIMIT_FSIZE: a full
    disk for that process, without a filesystem of its own; Python ignores SIGXFSZ, so a write
    past it fails with EFBIG)."""
    return chatledger(
        *args,
        cwd=cwd,
        env=env,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes)),
    )


def test_a_device_as_the_chunks_file_is_refused_before_reading(work: Path) -> None:
    # /dev/zero is one endless line: read as a line it took every byte of memory there was.
    result = chatledger(*SCORE, "--chunks", "/dev/zero", cwd=work)
    assert_one_error_line(result, 2, "/dev/zero", "not a regular file")


def test_a_pipe_as_the_chunks_file_is_refused(work: Path) -> None:
    fifo = work / "pipe.jsonl"
    os.mkfifo(fifo)
    result = chatledger(*SCORE, "--chunks", "pipe.jsonl", cwd=work)
    assert_one_error_line(result, 2, "pipe.jsonl", "not a regular file (a device or a pipe)")


def test_a_line_longer_than_the_limit_is_refused_not_read_into_memory(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limit is 128 MB; here 1 kB, so the file stays small. The line has no newline at all.
    monkeypatch.setattr(_lines, "MAX_LINE_BYTES", 1024)
    (work / "long.jsonl").write_bytes(b'{"chunk_id": "' + b"x" * 5000)
    with pytest.raises(_lines.InputError, match=r"line 1 is longer than 0 MB") as caught:
        list(_lines.read_json_lines(work / "long.jsonl"))
    assert caught.value.path == str(work / "long.jsonl")
    # A line under the limit is read as before.
    (work / "short.jsonl").write_text('{"a": 1}\n{"b": 2}\n', encoding="utf-8")
    assert [line.value for line in _lines.read_json_lines(work / "short.jsonl")] == [
        {"a": 1},
        {"b": 2},
    ]


def test_a_symbolic_link_loop_is_named_as_one(work: Path) -> None:
    (work / "a.jsonl").symlink_to("b.jsonl")
    (work / "b.jsonl").symlink_to("a.jsonl")
    (work / "gone.jsonl").symlink_to("deleted.jsonl")
    for name in ("a.jsonl", "gone.jsonl"):
        result = chatledger(*SCORE, "--chunks", name, cwd=work)
        assert_one_error_line(result, 2, name, "a symbolic link to nothing (or a loop of links)")


def test_a_damaged_score_table_is_one_line_and_a_rerun_writes_it_anew(ran: Path) -> None:
    work = ran  # the examples, run into r
    (work / "r" / "scores.parquet").write_bytes(os.urandom(5000))  # a copy gone wrong
    result = chatledger("report", "r", cwd=work)
    assert_one_error_line(result, 2, "r/scores.parquet", "not a readable score table")
    assert "bug" not in result.err
    assert chatledger("run", "run.yaml", "--out", "r", cwd=work).code == 0
    assert chatledger("report", "r", cwd=work).code == 0


def test_a_run_record_cut_short_is_one_line_naming_its_line(ran: Path) -> None:
    work = ran  # the examples, run into r
    record = work / "r" / "run.json"
    record.write_bytes(record.read_bytes()[:300])
    for command in ("report", "stats"):
        result = chatledger(command, "r", cwd=work)
        assert_one_error_line(result, 2, "r/run.json:", "not valid JSON")


def test_a_damaged_stage_output_is_computed_again(ran: Path) -> None:
    work = ran  # the examples, run into r
    before = (work / "r" / "scores.parquet").read_bytes()
    (stage,) = (work / "r" / "stages").iterdir()
    (stage / "score.parquet").write_bytes(os.urandom(3000))
    (stage / "score.json").write_text('{"cut": ', encoding="utf-8")
    again = chatledger("run", "run.yaml", "--out", "r", cwd=work)
    assert again.code == 0 and "Traceback" not in again.err, again.err
    assert (work / "r" / "scores.parquet").read_bytes() == before


def test_a_file_size_limit_during_extract_names_the_file_and_the_rerun_is_whole(
    work: Path,
) -> None:
    args = ("extract", "--model", "offline:rules", "--chunks", "chunks.jsonl", "--out", "o.jsonl")
    result = _limited(*args, cwd=work, max_bytes=20_000)
    assert_one_error_line(result, 1, "o.jsonl", "File too large")
    assert 0 < (work / "o.jsonl").stat().st_size <= 20_000
    again = chatledger(*args, cwd=work)
    assert again.code == 0, again.err
    lines = (work / "o.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 36  # the line cut by the limit was written again, whole
    assert all(json.loads(line)["extraction"] is not None for line in lines)


def test_a_file_size_limit_on_the_call_cache_says_the_disk_not_the_file(work: Path) -> None:
    with FakeLLMServer() as server:
        server.always(OPENAI_PATH, Reply(body=openai_extractor()))
        args = ("extract", "--model", f"openai-compatible:{server.url}/v1:m", "--chunks",
                "chunks.jsonl", "--out", "o.jsonl", "--cache-dir", "cache")  # fmt: skip
        result = _limited(*args, cwd=work, max_bytes=16_384)
    assert_one_error_line(result, 1, "cache/completions.sqlite3", "call cache")
    # Not "move the file away": the file is fine, the disk (here the limit) is not.
    assert result.err_lines[1].startswith("hint: the disk is full or failing"), result.err
    assert not (work / "o.jsonl").exists()


def test_a_config_with_a_byte_order_mark_and_crlf_line_ends_runs(work: Path) -> None:
    (work / "win.yaml").write_bytes(b"\xef\xbb\xbf" + RUN_YAML.replace("\n", "\r\n").encode())
    result = chatledger("run", "win.yaml", "--out", "r", cwd=work)
    assert result.code == 0, result.err
    assert json.loads((work / "r" / "run.json").read_text(encoding="utf-8"))["models"]


def test_an_out_file_in_folders_that_do_not_exist_yet_is_written(work: Path) -> None:
    args = ("extract", "--model", "offline:rules", "--chunks", "chunks.jsonl")
    result = chatledger(*args, "--out", "new/deeper/o.jsonl", cwd=work)
    assert result.code == 0, result.err
    assert len((work / "new" / "deeper" / "o.jsonl").read_text().splitlines()) == 36


def test_a_run_stopped_before_writing_leaves_no_empty_folder(work: Path) -> None:
    paid = RUN_YAML.replace("[{file: cheap.jsonl}]", "[{model: openai:gpt-5.2}]")
    assert paid != RUN_YAML
    (work / "paid.yaml").write_text(paid, encoding="utf-8")
    result = chatledger("run", "paid.yaml", "--out", "runs/paid", cwd=work)
    assert_one_error_line(result, 2, "OPENAI_API_KEY is not set")
    assert not (work / "runs" / "paid").exists()
    # A folder that was there before the run stays.
    (work / "mine").mkdir()
    result = chatledger("run", "paid.yaml", "--out", "mine", cwd=work)
    assert result.code == 2 and (work / "mine").is_dir()
