"""Small builders of chunks, extractions and records shared by the layer-1 tests.

Test modules import these directly (``from conftest import ...``): they are plain functions, so
Hypothesis strategies can call them too.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import CONFIDENCE_FIELDS, Chunk, ExtractionRecord, ExtractionV3, RecordStatus
from chatledger.scoring import FieldScore, ScoringConfig, score_chunk

PARTICIPANTS = ("Ness Alderton", "Sam Ruiz")
EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data" / "examples"
# The shared data (AMI, CaSiNo) next to the repository, or where CHATLEDGER_DATA points; the
# shared example chunk sits beside it, in ``examples/``.
DEFAULT_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SHARED_DATA = Path(os.environ.get("CHATLEDGER_DATA", DEFAULT_SHARED_DATA))
SHARED_EXAMPLES = SHARED_DATA.parent / "examples"


def require_shared(path: Path, what: str) -> Path:
    """``path`` if it exists. Otherwise the test fails in CI (``CI`` set) and is skipped
    elsewhere, as the browser test treats a missing Chromium: a CI run without the shared data
    must not pass by skipping every test that reads it."""
    if path.exists():
        return path
    message = (
        f"{what} not found at {path}: set CHATLEDGER_DATA to the shared data folder (the one "
        f"holding ami/ and casino/, with examples/ beside it; default {DEFAULT_SHARED_DATA})"
    )
    if os.environ.get("CI"):
        pytest.fail(f"CI must provide the shared data; {message}", pytrace=False)
    pytest.skip(message)


def make_chunk(
    n_messages: int = 10,
    participants: Sequence[str] = PARTICIPANTS,
    chunk_id: str = "c-1",
) -> Chunk:
    """A chunk with messages ``m-1`` … ``m-n``, speakers alternating between the participants."""
    messages = [
        {"id": f"m-{i}", "speaker": participants[(i - 1) % len(participants)], "text": f"msg {i}"}
        for i in range(1, n_messages + 1)
    ]
    return Chunk.model_validate(
        {
            "chunk_id": chunk_id,
            "conversation_id": "conv",
            "participants": list(participants),
            "messages": messages,
        }
    )


def ext(**fields: Any) -> ExtractionV3:
    """An extraction from plain dicts/lists; unspecified fields are empty."""
    return ExtractionV3.model_validate(fields)


def claim(
    text: str,
    subject: str = "",
    polarity: str = "neutral",
    confidence: float | None = None,
) -> dict[str, Any]:
    return {"text": text, "subject": subject, "polarity": polarity, "confidence": confidence}


def texts(*items: str, key: str = "text", **extra: Any) -> list[dict[str, Any]]:
    """``[{key: item, **extra}, …]`` — items of any text-keyed field."""
    return [{key: item, **extra} for item in items]


def field_score(
    name: str,
    reference: ExtractionV3,
    challenger: ExtractionV3,
    chunk: Chunk | None = None,
    config: ScoringConfig | None = None,
) -> FieldScore:
    """One field's score for one chunk."""
    return score_chunk(reference, challenger, chunk, config)[name]


def ok_record(chunk_id: str, extraction: ExtractionV3, model: str = "m") -> ExtractionRecord:
    return ExtractionRecord(
        chunk_id=chunk_id, model=model, status=RecordStatus.OK, extraction=extraction
    )


def records(items: Iterable[tuple[str, ExtractionV3]]) -> dict[str, ExtractionRecord]:
    return {cid: ok_record(cid, e) for cid, e in items}


