"""Run configuration (YAML): what to compare, which layers, which weights (DESIGN.md §6).

Paths in a config are relative to the config file's folder and must stay inside that folder
tree; a path outside it is accepted only when written as an absolute path (``/…``, or ``~/…``,
which names the home folder explicitly), so a config copied from someone else cannot reach
elsewhere by ``../``. The file is read by :func:`chatledger.corpus.read_config_file` (YAML
without anchors or aliases; one-line errors).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chatledger.core import InputError, first_validation_error, resolve_inside
from chatledger.corpus import read_config_mapping
from chatledger.downstream import resolve_weights
from chatledger.extraction import DEFAULT_MAX_TOKENS, PROMPT_STYLES, validate_model_id
from chatledger.runs._stats import StatsOptions
from chatledger.scoring import ScoringConfig, WeightError, merge_weights

LAYERS = ("extraction", "judge", "downstream")
DEFAULT_LAYER_WEIGHTS = {"extraction": 0.60, "judge": 0.25, "downstream": 0.15}


class ModelSource(BaseModel):
    """One side of the comparison: an extraction file, or a model that the run asks to extract
    the chunks (``{model: ID, prompt_style?, samples?}``), and the name it shows under."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str | None = None
    model: str | None = None
    name: str | None = None
    prompt_style: str = "plain"
    samples: int = Field(default=1, ge=1)
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"file": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _file_or_model(self) -> ModelSource:
        if (self.file is None) == (self.model is None):
            raise ValueError("give either 'file' (an extraction file) or 'model' (a model id)")
        if self.model is not None:
            validate_model_id(self.model)
            if self.prompt_style not in PROMPT_STYLES:
                known = ", ".join(PROMPT_STYLES.names())
                raise ValueError(f"unknown prompt style {self.prompt_style!r} (known: {known})")
        else:
            extract_only = {"prompt_style", "samples", "max_tokens", "temperature"}
            given = sorted(extract_only & self.model_fields_set)
            if given:
                raise ValueError(f"{', '.join(given)} only apply to a 'model' source")
        return self

    @property
    def label(self) -> str | None:
        """The name configured, else the model id (a file's name comes from its lines)."""
        return self.name or self.model


class JudgeSpec(BaseModel):
    """A panel member: a registered offline judge by name, or a language model by id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    model: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"name": value}
        if isinstance(value, dict) and "name" not in value and isinstance(value.get("model"), str):
            return {**value, "name": value["model"]}  # a model judge is named by its id
        return value


class JudgeAuditOptions(BaseModel):
    """``judges: {audit: …}`` — every judge is audited against known truth before it counts
    (docs/judges.md). ``strict`` (default): the panel uses the judges that pass, and when none
    does the judge layer is shown, marked, and left out of ``overall``; ``warn``: every judge
    counts, the failures are marked; ``off``: no audit. Free judges (offline, ``local:``) are
    audited; priced ones only with ``priced: true`` (the audit grades ~14 extractions of each
    audited chunk). ``max_chunks``: the audit reads the first N chunks of the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    audit: Literal["strict", "warn", "off"] = "strict"
    priced: bool = False
    max_false_alarms: float = Field(default=0.10, ge=0.0, le=1.0)
    max_chunks: int | None = Field(default=100, ge=1)


class Weights(BaseModel):
    """``weights:`` of a run config. Every group follows the one weight rule
    (:func:`chatledger.scoring.merge_weights`): the defaults with the values given put in name by
    name, each a finite number ≥ 0, summing to 1. ``layers`` and ``consumers`` hold the merged
    weights once validated; ``fields`` (defaults depend on the schema) are checked by
    :func:`load_run_config` and merged when the run scores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layers: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_LAYER_WEIGHTS))
    fields: dict[str, float] | None = None
    consumers: dict[str, float] | None = None
    # The per-field figure the extraction composite uses: macro (the per-chunk mean) or micro
    # (items pooled over all chunks); unset: micro when the reference has ``covers``.
    aggregate: Literal["macro", "micro"] | None = None

    @field_validator("layers")
    @classmethod
    def _layers_valid(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(LAYERS))
        if unknown:
            raise ValueError(f"unknown layer(s) {', '.join(unknown)}; known: {', '.join(LAYERS)}")
        try:
            return merge_weights(DEFAULT_LAYER_WEIGHTS, value, what="layer")
        except WeightError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("consumers")
    @classmethod
    def _consumers_valid(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is None:
            return None
        try:
            return resolve_weights(value)
        except InputError as exc:
            raise ValueError(exc.detail) from None


LayerName = Literal["extraction", "judge", "downstream"]


class HumanGoldSource(BaseModel):
    """``human_gold:`` of a run config: a gold file (as ``gold:``), and with ``ppi: true`` each
    model's agreement with humans by prediction-powered inference — the human gold on the
    conversations it covers, the model-referenced figure (``predictor``: the extraction layer
    against the run's reference, or the judge layer) on every conversation (docs/sequential.md).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str
    name: str | None = None
    ppi: bool = False
    predictor: Literal["extraction", "judge"] = "extraction"
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    # Planning: the annotated conversations an interval of this full width would need, with
    # PPI and with humans alone (this run as the pilot).
    plan_width: float | None = Field(default=None, gt=0.0, lt=1.0)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"file": value} if isinstance(value, str) else value


