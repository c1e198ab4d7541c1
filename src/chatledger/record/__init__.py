"""The run record: what a run produces, as typed, versioned classes that write ``run.json`` and
read it back (``schema_version`` 3; version 2 reads as it is, version 1 is upgraded on reading)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger._lazy import lazy_attributes
from chatledger.record._common import (
    RUN_FILE,
    SCHEMA_VERSION,
    InputFile,
    Interval,
    PairedDifference,
    RunRecordBase,
    StageRecord,
)
from chatledger.record._conversation import (
    CalibrationBin,
    ConversationRun,
    FieldCounts,
    GoldScores,
    HumanGold,
    HumanGoldSample,
    JudgeInfo,
    JudgeSummary,
    LayerSimplex,
    ModelCallsInfo,
    ModelResult,
    ReferenceInfo,
    RepeatVariance,
    RunStats,
    ScoringSettings,
    Sensitivity,
    SimplexPoint,
    Usage,
    WeightSensitivity,
)
from chatledger.record._read import parse_run_record, read_run_record

if TYPE_CHECKING:
    from chatledger.record._read import RunRecord
    from chatledger.record._structbench import (
        METRICS,
        DatasetInfo,
        DepthScores,
        GridPair,
        GridPairs,
        MetricIntervals,
        PairedDifferences,
        PairRow,
        PredictionFileInfo,
        RankProbabilities,
        StrategyCell,
        StructbenchRow,
        StructbenchRun,
        StructbenchSettings,
        StructbenchUsage,
    )
    from chatledger.record._what_breaks import (
        WHAT_BREAKS_FILE,
        SwitchComparison,
        SwitchFigure,
        WhatBreaks,
    )

# Loaded on first use (name → module): a reader of a conversation run (gate, stats, report)
# builds none of the structbench or what-breaks record classes.
_WHERE = {
    "RunRecord": "_read",
    **dict.fromkeys(
        (
            "METRICS",
            "DatasetInfo",
            "DepthScores",
            "GridPair",
            "GridPairs",
            "MetricIntervals",
            "PairedDifferences",
            "PairRow",
            "PredictionFileInfo",
            "RankProbabilities",
            "StrategyCell",
            "StructbenchRow",
            "StructbenchRun",
            "StructbenchSettings",
            "StructbenchUsage",
        ),
        "_structbench",
    ),
    **dict.fromkeys(
        ("WHAT_BREAKS_FILE", "SwitchComparison", "SwitchFigure", "WhatBreaks"), "_what_breaks"
    ),
}

__all__ = [
    "METRICS",
    "RUN_FILE",
    "SCHEMA_VERSION",
    "WHAT_BREAKS_FILE",
    "CalibrationBin",
    "ConversationRun",
    "DatasetInfo",
    "DepthScores",
    "FieldCounts",
    "GoldScores",
    "GridPair",
    "GridPairs",
    "HumanGold",
    "HumanGoldSample",
    "InputFile",
    "Interval",
    "JudgeInfo",
    "JudgeSummary",
    "LayerSimplex",
    "MetricIntervals",
    "ModelCallsInfo",
    "ModelResult",
    "PairRow",
    "PairedDifference",
    "PairedDifferences",
    "PredictionFileInfo",
    "RankProbabilities",
    "ReferenceInfo",
    "RepeatVariance",
    "RunRecord",
    "RunRecordBase",
    "RunStats",
    "ScoringSettings",
    "Sensitivity",
    "SimplexPoint",
    "StageRecord",
    "StrategyCell",
    "StructbenchRow",
    "StructbenchRun",
    "StructbenchSettings",
    "StructbenchUsage",
    "SwitchComparison",
    "SwitchFigure",
    "Usage",
    "WeightSensitivity",
    "WhatBreaks",
    "parse_run_record",
    "read_run_record",
]


__getattr__ = lazy_attributes(__name__, _WHERE, globals())
