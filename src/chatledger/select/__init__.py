"""Schema selection (DESIGN.md §9, issue 16): screening candidate fields from repeated runs.

So far the registry of the 25 candidate fields (``_candidates``) and Phase 1's four metrics
and their composite (``_metrics``); the repeated extractions, prompt-variant search,
tournament and validation build on them.
"""

from chatledger.select._candidates import (
    CANDIDATES,
    TIERS,
    Candidate,
    Tier,
    candidates,
    proven_texts,
)
from chatledger.select._metrics import (
    DEFAULT_WEIGHTS,
    PASS_MARK,
    Screening,
    consistency,
    discrimination,
    information_gain,
    redundancy,
    text_set_f1,
)
from chatledger.select._screen import (
    SIMULATED_LABEL,
    ChunkRuns,
    ScreenSettings,
    screen,
    simulate_runs,
)
from chatledger.select._tournament import (
    Entry,
    TournamentResult,
    Validation,
    tournament,
    validate,
)
from chatledger.select._variants import (
    CONSISTENCY_FLOOR,
    PromptVariant,
    VariantSearch,
    example_item,
    needs_variants,
    prompt_variants,
    search_variants,
)
from chatledger.select._weights import V1_SHARE, DerivedWeights, derive_weights

__all__ = [
    "CANDIDATES",
    "CONSISTENCY_FLOOR",
    "DEFAULT_WEIGHTS",
    "PASS_MARK",
    "SIMULATED_LABEL",
    "TIERS",
    "V1_SHARE",
    "Candidate",
    "ChunkRuns",
    "DerivedWeights",
    "Entry",
    "PromptVariant",
    "ScreenSettings",
    "Screening",
    "Tier",
    "TournamentResult",
    "Validation",
    "VariantSearch",
    "candidates",
    "consistency",
    "derive_weights",
    "discrimination",
    "example_item",
    "information_gain",
    "needs_variants",
    "prompt_variants",
    "proven_texts",
    "redundancy",
    "screen",
    "search_variants",
    "simulate_runs",
    "text_set_f1",
    "tournament",
    "validate",
]
