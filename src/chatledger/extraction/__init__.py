"""Extraction with language models: prompt styles and resumable, accounted extraction runs.

summary = extract_chunks("openai:gpt-5.2", read_chunks("chunks.jsonl"), "gpt-5.2.jsonl",
                         prompt_style="field-guide", samples=3, hub=ProviderHub(...))
"""

from chatledger.extraction._lines import extraction_line, finished_lines
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
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "PROMPT_STYLES",
    "SCHEMA_NAME",
    "ExampleStyle",
    "ExtractionProgress",
    "ExtractionSummary",
    "FieldGuideStyle",
    "PlainStyle",
    "ProgressCallback",
    "PromptStyle",
    "aextract_chunks",
    "bundled_example",
    "endpoint_concurrency",
    "extract_chunks",
    "extraction_line",
    "extraction_output_schema",
    "finished_lines",
    "get_prompt_style",
    "load_prices",
    "render_chunk",
]
