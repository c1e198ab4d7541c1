"""Scoring configuration: schema, field weights, thresholds, matcher; loadable from a file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chatledger.core import SCHEMA_FIELDS, SCHEMA_WEIGHTS, InputError, first_validation_error
from chatledger.corpus import read_config_file
from chatledger.matching import MATCHERS

WEIGHT_TOLERANCE = 1e-6


class Thresholds(BaseModel):
    """Similarity thresholds on 0–1 (DESIGN.md §3)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: float = Field(default=0.60, ge=0.0, le=1.0)
    entity: float = Field(default=0.70, ge=0.0, le=1.0)
    participant: float = Field(default=0.70, ge=0.0, le=1.0)
    answer: float = Field(default=0.60, ge=0.0, le=1.0)
    subject: float = Field(default=0.60, ge=0.0, le=1.0)
    turning_point_window: int = Field(default=2, ge=0)


class ScoringConfig(BaseModel):
    """Everything layer 1 needs besides the data. Weights cover exactly the schema's fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal["v1", "v3"] = "v3"
    weights: dict[str, float] = Field(default_factory=dict)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    matcher: str = "token_set"

    @model_validator(mode="after")
    def _check(self) -> ScoringConfig:
        fields = SCHEMA_FIELDS[self.schema_version]
        if not self.weights:
            object.__setattr__(self, "weights", dict(SCHEMA_WEIGHTS[self.schema_version]))
        unknown = sorted(set(self.weights) - set(fields))
        if unknown:
            raise ValueError(
                f"unknown field(s) for schema {self.schema_version}: {', '.join(unknown)}"
            )
        missing = [f for f in fields if f not in self.weights]
        if missing:
            raise ValueError(f"no weight for field(s): {', '.join(missing)}")
        negative = [f for f, w in self.weights.items() if w < 0]
        if negative:
            raise ValueError(f"negative weight for: {', '.join(negative)}")
        total = sum(self.weights.values())
        if abs(total - 1.0) > WEIGHT_TOLERANCE:
            raise ValueError(f"field weights sum to {total:.6f}, expected 1")
        if self.matcher not in MATCHERS:
            raise ValueError(f"unknown matcher {self.matcher!r} (known: {', '.join(MATCHERS)})")
        return self

    @property
    def fields(self) -> tuple[str, ...]:
        return SCHEMA_FIELDS[self.schema_version]

    @classmethod
    def default(cls, schema_version: str = "v3", matcher: str = "token_set") -> ScoringConfig:
        return cls.model_validate({"schema_version": schema_version, "matcher": matcher})

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, schema_version: str = "v3", matcher: str | None = None
    ) -> ScoringConfig:
        """Defaults for ``schema_version`` overridden by ``data`` (weights merge field by field)."""
        merged: dict[str, Any] = {"schema_version": data.get("schema_version", schema_version)}
        version = merged["schema_version"]
        if version not in SCHEMA_WEIGHTS:
            raise ValueError(f"unknown schema {version!r}; expected v1 or v3")
        weights = dict(SCHEMA_WEIGHTS[version])
        if "weights" in data:
            given = data["weights"]
            if not isinstance(given, Mapping):
                raise ValueError("weights must be a mapping of field name to weight")
            if data.get("replace_weights", False):
                weights = {}
            weights.update(given)
        merged["weights"] = weights
        if "thresholds" in data:
            merged["thresholds"] = data["thresholds"]
        merged["matcher"] = matcher or data.get("matcher", "token_set")
        extra = set(data) - {
            "schema_version",
            "weights",
            "thresholds",
            "matcher",
            "replace_weights",
        }
        if extra:
            raise ValueError(f"unknown key(s): {', '.join(sorted(extra))}")
        return cls.model_validate(merged)


def load_scoring_config(
    path: str | Path, *, schema_version: str = "v3", matcher: str | None = None
) -> ScoringConfig:
    """Read weight/threshold overrides from a YAML or JSON file; errors name the file and key."""
    path = Path(path)
    try:
        found = path.is_file()
    except OSError as exc:  # a name too long
        raise InputError(f"cannot use path: {exc.strerror or exc}", path=path) from None
    if not found:
        raise InputError("weights file not found", path=path)
    data = read_config_file(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping at the top level", path=path)
    try:
        return ScoringConfig.from_mapping(data, schema_version=schema_version, matcher=matcher)
    except ValidationError as exc:
        where, msg = first_validation_error(exc)
        raise InputError(msg, path=path, field=where or None) from None
    except ValueError as exc:
        raise InputError(str(exc), path=path) from None
