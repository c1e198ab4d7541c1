"""Dependency-free types of ChatLedger: chunks, extraction schema, records, field table.

The pydantic classes of chunks, extraction records and the extraction schema are loaded on
first use (:data:`_WHERE`): building them is most of what importing this package costs, and
a reader of a finished run (``gate``, ``stats``) reads no chunk and no extraction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger._lazy import lazy_attributes

if TYPE_CHECKING:
    from chatledger.core._chunk import LONG_CHUNK_MESSAGES, Chunk, Message, long_chunk_note
    from chatledger.core._record import (
        RECORDED_PREFIX,
        ExtractionRecord,
        Problem,
        RecordStatus,
        Usage,
    )
    from chatledger.core._schema import (
        SCHEMA_MODELS,
        ActionItem,
        Assumption,
        Claim,
        Decision,
        EmotionalArc,
        Entity,
        Extraction,
        ExtractionV1,
        ExtractionV3,
        Link,
        NegotiationMove,
        OpenQuestion,
        Phase,
        QAPair,
        ToneReading,
        TurningPoint,
        WarningItem,
        extraction_json_schema,
    )

from chatledger.core._errors import (
    ChatLedgerError,
    EnvironmentFault,
    InputError,
    Interrupted,
    first_validation_error,
)
from chatledger.core._extras import EXTRAS, MissingExtraError, missing_modules, require_extra
from chatledger.core._fields import (
    CONFIDENCE_FIELDS,
    FIELDS_V1,
    FIELDS_V3,
    SCHEMA_FIELDS,
    SCHEMA_WEIGHTS,
    WEIGHTS_V1,
    WEIGHTS_V3,
)
from chatledger.core._files import (
    atomic_path,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    atomic_writer,
    check_output_file,
    describe_os_error,
    dumps_json,
    file_sha256,
    iter_json,
    prepare_output_dir,
    resolve_inside,
    strict_json,
)
from chatledger.core._registry import PluginError, Registry
from chatledger.core._vocabulary import DEFAULT_VOCABULARY, Vocabulary

__all__ = [
    "CONFIDENCE_FIELDS",
    "DEFAULT_VOCABULARY",
    "EXTRAS",
    "FIELDS_V1",
    "FIELDS_V3",
    "LONG_CHUNK_MESSAGES",
    "RECORDED_PREFIX",
    "SCHEMA_FIELDS",
    "SCHEMA_MODELS",
    "SCHEMA_WEIGHTS",
    "WEIGHTS_V1",
    "WEIGHTS_V3",
    "ActionItem",
    "Assumption",
    "ChatLedgerError",
    "Chunk",
    "Claim",
    "Decision",
    "EmotionalArc",
    "Entity",
    "EnvironmentFault",
    "Extraction",
    "ExtractionRecord",
    "ExtractionV1",
    "ExtractionV3",
    "InputError",
    "Interrupted",
    "Link",
    "Message",
    "MissingExtraError",
    "NegotiationMove",
    "OpenQuestion",
    "Phase",
    "PluginError",
    "Problem",
    "QAPair",
    "RecordStatus",
    "Registry",
    "ToneReading",
    "TurningPoint",
    "Usage",
    "Vocabulary",
    "WarningItem",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "atomic_writer",
    "check_output_file",
    "describe_os_error",
    "dumps_json",
    "extraction_json_schema",
    "file_sha256",
    "first_validation_error",
    "iter_json",
    "long_chunk_note",
    "missing_modules",
    "prepare_output_dir",
    "require_extra",
    "resolve_inside",
    "strict_json",
]


# Loaded on first use (name → module); tests/test_cli_lazy.py holds it to the modules.
_WHERE = {
    **dict.fromkeys(("LONG_CHUNK_MESSAGES", "Chunk", "Message", "long_chunk_note"), "_chunk"),
    **dict.fromkeys(
        ("RECORDED_PREFIX", "ExtractionRecord", "Problem", "RecordStatus", "Usage"), "_record"
    ),
    **dict.fromkeys(
        (
            "SCHEMA_MODELS",
            "ActionItem",
            "Assumption",
            "Claim",
            "Decision",
            "EmotionalArc",
            "Entity",
            "Extraction",
            "ExtractionV1",
            "ExtractionV3",
            "Link",
            "NegotiationMove",
            "OpenQuestion",
            "Phase",
            "QAPair",
            "ToneReading",
            "TurningPoint",
            "WarningItem",
            "extraction_json_schema",
        ),
        "_schema",
    ),
}


__getattr__ = lazy_attributes(__name__, _WHERE, globals())
