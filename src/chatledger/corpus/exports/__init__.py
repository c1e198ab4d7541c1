"""Chat exports in: WhatsApp, Telegram, Slack, Discord, iMessage, Messenger, Signal and CSV
exports read into chunks (``chatledger corpus import KIND PATH --out DIR``), with chunking,
aliases and pseudonymisation; ``reveal`` undoes the pseudonyms in an extraction.

    from chatledger.corpus.exports import ImportOptions, import_chat_export

    summary = import_chat_export("WhatsApp Chat with Ness.zip", "corpus/", ImportOptions())
"""

from chatledger.corpus.exports import _formats as _formats  # registers the readers
from chatledger.corpus.exports._chunking import (
    DEFAULT_GAP,
    DEFAULT_MAX_MESSAGES,
    ChunkingOptions,
    parse_duration,
)
from chatledger.corpus.exports._model import (
    Conversation,
    CsvMapping,
    ExportMessage,
    ReadContext,
    SkipLog,
)
from chatledger.corpus.exports._names import NameCandidate, aliases_file
from chatledger.corpus.exports._pipeline import (
    CHUNKS_FILE,
    ExportSummary,
    ImportOptions,
    default_key_path,
    detect_kind,
    import_chat_export,
    preview_names,
)
from chatledger.corpus.exports._pseudonyms import MAP_FILE, Pseudonymiser, PseudonymMap
from chatledger.corpus.exports._reader import EXPORT_READERS, ExportReader
from chatledger.corpus.exports._reveal import RevealSummary, reveal_file
from chatledger.corpus.exports._source import Decoding, ExportSource

__all__ = [
    "CHUNKS_FILE",
    "DEFAULT_GAP",
    "DEFAULT_MAX_MESSAGES",
    "EXPORT_READERS",
    "MAP_FILE",
    "ChunkingOptions",
    "Conversation",
    "CsvMapping",
    "Decoding",
    "ExportMessage",
    "ExportReader",
    "ExportSource",
    "ExportSummary",
    "ImportOptions",
    "NameCandidate",
    "PseudonymMap",
    "Pseudonymiser",
    "ReadContext",
    "RevealSummary",
    "SkipLog",
    "aliases_file",
    "default_key_path",
    "detect_kind",
    "import_chat_export",
    "parse_duration",
    "preview_names",
    "reveal_file",
]
