"""One implementation of matching, used by every field: similarity matrices + optimal assignment.

Subjects are compared on their content words (one stop-word list, :data:`STOP_WORDS`).
"""

from chatledger.matching._kernel import (
    CREDIT_UNIT,
    KERNEL_CLOCK,
    FloatMatrix,
    IndexArrayPair,
    KernelClock,
    assign,
    preprocess,
    token_set_matrix,
)
from chatledger.matching._matchers import (
    MATCHERS,
    GuardedMatcher,
    TextMatcher,
    TokenSetMatcher,
    get_matcher,
)
from chatledger.matching._stopwords import STOP_WORDS
from chatledger.matching._subjects import (
    content_words,
    deduplicated_matrix,
    subject_consistency,
    subject_similarity,
)

__all__ = [
    "CREDIT_UNIT",
    "KERNEL_CLOCK",
    "MATCHERS",
    "STOP_WORDS",
    "FloatMatrix",
    "GuardedMatcher",
    "IndexArrayPair",
    "KernelClock",
    "TextMatcher",
    "TokenSetMatcher",
    "assign",
    "content_words",
    "deduplicated_matrix",
    "get_matcher",
    "preprocess",
    "subject_consistency",
    "subject_similarity",
    "token_set_matrix",
]
