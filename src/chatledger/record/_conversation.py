"""The record of a conversation run (``chatledger run``): per model its layer results and usage,
the run-level statistics, human gold, and provenance. Written as ``run.json``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from chatledger.record._common import Interval, PairedDifference, RecordModel, RunRecordBase
from chatledger.record._judge_audit import JudgeAudit
from chatledger.scoring import DegenerateOutputs


class Usage(RecordModel):
    """Tokens, dollars and latency of one model's scored extractions (sample 0)."""

    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cost_per_chunk_usd: float = 0.0
    latency_per_chunk_s: float = 0.0
    cached_chunks: float = 0.0
    # Only when the file holds repeated samples (their cost is not part of the scored usage).
    repeat_samples_cost_usd: float | None = None
    repeat_samples_tokens: float | None = None


class CalibrationBin(RecordModel):
    low: float
    high: float
    n: float
    confidence: float
    accuracy: float


class JudgeSummary(RecordModel):
    """Layer 2 of one model: the panel's composite and what it counted."""

    composite: float
    unscored: dict[str, int] = Field(default_factory=dict)
    unusable_chunks: int = 0
    per_judge: dict[str, float] = Field(default_factory=dict)
    label_counts: dict[str, int] = Field(default_factory=dict)
    # α per score and for labels, pairwise κ (judge.panel_agreement); empty for one judge.
    agreement: dict[str, JsonValue] = Field(default_factory=dict)


class FieldCounts(RecordModel):
    """What stands behind a field's score: items matched (entities: their credit), in the
    reference and predicted, over all chunks; the usable chunks where both sides are empty;
    the chunks that score the field; both aggregates (``micro``: precision, recall, f1, the
    pooled pair components and ``score``; only ``score`` for fields without item lists)."""

    n_matched: float | None = 0.0  # None: the field matches no items (summary, emotional_arc)
    n_reference: int = 0
    n_predicted: int = 0
    # Set fields count distinct keys: what they count, and the items each side listed.
    counted_as: str | None = None
    n_reference_items: int | None = None
    n_predicted_items: int | None = None
    both_empty: int = 0
    chunks: int = 0
    macro: float = 0.0
    micro: dict[str, float] = Field(default_factory=dict)


Aggregate = Literal["macro", "micro"]


class ModelResult(RecordModel):
    """One challenger: its layers, fields, consumers, validity, usage and diagnostics."""

    name: str
    file: str
    configured_file: str | None = None  # as the config wrote it (relative to the config)
    overall: float
    layers: dict[str, float]
    layer_weights_used: dict[str, float]
    fields: dict[str, float] = Field(default_factory=dict)
    consumers: dict[str, float] = Field(default_factory=dict)
    chunks: int
    invalid: int
    missing: int
    validity_rate: float
    usage: Usage = Field(default_factory=Usage)
    judge: JudgeSummary | None = None
    calibration: list[CalibrationBin] = Field(default_factory=list)
    field_components: dict[str, dict[str, float]] = Field(default_factory=dict)
    degenerate: DegenerateOutputs | None = None
    problems: list[str] = Field(default_factory=list)
    field_counts: dict[str, FieldCounts] = Field(default_factory=dict)
    aggregate: Aggregate = "macro"  # the per-field figure the extraction composite used
    # Layers left out of this model's overall, each with the reason ("downstream": "no
    # events"), the weights renormalised over the rest (layer_weights_used), and the line
    # saying so (scoring.combine); consumers left out of the downstream layer likewise.
    left_out: dict[str, str] = Field(default_factory=dict)
    renormalisation: str | None = None
    consumers_left_out: dict[str, str] = Field(default_factory=dict)
    downstream_renormalisation: str | None = None


class ReferenceInfo(RecordModel):
    name: str
    file: str
    configured_file: str | None = None
    model: str | None = None
    problems: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


class Sensitivity(RecordModel):
    """Rankings under Dirichlet-perturbed weights (stats.dirichlet_sensitivity)."""

    models: list[str]
    configured_ranking: list[str]
    kendall_tau_mean: float
    kendall_tau_quantiles: dict[str, float]
    p_same_ranking: float
    swap_probability: dict[str, float]
    n_draws: int
    concentration: float


