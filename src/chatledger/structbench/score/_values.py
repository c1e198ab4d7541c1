"""When a predicted leaf value counts as the ground-truth value (MV/WV, DESIGN §8).

- Strings: Unicode NFKC, case-folded, runs of whitespace collapsed and the ends trimmed.
- ISO dates and times: a string that parses as an ISO 8601 date or date-time is compared as a
  point in time, so ``2026-03-04`` equals ``2026-03-04T00:00:00`` (and ``…T00:00:00Z``); a time
  ``14:30`` equals ``14:30:00``. Only ISO spellings are read — ``March 4, 2026`` is a different
  string, because the schema asks for ISO and a consumer would reject the other spelling.
- Numbers: numeric equality (``12.5`` equals ``12.50`` and ``12`` equals ``12.0``, within 1e-9
  to absorb float rounding). A number written as a string (``"12.50"``) does **not** match the
  number 12.5: the output has the wrong type, a program reading it would get a string, and DOC
  already fails it — MV counts it as a mismatch too. Booleans are not numbers (``true`` ≠ 1).
- ``null`` matches only ``null``; an empty list/object matches only an empty list/object.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import UTC, date, datetime, time
from functools import lru_cache

from chatledger.structbench.dataset import Json

_ISO_DATE_START = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_TIME = re.compile(r"\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?")


def values_match(truth: Json, predicted: Json) -> bool:
    """True when ``predicted`` reproduces the ground-truth leaf ``truth``."""
    if truth is None:
        return predicted is None
    if isinstance(truth, bool):
        return isinstance(predicted, bool) and predicted is truth
    if isinstance(truth, int | float):
        if isinstance(predicted, bool) or not isinstance(predicted, int | float):
            return False
        return math.isclose(truth, predicted, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(truth, str):
        return isinstance(predicted, str) and normalise_text(truth) == normalise_text(predicted)
    if isinstance(truth, dict | list):  # a leaf container is always empty
        return type(predicted) is type(truth) and not predicted
    return bool(truth == predicted)


@lru_cache(maxsize=1 << 16)
def normalise_text(text: str) -> str:
    """The comparison key of a string leaf (see the module docstring)."""
    folded = " ".join(unicodedata.normalize("NFKC", text).split()).casefold()
    if _ISO_DATE_START.match(folded):
        moment = _iso_moment(folded)
        if moment is not None:
            return moment
    elif _ISO_TIME.fullmatch(folded):
        try:
            return time.fromisoformat(folded).isoformat()
        except ValueError:
            return folded
    return folded


def _iso_moment(text: str) -> str | None:
    if len(text) == 10:
        try:
            return date.fromisoformat(text).isoformat()
        except ValueError:
            return None
    try:
        moment = datetime.fromisoformat(text.upper())
    except ValueError:
        return None
    offset = moment.utcoffset()
    midnight = moment.time() == time(0)
    if midnight and (offset is None or not offset):
        return moment.date().isoformat()
    if offset is not None:
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "z"
    return moment.isoformat()
