"""Low-level readers of email text for the rule-based baseline: dates, times, amounts, names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from chatledger.structbench.generate import MONTHS, NUMBER_WORDS

_MONTH = "|".join(m[:3] + f"(?:{m[3:]})?" if len(m) > 3 else m for m in MONTHS)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# Only ISO and month-first dates ("March 4, 2026", "Wed, Mar 4th, 2026"): day-first spellings
# ("4 March 2026", "the 4th of March 2026") are left unread, as are 12-hour times.
DATE_PATTERNS = (
    re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),
    re.compile(rf"\b({_MONTH}) {_DAY},? (\d{{4}})\b"),
)
TIME_PATTERN = re.compile(r"\b(\d{2}):(\d{2})\b")
AMOUNT = r"(?:[$€£]|USD |EUR |GBP )?(\d{1,3}(?:,\d{3})+\.\d{2}|\d+\.\d{2})(?: (?:USD|EUR|GBP))?"
AMOUNT_PATTERN = re.compile(AMOUNT)
EMAIL_PATTERN = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE_PATTERN = re.compile(r"\+\d{1,3}[ (][\d ()-]{7,}\d")
CLOSINGS = ("thanks", "best", "regards", "cheers", "kind regards", "best regards", "many thanks",
            "yours sincerely", "best wishes", "warm regards", "see you there",
            "thanks in advance", "safe travels", "kind regards")  # fmt: skip


@dataclass(frozen=True)
class Found:
    value: object
    start: int


def _month_number(name: str) -> int:
    return [m[:3].lower() for m in MONTHS].index(name[:3].lower()) + 1


def find_dates(text: str) -> list[Found]:
    found: list[Found] = []
    for n, pattern in enumerate(DATE_PATTERNS):
        for m in pattern.finditer(text):
            try:
                if n == 0:
                    d = date(int(m[1]), int(m[2]), int(m[3]))
                else:
                    d = date(int(m[3]), _month_number(m[1]), int(m[2]))
            except ValueError:
                continue
            found.append(Found(d.isoformat(), m.start()))
    return sorted(found, key=lambda f: f.start)


def find_times(text: str) -> list[Found]:
    found: list[Found] = []
    for m in TIME_PATTERN.finditer(text):
        hour, minute = int(m[1]), int(m[2])
        if hour < 24 and minute < 60:
            found.append(Found(f"{hour:02d}:{minute:02d}", m.start()))
    return found


def parse_amount(text: str) -> float | None:
    m = AMOUNT_PATTERN.search(text)
    return float(m[1].replace(",", "")) if m else None


def amount_after(text: str, cue: str) -> float | None:
    """The first amount after the first occurrence of ``cue`` (case-insensitive)."""
    m = re.search(re.escape(cue), text, re.IGNORECASE)
    return parse_amount(text[m.end() :]) if m else None


def parse_count(token: str) -> int | None:
    token = token.strip().lower()
    if token.isdigit():
        return int(token)
    return NUMBER_WORDS.index(token) if token in NUMBER_WORDS else None


def first(pattern: str, text: str, group: int = 1, flags: int = 0) -> str | None:
    m = re.search(pattern, text, flags)
    return m[group].strip() if m and m[group] is not None else None


def signature(text: str) -> list[str]:
    """The lines after the last closing formula ("Best regards," …)."""
    lines = text.splitlines()
    for n in range(len(lines) - 1, -1, -1):
        if lines[n].strip().rstrip(",!").lower() in CLOSINGS:
            return [line.strip() for line in lines[n + 1 :] if line.strip()]
    return []


def split_names(text: str) -> list[str]:
    """ "A, B and C" → [A, B, C]."""
    parts = re.split(r",\s*|\s+and\s+", text.strip().rstrip("."))
    return [p.strip() for p in parts if p.strip()]
