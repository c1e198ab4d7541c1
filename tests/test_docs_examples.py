"""Every example in docs/*.md runs as written, offline (issue 31), as README.md's do
(tests/test_readme.py); the blocks, their markers and what runs them: tests/docs_blocks.py.

Each doc runs in its own folder holding what ``chatledger examples`` writes (written once per
session, copied per doc); ``make demo``'s output is made once per session too. Paid APIs are the
fake server on 127.0.0.1 (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``; a made-up key only in a
``keyed`` block), ``local:`` models a stand-in llama-server on 127.0.0.1 speaking the same wire
format (``CHATLEDGER_LLAMA_SERVER``, ``CHATLEDGER_MODELS_DIR``): nothing leaves the machine.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatledger.demo import write_examples
from docs_blocks import (
    ROOT,
    Block,
    BlockRunner,
    fake_openai,
    read_blocks,
    stand_in_local_models,
    unrunnable,
)
from fakes.llm_server import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    FakeLLMServer,
    Reply,
    anthropic_body,
)

DOCS = ROOT / "docs"
DOC_NAMES = sorted(p.name for p in DOCS.glob("*.md") if read_blocks(p))


def test_every_block_is_run_or_a_file() -> None:
    assert set(DOC_NAMES) >= {"batch.md", "providers.md", "structbench.md", "gate.md"}
    problems = [
        problem
        for name in DOC_NAMES
        for block in read_blocks(DOCS / name)
        if (problem := unrunnable(block)) is not None
    ]
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="session")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("examples")
    write_examples(folder)
    return folder


@pytest.fixture(scope="session")
def server(docs_gold: dict[str, dict[str, object]]) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        fake.always(OPENAI_PATH, Reply(body=fake_openai(docs_gold)))
        fake.always(ANTHROPIC_PATH, Reply(body=lambda body: anthropic_body(text="{}")))
        yield fake


@pytest.fixture(scope="session")
def local_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``local:`` models served by the stand-in llama-server."""
    return stand_in_local_models(tmp_path_factory.mktemp("local-models"))


def _environment(server: FakeLLMServer, cache: Path, local: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        OPENAI_BASE_URL=f"{server.url}/v1",
        ANTHROPIC_BASE_URL=server.url,
        CHATLEDGER_CACHE_DIR=str(cache),
        COLUMNS="100",
        **local,
    )
    return env


def _needs_demo(blocks: list[Block]) -> bool:
    return any("runs/demo" in b.text or "make demo" in b.text for b in blocks if b.kind != "file")


@pytest.mark.parametrize("doc", DOC_NAMES)
def test_every_example_of_the_doc_runs_as_written(
    doc: str,
    examples: Path,
    server: FakeLLMServer,
    docs_gold: dict[str, dict[str, object]],
    local_models: dict[str, str],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    work = tmp_path / "work"
    shutil.copytree(examples, work)
    blocks = read_blocks(DOCS / doc)
    demo = request.getfixturevalue("docs_demo") if _needs_demo(blocks) else None
    if demo is not None:
        shutil.copytree(demo, work / "runs" / "demo")
    for block in blocks:
        if block.marker is not None and block.kind == "file":
            (work / block.marker[1]).parent.mkdir(parents=True, exist_ok=True)
            (work / block.marker[1]).write_text(block.text, encoding="utf-8")
    runner = BlockRunner(work, docs_gold, demo=demo)
    for block in blocks:
        if block.kind in ("file", "not run") or block.lang not in ("bash", "python"):
            continue
        env = _environment(server, tmp_path / "cache", local_models)
        if block.marker is not None and block.kind == "keyed":
            for variable in block.marker[1].split(","):
                env[variable.strip()] = "sk-docs-test"
        runner.run_block(block, env)
    assert runner.ran or all(b.kind in ("file", "not run") for b in blocks), f"{doc}: nothing ran"
