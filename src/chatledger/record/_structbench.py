"""The record of a structbench run (``chatledger structbench run``): per (model, strategy) row
its DOC/MK/MV/WV and micro F1 with intervals, bad-output counts and usage; the comparisons."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from chatledger.record._common import Interval, RecordModel, RunRecordBase
from chatledger.stats import StrategyVsModel

METRICS = ("DOC", "MK", "MV", "WV", "micro_f1")


class DatasetInfo(RecordModel):
    path: str
    sha256: str
    format: str
    n_documents: int
    by_depth: dict[str, int]


class StructbenchSettings(RecordModel):
    resamples: int
    resamples_requested: int
    confidence: float
    seed: int
    ranking_metric: str
    drilldown_per_row: int


class PredictionFileInfo(RecordModel):
    path: str
    sha256: str
    lines: int
    unknown_ids: int
    rows: list[str]


class DepthScores(RecordModel):
    DOC: float
    MK: float
    MV: float
    WV: float
    n: int


class MetricIntervals(RecordModel):
    DOC: Interval | None = None
    MK: Interval | None = None
    MV: Interval | None = None
    WV: Interval | None = None
    micro_f1: Interval | None = None
    n_resamples: int | None = None

    def get(self, metric: str) -> Interval | None:
        value = getattr(self, metric, None)
        return value if isinstance(value, Interval) else None


class StructbenchUsage(RecordModel):
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    calls: float = 0.0
    documents_with_usage: float = 0.0
    cost_per_document_usd: float = 0.0
    latency_per_document_s: float = 0.0
    tokens_per_document: float = 0.0


class StructbenchRow(RecordModel):
    """One (model, strategy) row of the leaderboard."""

    name: str
    model: str | None = None
    strategy: str | None = None
    predictions_file: str
    predictions: int
    DOC: float
    MK: float
    MV: float
    WV: float
    n: int
    by_depth: dict[str, DepthScores] = Field(default_factory=dict)
    micro_f1: float
    f1_keys: float
    f1_values: float
    intervals: MetricIntervals = Field(default_factory=MetricIntervals)
    bad_output_counts: dict[str, int] = Field(default_factory=dict)
    clean_outputs: int = 0
    usage: StructbenchUsage | None = None

    def metric(self, name: str) -> float:
        value = getattr(self, name)
        assert isinstance(value, float | int)
        return float(value)


class StrategyCell(RecordModel):
    DOC: float
    MK: float
    MV: float
    WV: float
    micro_f1: float
    n: int


class PairRow(RecordModel):
    a: str
    b: str
    difference: float
    low: float | None = None
    high: float | None = None
    p_value: float | None = None


class PairedDifferences(RecordModel):
    metric: str
    pairs: list[PairRow] = Field(default_factory=list)


class GridPair(RecordModel):
    """Two cells of the models × strategies grid, paired over the same documents.

    ``kind`` strategy: two strategies of one model (``within`` names the model); model: two
    models under one strategy (``within`` names the strategy)."""

    kind: Literal["strategy", "model"]
    within: str
    a: str
    b: str
    difference: float  # mean metric(a) − metric(b)
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    decided: bool = False  # the interval excludes 0
    # Documents a paired test would need to show this difference with the stated power at the
    # run's level (the per-document sd of this sample as the pilot); None: no difference.
    documents_needed: int | None = None


class GridPairs(RecordModel):
    metric: str
    documents: int
    confidence: float
    power: float
    pairs: list[GridPair] = Field(default_factory=list)


class RankProbabilities(RecordModel):
    metric: str
    rows: dict[str, list[float]] = Field(default_factory=dict)


class StructbenchRun(RunRecordBase):
    """``run.json`` of ``chatledger structbench run`` (task ``structbench``)."""

    task: Literal["structbench"] = "structbench"
    dataset: DatasetInfo
    n: int
    settings: StructbenchSettings
    prediction_files: list[PredictionFileInfo] = Field(default_factory=list)
    leaderboard: list[str] = Field(default_factory=list)
    models: list[StructbenchRow]
    by_strategy: dict[str, dict[str, StrategyCell]] = Field(default_factory=dict)
    paired_differences: PairedDifferences
    rank_probabilities: RankProbabilities
    strategy_vs_model: StrategyVsModel | None = None
    grid_pairs: GridPairs | None = None
