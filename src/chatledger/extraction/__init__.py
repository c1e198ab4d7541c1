"""Extraction with language models and offline extractors: prompt styles and resumable,
accounted, locked extraction runs.

summary = extract_chunks("openai:gpt-5.2", read_chunks("chunks.jsonl"), "gpt-5.2.jsonl",
                         prompt_style="field-guide", samples=3, hub=ProviderHub(...))
summary = extract_chunks("offline:rules", read_chunks("chunks.jsonl"), "rules.jsonl")
"""

from chatledger.extraction._constraints import (
    ListBounds,
    SchemaConstraints,
    gold_list_bounds,
    list_bounds_from,
)
from chatledger.extraction._lines import (
    Fingerprint,
    ResumeState,
    chunk_hash,
    extraction_line,
    finished_lines,
    resume_state,
)
from chatledger.extraction._lock import lock_path, output_lock
from chatledger.extraction._offline import (
    OFFLINE_PROMPT_STYLE,
    is_offline_model,
    offline_extractors,
    offline_parameter_message,
    validate_model_id,
)
from chatledger.extraction._prompts import (
    PROMPT_STYLES,
    SCHEMA_NAME,
    ExampleStyle,
    FieldGuideStyle,
    PlainStyle,
    PromptStyle,
    bundled_example,
    extraction_output_schema,
    get_prompt_style,
    render_chunk,
)
from chatledger.extraction._run import (
    DEFAULT_MAX_TOKENS,
    ExtractionProgress,
    ExtractionSummary,
    ProgressCallback,
    aextract_chunks,
    endpoint_concurrency,
    extract_chunks,
    load_prices,
    schema_constraints_for,
    uses_strict_schema,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "OFFLINE_PROMPT_STYLE",
    "PROMPT_STYLES",
    "SCHEMA_NAME",
    "ExampleStyle",
    "ExtractionProgress",
    "ExtractionSummary",
    "FieldGuideStyle",
    "Fingerprint",
    "ListBounds",
    "PlainStyle",
    "ProgressCallback",
    "PromptStyle",
    "ResumeState",
    "SchemaConstraints",
    "aextract_chunks",
    "bundled_example",
    "chunk_hash",
    "endpoint_concurrency",
    "extract_chunks",
    "extraction_line",
    "extraction_output_schema",
    "finished_lines",
    "get_prompt_style",
    "gold_list_bounds",
    "is_offline_model",
    "list_bounds_from",
    "load_prices",
    "lock_path",
    "offline_extractors",
    "offline_parameter_message",
    "output_lock",
    "render_chunk",
    "resume_state",
    "schema_constraints_for",
    "uses_strict_schema",
    "validate_model_id",
]