class SimplexPoint(RecordModel):
    weights: dict[str, float]
    ranking: list[str]
    holds: bool


class LayerSimplex(RecordModel):
    layers: list[str]
    step: float
    configured_ranking: list[str]
    points: list[SimplexPoint]
    share_holding: float


class WeightSensitivity(RecordModel):
    fields: Sensitivity | None = None
    layers: Sensitivity | None = None
    layer_simplex: LayerSimplex | None = None


class RepeatVariance(RecordModel):
    mean: float
    chunk_sd_mean: float
    samples: int
    sampling_share: float
    against: str | None = None
    chunks: int | None = None
    per_sample_mean: list[float] = Field(default_factory=list)


class RunStats(RecordModel):
    """DESIGN.md §7: intervals (per model, keyed ``overall``, a layer, or ``extraction.<field>``),
    paired differences of the overall (keyed ``a|b``), rank probabilities, weight sensitivity."""

    n_chunks: int
    bootstrap_resamples: int
    confidence: float
    seed: int
    n_conversations: int | None = None
    # What each kind of interval resamples: "chunks" or "conversations" (cluster bootstrap).
    resampling: dict[str, str] = Field(default_factory=dict)
    # The unit of inference ("conversation" by default, "chunk" on request) and how many;
    # the interval method and the fewest units it is given for; below that, ``too_few`` is
    # what is shown instead of intervals ("too few conversations to tell (k = 3)"). Fields
    # with fewer reference items than ``few_items_threshold`` have no interval and are
    # listed in ``few_items`` (model → field → reference items). None/empty: an older run.
    unit: str | None = None
    n_units: int | None = None
    interval_method: str | None = None
    min_units: int | None = None
    too_few: str | None = None
    few_items_threshold: int | None = None
    few_items: dict[str, dict[str, int]] = Field(default_factory=dict)
    # Fields whose matched (or unmatched) items lie in fewer than two units: no interval,
    # model → field → what is shown instead ("matches in 1 conversation").
    concentrated: dict[str, dict[str, str]] = Field(default_factory=dict)
    intervals: dict[str, dict[str, Interval]] = Field(default_factory=dict)
    paired_differences: dict[str, PairedDifference] = Field(default_factory=dict)
    rank_probabilities: dict[str, list[float]] = Field(default_factory=dict)
    weight_sensitivity: WeightSensitivity = Field(default_factory=WeightSensitivity)
    repeat_variance: dict[str, RepeatVariance] = Field(default_factory=dict)

    def interval(self, model: str, key: str) -> Interval | None:
        return self.intervals.get(model, {}).get(key)

    def unit_label(self) -> str:
        """ "conversations (k = 6)" — what the intervals resampled, and how many."""
        if self.unit == "chunk":
            return f"chunks (n = {self.n_chunks}; downstream and overall: conversations)"
        k = self.n_units if self.n_units is not None else self.n_conversations
        return f"conversations (k = {k})"

    def why_no_interval(self, model: str, key: str) -> str | None:
        """Why ``key`` of ``model`` has no interval: too few conversations, or a field with
        few reference items ("few items (n = 5)"), or one whose matches (or misses) lie in one
        conversation; None when it has one or no reason is recorded."""
        if self.interval(model, key) is not None:
            return None
        name = key.partition(".")[2]
        if name and name in self.few_items.get(model, {}):
            return f"few items (n = {self.few_items[model][name]})"
        if name and name in self.concentrated.get(model, {}):
            return f"{self.concentrated[model][name]}: too few to tell"
        return self.too_few


class GoldScores(RecordModel):
    composite: float
    fields: dict[str, float]
    chunks: int
    aggregate: Aggregate = "macro"
    field_counts: dict[str, FieldCounts] = Field(default_factory=dict)


class HumanGold(RecordModel):
    """How far the reference and each challenger are from human gold (``gold:`` in the config)."""

    gold: str
    reference: GoldScores
    models: dict[str, GoldScores]


class HumanGoldSample(RecordModel):
    """A bundled human-annotated corpus scored alongside the run (the demo's AMI and CaSiNo)."""

    corpus: str
    model: str
    chunks: int
    composite: float
    fields: dict[str, float]
    aggregate: Aggregate = "macro"
    field_counts: dict[str, FieldCounts] = Field(default_factory=dict)