def _default_layers() -> list[LayerName]:
    return ["extraction", "downstream"]


class RunConfig(BaseModel):
    """The YAML file of ``chatledger run``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "run"
    chunks: str
    reference: ModelSource
    challengers: list[ModelSource] = Field(min_length=1)
    layers: list[LayerName] = Field(default_factory=_default_layers)
    schema_version: Literal["v1", "v3"] = Field(default="v3", alias="schema")
    matcher: str = "token_set"
    thresholds: dict[str, float] = Field(default_factory=dict)
    weights: Weights = Field(default_factory=Weights)
    judges: list[JudgeSpec] = Field(default_factory=list)
    # ``judges:`` may also be a mapping {panel: [...], audit: strict|warn|off, priced, …}.
    judge_audit: JudgeAuditOptions = Field(default_factory=JudgeAuditOptions)
    gold: ModelSource | None = None
    human_gold: HumanGoldSource | None = None
    stats: StatsOptions = Field(default_factory=StatsOptions)
    seed: int = 0
    # Model calls (extraction by 'model' sources, model judges): a spending cap on the named
    # spend ledger of the call cache (cumulative across runs sharing it), where the call cache
    # lives (default: $CHATLEDGER_CACHE_DIR or the user cache), calls in flight per endpoint,
    # seconds before one request is abandoned and retried, tries per call, and prices (a file,
    # or an inline mapping) added to the built-in.
    budget_usd: float | None = Field(default=None, ge=0.0)
    budget_name: str = "default"
    cache_dir: str | None = None
    concurrency: int | None = Field(default=None, ge=1)
    timeout_s: float | None = Field(default=None, gt=0.0)
    max_attempts: int | None = Field(default=None, ge=1)
    prices: str | dict[str, Any] | None = None
    # Batch mode (docs/batch.md): OpenAI and Anthropic calls go through their batch APIs at
    # the batch price, and a rerun resumes a submitted batch; batch_poll_s is the first wait
    # between polls (doubled after each, up to a minute). `--batch` on the command line sets it.
    batch: bool = False
    batch_poll_s: float | None = Field(default=None, gt=0.0)
    # Where scoring, judging and the consumers run: local | processes[:N] | dask[:ADDRESS]
    # (runs._executors); `--executor` on the command line wins. Results are the same bytes.
    executor: str = "local"

    @model_validator(mode="before")
    @classmethod
    def _judges_mapping(cls, value: Any) -> Any:
        """``judges: {panel: [grounding], audit: warn}`` → the panel and its audit options."""
        if not isinstance(value, dict) or not isinstance(value.get("judges"), dict):
            return value
        options = dict(value["judges"])
        if "judge_audit" in value:
            raise ValueError("give the audit options under 'judges', not also as judge_audit")
        panel = options.pop("panel", [])
        return {**value, "judges": panel, "judge_audit": options}

    @field_validator("executor")
    @classmethod
    def _executor_known(cls, value: str) -> str:
        from chatledger.runs._executors import parse_executor

        try:
            parse_executor(value)
        except InputError as exc:
            raise ValueError(exc.detail) from None
        return value

    @field_validator("layers")
    @classmethod
    def _layers_unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a layer is listed twice")
        if not value:
            raise ValueError("at least one layer is needed")
        return value

    @model_validator(mode="before")
    @classmethod
    def _human_gold_is_gold(cls, data: Any) -> Any:
        """``human_gold: {file}`` is ``gold: {file}`` with more to say: the run scores it as
        gold; both at once would be two golds."""
        if isinstance(data, dict) and data.get("human_gold") is not None:
            if data.get("gold") is not None:
                raise ValueError("give gold or human_gold, not both (human_gold is gold + ppi)")
            given = data["human_gold"]
            source = {"file": given} if isinstance(given, str) else given
            if isinstance(source, dict) and isinstance(source.get("file"), str):
                gold: dict[str, Any] = {"file": source["file"]}
                if source.get("name") is not None:
                    gold["name"] = source["name"]
                data = {**data, "gold": gold}
        return data

    @model_validator(mode="after")
    def _judges_match_layers(self) -> RunConfig:
        if "judge" in self.layers and not self.judges:
            raise ValueError("the judge layer needs judges: add e.g. 'judges: [grounding]'")
        if self.judges and "judge" not in self.layers:
            raise ValueError("judges are listed but 'judge' is not in layers")
        names = [j.name for j in self.judges]
        if len(set(names)) != len(names):
            raise ValueError("two judges share a name; give each a unique 'name'")
        if self.gold is not None and self.gold.file is None:
            raise ValueError("gold must be an extraction file")
        hg = self.human_gold
        if hg is not None and hg.ppi and hg.predictor not in self.layers:
            raise ValueError(
                f"human_gold.predictor {hg.predictor!r} needs the {hg.predictor} layer in layers"
            )
        return self

    @property
    def calls_models(self) -> bool:
        """Whether the run asks any model for anything (so it needs the provider layer)."""
        sources = [self.reference, *self.challengers]
        return any(s.model is not None for s in sources) or any(
            j.model is not None for j in self.judges
        )


def _is_file(path: Path, *, what: str, config_path: Path) -> bool:
    try:
        return path.is_file()
    except OSError as exc:  # ENAMETOOLONG and the like: is_file() only hides "not found"
        raise InputError(
            f"cannot use path: {exc.strerror or exc}", path=config_path, field=what
        ) from None


class LoadedRunConfig(BaseModel):
    """A validated config with its paths resolved."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    config: RunConfig
    path: Path
    chunks: Path
    # None for a 'model' source: its file is written into the run directory by the run.
    reference: Path | None
    challengers: list[Path | None]
    gold: Path | None = None
    cache_dir: Path | None = None
    prices_file: Path | None = None


