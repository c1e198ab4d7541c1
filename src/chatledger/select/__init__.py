"""Schema selection (DESIGN.md §9, issue 16): screening candidate fields from repeated runs.

So far Phase 1's four metrics and their composite (``chatledger.select._metrics``); the
candidate registry, prompt-variant search, tournament and validation build on them.
"""

from chatledger.select._metrics import (
    DEFAULT_WEIGHTS,
    PASS_MARK,
    Screening,
    consistency,
    discrimination,
    information_gain,
    redundancy,
    text_set_f1,
)

__all__ = [
    "DEFAULT_WEIGHTS",
    "PASS_MARK",
    "Screening",
    "consistency",
    "discrimination",
    "information_gain",
    "redundancy",
    "text_set_f1",
]
