"""Reading conversations and extractions from disk."""

from chatledger.corpus._jsonl import (
    ExtractionFile,
    parse_extraction_line,
    read_chunks,
    read_extractions,
)

__all__ = ["ExtractionFile", "parse_extraction_line", "read_chunks", "read_extractions"]
