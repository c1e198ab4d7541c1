"""Pseudonymisation: names, phone numbers, e-mail addresses and URLs out of the chunks before
anything reaches a model, and back into an extraction afterwards.

* Participants' names → stable pseudonyms, ``Person A``, ``Person B`` … in order of first
  appearance. The names come from the export itself: every speaker and every member its
  participant metadata lists (after ``--alias``), never from guessing at capitalised words.
  In message text a full name is replaced wherever it appears (any case); a single part of a
  name (``Ness`` of ``Ness Alderton``, three letters or more) only where it is written
  capitalised, and a part two people share becomes ``[NAME-n]``.
* Phone numbers → ``[PHONE-n]``, found by ``phonenumbers`` (international numbers always;
  national ones with ``--phone-region``), and any other run of 8 or more digits written like a
  number (spaces, dots, dashes, brackets) — over-redacting an order number is the safe failure.
* E-mail addresses → ``[EMAIL-n]``; URLs (``http(s)://…``, ``www.…``) → ``[URL-n]``.

The same original always gets the same placeholder, across chunks and across re-imports (the map
is read back and extended). The map is the one file that can undo it all, so it is written only
beside the chunks (``pseudonyms.json``), never into a run directory or a report;
:func:`reveal_value` puts the originals back into an extraction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chatledger.core import InputError, atomic_write_json, first_validation_error

MAP_FILE = "pseudonyms.json"
PSEUDONYM = re.compile(r"\bPerson [A-Z]{1,3}\b")
PLACEHOLDER = re.compile(r"\[(?:PHONE|EMAIL|URL|NAME)-[0-9]+\]")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)
_URL_TAIL = ".,;:!?)]}'\""
# 8+ digits with the separators people write numbers with, not inside a longer word — nor a
# file name's counter such as WhatsApp's "00000012-PHOTO-….jpg".
_DIGIT_RUN = re.compile(r"(?<![\w+])\+?\(?\d(?:[\d .\-()]{6,}\d)(?!\w)(?!-[A-Za-z])")
# Dates and times are numbers people write too; they are not phone numbers.
_DATEISH = re.compile(r"^\d{4}[-./]\d{1,2}[-./]\d{1,2}|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}(?!\d)")
_MIN_PART = 3


class PseudonymMap(BaseModel):
    """``pseudonyms.json``: what each pseudonym and placeholder stands for (version 1)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    names: dict[str, str] = Field(default_factory=dict)  # original name → "Person A"
    values: dict[str, str] = Field(default_factory=dict)  # "[PHONE-1]" → original text

    @classmethod
    def load(cls, path: str | Path) -> PseudonymMap:
        from chatledger.corpus._lines import loads_strict

        where = Path(path)
        if not where.is_file():
            raise InputError("pseudonym map not found", path=where)
        try:
            return cls.model_validate(loads_strict(where.read_bytes()))
        except ValidationError as exc:
            field, message = first_validation_error(exc)
            raise InputError(message, path=where, field=field or None) from None
        except ValueError as exc:
            raise InputError(f"not a pseudonym map ({exc})", path=where) from None

    def save(self, path: str | Path) -> None:
        atomic_write_json(path, self.model_dump(mode="json"))

    def reverse(self) -> dict[str, str]:
        """Pseudonym or placeholder → original."""
        return {**{v: k for k, v in self.names.items()}, **self.values}


