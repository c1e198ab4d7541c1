"""``chatledger select …`` as a user runs it: the tables, --format json, the exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from chatledger.demo._bundled import write_bundled_corpus


def chatledger(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chatledger", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def write_config(folder: Path, text: str = "") -> Path:
    write_bundled_corpus(folder)
    path = folder / "select.yaml"
    path.write_text(
        "version: 1\nchunks: chunks.jsonl\nreference: gold.jsonl\nextractor: simulated\n" + text,
        encoding="utf-8",
    )
    return path


def test_select_run_prints_every_phase_and_writes_the_directory(tmp_path: Path) -> None:
    write_config(tmp_path)
    done = chatledger("select", "run", "select.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "note: extractor simulated:screen: simulated, not a real model" in out
    for heading in ("Phase 1: screening", "Phase 1.5", "Phase 2: tournament", "Phase 3 on 36"):
        assert heading in out
    assert "redundant" in out  # topic shifts fail on redundancy
    assert "winner scored /" in out
    folder = tmp_path / "select"  # the default --out
    for name in ("selection.json", "units.jsonl", "screening.parquet", "tournament.parquet",
                 "weights.json", "report.html"):  # fmt: skip
        assert (folder / name).is_file(), name


def test_select_screen_json_is_the_record(tmp_path: Path) -> None:
    write_config(tmp_path)
    done = chatledger("select", "screen", "select.yaml", "--out", "s", "--format", "json",
                      cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["kind"] == "chatledger-selection" and data["version"] == 1
    assert data["phases"] == ["screen", "variants"]
    assert data["tournament"] is None
    assert len(data["screening"]) == 19
    assert data["directory"] == "s"
    # The tournament resumes from the screen's units: no screening unit is asked again.
    again = chatledger("select", "tournament", "select.yaml", "--out", "s", "--format", "json",
                       cwd=tmp_path)  # fmt: skip
    record = json.loads(again.stdout)
    assert record["usage"]["screen"]["reused"] == record["usage"]["screen"]["units"] == 24
    assert record["tournament"]["winner"].startswith("scored / ")


def test_a_config_mistake_is_one_line_and_exit_2(tmp_path: Path) -> None:
    write_config(tmp_path, "screen: {k: 1}\n")
    done = chatledger("select", "run", "select.yaml", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "select.yaml" in lines[0] and "screen.k" in lines[0]
    assert "Traceback" not in done.stderr
    missing = chatledger("select", "run", "nowhere.yaml", cwd=tmp_path)
    assert missing.returncode == 2 and "not found" in missing.stderr


def test_candidates_lists_the_registry(tmp_path: Path) -> None:
    done = chatledger("select", "candidates", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0
    found = json.loads(done.stdout)
    assert len(found) == 25
    assert sum(c["in_v3"] for c in found) == 17
    assert {c["tier"] for c in found} == {"proven", "latent", "structural", "derived"}
