"""Figures in README.md and docs/*.md are written by code, never copied by hand.

A generated block in a Markdown file sits between two comments::

    <!-- generated: NAME (by tests/test_x.py) -->
    | table | the code wrote |
    <!-- /generated: NAME -->

:func:`check_block` compares a block with what the code produces now and fails with a diff
when they differ; with ``CHATLEDGER_UPDATE_DOCS=1`` in the environment it rewrites the block
instead (and the test still fails, so that an update is never silent in CI). A missing block is
an error naming the file and the block.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UPDATE_ENV = "CHATLEDGER_UPDATE_DOCS"


def _pattern(name: str) -> re.Pattern[str]:
    tag = re.escape(name)
    return re.compile(
        rf"(<!-- generated: {tag}\b[^>]*-->\n)(.*?)(<!-- /generated: {tag} -->)", re.DOTALL
    )


def read_block(path: Path, name: str) -> str:
    """The text between the markers of block ``name`` in ``path``."""
    found = _pattern(name).search(path.read_text(encoding="utf-8"))
    if found is None:
        pytest.fail(f"{path.relative_to(ROOT)}: no generated block {name!r}", pytrace=False)
    return found.group(2)


def check_block(relative: str, name: str, expected: str) -> None:
    """Fail unless block ``name`` of ``ROOT/relative`` holds exactly ``expected``."""
    path = ROOT / relative
    text = expected if expected.endswith("\n") else expected + "\n"
    current = read_block(path, name)
    if current == text:
        return
    if os.environ.get(UPDATE_ENV) == "1":
        source = path.read_text(encoding="utf-8")
        updated = _pattern(name).sub(lambda m: m.group(1) + text + m.group(3), source, count=1)
        path.write_text(updated, encoding="utf-8")
        pytest.fail(f"{relative}: block {name!r} rewritten; rerun without {UPDATE_ENV}")
    diff = "\n".join(
        difflib.unified_diff(
            current.splitlines(), text.splitlines(), "in the file", "from the code", lineterm=""
        )
    )
    pytest.fail(
        f"{relative}: block {name!r} differs from what the code produces "
        f"(rerun with {UPDATE_ENV}=1 to rewrite it):\n{diff}",
        pytrace=False,
    )
