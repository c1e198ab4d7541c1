"""What a benchmark document is and how it is stored: JSON leaf paths, schema validation, path
weights, :class:`Document` / :class:`Example` / :class:`Prediction`, the dataset and predictions
JSON Lines files and the original LLMStructBench layout. Depends on no other part of structbench.
"""

from chatledger.structbench.dataset._document import Document, Example, Prediction
from chatledger.structbench.dataset._io import (
    document_from_dict,
    read_dataset,
    read_predictions,
    write_dataset,
    write_predictions,
)
from chatledger.structbench.dataset._original import original_to_document, read_original
from chatledger.structbench.dataset._paths import Json, flatten, schema_depth, value_depth
from chatledger.structbench.dataset._validation import (
    BAD_ENUM,
    BAD_FORMAT,
    EXTRA_KEYS,
    MISSING_KEYS,
    OTHER_SCHEMA,
    WRONG_TYPE,
    ValidatorCache,
)
from chatledger.structbench.dataset._weights import (
    default_weight,
    field_importance,
    resolve_weights,
)

__all__ = [
    "BAD_ENUM",
    "BAD_FORMAT",
    "EXTRA_KEYS",
    "MISSING_KEYS",
    "OTHER_SCHEMA",
    "WRONG_TYPE",
    "Document",
    "Example",
    "Json",
    "Prediction",
    "ValidatorCache",
    "default_weight",
    "document_from_dict",
    "field_importance",
    "flatten",
    "original_to_document",
    "read_dataset",
    "read_original",
    "read_predictions",
    "resolve_weights",
    "schema_depth",
    "value_depth",
    "write_dataset",
    "write_predictions",
]
