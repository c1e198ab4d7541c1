"""Every example in docs/*.md runs as written, offline (issue 31), as README.md's do
(tests/test_readme.py).

Each fenced block with a language is one of:

- a ``bash`` block: its ``chatledger …`` lines are run in order (each must exit 0; ``--format
  json`` output must parse), its ``export`` lines set the environment;
- a ``python`` block: run as a script (it must exit 0);
- a block preceded by ``<!-- file: NAME -->``: written to NAME before the doc's commands run;
- a block preceded by ``<!-- keyed: VARIABLE -->``: a bash or python block that calls a paid
  API — run with a made-up key in VARIABLE, against the fake server on 127.0.0.1 that answers
  both OpenAI's and Anthropic's APIs (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``). Without the
  marker no key is set, so a block that needs one and is not marked fails;
- a block preceded by ``<!-- not run: why -->`` (a format, a fragment, a server that runs until
  Ctrl-C, a benchmark of minutes): the reason is said, and where a test runs the same.

A block that is none of these fails the test. Each doc runs in its own folder holding what
``chatledger examples`` writes (written once, copied per doc).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatledger.demo import write_examples
from fakes.llm_server import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    FakeLLMServer,
    Reply,
    anthropic_body,
)
from test_readme import bundled_gold, fake_openai, shell_commands

DOCS = Path(__file__).resolve().parents[1] / "docs"
_MARKER = re.compile(r"<!--\s*(file|not run|keyed):\s*(.+?)\s*-->")
RUNNABLE = ("bash", "python")


@dataclass(frozen=True)
class Block:
    doc: str
    lang: str
    text: str
    line: int
    marker: tuple[str, str] | None

    @property
    def where(self) -> str:
        return f"docs/{self.doc}:{self.line}"


def doc_blocks(path: Path) -> list[Block]:
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
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
            text = "\n".join(body) + "\n"
            blocks.append(Block(path.name, line[3:].strip(), text, start + 1, marker))
        elif line.startswith("```"):
            index += 1
            while index < len(lines) and not lines[index].startswith("```"):
                index += 1
        index += 1
    return blocks


DOC_NAMES = sorted(p.name for p in DOCS.glob("*.md") if doc_blocks(p))


def test_every_doc_with_examples_is_covered() -> None:
    assert set(DOC_NAMES) >= {"batch.md", "providers.md", "structbench.md", "gate.md"}
    for name in DOC_NAMES:
        for block in doc_blocks(DOCS / name):
            kind = block.marker[0] if block.marker else None
            if kind == "keyed":
                assert block.lang in RUNNABLE, f"{block.where}: only bash/python run keyed"
            elif kind is None:
                assert block.lang in RUNNABLE, (
                    f"{block.where}: a {block.lang} block that is neither run nor a file: mark "
                    "it <!-- file: NAME --> or <!-- not run: why -->"
                )


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("examples")
    write_examples(folder)
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeLLMServer]:
    gold = bundled_gold(tmp_path_factory.mktemp("gold"))
    with FakeLLMServer() as fake:
        fake.always(OPENAI_PATH, Reply(body=fake_openai(gold)))
        fake.always(ANTHROPIC_PATH, Reply(body=lambda body: anthropic_body(text="{}")))
        yield fake


def _environment(server: FakeLLMServer, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        OPENAI_BASE_URL=f"{server.url}/v1",
        ANTHROPIC_BASE_URL=server.url,
        CHATLEDGER_CACHE_DIR=str(cache),
        COLUMNS="100",
    )
    return env


def _run(block: Block, words: list[str], cwd: Path, env: dict[str, str]) -> None:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "chatledger", *words[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    shown = " ".join(words)
    assert done.returncode == 0, f"{block.where}: {shown}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, shown
    if "--format" in words and words[words.index("--format") + 1] == "json":
        json.loads(done.stdout)
    print(f"{time.perf_counter() - started:6.1f}s {shown[:100]}")


@pytest.mark.parametrize("doc", DOC_NAMES)
def test_every_example_of_the_doc_runs_as_written(
    doc: str, examples: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    shutil.copytree(examples, work)
    blocks = doc_blocks(DOCS / doc)
    for block in blocks:
        if block.marker is not None and block.marker[0] == "file":
            (work / block.marker[1]).parent.mkdir(parents=True, exist_ok=True)
            (work / block.marker[1]).write_text(block.text, encoding="utf-8")
    ran = 0
    for block in blocks:
        kind, detail = block.marker if block.marker else (None, "")
        if kind in ("file", "not run"):
            continue
        env = _environment(server, tmp_path / "cache")
        if kind == "keyed":
            for variable in detail.split(","):
                env[variable.strip()] = "sk-docs-test"
        if block.lang == "bash":
            for words in shell_commands(block.text):
                if words[0] == "export":
                    name, _, value = words[1].partition("=")
                    env[name] = "sk-docs-test" if value in ("…", "") else value
                    continue
                assert words[0] == "chatledger", f"{block.where}: cannot run {words!r}"
                _run(block, words, work, env)
                ran += 1
        elif block.lang == "python":
            done = subprocess.run(
                [sys.executable, "-c", block.text],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, f"{block.where}:\n{done.stderr[-3000:]}"
            ran += 1
        else:
            raise AssertionError(f"{block.where}: a {block.lang} block that is not run nor marked")
    marked = [b for b in blocks if b.marker is not None and b.marker[0] == "not run"]
    assert ran or marked, f"docs/{doc}: nothing ran"
