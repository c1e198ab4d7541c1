"""ChatLedger: what breaks when you swap the model that extracts data from conversations.

The names below are loaded on first use, so ``chatledger --help`` (which imports this package)
does not pay for the schema models.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name in __all__ and name != "__version__":
        value = getattr(import_module("chatledger.core"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chatledger' has no attribute {name!r}")
