"""Recorded runs of real local models, shipped as data (``data/recorded/``).

``benchmarks/record_local.py`` (``make record-local``) extracts the bundled corpus with local
GGUF models served by llama-server, and runs the structbench strategies on a seeded sample of
the shipped emails, once; the files and a manifest of how they were made (model SHA-256,
runtime, parameters, wall time, tokens/s) are committed. The demo scores them beside the
simulated challengers, offline, so its leaderboard holds real models without a model in the
loop; re-recording with the same model files, parameters and seed reproduces them.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from chatledger.core import Chunk, atomic_write_json
from chatledger.corpus import read_extractions
from chatledger.extraction import SchemaConstraints
from chatledger.scoring import count_degenerate

MANIFEST_FILE = "manifest.json"


class RecordedTask(BaseModel):
    """One recorded job of one model: what it ran on, with what, and how long it took."""

    model_config = ConfigDict(extra="forbid")

    file: str  # relative to the recorded folder
    items: int  # chunks, or documents × strategies
    calls: int
    invalid: int
    input_tokens: int
    output_tokens: int
    wall_s: float
    model_s: float  # summed latency of the calls: time inside the model server
    parameters: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    schema_constraints: SchemaConstraints | None = None
    """The list bounds and message-id restriction the grammar was given (None: none)."""

    @property
    def output_tokens_per_s(self) -> float:
        return self.output_tokens / self.model_s if self.model_s > 0 else 0.0


class RecordedModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str  # the catalogue name, e.g. qwen2.5-coder-0.5b
    model_id: str  # local:NAME
    gguf: str  # file name
    sha256: str
    description: str
    corpus: RecordedTask | None = None
    structbench: RecordedTask | None = None
    # Schema selection's repeated samples (data/recorded/select/<name>.jsonl): chunks × seeds.
    select: RecordedTask | None = None


class RecordingManifest(BaseModel):
    """``data/recorded/manifest.json`` (version 1)."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    recorded_at: str
    chatledger: str
    runtime: str  # e.g. "llama-server 0.5.0-dev (commit 0c1e570, llama-cpp-python 0.3.36 sdist)"
    machine: str
    threads: int
    structbench_sample: list[str] = Field(default_factory=list)  # document ids
    models: list[RecordedModel] = Field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> RecordingManifest:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))

    def write(self, path: Path) -> None:
        atomic_write_json(path, self.model_dump(mode="json"))

    def model(self, name: str) -> RecordedModel | None:
        return next((m for m in self.models if m.name == name), None)


def recorded_dir() -> Path:
    """The recorded runs shipped with the package."""
    return Path(str(resources.files("chatledger") / "data" / "recorded"))


def recorded_manifest() -> RecordingManifest | None:
    path = recorded_dir() / MANIFEST_FILE
    return RecordingManifest.read(path) if path.is_file() else None


class RecordingFigures(BaseModel):
    """What one recorded extraction file shows: how many replies were valid, cut by the token
    limit or citing ids from outside their chunk, and what they cost in tokens and model time.
    The docs' before/after table of the recordings is made of these (tests/test_demo.py)."""

    model_config = ConfigDict(extra="forbid")

    chunks: int
    valid: int
    cut_by_max_tokens: int
    cited_message_ids: int
    foreign_message_ids: int
    input_tokens: int
    output_tokens: int
    model_s: float

    @property
    def foreign_share(self) -> float:
        return self.foreign_message_ids / self.cited_message_ids if self.cited_message_ids else 0.0

    @property
    def output_tokens_per_s(self) -> float:
        return self.output_tokens / self.model_s if self.model_s > 0 else 0.0


def recording_figures(path: Path, chunks: list[Chunk]) -> RecordingFigures:
    """The figures of the recorded extraction file ``path`` over ``chunks``."""
    records = read_extractions(path).records
    counts = count_degenerate({}, records, chunks)
    usages = [record.usage for record in records.values()]
    return RecordingFigures(
        chunks=counts.chunks,
        valid=counts.valid,
        cut_by_max_tokens=counts.cut_by_max_tokens,
        cited_message_ids=counts.cited_message_ids,
        foreign_message_ids=counts.foreign_message_ids,
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        model_s=sum(u.latency_s for u in usages),
    )
