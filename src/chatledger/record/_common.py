"""Parts every run record shares: the version, the provenance, intervals, writing and reading.

A record is written by its own class (:meth:`RunRecordBase.write`) and read back by the same
class (:func:`chatledger.record.read_run_record`), so no reader ever walks a run file as a dict.
"""

from __future__ import annotations

import platform
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from chatledger.core import atomic_write_json

# 1: what ChatLedger wrote before the record classes (no ``schema_version`` key); read and
#    upgraded in :mod:`chatledger.record._legacy`.
# 2: the typed record (this module); adds provenance of the inputs, the executor and stages.
# 3: per field the counts and both aggregates (FieldCounts) and the aggregate the composite
#    used; the statistics' resampling units. Version 2 reads as it is (the additions default).
# 4: a conversation run names its chunks in run order with their conversations, and the field
#    and consumer weights it used: what a regression gate pairs two runs on and recomputes
#    their figures with (``chatledger gate``). Versions 2 and 3 read as they are.
SCHEMA_VERSION = 4
RUN_FILE = "run.json"


class RecordModel(BaseModel):
    """Strict: a key the class does not know is a broken or foreign file, not data to drop."""

    model_config = ConfigDict(extra="forbid")


class Interval(RecordModel):
    """A bootstrap interval of a statistic, with the method that produced it."""

    estimate: float
    low: float
    high: float
    method: str | None = None


class PairedDifference(RecordModel):
    """a − b of a figure over the same units: the interval (None with too few conversations:
    ``note`` says so), and the p-value with the test that gave it (``test``: "exact
    sign-flip, all 2^6 = 64 patterns" or "Monte Carlo sign-flip, …")."""

    difference: float
    low: float | None
    high: float | None
    p_value: float
    test: str | None = None
    n_units: int | None = None
    note: str | None = None


class InputFile(RecordModel):
    """A file the run read, with its content hash (what makes a run reproducible)."""

    role: str  # chunks | reference | challenger:<name> | gold | dataset | predictions
    path: str
    sha256: str | None = None


class StageRecord(RecordModel):
    """One stage of the run for one model: what it was keyed on and whether it was reused."""

    stage: str  # extract | score | judge | downstream | stats | write
    model: str | None = None
    key: str | None = None  # content hash of the stage's inputs
    reused: bool = False  # True: the output of an earlier run with the same key was read back
    seconds: float = 0.0
    units: int = 0  # units of work dispatched to the executor


def _python() -> str:
    return platform.python_version()


def _version() -> str:
    from chatledger._version import __version__

    return __version__


class RunRecordBase(RecordModel):
    """What every run record carries: version, provenance, and how it was executed."""

    schema_version: int = SCHEMA_VERSION
    name: str
    chatledger_version: str = Field(default_factory=_version)
    python: str = Field(default_factory=_python)
    inputs: list[InputFile] = Field(default_factory=list)
    executor: str = "local"
    stages: list[StageRecord] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)

    def write(self, run_dir: Path) -> Path:
        """Write ``run.json`` atomically (a reader never sees half a file); returns its path."""
        path = run_dir / RUN_FILE
        # The project's one JSON writer: strict (NaN and infinities become null), indented.
        atomic_write_json(path, self.model_dump(mode="json"))
        return path
