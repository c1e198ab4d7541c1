"""Calendar expressions: weekdays, dates, relative days and clock times, by regular expression.

``dateparser`` (1.5.0) was tried and works offline, but its ``search_dates`` reads ordinary
words as dates ("we", "may", "now"), and nothing here needs a resolved datetime: ``due`` is
free text in the schema. So these are plain patterns, which also keeps the rules readable.
"""

from __future__ import annotations

import re

from chatledger.extractors._lexicon import MONTHS, WEEKDAYS

_DAY = "(?:" + "|".join(WEEKDAYS) + ")"
_MONTH = "(?:" + "|".join(MONTHS) + ")"
# "May" and "March" are also verbs, so a bare month name must be one of the others.
_BARE_MONTH = "(?:" + "|".join(m for m in MONTHS if m not in {"may", "march"}) + ")"
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"
_DATE = (
    rf"(?:{_ORDINAL}(?: of)? {_MONTH}|{_MONTH} {_ORDINAL}"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?)"
)
_RELATIVE = (
    rf"(?:today|tonight|tomorrow|(?:this|next) (?:week|weekend|month|{_DAY})|{_DAY}s?"
    r"|the weekend|end of (?:the )?(?:day|week|month))"
)
_TIME = r"(?:\d{1,2}(?::\d{2})? ?(?:am|pm)|noon|midnight)"

DUE = re.compile(
    rf"\b(?:(?:by|on|before|until|till) )?(?:{_DATE}|{_RELATIVE})(?: (?:at|by) {_TIME})?\b"
    rf"|\b(?:by|before) {_TIME}"
    r"|\b(?:asap|in (?:a|an|\d+|one|two|three|a few|a couple of) "
    r"(?:minutes?|hours?|days?|weeks?))\b",
    re.IGNORECASE,
)

DATE_MENTION = re.compile(
    rf"\b(?:{_DATE}|(?:this|next|last) (?:week|weekend|month|year|{_DAY})|{_DAY}s?"
    rf"|today|tonight|tomorrow|yesterday|{_BARE_MONTH})\b",
    re.IGNORECASE,
)

# Any time or date cue, for the planning phase ("at 7", "till 9", "schedule", "book").
TIME_CUE = re.compile(
    rf"{DATE_MENTION.pattern}|\b(?:at|till|until|by|from) \d{{1,2}}(?::\d{{2}})?\b|\b{_TIME}"
    r"|\b(?:schedule|calendar|deadline|meet|meeting|book|booked|appointment|weekend|o'clock)\b",
    re.IGNORECASE,
)


def due_phrase(*texts: str) -> str | None:
    """The first due-date phrase found in ``texts`` (as written), or None."""
    for text in texts:
        match = DUE.search(text)
        if match:
            return match.group(0)
    return None
