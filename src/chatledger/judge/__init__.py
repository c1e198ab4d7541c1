"""Layer 2: judges grade an extraction against the raw conversation (DESIGN.md §4)."""

from chatledger.judge._base import Judge
from chatledger.judge._grounding import JUDGES, GroundingJudge
from chatledger.judge._items import JUDGED_FIELDS, JudgedItem, judged_items, render_conversation
from chatledger.judge._llm import (
    JUDGE_SYSTEM,
    MODEL_JUDGES,
    JudgeUsage,
    LLMJudge,
    LLMJudgeOptions,
    ModelJudgeFactory,
    judge_prompt,
    verdict_output_schema,
)
from chatledger.judge._panel import (
    SCORE_NAMES,
    ChunkJudgement,
    aggregate_chunk,
    cohens_kappa,
    majority_label,
    panel_agreement,
)
from chatledger.judge._recorded import (
    RECORDED_JUDGE_PREFIX,
    RecordedVerdict,
    RecordingJudge,
    ReplayJudge,
    read_recorded,
    verdict_key,
    write_recorded,
)
from chatledger.judge._verdict import (
    ISSUE_LABELS,
    Graded,
    ItemLabel,
    ItemVerdict,
    Verdict,
    VerdictDigest,
)

__all__ = [
    "ISSUE_LABELS",
    "JUDGED_FIELDS",
    "JUDGES",
    "JUDGE_SYSTEM",
    "MODEL_JUDGES",
    "RECORDED_JUDGE_PREFIX",
    "SCORE_NAMES",
    "ChunkJudgement",
    "Graded",
    "GroundingJudge",
    "ItemLabel",
    "ItemVerdict",
    "Judge",
    "JudgeUsage",
    "JudgedItem",
    "LLMJudge",
    "LLMJudgeOptions",
    "ModelJudgeFactory",
    "RecordedVerdict",
    "RecordingJudge",
    "ReplayJudge",
    "Verdict",
    "VerdictDigest",
    "aggregate_chunk",
    "cohens_kappa",
    "judge_prompt",
    "judged_items",
    "majority_label",
    "panel_agreement",
    "read_recorded",
    "render_conversation",
    "verdict_key",
    "verdict_output_schema",
    "write_recorded",
]
