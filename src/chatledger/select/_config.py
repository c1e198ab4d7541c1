"""The config of a schema selection (YAML or JSON), read into typed sections (issue 16).

```yaml
version: 1
chunks: chunks.jsonl          # the conversation chunks
reference: reference.jsonl    # v3 extractions: the yardstick of Phase 2 and 3
extractor: simulated          # or a model id (openai:…, anthropic:…, local:…), or
                              # {recorded: answers.jsonl} (an extraction file with samples)
temperature: 0.7              # repeated runs need sampling (models only)
screen: {k: 3, chunks: 8}     # and weights, pass_mark, redundancy_floor, ratings, fields …
variants: {floor: 0.5}
tournament: {schemas: 8, styles: [plain, explicit, example, constrained, field-guide], chunks: 8}
validation: {chunks: null}    # null: every chunk with a reference
weights: {v1_share: 0.6}
budget_usd: 5
```

Paths are relative to the config's folder and may not climb out of it (an absolute path is
allowed when written as one), as in a run config. Every mistake is one line naming the file and
the key.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chatledger.core import InputError, first_validation_error, resolve_inside
from chatledger.corpus import read_config_mapping
from chatledger.extraction import validate_model_id
from chatledger.select._candidates import CANDIDATES
from chatledger.select._metrics import DEFAULT_WEIGHTS, PASS_MARK, REDUNDANCY_FLOOR
from chatledger.select._prompt import STYLES
from chatledger.select._variants import CONSISTENCY_FLOOR
from chatledger.select._weights import V1_SHARE

CONFIG_VERSION = 1
SIMULATED = "simulated"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScreenSection(_Section):
    k: int = Field(default=3, ge=2)  # repeated extractions per chunk
    chunks: int | None = Field(default=8, ge=1)  # evenly spaced over the file; null: all
    fields: list[str] | None = None  # candidates screened (default: every unproven one)
    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    pass_mark: float = Field(default=PASS_MARK, ge=0.0, le=1.0)
    # Below it a field fails whatever its composite: a near-copy of a proven field adds nothing.
    redundancy_floor: float = Field(default=REDUNDANCY_FLOOR, ge=0.0, le=1.0)
    ratings: str | None = None  # JSON {chunk_id: rating} or JSONL {"chunk_id", "rating"}
    redundancy_measure: Literal["tfidf", "embeddings"] = "tfidf"
    embedding_model: str | None = None  # a sentence-transformers model (a folder or name)
    fields_per_call: int | None = Field(default=None, ge=1)  # null: every field in one call

    @field_validator("fields")
    @classmethod
    def _known_fields(cls, names: list[str] | None) -> list[str] | None:
        for name in names or []:
            CANDIDATES.get(name)  # an InputError naming the known ones
        return names

    @field_validator("weights")
    @classmethod
    def _four_weights(cls, weights: dict[str, float]) -> dict[str, float]:
        if set(weights) != set(DEFAULT_WEIGHTS):
            raise ValueError(f"weights must name exactly: {', '.join(DEFAULT_WEIGHTS)}")
        if any(w < 0 for w in weights.values()) or abs(sum(weights.values()) - 1.0) > 1e-6:
            raise ValueError("weights must be non-negative and sum to 1")
        return weights


class VariantsSection(_Section):
    floor: float = Field(default=CONSISTENCY_FLOOR, ge=0.0, le=1.0)


class TournamentSection(_Section):
    schemas: int = Field(default=8, ge=2)
    styles: list[str] = Field(default_factory=lambda: list(STYLES))
    chunks: int | None = Field(default=8, ge=1)
    min_chunks: int = Field(default=2, ge=1)
    reduction_factor: int = Field(default=2, ge=2)
    max_calls: int | None = Field(default=None, ge=1)

    @field_validator("styles")
    @classmethod
    def _known_styles(cls, styles: list[str]) -> list[str]:
        unknown = [s for s in styles if s not in STYLES]
        if unknown or not styles:
            raise ValueError(f"styles must be some of: {', '.join(STYLES)}")
        return styles


class ValidationSection(_Section):
    chunks: int | None = Field(default=None, ge=2)  # null: every chunk with a reference
    n_resamples: int = Field(default=2000, ge=100)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)


class WeightsSection(_Section):
    v1_share: float = Field(default=V1_SHARE, ge=0.0, le=1.0)


class Recorded(_Section):
    recorded: str


class SelectConfig(_Section):
    version: Literal[1] = 1
    chunks: str
    reference: str | None = None
    extractor: str | Recorded = SIMULATED
    temperature: float | None = Field(default=0.7, ge=0.0, le=2.0)
    max_tokens: int = Field(default=4096, ge=1)
    budget_usd: float | None = Field(default=None, ge=0.0)
    cache_dir: str | None = None
    # USD per million tokens, as in a run config: a price file, or {model pattern: {input, output}}
    prices: str | dict[str, dict[str, float]] | None = None
    concurrency: int | None = Field(default=None, ge=1)  # calls in flight (default: endpoint's)
    seed: int = 0
    screen: ScreenSection = Field(default_factory=ScreenSection)
    variants: VariantsSection = Field(default_factory=VariantsSection)
    tournament: TournamentSection = Field(default_factory=TournamentSection)
    validation: ValidationSection = Field(default_factory=ValidationSection)
    weights: WeightsSection = Field(default_factory=WeightsSection)

    @field_validator("extractor")
    @classmethod
    def _known_extractor(cls, value: str | Recorded) -> str | Recorded:
        if isinstance(value, str) and value != SIMULATED:
            validate_model_id(value)
        return value

    @model_validator(mode="after")
    def _reference_for_simulation(self) -> SelectConfig:
        if self.extractor == SIMULATED and self.reference is None:
            raise ValueError("the simulated extractor needs 'reference' (its truth)")
        return self

    @property
    def model_id(self) -> str | None:
        """The model asked, when the extractor is one."""
        if isinstance(self.extractor, str) and self.extractor != SIMULATED:
            return self.extractor
        return None

    def digest(self) -> str:
        """What the answers depend on: a selection directory holds one. The budget, cache,
        prices and concurrency change how the calls are made, not what they answer."""
        kept = self.model_dump(
            mode="json", exclude={"budget_usd", "cache_dir", "prices", "concurrency"}
        )
        text = json.dumps(kept, sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class LoadedSelectConfig(BaseModel):
    """A validated config with its paths resolved (and checked to exist)."""

    model_config = ConfigDict(frozen=True)

    config: SelectConfig
    path: Path
    chunks: Path
    reference: Path | None
    recorded: Path | None
    ratings: Path | None
    cache_dir: Path | None
    prices_file: Path | None = None


def load_select_config(path: str | Path) -> LoadedSelectConfig:
    path = Path(path)
    data = read_config_mapping(path, what="selection config")
    try:
        config = SelectConfig.model_validate(data)
    except ValidationError as exc:
        where, msg = first_validation_error(exc)
        raise InputError(msg, path=path, field=where or None) from None
    except InputError as exc:  # an unknown candidate field, from the registry
        raise InputError(exc.detail, path=path, field="screen.fields") from None
    base = path.parent

    def inside(raw: str | None, what: str, *, must_exist: bool = True) -> Path | None:
        if raw is None:
            return None
        resolved = resolve_inside(base, raw, what=what, config_path=path)
        if must_exist and not resolved.is_file():
            raise InputError(f"file not found: {resolved}", path=path, field=what)
        return resolved

    recorded = config.extractor.recorded if isinstance(config.extractor, Recorded) else None
    return LoadedSelectConfig(
        config=config,
        path=path,
        chunks=inside(config.chunks, "chunks") or base,
        reference=inside(config.reference, "reference"),
        recorded=inside(recorded, "extractor.recorded"),
        ratings=inside(config.screen.ratings, "screen.ratings"),
        cache_dir=inside(config.cache_dir, "cache_dir", must_exist=False),
        prices_file=inside(config.prices, "prices") if isinstance(config.prices, str) else None,
    )
