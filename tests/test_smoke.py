import json
from pathlib import Path

import pytest

from chatledger.cli._app import main


def test_score_bundled_example_json(capsys: pytest.CaptureFixture[str]) -> None:
    examples = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "examples"
    argv = ["score", "--reference", str(examples / "reference.jsonl")]
    argv += ["--challenger", str(examples / "challenger.jsonl")]
    argv += ["--chunks", str(examples / "chunks.jsonl"), "--format", "json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["chunks"] == 1 and 0.0 < data["extraction_composite"] < 1.0
