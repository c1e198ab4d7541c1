"""Schema selection (DESIGN.md §9, issue 16): which fields a schema should have, chosen by the
pipeline that chose v3 — Phase 1 screens 25 candidate fields from repeated extractions on four
metrics, Phase 1.5 searches prompt variants for the inconsistent survivors, Phase 2 runs a
tournament of candidate schemas × prompt styles pruned by successive halving, Phase 3 validates
the winner against the runner-up with bootstrap intervals, and the weights follow by rule.

    loaded = load_select_config("select.yaml")
    record = run_selection(loaded, Path("select"))   # resumable; writes selection.json …
"""

from chatledger.select._candidates import (
    CANDIDATES,
    TIERS,
    Candidate,
    Tier,
    candidates,
    proven_texts,
)
from chatledger.select._config import (
    LoadedSelectConfig,
    SelectConfig,
    load_select_config,
)
from chatledger.select._extractors import (
    ModelExtractor,
    RecordedExtractor,
    SelectionExtractor,
    SimulatedExtractor,
    UnitRequest,
)
from chatledger.select._metrics import (
    DEFAULT_WEIGHTS,
    PASS_MARK,
    REDUNDANCY_FLOOR,
    Screening,
    consistency,
    discrimination,
    information_gain,
    redundancy,
    sentence_embedder,
    text_set_f1,
)
from chatledger.select._pipeline import Selection, run_selection, spread
from chatledger.select._prompt import STYLES, FieldAsk, fields_schema, system_text
from chatledger.select._record import (
    PHASES,
    RECORD_FILE,
    REPORT_FILE,
    SCREENING_TABLE,
    TOURNAMENT_TABLE,
    UNITS_FILE,
    WEIGHTS_FILE,
    Phase,
    ScreenRow,
    SelectionRecord,
    TournamentRow,
    TournamentSummary,
    UnitLine,
    Usage,
    ValidationSummary,
    VariantRow,
    WeightsSummary,
)
from chatledger.select._schemas import candidate_schemas
from chatledger.select._screen import (
    ChunkRuns,
    ScreenSettings,
    screen,
    simulate_runs,
)
from chatledger.select._simulated import (
    FIELD_NOISE,
    SIMULATED_LABEL,
    simulate_extraction,
    simulated_truth,
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
    "FIELD_NOISE",
    "PASS_MARK",
    "PHASES",
    "RECORD_FILE",
    "REDUNDANCY_FLOOR",
    "REPORT_FILE",
    "SCREENING_TABLE",
    "SIMULATED_LABEL",
    "STYLES",
    "TIERS",
    "TOURNAMENT_TABLE",
    "UNITS_FILE",
    "V1_SHARE",
    "WEIGHTS_FILE",
    "Candidate",
    "ChunkRuns",
    "DerivedWeights",
    "Entry",
    "FieldAsk",
    "LoadedSelectConfig",
    "ModelExtractor",
    "Phase",
    "PromptVariant",
    "RecordedExtractor",
    "ScreenRow",
    "ScreenSettings",
    "Screening",
    "SelectConfig",
    "Selection",
    "SelectionExtractor",
    "SelectionRecord",
    "SimulatedExtractor",
    "Tier",
    "TournamentResult",
    "TournamentRow",
    "TournamentSummary",
    "UnitLine",
    "UnitRequest",
    "Usage",
    "Validation",
    "ValidationSummary",
    "VariantRow",
    "VariantSearch",
    "WeightsSummary",
    "candidate_schemas",
    "candidates",
    "consistency",
    "derive_weights",
    "discrimination",
    "example_item",
    "fields_schema",
    "information_gain",
    "load_select_config",
    "needs_variants",
    "prompt_variants",
    "proven_texts",
    "redundancy",
    "run_selection",
    "screen",
    "search_variants",
    "sentence_embedder",
    "simulate_extraction",
    "simulate_runs",
    "simulated_truth",
    "spread",
    "system_text",
    "text_set_f1",
    "tournament",
    "validate",
]
