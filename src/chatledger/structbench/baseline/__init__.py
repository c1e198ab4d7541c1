"""The rule-based, no-model baseline: text readers (``_text``), list readers (``_lists``) and the
schema-walking extractor (``_extract``). Reads the spellings ``generate`` writes; builds on
``dataset``.
"""

from chatledger.structbench.baseline._extract import (
    BASELINE_MODEL,
    BASELINE_STRATEGY,
    baseline_predictions,
    extract_by_rules,
)

__all__ = ["BASELINE_MODEL", "BASELINE_STRATEGY", "baseline_predictions", "extract_by_rules"]
