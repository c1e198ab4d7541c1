"""The README's examples run exactly as written, so the README cannot drift from the code.

The blocks, their markers and what runs each line are those of the docs' examples
(tests/docs_blocks.py); a ``sql`` block here is run with DuckDB over what the commands wrote.

The commands run in an empty folder — the README's first command, ``chatledger examples .``,
writes the files the others name — with the OpenAI API answered by the fake server on
127.0.0.1 (``OPENAI_BASE_URL``): extraction requests get the bundled gold of the asked chunk,
judge requests a verdict, anything else ``{}``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest

from docs_blocks import ROOT, BlockRunner, fake_openai, read_blocks, unrunnable
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply

README = ROOT / "README.md"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty folder: the README's first command, ``chatledger examples .``, writes the files
    its examples name."""
    return tmp_path


def test_every_readme_example_runs_as_written(
    workdir: Path, docs_gold: dict[str, dict[str, Any]], docs_demo: Path
) -> None:
    files: list[str] = []
    queries = 0
    blocks = read_blocks(README)
    problems = [p for block in blocks if (p := unrunnable(block)) is not None]
    assert not problems, "\n".join(problems)
    runner = BlockRunner(workdir, docs_gold, demo=docs_demo)
    with FakeLLMServer() as server:
        server.always(OPENAI_PATH, Reply(body=fake_openai(docs_gold)))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(
            OPENAI_BASE_URL=f"{server.url}/v1",
            CHATLEDGER_CACHE_DIR=str(workdir / "cache"),
        )
        # The files first: a command may come before the file it uses, as a reader sees it.
        for block in blocks:
            if block.marker is not None and block.kind == "file":
                (workdir / block.marker[1]).write_text(block.text, encoding="utf-8")
                files.append(block.marker[1])
        for block in blocks:
            if block.kind in ("file", "not run"):
                continue
            if block.lang == "sql":
                rows = (
                    duckdb.connect()
                    .execute(block.text.replace("'runs/", f"'{workdir}/runs/"))
                    .fetchall()
                )
                assert rows, f"{block.where}: the query returned nothing"
                queries += 1
            else:
                runner.run_block(block, env)
        calls = server.calls()
    ran = runner.ran
    assert files == [
        "weights.yaml",
        "cheaper-models.yaml",
        "gate.yaml",
        "messages.csv",
        "select.yaml",
    ]
    assert queries == 1 and sum(r.startswith("python (") for r in ran) == 1
    assert (workdir / "gate.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert len(ran) >= 15, ran
    # The model examples reached the fake server (and nothing else was reachable).
    assert calls > 36
    run = json.loads((workdir / "runs" / "cheaper" / "run.json").read_text(encoding="utf-8"))
    assert {m["name"] for m in run["models"]} >= {"model-a", "offline:rules"}
