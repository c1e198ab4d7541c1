"""ChatLedger: what breaks when you swap the model that extracts data from conversations.

    import chatledger as cl

    report = cl.score("gold.jsonl", "cheap.jsonl", "chunks.jsonl")   # layer 1, field by field
    record = cl.run("run.yaml", out="runs/today")                    # every layer: run.json
    verdict = cl.gate("runs/main", "runs/today", rules="gate.yaml")  # a regression gate

The names below are loaded on first use, so ``chatledger --help`` (which imports this package)
does not pay for the schema models.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatledger._api import gate, run, score
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
    from chatledger.gating import GateResult
    from chatledger.record import ConversationRun, read_run_record
    from chatledger.scoring import ScoreReport

from chatledger._version import __version__

__all__ = [
    "ChatLedgerError",
    "Chunk",
    "ConversationRun",
    "Extraction",
    "ExtractionRecord",
    "ExtractionV1",
    "ExtractionV3",
    "GateResult",
    "InputError",
    "Message",
    "ScoreReport",
    "__version__",
    "extraction_json_schema",
    "gate",
    "read_run_record",
    "run",
    "score",
]

# name → the module that defines it (the rest are chatledger.core's)
_WHERE = {
    "ConversationRun": "chatledger.record",
    "GateResult": "chatledger.gating",
    "ScoreReport": "chatledger.scoring",
    "gate": "chatledger._api",
    "read_run_record": "chatledger.record",
    "run": "chatledger._api",
    "score": "chatledger._api",
}


def __getattr__(name: str) -> Any:
    if name in __all__ and name != "__version__":
        value = getattr(import_module(_WHERE.get(name, "chatledger.core")), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chatledger' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The lazy names too, so ``dir(chatledger)``, tab completion and ``help(chatledger)``
    show ``score``, ``run``, ``gate`` and the types (``help`` then loads them)."""
    return sorted({name for name in globals() if name.startswith("__")} | set(__all__))
