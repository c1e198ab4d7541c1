"""The README's examples run exactly as written, so the README cannot drift from the code.

Every fenced block of README.md is one of: a ``bash`` block, whose ``export`` lines set the
environment and whose ``chatledger …`` lines are run (each must exit 0; ``--format json``
output must parse); a block preceded by ``<!-- file: NAME -->``, written to NAME for the
commands; a ``sql`` block, run with DuckDB over what the commands wrote; a ``python`` block,
run as a script in the same folder and environment (it must exit 0); or a block
preceded by ``<!-- not run: why -->``. A block that is none of these fails the test.

The commands run in an empty folder — the README's first command, ``chatledger examples .``,
writes the files the others name — with the OpenAI API answered by the fake server on
127.0.0.1 (``OPENAI_BASE_URL``): extraction requests get the bundled gold of the asked chunk,
judge requests a verdict, anything else ``{}``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest

from chatledger.corpus import read_extractions
from chatledger.demo import write_bundled_corpus
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body

README = Path(__file__).resolve().parents[1] / "README.md"
_MARKER = re.compile(r"<!--\s*(file|not run):\s*(.+?)\s*-->")
_CHUNK_ID = re.compile(r"Chunk id: (\S+)")


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int
    marker: tuple[str, str] | None


def readme_blocks() -> list[Block]:
    blocks: list[Block] = []
    lines = README.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("```") and len(line) > 3:
            start = index
            body: list[str] = []
            index += 1
            while not lines[index].startswith("```"):
                body.append(lines[index])
                index += 1
            previous = lines[start - 1].strip() if start else ""
            found = _MARKER.fullmatch(previous)
            marker = (found.group(1), found.group(2)) if found else None
            blocks.append(Block(line[3:].strip(), "\n".join(body) + "\n", start + 1, marker))
        index += 1
    return blocks


def shell_commands(text: str) -> Iterator[list[str]]:
    """The commands of a bash block: continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    for raw in joined.splitlines():
        words = shlex.split(raw, comments=True)
        if words:
            yield words


def bundled_gold(folder: Path) -> dict[str, dict[str, Any]]:
    """The bundled gold by chunk id (written into ``folder``): what the fake server answers an
    extraction with."""
    gold_path = write_bundled_corpus(folder)[1]
    return {
        cid: record.extraction.model_dump(mode="json")
        for cid, record in read_extractions(gold_path).records.items()
        if record.extraction is not None
    }


def fake_openai(gold: dict[str, dict[str, Any]]) -> Any:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if schema == "judge_verdict":
            verdict = {"content_accuracy": 80, "completeness": 70, "hallucination": 90, "items": []}
            return openai_body(json.dumps(verdict), model=body["model"])
        if schema == "chatledger_extraction_v3":
            prompt = "\n".join(str(m.get("content")) for m in body["messages"])
            chunk_id = _CHUNK_ID.findall(prompt)[-1]
            return openai_body(json.dumps(gold[chunk_id]), model=body["model"])
        return openai_body("{}", model=body["model"])

    return reply


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty folder: the README's first command, ``chatledger examples .``, writes the files
    its examples name."""
    return tmp_path


def run_block_commands(block: Block, cwd: Path, env: dict[str, str], ran: list[str]) -> None:
    for words in shell_commands(block.text):
        if words[0] == "export":
            name, _, value = words[1].partition("=")
            env[name] = "sk-readme-test" if value in ("…", "") else value
            continue
        assert words[0] == "chatledger", f"README.md:{block.line}: cannot run {words!r}"
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "chatledger", *words[1:]],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        shown = " ".join(words)
        assert done.returncode == 0, f"README.md:{block.line}: {shown}\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, shown
        if "--format" in words and words[words.index("--format") + 1] == "json":
            json.loads(done.stdout)
        ran.append(shown)
        print(f"{time.perf_counter() - t0:6.1f}s {shown[:100]}")


def test_every_readme_example_runs_as_written(
    workdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    gold = bundled_gold(tmp_path_factory.mktemp("gold"))
    ran: list[str] = []
    files: list[str] = []
    queries = 0
    scripts = 0
    with FakeLLMServer() as server:
        server.always(OPENAI_PATH, Reply(body=fake_openai(gold)))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(
            OPENAI_BASE_URL=f"{server.url}/v1",
            CHATLEDGER_CACHE_DIR=str(workdir / "cache"),
        )
        blocks = readme_blocks()
        # The files first: a command may come before the file it uses, as a reader sees it.
        for block in blocks:
            if block.marker is not None and block.marker[0] == "file":
                (workdir / block.marker[1]).write_text(block.text, encoding="utf-8")
                files.append(block.marker[1])
        for block in blocks:
            if block.marker is not None:
                continue
            if block.lang == "bash":
                run_block_commands(block, workdir, env, ran)
            elif block.lang == "python":
                done = subprocess.run(
                    [sys.executable, "-c", block.text],
                    cwd=workdir,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                assert done.returncode == 0, f"README.md:{block.line}:\n{done.stderr[-3000:]}"
                scripts += 1
            elif block.lang == "sql":
                rows = (
                    duckdb.connect()
                    .execute(block.text.replace("'runs/", f"'{workdir}/runs/"))
                    .fetchall()
                )
                assert rows, f"README.md:{block.line}: the query returned nothing"
                queries += 1
            else:
                raise AssertionError(
                    f"README.md:{block.line}: a {block.lang or 'plain'} block that is neither "
                    "run nor a file: mark it <!-- file: NAME --> or <!-- not run: why -->"
                )
        calls = server.calls()
    assert files == [
        "weights.yaml",
        "cheaper-models.yaml",
        "gate.yaml",
        "messages.csv",
        "select.yaml",
    ]
    assert queries == 1 and scripts == 1
    assert (workdir / "gate.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert len(ran) >= 15, ran
    # The model examples reached the fake server (and nothing else was reachable).
    assert calls > 36
    run = json.loads((workdir / "runs" / "cheaper" / "run.json").read_text(encoding="utf-8"))
    assert {m["name"] for m in run["models"]} >= {"model-a", "offline:rules"}
