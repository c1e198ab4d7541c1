"""One raw model output against one document: reading the output (nothing repaired), when a
leaf value matches, and the per-document DOC / MK / MV / WV and F1 counts. Builds on ``dataset``.
"""

from chatledger.structbench.score._metrics import (
    CLEAN,
    KEY_F1_SHARE,
    MISSING,
    DocumentScore,
    score_document,
)
from chatledger.structbench.score._parse import (
    EMPTY,
    FENCED,
    MALFORMED,
    NO_JSON,
    SURROUNDING_PROSE,
    THINK_BLOCK,
    TRUNCATED,
    ParsedOutput,
    parse_output,
    strip_wrappers,
)
from chatledger.structbench.score._values import normalise_text, values_match

__all__ = [
    "CLEAN",
    "EMPTY",
    "FENCED",
    "KEY_F1_SHARE",
    "MALFORMED",
    "MISSING",
    "NO_JSON",
    "SURROUNDING_PROSE",
    "THINK_BLOCK",
    "TRUNCATED",
    "DocumentScore",
    "ParsedOutput",
    "normalise_text",
    "parse_output",
    "score_document",
    "strip_wrappers",
    "values_match",
]