def load_run_config(path: str | Path) -> LoadedRunConfig:
    """Read and validate a run config; every mistake is an InputError naming file and key."""
    path = Path(path)
    data = read_config_mapping(path, what="run config")
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        where, msg = first_validation_error(exc)
        raise InputError(msg, path=path, field=where or None) from None
    _check_scoring(config, path)
    base = path.parent
    chunks = resolve_inside(base, config.chunks, what="chunks", config_path=path)
    reference = _source_file(base, config.reference, what="reference", config_path=path)
    challengers = [
        _source_file(base, c, what=f"challengers.{i}.file", config_path=path)
        for i, c in enumerate(config.challengers)
    ]
    gold = (
        _source_file(base, config.gold, what="gold", config_path=path)
        if config.gold is not None
        else None
    )
    cache_dir = (
        resolve_inside(base, config.cache_dir, what="cache_dir", config_path=path)
        if config.cache_dir is not None
        else None
    )
    prices_file = (
        resolve_inside(base, config.prices, what="prices", config_path=path)
        if isinstance(config.prices, str)
        else None
    )
    checks: list[tuple[str, Path | None]] = [("chunks", chunks), ("reference", reference)]
    checks += [(f"challengers.{i}.file", c) for i, c in enumerate(challengers)]
    checks += [("gold", gold), ("prices", prices_file)]
    for what, p in checks:
        if p is not None and not _is_file(p, what=what, config_path=path):
            problem = "is a directory, expected a file" if p.is_dir() else "file not found"
            raise InputError(f"{problem}: {p}", path=path, field=what)
    return LoadedRunConfig(
        config=config,
        path=path,
        chunks=chunks,
        reference=reference,
        challengers=challengers,
        gold=gold,
        cache_dir=cache_dir,
        prices_file=prices_file,
    )


def _check_scoring(config: RunConfig, path: Path) -> None:
    """Field weights, thresholds and matcher are checked when the config loads (the run builds
    the same :class:`ScoringConfig` from them), so a bad weight fails before any work."""
    data: dict[str, Any] = {"matcher": config.matcher}
    if config.weights.fields is not None:
        data["weights"] = config.weights.fields
    if config.thresholds:
        data["thresholds"] = config.thresholds
    try:
        ScoringConfig.from_mapping(data, schema_version=config.schema_version)
    except ValidationError as exc:
        where, msg = first_validation_error(exc)
        raise InputError(msg, path=path, field=where or "weights.fields") from None
    except WeightError as exc:
        where = f"weights.fields.{exc.name}" if exc.name is not None else "weights.fields"
        raise InputError(str(exc), path=path, field=where) from None
    except ValueError as exc:
        raise InputError(str(exc), path=path, field="weights.fields") from None


def _source_file(base: Path, source: ModelSource, *, what: str, config_path: Path) -> Path | None:
    if source.file is None:
        return None
    return resolve_inside(base, source.file, what=what, config_path=config_path)
