"""What a schema selection writes into its ``select/`` directory, as typed, versioned models
written and read by the same classes (issue 16).

* ``selection.json`` — :class:`SelectionRecord`: the config, the extractor, each phase's result
  (screening, prompt variants, tournament, validation, weights) and the calls each phase made;
* ``units.jsonl`` — :class:`UnitLine`: every extraction the phases asked for, one line each as it
  finishes (append-only, flushed): a rerun skips every unit found here, so an interrupted
  selection resumes where it stopped, and model calls that finished but whose line was lost come
  from the provider's cache;
* ``screening.parquet`` and ``tournament.parquet`` — the screening table and the tournament's
  per-chunk scores (:mod:`._tables`);
* ``weights.json`` — the derived weights as a weights file ``chatledger score --weights`` reads;
* ``report.html`` — the page (``chatledger select report DIR``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chatledger.core import InputError, atomic_write_json, first_validation_error

RECORD_FILE = "selection.json"
UNITS_FILE = "units.jsonl"
SCREENING_TABLE = "screening.parquet"
TOURNAMENT_TABLE = "tournament.parquet"
WEIGHTS_FILE = "weights.json"
REPORT_FILE = "report.html"
RECORD_VERSION = 1
UNIT_VERSION = 1

Phase = Literal["screen", "variants", "tournament", "validate", "weights"]
PHASES: tuple[Phase, ...] = ("screen", "variants", "tournament", "validate", "weights")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Usage(_Model):
    """Calls of one phase: units asked for, found already done, answered from the cache."""

    units: int = 0
    reused: int = 0  # found in units.jsonl: not asked again
    calls: int = 0  # model calls made (re-asks included)
    cached_calls: int = 0
    invalid: int = 0  # outputs that did not validate (recorded, counted, never dropped)
    failed: int = 0  # calls that failed outright (retries exhausted): not written, retried later
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Usage) -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class UnitLine(_Model):
    """One extraction of one chunk for one phase: the fields asked, the prompt, what came back.

    ``values`` holds the fields whose value validated against the candidate's shape;
    ``invalid`` names the others with the reason; ``error`` is set when the whole output was
    unusable (no JSON, the schema broken): then no field has a value, and the line counts.
    """

    v: int = UNIT_VERSION
    key: str  # digest of (phase, chunk, sample, prompt): what a rerun looks up
    phase: Phase
    chunk_id: str
    sample: int = 0
    style: str = "plain"
    variant: str = "base"  # Phase 1.5: the variant measured (its field is the one asked)
    schema_name: str = ""  # Phase 2/3: the candidate schema
    fields: list[str]
    values: dict[str, Any] = Field(default_factory=dict)
    invalid: dict[str, str] = Field(default_factory=dict)
    unavailable: list[str] = Field(default_factory=list)  # a recording without these fields
    error: str | None = None
    calls: int = 0
    cached: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class ScreenRow(_Model):
    name: str
    tier: str
    in_v3: bool
    consistency: float
    information_gain: float
    discrimination: float
    redundancy: float
    composite: float
    passed: bool
    reason: str  # why it failed ("" when it passed)
    runs: int  # (chunk, sample) extractions with a valid value of the field
    invalid: int  # extractions whose value of the field did not validate
    items: int  # items over every run and chunk


class VariantRow(_Model):
    field: str
    before: float  # consistency in the screen
    consistency: dict[str, float]  # variant → consistency re-measured
    best: str
    instruction: str  # the instruction kept

    @property
    def after(self) -> float:
        return self.consistency[self.best]


class TournamentRow(_Model):
    schema_name: str
    style: str
    fields: list[str]
    scores: list[float]  # per chunk, in the order evaluated
    chunk_ids: list[str]
    mean: float
    pruned: bool
    rank: int  # 1 = the winner; pruned trials after the complete ones


class TournamentSummary(_Model):
    rows: list[TournamentRow]
    calls: int  # extractions the trials evaluated (units; model calls are in usage)
    budget_stopped: bool
    pruned_share: float  # of the trials other than the winner
    winner: str  # "schema / style"
    runner_up: str | None


class ValidationSummary(_Model):
    winner: str
    runner_up: str | None
    chunks: int
    winner_mean: float
    winner_low: float
    winner_high: float
    runner_up_mean: float | None = None
    runner_up_low: float | None = None
    runner_up_high: float | None = None
    difference: float | None = None
    difference_low: float | None = None
    difference_high: float | None = None
    p_value: float | None = None
    confidence: float = 0.95

    @property
    def winner_better(self) -> bool | None:
        return None if self.difference_low is None else self.difference_low > 0


class WeightsSummary(_Model):
    weights: dict[str, float]  # every field of the winning schema
    v1_share: float
    scorer_weights: dict[str, float]  # what weights.json holds (v3 fields, renormalised)
    left_out: list[str]  # fields of the winner that a v3 weights file cannot name


class SelectionRecord(_Model):
    """``selection.json`` (version 1)."""

    kind: Literal["chatledger-selection"] = "chatledger-selection"
    version: int = RECORD_VERSION
    chatledger: str
    config: dict[str, Any]  # the validated config, as written (SelectConfig.model_dump)
    config_digest: str
    extractor: str  # model id, "simulated:screen" or "recorded:<file>"
    simulated: bool
    chunks: int  # in the chunks file
    phases: list[Phase] = Field(default_factory=list)  # finished, in order
    screen_chunks: list[str] = Field(default_factory=list)
    screening: list[ScreenRow] = Field(default_factory=list)
    variants: list[VariantRow] = Field(default_factory=list)
    tournament: TournamentSummary | None = None
    validation: ValidationSummary | None = None
    weights: WeightsSummary | None = None
    usage: dict[str, Usage] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)  # what a reader must know (skipped, why)

    def write(self, out_dir: Path) -> Path:
        path = out_dir / RECORD_FILE
        atomic_write_json(path, self.model_dump(mode="json"))
        return path

    @classmethod
    def read(cls, out_dir: Path) -> SelectionRecord:
        path = out_dir / RECORD_FILE if out_dir.is_dir() else out_dir
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(
                "no selection record here (run `chatledger select run CONFIG` first)", path=path
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read the selection record: {exc}", path=path) from None
        if not isinstance(data, dict) or data.get("kind") != "chatledger-selection":
            raise InputError("not a chatledger selection record", path=path)
        if data.get("version") != RECORD_VERSION:
            raise InputError(
                f"selection record version {data.get('version')!r}; this chatledger reads "
                f"version {RECORD_VERSION}",
                path=path,
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            raise InputError(msg, path=path, field=where or None) from None

    def screening_row(self, name: str) -> ScreenRow | None:
        return next((r for r in self.screening if r.name == name), None)

    @property
    def survivors(self) -> list[str]:
        return [r.name for r in self.screening if r.passed]
