"""Scoring configuration: schema, field weights, thresholds, matcher; loadable from a file.

It also states the one weight rule (:func:`merge_weights`), which field, consumer and layer
weights all follow: the defaults, with the user's values put in name by name; every weight a
finite number ≥ 0; the merged group summing to 1 (±1e-6), else one error showing the sum and the
merged weights. (Members not in play, a layer that is not run, are dropped afterwards and the rest
rescaled by whoever runs them.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chatledger.core import (
    SCHEMA_FIELDS,
    SCHEMA_WEIGHTS,
    ChatLedgerError,
    InputError,
    first_validation_error,
)

WEIGHT_TOLERANCE = 1e-6


class WeightError(ChatLedgerError, ValueError):
    """A weight group that breaks the rule; ``name`` is the member at fault, if one is.

    Also a ValueError, so a pydantic validator that lets it through words it as its own."""

    def __init__(self, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


def weight_value(name: str, value: Any) -> float:
    """``value`` as a weight: a finite number ≥ 0 (a numeric string, as inline options give,
    is read as its number); anything else is a :class:`WeightError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise WeightError(f"weight of {name!r} must be a number, got {value!r}", name)
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise WeightError(f"weight of {name!r} must be a number, got {value!r}", name) from None
    if not math.isfinite(number) or number < 0.0:
        raise WeightError(f"weight of {name!r} must be a finite number ≥ 0, got {value!r}", name)
    return number


def _number(value: float) -> str:
    return f"{value:.6g}"


def _sum_text(total: float) -> str:
    """The sum with 3 decimals, more when 3 would round it to 1.000 (1.0004 is not 1)."""
    for digits in (3, 6, 9):
        text = f"{total:.{digits}f}"
        if float(text) != 1.0:
            return text
    return f"{total!r}"


def check_weight_sum(
    weights: Mapping[str, float], *, what: str, merged_with: str | None = "the defaults"
) -> None:
    """Refuse a group that does not sum to 1, showing its sum and every weight."""
    total = sum(weights.values())
    if abs(total - 1.0) <= WEIGHT_TOLERANCE:
        return
    listing = ", ".join(f"{name} {_number(w)}" for name, w in weights.items())
    how = f"after merging with {merged_with} " if merged_with else ""
    raise WeightError(
        f"{what} weights sum to {_sum_text(total)} {how}({listing}): make them sum to 1 "
        "(set a weight to 0 to leave it out)"
    )


def merge_weights(
    defaults: Mapping[str, float],
    given: Mapping[str, Any] | None,
    *,
    what: str,
    replace: bool = False,
) -> dict[str, float]:
    """The one weight rule (module docstring): ``defaults`` with ``given`` put in name by name,
    each a finite number ≥ 0, the group summing to 1. ``replace`` starts from nothing: the
    defaults' members not named weigh 0.

    The caller checks the names first (each group words its own "unknown …" error). Raises
    :class:`WeightError`.
    """
    weights = dict.fromkeys(defaults, 0.0) if replace else dict(defaults)
    for name, value in (given or {}).items():
        weights[str(name)] = weight_value(str(name), value)
    merged_with = "zeros (replace_weights)" if replace else "the defaults"
    check_weight_sum(weights, what=what, merged_with=merged_with)
    return weights


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
    # Which per-field figure the composite uses: the per-chunk mean (macro, DESIGN.md §3) or the
    # pooled one (micro); None: micro against a reference with ``covers``, else macro.
    aggregate: Literal["macro", "micro"] | None = None

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
        for name, weight in self.weights.items():
            weight_value(name, weight)
        check_weight_sum(self.weights, what="field", merged_with=None)
        from chatledger.matching import MATCHERS  # rapidfuzz: not for readers of the weights

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
            fields = SCHEMA_FIELDS[version]
            unknown = sorted(str(name) for name in given if name not in fields)
            if unknown:
                raise ValueError(f"unknown field(s) for schema {version}: {', '.join(unknown)}")
            replace = bool(data.get("replace_weights", False))
            weights = merge_weights(weights, given, what="field", replace=replace)
        merged["weights"] = weights
        if "thresholds" in data:
            merged["thresholds"] = data["thresholds"]
        merged["matcher"] = matcher or data.get("matcher", "token_set")
        if data.get("aggregate") is not None:
            merged["aggregate"] = data["aggregate"]
        extra = set(data) - {
            "schema_version",
            "weights",
            "thresholds",
            "matcher",
            "replace_weights",
            "aggregate",
        }
        if extra:
            raise ValueError(f"unknown key(s): {', '.join(sorted(extra))}")
        return cls.model_validate(merged)


def load_scoring_config(
    path: str | Path, *, schema_version: str = "v3", matcher: str | None = None
) -> ScoringConfig:
    """Read weight/threshold overrides from a YAML or JSON file; errors name the file and key."""
    path = Path(path)
    from chatledger.corpus import read_config_mapping  # YAML: loaded only for a weights file

    data = read_config_mapping(path, what="weights file", allow_empty=True)
    try:
        return ScoringConfig.from_mapping(data, schema_version=schema_version, matcher=matcher)
    except ValidationError as exc:
        where, msg = first_validation_error(exc)
        raise InputError(msg, path=path, field=where or None) from None
    except WeightError as exc:
        where = f"weights.{exc.name}" if exc.name is not None else "weights"
        raise InputError(str(exc), path=path, field=where) from None
    except ValueError as exc:
        raise InputError(str(exc), path=path) from None
