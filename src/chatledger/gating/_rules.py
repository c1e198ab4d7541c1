"""The rules of a regression gate: what may drop, by how much, and where the runs are.

A rules file is a mapping of *figure* → *thresholds*::

    overall: {max_drop: 0.02}
    fields.claims: {max_drop: 0.05}
    layers.downstream: {min: 0.5}
    validity: {min: 0.99}
    cost_per_chunk: {max_ratio: 0.5}

or the same under ``rules:``, beside the gate's settings (``baseline``, ``candidate``, their
models, ``strict``, ``confidence``, ``resamples``, ``seed``). Groups can nest
(``fields: {claims: {max_drop: 0.05}}``) and ``fields.*`` stands for every field both runs
score. Each threshold of a figure is a rule of its own (one test item, one JUnit case); one
kind of threshold given twice for a figure (``fields.claims`` and ``fields: {claims}``) is
refused, and a member of ``fields.*`` that is also named on its own is evaluated once, under
the threshold named on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chatledger.core import InputError, first_validation_error

RULES_VERSION = 1
# Figures that are scores in [0, 1] (higher is better) and the groups that name them.
SCORE_FIGURES = ("overall", "validity")
SCORE_GROUPS = ("layers", "fields", "consumers")
LAYERS = ("extraction", "judge", "downstream")
# Figures of what a model costs (lower is better), from each run's usage.
COST_FIGURES = ("cost_per_chunk", "latency_per_chunk")
SETTINGS = (
    "version",
    "baseline",
    "candidate",
    "baseline_model",
    "candidate_model",
    "strict",
    "confidence",
    "resamples",
    "seed",
)
Kind = Literal["max_drop", "min", "max", "max_ratio"]
SCORE_KINDS: tuple[Kind, ...] = ("max_drop", "min")
COST_KINDS: tuple[Kind, ...] = ("max_ratio", "max")


class Thresholds(BaseModel):
    """The thresholds of one figure as written; at least one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_drop: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    min: float | None = Field(default=None, allow_inf_nan=False)
    max: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    max_ratio: float | None = Field(default=None, gt=0.0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _one_at_least(self) -> Thresholds:
        if not self.given():
            raise ValueError("name a threshold: max_drop, min, max or max_ratio")
        return self

    def given(self) -> list[tuple[Kind, float]]:
        kinds: tuple[Kind, ...] = ("max_drop", "min", "max", "max_ratio")
        return [(k, v) for k in kinds if (v := getattr(self, k)) is not None]


class GateRule(BaseModel):
    """One threshold on one figure (``fields.claims`` max_drop 0.05)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    figure: str
    kind: Kind
    value: float

    @property
    def name(self) -> str:
        return f"{self.figure} {self.kind} {self.value:g}"

    @property
    def is_cost(self) -> bool:
        return self.figure in COST_FIGURES


class GateSettings(BaseModel):
    """The settings a rules file may carry beside its rules (all optional)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    baseline: str | None = None
    candidate: str | None = None
    baseline_model: str | None = None
    candidate_model: str | None = None
    strict: bool = False
    confidence: float | None = Field(default=None, gt=0.5, lt=1.0)
    resamples: int | None = Field(default=None, ge=100, le=100_000)
    seed: int | None = Field(default=None, ge=0)


class GateRules(BaseModel):
    """Rules and settings, with where they were read from (relative paths resolve there)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: list[GateRule]
    settings: GateSettings = Field(default_factory=GateSettings)
    source: str = "<inline>"
    folder: str | None = None  # the rules file's folder; None for inline rules

    def resolve(self, path: str | None) -> Path | None:
        """A run directory named in the file, relative to the file's folder."""
        if path is None:
            return None
        given = Path(path)
        return given if given.is_absolute() or self.folder is None else Path(self.folder) / given


def load_gate_rules(text_or_path: str) -> GateRules:
    """The rules in the file at ``text_or_path``, or the YAML text itself (``--rules`` inline)."""
    from chatledger.corpus import parse_config_text, read_config_text

    candidate = Path(text_or_path)
    is_file = False
    try:
        is_file = len(text_or_path) < 4096 and candidate.is_file()
    except (OSError, ValueError):
        is_file = False
    if is_file:
        data = parse_config_text(read_config_text(candidate), path=candidate)
        return parse_gate_rules(data, source=str(candidate), folder=str(candidate.parent))
    if ":" not in text_or_path and "{" not in text_or_path:
        if candidate.is_dir():
            raise InputError("is a directory, expected a rules file", path=text_or_path)
        raise InputError("rules file not found (nor YAML rules written inline)", path=text_or_path)
    data = parse_config_text(text_or_path, path="--rules")
    return parse_gate_rules(data, source="--rules", folder=None)


def parse_gate_rules(data: Any, *, source: str, folder: str | None) -> GateRules:
    if not isinstance(data, dict):
        raise InputError("expected a mapping of figure → thresholds", path=source)
    if "rules" in data:
        settings_data = {k: v for k, v in data.items() if k != "rules"}
        rules_data = data["rules"]
        if not isinstance(rules_data, dict):
            raise InputError(
                "expected a mapping of figure → thresholds", path=source, field="rules"
            )
        prefix = "rules."
    else:
        settings_data = {k: v for k, v in data.items() if k in SETTINGS}
        rules_data = {k: v for k, v in data.items() if k not in SETTINGS}
        prefix = ""
    try:
        settings = GateSettings.model_validate(settings_data)
    except ValidationError as exc:
        where, message = first_validation_error(exc)
        raise InputError(message, path=source, field=where) from None
    rules: list[GateRule] = []
    written: dict[tuple[str, str], str] = {}  # (figure, kind) -> how it was spelled first
    for figure, raw, spelled in _flatten(rules_data, source, prefix):
        for rule in _rules_of(figure, raw, source, prefix):
            first = written.setdefault((rule.figure, rule.kind), spelled)
            if first != spelled:
                # Two thresholds of one kind on one figure: which holds cannot be guessed, and
                # both would be evaluated (decide would also spend α on each).
                raise InputError(
                    f"{rule.figure} {rule.kind} is given twice ({first} and {spelled}): keep one",
                    path=source,
                    field=f"{prefix}{rule.figure}.{rule.kind}",
                )
            rules.append(rule)
    if not rules:
        raise InputError("no rules: name at least one figure and its threshold", path=source)
    return GateRules(rules=rules, settings=settings, source=source, folder=folder)


def _flatten(data: dict[Any, Any], source: str, prefix: str) -> list[tuple[str, Any, str]]:
    """``fields: {claims: {...}}`` as ``fields.claims``; groups hold figures, not thresholds.
    Each with how the file spelled it (``fields.claims`` or ``fields: {claims}``)."""
    out: list[tuple[str, Any, str]] = []
    for key, value in data.items():
        name = str(key)
        if name in SCORE_GROUPS and isinstance(value, dict):
            if not value:
                raise InputError("an empty group", path=source, field=f"{prefix}{name}")
            for item, thresholds in value.items():
                out.append((f"{name}.{item}", thresholds, f"'{name}: {{{item}}}'"))
        else:
            out.append((name, value, f"'{name}'"))
    return out


def _rules_of(figure: str, raw: Any, source: str, prefix: str) -> list[GateRule]:
    where = f"{prefix}{figure}"
    _check_figure(figure, source, where)
    if not isinstance(raw, dict):
        raise InputError("expected thresholds, e.g. {max_drop: 0.02}", path=source, field=where)
    try:
        thresholds = Thresholds.model_validate(raw)
    except ValidationError as exc:
        key, message = first_validation_error(exc, prefix=where)
        raise InputError(message, path=source, field=key) from None
    allowed = COST_KINDS if figure in COST_FIGURES else SCORE_KINDS
    rules = []
    for kind, value in thresholds.given():
        if kind not in allowed:
            what = "a cost" if figure in COST_FIGURES else "a score"
            raise InputError(
                f"{kind} does not apply to {what}; use {' or '.join(allowed)}",
                path=source,
                field=f"{where}.{kind}",
            )
        if kind == "min" and not 0.0 <= value <= 1.0:
            raise InputError(
                "a score's min is between 0 and 1", path=source, field=f"{where}.{kind}"
            )
        rules.append(GateRule(figure=figure, kind=kind, value=value))
    return rules


def _check_figure(figure: str, source: str, where: str) -> None:
    if figure in SCORE_FIGURES or figure in COST_FIGURES:
        return
    group, dot, item = figure.partition(".")
    if dot and item and group in SCORE_GROUPS:
        if group == "layers" and item not in (*LAYERS, "*"):
            raise InputError(
                f"unknown layer {item!r} (layers: {', '.join(LAYERS)})", path=source, field=where
            )
        return
    known = ", ".join([*SCORE_FIGURES, *(f"{g}.NAME" for g in SCORE_GROUPS), *COST_FIGURES])
    raise InputError(f"unknown figure {figure!r} (figures: {known})", path=source, field=where)
