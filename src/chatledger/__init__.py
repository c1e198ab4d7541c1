"""ChatLedger: what breaks when you swap the model that extracts data from conversations."""

from chatledger.core import (
    ChatLedgerError,
    Chunk,
    Extraction,
    ExtractionRecord,
    ExtractionV1,
    ExtractionV3,
    InputError,
    Message,
    extraction_json_schema,
)

__version__ = "0.1.0"

__all__ = [
    "ChatLedgerError",
    "Chunk",
    "Extraction",
    "ExtractionRecord",
    "ExtractionV1",
    "ExtractionV3",
    "InputError",
    "Message",
    "__version__",
    "extraction_json_schema",
]
