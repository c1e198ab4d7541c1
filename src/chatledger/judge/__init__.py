"""Layer 2: judges grade an extraction against the raw conversation (DESIGN.md §4)."""

from chatledger.judge._base import Judge
from chatledger.judge._grounding import JUDGES, GroundingJudge
from chatledger.judge._items import JUDGED_FIELDS, JudgedItem, judged_items, render_conversation
from chatledger.judge._panel import (
    SCORE_NAMES,
    ChunkJudgement,
    aggregate_chunk,
    cohens_kappa,
    majority_label,
    panel_agreement,
)
from chatledger.judge._verdict import ISSUE_LABELS, ItemVerdict, Verdict

__all__ = [
    "ISSUE_LABELS",
    "JUDGED_FIELDS",
    "JUDGES",
    "SCORE_NAMES",
    "ChunkJudgement",
    "GroundingJudge",
    "ItemVerdict",
    "Judge",
    "JudgedItem",
    "Verdict",
    "aggregate_chunk",
    "cohens_kappa",
    "judged_items",
    "majority_label",
    "panel_agreement",
    "render_conversation",
]