def write_jsonl(path: Path, rows: Iterable[dict[str, Any] | str]) -> Path:
    """One line per row; a str row is written verbatim (to plant a broken line)."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def example_reference() -> ExtractionV3:
    """The bundled hand-written v3 extraction (every field filled)."""
    line = (EXAMPLES / "reference.jsonl").read_text(encoding="utf-8").splitlines()[0]
    return ExtractionV3.model_validate(json.loads(line)["extraction"])


def with_certain_confidences(extraction: ExtractionV3) -> ExtractionV3:
    """``extraction`` with every item confidence 1.0: all correct -> ECE 0, confidence 1.0."""
    data = extraction.model_dump()
    for name in CONFIDENCE_FIELDS:
        for item in data[name]:
            item["confidence"] = 1.0
    return ExtractionV3.model_validate(data)


def example_chunk() -> Chunk:
    line = (EXAMPLES / "chunks.jsonl").read_text(encoding="utf-8").splitlines()[0]
    return Chunk.model_validate(json.loads(line))


def bundled_partial_gold(
    folder: Path, covers: Sequence[str], *, drop: float = 0.5, seed: int = 3, label: str = "chal"
) -> tuple[Path, Path, Path]:
    """The bundled corpus with its gold marked as covering only ``covers`` (partial human
    gold), and a challenger that drops a share of the gold's items: (chunks, gold, challenger)."""
    from chatledger.corpus import read_chunks, read_extractions
    from chatledger.demo import write_bundled_corpus
    from chatledger.simulate import simulate_records, write_records

    chunks_path, full_gold = write_bundled_corpus(folder / "corpus")
    lines = []
    for line in full_gold.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        data["covers"] = list(covers)
        lines.append(json.dumps(data) + "\n")
    gold = folder / "gold.jsonl"
    gold.write_text("".join(lines), encoding="utf-8")
    challenger = folder / "chal.jsonl"
    records = read_extractions(full_gold).records
    chunks = read_chunks(chunks_path)
    write_records(
        simulate_records(records, chunks, [("drop", drop)], seed=seed, label=label), challenger
    )
    return chunks_path, gold, challenger


def pytest_configure(config: pytest.Config) -> None:
    """A suite started in the background of a non-interactive shell (``make test &``, a job
    runner) inherits SIGINT ignored, and so does every command a test starts: Python then never
    raises KeyboardInterrupt, and the Ctrl-C tests see runs that cannot be interrupted. Tests
    run as if started from a terminal: SIGINT is Python's default handler here, and so the
    default (reset at exec) in the commands the tests start."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _private_data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Each test's own user data folder (where `corpus import --pseudonymise` keeps its keys),
    for the test and the commands it runs: never the real home's."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data-home")))


def made_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]
) -> Path:
    """The folder ``name`` that ``make`` fills, made once per session — once for all xdist
    workers too: the first makes it under a lock in the folder they share, the others read it."""
    import fcntl

    shared = tmp_path_factory.getbasetemp().parent
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        shared = tmp_path_factory.getbasetemp()
    folder = shared / name
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            make(folder)
            (folder / "done").touch()
    return folder


@pytest.fixture(scope="session")
def docs_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make demo``'s output (``runs/demo``), made once per session for the README's and the
    docs' examples (tests/docs_blocks.py)."""
    from docs_blocks import make_demo

    return made_once(tmp_path_factory, "docs-demo", make_demo) / "runs" / "demo"


@pytest.fixture(scope="session")
def demo_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """``chatledger demo --out DIR --format json``, once per session: DIR and what it printed,
    which must be nothing but JSON. Every test of the demo's output reads this one (each made
    its own before: seven demos a suite). Read-only: a test that writes into a run of it
    works on a copy."""

    def make(folder: Path) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        done = subprocess.run(
            [sys.executable, "-m", "chatledger", "demo", "--out", str(folder / "demo"),
             "--format", "json"],
            capture_output=True, text=True, env=environment, timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        json.loads(done.stdout)  # raises if anything but one JSON value was printed
        (folder / "demo.json").write_text(done.stdout, encoding="utf-8")

    folder = made_once(tmp_path_factory, "demo-json", make)
    return folder / "demo", json.loads((folder / "demo.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def docs_gold(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The bundled gold by chunk id: what the fake model servers answer an extraction with."""
    from docs_blocks import bundled_gold

    return bundled_gold(tmp_path_factory.mktemp("gold"))
