"""The seeded email generator: the kind interface and registry (``_kind``), schema builders,
invented names and places, how values are written in the text (``_surface``), the email kinds
themselves (``kinds/``, each registers on import) and the driver (``_generate``).
Builds on ``dataset``.
"""

from chatledger.structbench.generate._generate import (
    DATASET_VERSION,
    DEFAULT_SEED,
    generate_document,
    generate_documents,
)
from chatledger.structbench.generate._kind import DEPTHS, EMAIL_KINDS, EmailKind
from chatledger.structbench.generate._surface import (
    MONTHS,
    NUMBER_WORDS,
    value_in_text,
    values_missing_from_text,
)

__all__ = [
    "DATASET_VERSION",
    "DEFAULT_SEED",
    "DEPTHS",
    "EMAIL_KINDS",
    "MONTHS",
    "NUMBER_WORDS",
    "EmailKind",
    "generate_document",
    "generate_documents",
    "value_in_text",
    "values_missing_from_text",
]
