"""How values are written in the emails, and the check that every ground-truth value is there.

The renderer picks one surface form at random (dates in eight spellings, times in 24- and
12-hour clocks, amounts with or without thousands separators and a currency code or symbol,
small numbers as words); :func:`values_missing_from_text` accepts any of them, so a generated
document can be checked independently of the template that wrote it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import date, time

from chatledger.structbench.dataset import Json, flatten

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve")  # fmt: skip
CURRENCY_FORMS = {"USD": ("USD", "$", "US dollars"), "EUR": ("EUR", "€", "euros"),
                  "GBP": ("GBP", "£", "pounds")}  # fmt: skip
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_HH_MM = re.compile(r"\d{2}:\d{2}")


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def date_forms(iso: str) -> list[str]:
    d = date.fromisoformat(iso)
    month = MONTHS[d.month - 1]
    weekday = WEEKDAYS[d.weekday()]
    return [
        iso,
        f"{month} {d.day}, {d.year}",
        f"{d.day} {month} {d.year}",
        f"{month[:3]} {d.day}, {d.year}",
        f"{weekday}, {month} {d.day}, {d.year}",
        f"{weekday[:3]} {d.day} {month[:3]} {d.year}",
        f"the {_ordinal(d.day)} of {month} {d.year}",
        f"{month} {_ordinal(d.day)}, {d.year}",
    ]


def render_date(rng: random.Random, iso: str) -> str:
    return rng.choice(date_forms(iso))


def time_forms(hh_mm: str) -> list[str]:
    t = time.fromisoformat(hh_mm)
    hour12 = t.hour % 12 or 12
    half = "am" if t.hour < 12 else "pm"
    forms = [hh_mm, f"{hour12}:{t.minute:02d} {half}", f"{hour12}:{t.minute:02d} {half.upper()}"]
    if t.minute == 0:
        forms.append(f"{hour12} {half}")
    return forms


def render_time(rng: random.Random, hh_mm: str) -> str:
    return rng.choice(time_forms(hh_mm))


def amount_forms(amount: float) -> list[str]:
    forms = [f"{amount:,.2f}", f"{amount:.2f}"]
    if amount == int(amount):
        forms += [f"{int(amount):,}", str(int(amount))]
    return forms


def money_writer(rng: random.Random, currency: str) -> Callable[[float], str]:
    """One way of writing amounts (symbol or code, separators or not), kept for a whole email."""
    separators = rng.random() < 0.6
    symbol = CURRENCY_FORMS[currency][1]
    style = rng.randrange(3)

    def write(amount: float) -> str:
        number = f"{amount:,.2f}" if separators else f"{amount:.2f}"
        if style == 0:
            return f"{symbol}{number}"
        return f"{currency} {number}" if style == 1 else f"{number} {currency}"

    return write


def int_forms(value: int) -> list[str]:
    forms = [str(value), f"{value:,}"]
    if 0 <= value < len(NUMBER_WORDS):
        forms.append(NUMBER_WORDS[value])
    return forms


def render_count(rng: random.Random, value: int) -> str:
    """Small counts sometimes as words ("three"), otherwise digits."""
    if 0 <= value < len(NUMBER_WORDS) and rng.random() < 0.35:
        return NUMBER_WORDS[value]
    return str(value)


def _contains_number(text: str, form: str) -> bool:
    if form.isalpha():
        return re.search(rf"\b{re.escape(form)}\b", text) is not None
    return re.search(rf"(?<![\d.,]){re.escape(form)}(?![\d]|[.,]\d)", text) is not None


def value_in_text(value: Json, text: str) -> bool:
    """Whether some surface form of a ground-truth leaf occurs in ``text`` (case-insensitive).

    ``null``, booleans and empty containers have no surface form and always pass."""
    folded = text.casefold()
    if value is None or isinstance(value, bool | dict | list):
        return True
    if isinstance(value, int):
        return any(_contains_number(folded, f.casefold()) for f in int_forms(value))
    if isinstance(value, float):
        return any(_contains_number(folded, f) for f in amount_forms(value))
    if _ISO_DATE.fullmatch(value):
        return any(f.casefold() in folded for f in date_forms(value))
    if _HH_MM.fullmatch(value):
        return any(f.casefold() in folded for f in time_forms(value))
    if value in CURRENCY_FORMS:
        return any(f.casefold() in folded for f in CURRENCY_FORMS[value])
    return str(value).casefold() in folded


def values_missing_from_text(ground_truth: Json, text: str) -> list[str]:
    """Paths of ground-truth leaves with no surface form in ``text`` (empty when all appear)."""
    return [path for path, v in flatten(ground_truth).items() if not value_in_text(v, text)]
