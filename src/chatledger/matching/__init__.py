"""One implementation of matching, used by every field: similarity matrices + optimal assignment."""

from chatledger.matching._kernel import (
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

__all__ = [
    "KERNEL_CLOCK",
    "MATCHERS",
    "FloatMatrix",
    "GuardedMatcher",
    "IndexArrayPair",
    "KernelClock",
    "TextMatcher",
    "TokenSetMatcher",
    "assign",
    "get_matcher",
    "preprocess",
    "token_set_matrix",
]
