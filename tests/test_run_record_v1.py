"""A run directory written before the typed record (run.json version 1) is still read by
``report``, ``stats`` and ``compare``, with the same numbers as a run of today."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chatledger.cli._app import main
from chatledger.record import SCHEMA_VERSION, ConversationRun, read_run_record
from chatledger.runs import execute_run, load_run_config

FIXTURE = Path(__file__).parent / "data" / "run-v1"


@pytest.fixture()
def old_run(tmp_path: Path) -> Path:
    """The fixture copied elsewhere (its run.json names inputs under /moved/away)."""
    folder = tmp_path / "v1"
    shutil.copytree(FIXTURE, folder)
    return folder / "out"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_version_1_run_json_is_upgraded_on_reading(old_run: Path) -> None:
    data = json.loads((old_run / "run.json").read_text(encoding="utf-8"))
    assert "schema_version" not in data
    record = read_run_record(old_run)
    assert isinstance(record, ConversationRun)
    assert record.schema_version == SCHEMA_VERSION == 4
    assert [m.name for m in record.models] == [m["name"] for m in data["models"]]
    assert [m.overall for m in record.models] == [m["overall"] for m in data["models"]]
    assert record.reference.configured_file == "gold.jsonl"
    assert record.models[0].configured_file == "cheap.jsonl"
    assert record.stats is not None
    assert record.stats.intervals["cheap"]["overall"].low == pytest.approx(
        data["stats"]["intervals"]["cheap"]["overall"]["low"], abs=0.0
    )


def test_report_and_stats_read_a_version_1_run(
    old_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(capsys, "report", str(old_run))
    assert code == 0, err
    html = (old_run / "report.html").read_text(encoding="utf-8")
    assert "cheap" in html and html.rstrip().endswith("</html>")
    code, out, err = _cli(capsys, "stats", str(old_run), "--format", "json")
    assert code == 0, err
    assert "cheap" in out


def test_compare_a_version_1_run_with_the_same_run_today(
    old_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = old_run.parent / "run.yaml"
    new_run = tmp_path / "v2"
    execute_run(load_run_config(config), new_run)
    code, out, err = _cli(capsys, "compare", str(old_run), str(new_run), "--format", "json")
    assert code == 0, err
    diff = json.loads(out)
    assert set(diff["models"]) == {"cheap", "self"}
    # The same inputs scored by today's stages: every number is the same, to the last bit —
    # except the pooled ECE, which now adds per-chunk bin totals (the sums its bootstrap
    # resamples) rather than items, so ``confidence`` may differ in its last bit (2.2e-16).
    # Two layers grade differently by design since: the judge (the grounding judge rewritten to
    # pass its audit, issue 28) and downstream (a consumer with no event on either side is left
    # out, not agreement, issue 27). The overall moves by exactly their weights times their
    # change (0.25·Δjudge + 0.15·Δdownstream); layer 1 and every field are the same to the bit.
    for entry in diff["models"].values():
        layers = entry["layers"]
        moved = 0.25 * layers["judge"]["delta"] + 0.15 * layers["downstream"]["delta"]
        assert abs(entry["overall"]["delta"] - moved) <= 1e-12
        assert abs(layers["extraction"]["delta"]) <= 1e-15
        for name, d in entry["fields"].items():
            assert abs(d["delta"]) <= 1e-15, name
        assert entry["fields"]["topics"]["delta"] == 0.0


def test_a_conversation_record_error_names_its_place_after_the_tag(old_run: Path) -> None:
    # A conversation run is validated as its own class (reading one builds no structbench
    # class); its errors still name the place as the tagged union did, tag first.
    from chatledger.core import InputError
    from chatledger.record import parse_run_record

    data = json.loads((old_run / "run.json").read_text(encoding="utf-8"))
    data["models"][0]["name"] = 5
    with pytest.raises(InputError) as caught:
        parse_run_record(data, old_run / "run.json")
    assert caught.value.field == "conversation.models.0.name"
    assert "Input should be a valid string" in str(caught.value)
    data["task"] = "nope"
    with pytest.raises(InputError, match="does not match any of the expected tags"):
        parse_run_record(data, old_run / "run.json")