def _letters(index: int) -> str:
    """0 → A, 25 → Z, 26 → AA (bijective base 26)."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("A") + rest) + out
    return out


class Pseudonymiser:
    """Applies one :class:`PseudonymMap` to names and texts, extending it as it goes."""

    def __init__(
        self, mapping: PseudonymMap, names: Iterable[str], *, phone_region: str | None = None
    ) -> None:
        self.map = mapping
        self.phone_region = phone_region
        self._by_value = {original: key for key, original in mapping.values.items()}
        self._counts: dict[str, int] = {}
        for key in mapping.values:
            kind, number = key.strip("[]").rsplit("-", 1)
            self._counts[kind] = max(self._counts.get(kind, 0), int(number))
        for name in names:
            self.name(name)
        self._full, self._parts = self._name_patterns()

    def name(self, name: str) -> str:
        """The pseudonym of a participant (assigned on first sight)."""
        if not name.strip():
            return name
        found = self.map.names.get(name)
        if found is None:
            found = f"Person {_letters(len(self.map.names))}"
            self.map.names[name] = found
        return found

    def _placeholder(self, kind: str, original: str) -> str:
        key = self._by_value.get(original)
        if key is None or not key.startswith(f"[{kind}-"):
            self._counts[kind] = self._counts.get(kind, 0) + 1
            key = f"[{kind}-{self._counts[kind]}]"
            self._by_value[original] = key
            self.map.values[key] = original
        return key

    def _name_patterns(self) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
        full = sorted(self.map.names, key=len, reverse=True)
        owners: dict[str, set[str]] = {}
        for name in self.map.names:
            for part in re.findall(r"[^\W\d_][\w'-]*", name):
                if len(part) >= _MIN_PART and part[0].isupper() and part != name:
                    owners.setdefault(part, set()).add(name)
        self._part_owner = {part: names for part, names in owners.items()}
        parts = sorted(owners, key=len, reverse=True)

        def alternation(words: list[str], flags: int) -> re.Pattern[str] | None:
            if not words:
                return None
            body = "|".join(re.escape(w) for w in words)
            return re.compile(rf"(?<!\w)(?:{body})(?!\w)", flags)

        return alternation(full, re.IGNORECASE), alternation(parts, 0)

    def text(self, text: str) -> str:
        """``text`` with URLs, e-mails, phone numbers and participants' names replaced."""
        if not text:
            return text
        text = _URL.sub(lambda m: self._url(m.group(0)), text)
        text = _EMAIL.sub(lambda m: self._placeholder("EMAIL", m.group(0)), text)
        text = self._phones(text)
        if self._full is not None:
            lookup = {k.casefold(): v for k, v in self.map.names.items()}
            text = self._full.sub(lambda m: lookup[m.group(0).casefold()], text)
        if self._parts is not None:
            text = self._parts.sub(self._part, text)
        return text

    def _url(self, url: str) -> str:
        stripped = url.rstrip(_URL_TAIL)
        return self._placeholder("URL", stripped) + url[len(stripped) :]

    def _part(self, match: re.Match[str]) -> str:
        owners = self._part_owner[match.group(0)]
        if len(owners) == 1:
            return self.map.names[next(iter(owners))]
        return self._placeholder("NAME", match.group(0))

    def _phones(self, text: str) -> str:
        spans: list[tuple[int, int]] = []
        # The optional extra "pseudonymise": checked when an import asks for pseudonyms, so
        # reading a map back (reveal) needs nothing of it.
        import phonenumbers

        region = self.phone_region.upper() if self.phone_region else None
        for found in phonenumbers.PhoneNumberMatcher(text, region or "ZZ"):
            spans.append((found.start, found.end))
        for match in _DIGIT_RUN.finditer(text):
            digits = sum(ch.isdigit() for ch in match.group(0))
            if _DATEISH.match(match.group(0).lstrip("+(")):
                continue
            if digits >= 8 and not any(s <= match.start() < e for s, e in spans):
                spans.append((match.start(), match.end()))
        # Numbered in reading order, replaced from the end so earlier spans keep their place.
        keys = [
            (start, end, self._placeholder("PHONE", text[start:end]))
            for start, end in sorted(spans)
        ]
        for start, end, key in reversed(keys):
            text = text[:start] + key + text[end:]
        return text


def reveal_value(value: Any, reverse: dict[str, str]) -> Any:
    """``value`` (any JSON) with every pseudonym and placeholder put back."""
    if isinstance(value, str):
        value = PLACEHOLDER.sub(lambda m: reverse.get(m.group(0), m.group(0)), value)
        return PSEUDONYM.sub(lambda m: reverse.get(m.group(0), m.group(0)), value)
    if isinstance(value, list):
        return [reveal_value(v, reverse) for v in value]
    if isinstance(value, dict):
        return {k: reveal_value(v, reverse) for k, v in value.items()}
    return value