class JudgeInfo(RecordModel):
    """A judge's spec (rebuilt by name from it), and for a model judge what it cost."""

    name: str
    family: str
    model: str | None = None
    usage: dict[str, JsonValue] | None = None


class ModelCallsInfo(RecordModel):
    budget_usd: float | None = None
    spent_usd: float | None = None
    live_calls: int | None = None
    cached_calls: int | None = None
    cache: str | None = None


class ScoringSettings(RecordModel):
    """How layer 1 paired items (the report's drill-down shows exactly the pairs it scored)."""

    extraction_schema: Literal["v1", "v3"] = "v3"
    matcher: str = "token_set"
    thresholds: dict[str, float] = Field(default_factory=dict)

    @classmethod
    def from_config(cls, config: dict[str, JsonValue]) -> ScoringSettings:
        """The settings of the run's config as loaded (``schema``, ``matcher``, ``thresholds``),
        for a record written without :attr:`ConversationRun.scoring`."""
        data: dict[str, JsonValue] = {"extraction_schema": config.get("schema") or "v3"}
        if config.get("matcher"):
            data["matcher"] = config["matcher"]
        if config.get("thresholds"):
            data["thresholds"] = config["thresholds"]
        return cls.model_validate(data)


class ConversationRun(RunRecordBase):
    """``run.json`` of ``chatledger run`` (task ``conversation``)."""

    task: Literal["conversation"] = "conversation"
    # The config as loaded, for provenance only: readers use the typed fields below.
    config: dict[str, JsonValue] = Field(default_factory=dict)
    config_path: str | None = None
    chunks: int
    chunks_file: str
    chunks_configured: str | None = None
    reference: ReferenceInfo
    layers_run: list[str]
    layer_weights_used: dict[str, float]
    renormalisation: str | None = None
    notes: list[str] = Field(default_factory=list)
    leaderboard: list[str] = Field(default_factory=list)
    models: list[ModelResult]
    stats: RunStats | None = None
    human_gold: HumanGold | None = None
    peak_memory_mb: float | None = None
    judges: list[JudgeInfo] = Field(default_factory=list)
    # The judges' audit against known truth (issue 28): the mode (strict | warn | off; None in
    # a record written before it), each judge's audit, and the judges the panel left out
    # (strict) with why. A judge layer that left ``overall`` says so in each model's left_out.
    judge_audit: str | None = None
    judge_audits: list[JudgeAudit] = Field(default_factory=list)
    judges_left_out: dict[str, str] = Field(default_factory=dict)
    model_calls: ModelCallsInfo | None = None
    # The reference is human annotation: its lines carry ``covers`` (partial gold), or the
    # demo's hand-written gold.
    reference_is_human: bool = False
    human_gold_samples: list[HumanGoldSample] = Field(default_factory=list)
    # Added for the report (optional): the schema, matcher and thresholds layer 1 used. A
    # record without it falls back to ``config`` (scoring_settings).
    scoring: ScoringSettings | None = None
    # Version 4: the chunks in run order and the conversation of each (the units a paired
    # bootstrap of two runs draws), and the weights the composites used (so the figures can be
    # recomputed from the stages' per-unit statistics). Empty in a record of an older version.
    chunk_ids: list[str] = Field(default_factory=list)
    chunk_conversations: list[str] = Field(default_factory=list)
    field_weights: dict[str, float] = Field(default_factory=dict)
    scored_fields: list[str] = Field(default_factory=list)  # the composite's fields, in order
    consumer_weights: dict[str, float] = Field(default_factory=dict)

    def scoring_settings(self) -> ScoringSettings:
        """The schema, matcher and thresholds of the run: as recorded, else from its config."""
        return (
            self.scoring if self.scoring is not None else ScoringSettings.from_config(self.config)
        )

    @property
    def model_names(self) -> list[str]:
        """Models in leaderboard order (best first), then any the leaderboard does not list."""
        names = [m.name for m in self.models]
        order = [n for n in self.leaderboard if n in names]
        return order + [n for n in names if n not in order]

    def model(self, name: str) -> ModelResult:
        return next(m for m in self.models if m.name == name)
