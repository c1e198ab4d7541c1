"""Extraction records: one line of a model's extraction file, valid or not."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from chatledger.core._schema import ExtractionV3

# How a replayed recording of a real model is named as a challenger (the demo's local models):
# the report badges such rows "local model, recorded".
RECORDED_PREFIX = "recorded:"


class Usage(BaseModel):
    """What one extraction cost."""

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0.0)
    latency_s: float = Field(default=0.0, ge=0.0)


class RecordStatus(StrEnum):
    OK = "ok"
    INVALID = "invalid"
    MISSING = "missing"


@dataclass(frozen=True)
class Problem:
    """Something wrong with one line of an input file, kept so it can be counted and shown."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}"
        return (
            f"{where} [{self.field}]: {self.message}" if self.field else f"{where}: {self.message}"
        )


@dataclass(frozen=True)
class ExtractionRecord:
    """One chunk's extraction by one model. ``extraction`` is None unless status is OK."""

    chunk_id: str
    model: str
    status: RecordStatus
    extraction: ExtractionV3 | None = None
    usage: Usage = field(default_factory=Usage)
    problems: tuple[Problem, ...] = ()
    # Fields a partial (human) gold annotation speaks to; None = all fields.
    covers: tuple[str, ...] | None = None
    # Where the record was read (file and line; "" and 0 when built in memory), so that a
    # problem found later (a message id not in the chunk) can name its line. Not compared.
    path: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    @classmethod
    def missing(cls, chunk_id: str, model: str) -> ExtractionRecord:
        return cls(chunk_id=chunk_id, model=model, status=RecordStatus.MISSING)
