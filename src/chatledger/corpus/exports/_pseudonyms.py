"""Pseudonymisation: names, numbers and addresses out of the chunks before anything reaches a
model, and back into an extraction afterwards.

* **Names** of the people the export knows → stable pseudonyms, ``Person A``, ``Person B`` … in
  order of first appearance. The names come from the export itself (every speaker and every
  member its participant metadata lists) and from the user's aliases (``--alias``,
  ``--aliases``: nicknames such as ``Sam`` and ``Sammy`` of ``Samuel Ruiz-García`` become that
  person's pseudonym even when nobody speaks under them), never from guessing at words. In
  message text every variant is replaced: the full name, each part of it of three letters or
  more (``Samuel``, ``Ruiz-García``, ``Ruiz``, ``García``), each without its accents
  (``Garcia``) and with its apostrophes in either form or none (``O’Neil``, ``ONeil``), in any
  letter case (``SAMUEL``, ``samuel``), and with a possessive after it (``Priya's``,
  ``Priya’s``, ``Priyas``). A two-letter part (``Li``, ``Wu``) is replaced where capitalised or
  in capitals, unless it is a two-letter English word (``No``, ``Us``). A part that is also a
  common English word (``Will``, ``Mark``, ``Rose`` …, :data:`COMMON_WORDS`) is replaced where
  it is capitalised or in capitals, not in lower case ("I will"). A part two people share
  becomes ``[NAME-n]``.
* **Numbers**: IBANs → ``[IBAN-n]`` (``schwifty`` decides what is an IBAN: a country's length
  and structure; a wrong check digit — a typo of a real one — still counts); card numbers
  (13–19 digits passing the Luhn check) → ``[CARD-n]``; a number after "account", "acct",
  "sort code", "routing", "Konto", "cuenta" … → ``[ACCOUNT-n]``; phone numbers → ``[PHONE-n]``,
  found by ``phonenumbers`` (international numbers always; national ones with
  ``--phone-region``); any other run of 8 or more digits written like a number →
  ``[NUMBER-n]`` (dates such as 2026-03-10 are not) — over-redacting an order number is the
  safe failure.
* **Places**: postcodes → ``[POSTCODE-n]`` (UK ``NW1 6XE``, Canada ``K1A 0B1``, the
  Netherlands ``1012 AB``, US ``ZIP+4`` and a ZIP after a state, five digits before a place
  name as in ``10115 Berlin``); street addresses → ``[ADDRESS-n]`` (a house number and a street
  ending in Street, Road, Lane, Avenue … — ``221B Baker Street`` —, German ``…straße 5`` /
  ``…str. 5`` / ``…weg 12``, ``Calle Mayor 3``, ``Via Roma 10``, ``12 rue de Rivoli``).
* E-mail addresses → ``[EMAIL-n]``; URLs → ``[URL-n]``.

What is not caught is listed in docs/exports/README.md (names the export does not give and the
user does not alias — ``--names-from-text`` previews candidates —, house names, city names,
addresses without a street word or number, numbers shorter than 8 digits).

The same original always gets the same placeholder, across chunks and across re-imports (the map
is read back and extended). The map is the one file that can undo it all: it is written with
mode 0600, and by default outside the import folder (see ``_pipeline``). :func:`reveal_value`
puts the originals back into an extraction — placeholders with or without their brackets
(``[PHONE-1]`` and the ``PHONE-1`` the rule extractor writes), never part of a longer token.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chatledger.core import InputError, atomic_path, dumps_json, first_validation_error

MAP_FILE = "pseudonyms.json"
KINDS = ("PHONE", "EMAIL", "URL", "NAME", "IBAN", "CARD", "ACCOUNT", "NUMBER", "POSTCODE",
         "ADDRESS")  # fmt: skip
_KIND = "|".join(KINDS)
# In an extraction: a pseudonym, or a placeholder with its brackets or without them (the rule
# extractor drops brackets) — never inside a longer token (PHONE-12 is not PHONE-1 and a 2).
REVEALABLE = re.compile(
    rf"\[(?P<bracketed>(?:{_KIND})-[0-9]+)\]"
    rf"|(?<![\w\[-])(?P<bare>(?:{_KIND})-[0-9]+)(?![\w\]-])"
    r"|\b(?P<person>Person [A-Z]{1,3})\b"
)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)
_URL_TAIL = ".,;:!?)]}'\""
# An IBAN as people write it: country, check digits, then the account compact or in groups of 4.
_IBAN = re.compile(
    r"\b[A-Z]{2}[0-9]{2}(?:(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?|[A-Z0-9]{11,30})\b"
)
_DIGIT = re.compile(r"[0-9]")
# What a text must hold for a pattern to match in it (the pattern itself is the slow part):
# an IBAN starts with country letters and two digits; every postcode below has a capital next
# to a digit or four digits in a row; an account number follows one of these words.
_IBAN_HINT = re.compile(r"[A-Z]{2}[0-9]{2}")
_POSTCODE_HINT = re.compile(r"[A-Z][0-9]|[0-9][A-Z]|[0-9]{4}")
_ACCOUNT_WORDS = ("account", "acct", "a/c", "sort", "routing", "iban", "bsb", "konto", "kto",
                  "cuenta", "compte", "conto", "rekening")  # fmt: skip
_CARD = re.compile(r"(?<![\w+])(?:[0-9][ -]?){12,18}[0-9](?![\w])")
_ACCOUNT = re.compile(
    r"(?i)\b(?:account|acct|a/c|sort[ -]?code|routing|iban|bsb|konto(?:nummer)?|kto|cuenta"
    r"|compte|conto|rekening)\b(?:\s*(?:no\.?|number|nr\.?|n[º°]|#|is|:|=))*\s*"
    r"(?P<number>[0-9](?:[0-9 -]{4,}[0-9])?)"
)
# 8+ digits with the separators people write numbers with, not inside a longer word — nor a
# file name's counter such as WhatsApp's "00000012-PHOTO-….jpg".
_DIGIT_RUN = re.compile(r"(?<![\w+])\+?\(?\d(?:[\d .\-()]{6,}\d)(?!\w)(?!-[A-Za-z])")
# Dates and times are numbers people write too; they are not phone numbers.
_ZIP4 = re.compile(r"[0-9]{5}-[0-9]{4}")
_DATEISH = re.compile(r"^\d{4}[-./]\d{1,2}[-./]\d{1,2}|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}(?!\d)")
_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH"
    "|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY"
)
_POSTCODE = re.compile(
    r"\b(?:GIR ?0AA|[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][ABD-HJLNP-UW-Z]{2})\b"  # UK
    r"|\b[ABCEGHJ-NPRSTVXY][0-9][ABCEGHJ-NPRSTV-Z] ?[0-9][ABCEGHJ-NPRSTV-Z][0-9]\b"  # Canada
    r"|\b[1-9][0-9]{3} ?(?!SS|SA|SD)[A-Z]{2}\b(?=[ ,.]+[A-Z][a-z])"  # Netherlands, then a place
    r"|\b[0-9]{5}-[0-9]{4}\b"  # US ZIP+4
    rf"|(?<=\b(?:{_STATES}) )[0-9]{{5}}\b"  # a US ZIP after its state
    r"|\b[0-9]{5}(?= [A-ZÄÖÜÉ][a-zäöüßéèàç]+)"  # 10115 Berlin, 75001 Paris, 28013 Madrid
)
_STREET_WORDS = (
    "Street|Road|Avenue|Lane|Drive|Way|Close|Place|Court|Boulevard|Terrace|Crescent|Square"
    "|Gardens|Hill|Row|Mews|Walk|Parade|Grove|Highway|Parkway|Circle|Trail|Plaza|Green|Park"
    "|Rise|View|Wharf|Yard"
)
# Abbreviations, which may take a full stop ("Baker St."); a full word's stop ends the sentence.
_STREET_ABBREVIATIONS = "St|Rd|Ave|Ln|Dr|Pl|Ct|Blvd|Cres|Sq|Gdns|Hwy|Pkwy|Cir"
_ADDRESS = re.compile(
    # 221B Baker Street, 14 Hill Lane, 1600 Pennsylvania Avenue NW (then Flat/Apt/Unit n)
    rf"\b[0-9]{{1,5}}[A-Za-z]?(?:[-/][0-9]{{1,4}})?,? (?:[A-Z][\w'’.-]* ){{1,4}}"
    rf"(?:(?:{_STREET_WORDS})\b|(?:{_STREET_ABBREVIATIONS})\b\.?)(?: (?:NW|NE|SW|SE|N|S|E|W)\b)?"
    r"(?:,? (?:Flat|Apt\.?|Apartment|Unit|Suite) ?[0-9A-Za-z]{1,4}\b)?"
    # Hauptstraße 5, Hauptstr. 5a, Am Lindenweg 12, Marktplatz 3
    r"|\b(?:(?:Am|An der|Auf dem|Im|In der|Zum|Zur) )?[A-ZÄÖÜ][\wäöüß-]*"
    r"(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|chaussee|steig)"
    r" ?[0-9]{1,4}[a-z]?\b"
    # Calle Mayor 3, Avenida da Liberdade 12, Via Roma 10, Rue de Rivoli 12
    r"|\b(?:Calle|C/|Avenida|Av\.|Carrer|Rua|Via|Viale|Piazza|Corso|Rue|Straat|Laan|Gracht)"
    r" (?:(?:de|del|la|las|los|da|do|dos|di|della|des|du|van|der|den) )*"
    r"[A-ZÁÉÍÓÚÀÈÌÒÙ][\w'’-]*(?: [A-ZÁÉÍÓÚÀÈÌÒÙ][\w'’-]*){0,3},? (?:n[º°.] ?)?[0-9]{1,4}\b"
    # 12 rue de Rivoli, 3 avenue des Champs-Élysées
    r"|\b[0-9]{1,4}(?: ?(?:bis|ter))?,? (?:rue|avenue|boulevard|bd|place|chemin|allée|impasse"
    r"|quai|cours) (?:(?:de la|de|du|des|d['’]|l['’]) ?)?[A-ZÀ-Ý][\w'’-]*"
)
_MIN_PART = 3
# Two-letter words a two-letter name part must not be taken for, even capitalised ("No.", "Us").
_TWO_LETTER_WORDS = frozenset(
    """
    ad ah am an as at aw ax be by do eh em en er ex go ha he hi hm ho id if in is it la lo ma
    me mm mr ms mu my no nu of oh ok on op or ow ox oy pa pi re so st to uh um up us vs we ya ye
    yo tv pm uk eu un dr pc ad ai ok
    """.split()
)
_PART = re.compile(r"[^\W\d_][\w'’]*(?:-[^\W\d_][\w'’]*)*")
# Name parts that are also everyday English words: replaced where capitalised or in capitals
# ("Will said"), not in lower case ("I will"), where they are far more often the word.
COMMON_WORDS = frozenset(
    """
    will may mark bill grant hope rose faith joy grace dawn art pat sue don ray jack frank rich
    chase hunter summer april june august max guy page cook baker young white brown green black
    gray grey king long little hill wood woods stone field lane bell rice price love best fox
    wolf bird bush ford banks hall park marsh reed glen dale miles sky river storm honey ivy
    holly lily daisy iris amber ruby pearl crystal angel star sunny misty autumn nick rob
    drew gene carol dean earl major norm sandy rusty buck chip chuck clay cliff colt crane cross
    day english fisher gay golden hardy hart head heath hood house hunt just lamb law lord love
    low mason miller moon moore more new north page penny power rich rock rowe sharp short
    small snow south spring street strong swift tucker victor walker ward waters west wise
    worth wright
    """.split()
)


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
        """Write the map readable by its owner only (0600), its folder created 0700."""
        target = Path(path)
        if not target.parent.exists():
            target.parent.mkdir(parents=True, mode=0o700)
        with atomic_path(target) as temporary:
            temporary.write_text(dumps_json(self.model_dump(mode="json")) + "\n", "utf-8")
            os.chmod(temporary, 0o600)

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


def fold(text: str) -> str:
    """``text`` without its accents (``García`` → ``Garcia``, ``Zoë`` → ``Zoe``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize(
        "NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    )


@dataclass(frozen=True)
class _Variant:
    """A way a known person is written: whose it is, and whether it is a part of a name."""

    owners: frozenset[str]
    common: bool  # a one-word variant that is an everyday word: lower case is left alone


def _matched_whole(name: str) -> bool:
    # A phone number, an e-mail address or a Slack id is matched whole, never split into parts.
    return (
        "@" in name
        or not any(ch.isalpha() for ch in name)
        or bool(re.fullmatch(r"[UWB][A-Z0-9]{6,}", name))
    )


class Pseudonymiser:
    """Applies one :class:`PseudonymMap` to names and texts, extending it as it goes."""

    def __init__(
        self,
        mapping: PseudonymMap,
        names: Iterable[str],
        *,
        phone_region: str | None = None,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        self.map = mapping
        self.phone_region = phone_region
        self._by_value = {original: key for key, original in mapping.values.items()}
        self._counts: dict[str, int] = {}
        for key in mapping.values:
            kind, number = key.strip("[]").rsplit("-", 1)
            self._counts[kind] = max(self._counts.get(kind, 0), int(number))
        self.aliases = dict(aliases or {})
        for name in names:
            self.name(name)
        for target in self.aliases.values():
            self.name(target)
        self._names, self._variants = self._name_pattern()

    def name(self, name: str) -> str:
        """The pseudonym of a participant (assigned on first sight; an alias is its person's)."""
        if not name.strip():
            return name
        name = self.aliases.get(name, name)
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

    def _name_pattern(self) -> tuple[re.Pattern[str] | None, dict[str, _Variant]]:
        """One pattern for every way a known person is written, longest first, and what each
        variant (case-folded) stands for."""
        spelled: dict[str, set[str]] = {}  # variant → the names it belongs to

        short: set[str] = set()  # two-letter parts: replaced where capitalised, like a word

        def add(variant: str, owner: str) -> None:
            # As written, without accents, and with its apostrophes in either form or none
            # (O'Neil, O’Neil, ONeil).
            for form in {variant, fold(variant)}:
                for spelling in {form, form.replace("'", "’"), form.replace("’", "'"),
                                 re.sub("['’]", "", form)}:  # fmt: skip
                    spelled.setdefault(spelling.casefold(), set()).add(owner)

        written = {name: name for name in self.map.names}
        written.update(self.aliases)  # an alias is written as itself, meaning its person
        for shown, owner in written.items():
            add(shown, owner)
            if _matched_whole(shown):
                continue
            for token in _PART.findall(shown):
                pieces = [token, *token.split("-")] if "-" in token else [token]
                for piece in pieces:
                    letters = sum(ch.isalpha() for ch in piece)
                    if piece == shown:
                        continue
                    if letters >= _MIN_PART:
                        add(piece, owner)
                    elif letters == 2 and piece.casefold() not in _TWO_LETTER_WORDS:
                        add(piece, owner)  # Li, Wu, Ng, Jo: not "no", "us", "am"
                        short.add(piece.casefold())
        variants = {
            key: _Variant(frozenset(owners), key in COMMON_WORDS or key in short)
            for key, owners in spelled.items()
        }
        # A variant that is a whole name of one person and a part of another's stays that
        # person's (an alias "Sam" means its person even if "Sam Lee" also exists).
        whole = {shown.casefold(): owner for shown, owner in written.items()}
        whole.update({fold(shown).casefold(): owner for shown, owner in written.items()})
        for key, owner in whole.items():
            variants[key] = _Variant(frozenset({owner}), key in COMMON_WORDS)
        if not variants:
            return None, {}
        body = "|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True))
        pattern = re.compile(rf"(?<!\w)(?P<name>{body})(?P<tail>['’]s|['’](?=\s)|s)?(?!\w)",
                             re.IGNORECASE)  # fmt: skip
        return pattern, variants

    def text(self, text: str) -> str:
        """``text`` with URLs, e-mails, numbers, places and known people's names replaced."""
        if not text:
            return text
        # Each pattern runs only where a cheap necessary condition holds: most messages hold
        # no URL, no @, no digit (docs/benchmarks.md, issue 30).
        if "://" in text or "www." in text.lower():
            text = _URL.sub(lambda m: self._url(m.group(0)), text)
        if "@" in text:
            text = _EMAIL.sub(lambda m: self._placeholder("EMAIL", m.group(0)), text)
        if _DIGIT.search(text):
            text = self._numbers(text)
            if _POSTCODE_HINT.search(text):
                text = _POSTCODE.sub(lambda m: self._placeholder("POSTCODE", m.group(0)), text)
            text = _ADDRESS.sub(lambda m: self._placeholder("ADDRESS", m.group(0)), text)
        if self._names is not None:
            text = self._names.sub(self._person, text)
        return text

    def _url(self, url: str) -> str:
        stripped = url.rstrip(_URL_TAIL)
        return self._placeholder("URL", stripped) + url[len(stripped) :]

    def _person(self, match: re.Match[str]) -> str:
        found, tail = match.group("name"), match.group("tail") or ""
        variant = self._variants.get(found.casefold())
        mention = match.start() > 0 and match.string[match.start() - 1] == "@"
        if variant is None or (variant.common and found.islower() and not mention):
            return match.group(0)
        if len(variant.owners) == 1:
            shown = self.map.names[next(iter(variant.owners))]
        else:
            shown = self._placeholder("NAME", found)
        return shown + ("'s" if tail == "s" else tail)

    def _numbers(self, text: str) -> str:
        if _IBAN_HINT.search(text):
            text = _IBAN.sub(self._iban, text)
        text = _CARD.sub(self._card, text)
        lower = text.lower()
        if any(word in lower for word in _ACCOUNT_WORDS):
            text = _ACCOUNT.sub(self._account, text)
        return self._phones(text)

    def _iban(self, match: re.Match[str]) -> str:
        from schwifty import IBAN
        from schwifty.exceptions import InvalidChecksumDigits, SchwiftyException

        try:
            IBAN(match.group(0))
        except InvalidChecksumDigits:
            pass  # an IBAN with a typo is still someone's account
        except (SchwiftyException, ValueError):
            return match.group(0)
        return self._placeholder("IBAN", match.group(0))

    def _card(self, match: re.Match[str]) -> str:
        digits = [int(ch) for ch in match.group(0) if ch.isdigit()]
        if not 13 <= len(digits) <= 19 or not _luhn(digits):
            return match.group(0)
        return self._placeholder("CARD", match.group(0))

    def _account(self, match: re.Match[str]) -> str:
        number = match.group("number")
        if sum(ch.isdigit() for ch in number) < 6:
            return match.group(0)
        start = match.start("number") - match.start()
        return match.group(0)[:start] + self._placeholder("ACCOUNT", number)

    def _phones(self, text: str) -> str:
        spans: list[tuple[int, int, str]] = []
        # The optional extra "pseudonymise": checked when an import asks for pseudonyms, so
        # reading a map back (reveal) needs nothing of it.
        import phonenumbers

        region = self.phone_region.upper() if self.phone_region else None
        for found in phonenumbers.PhoneNumberMatcher(text, region or "ZZ"):
            spans.append((found.start, found.end, "PHONE"))
        for match in _DIGIT_RUN.finditer(text):
            digits = sum(ch.isdigit() for ch in match.group(0))
            if _DATEISH.match(match.group(0).lstrip("+(")) or _ZIP4.fullmatch(match.group(0)):
                continue  # a date; a US ZIP+4, which the postcode pass names
            if digits >= 8 and not any(s <= match.start() < e for s, e, _ in spans):
                spans.append((match.start(), match.end(), _number_kind(match.group(0))))
        # Numbered in reading order, replaced from the end so earlier spans keep their place.
        keys = [
            (start, end, self._placeholder(kind, text[start:end]))
            for start, end, kind in sorted(spans)
        ]
        for start, end, key in reversed(keys):
            text = text[:start] + key + text[end:]
        return text


def _number_kind(run: str) -> str:
    """A digit run written the way phone numbers are dialled (``+…``, ``00…``, a national
    ``0…``, an area code in brackets) is a phone number — one phonenumbers does not call valid,
    such as the 07700 900… numbers reserved for fiction —; any other is just a number."""
    return "PHONE" if run.lstrip()[:1] in ("+", "0", "(") else "NUMBER"


def _luhn(digits: list[int]) -> bool:
    total = 0
    for position, digit in enumerate(reversed(digits)):
        if position % 2:
            digit *= 2
            digit -= 9 if digit > 9 else 0
        total += digit
    return total % 10 == 0


def reveal_value(value: Any, reverse: dict[str, str]) -> Any:
    """``value`` (any JSON) with every pseudonym and placeholder put back."""
    if isinstance(value, str):
        return REVEALABLE.sub(lambda m: _revealed(m, reverse), value)
    if isinstance(value, list):
        return [reveal_value(v, reverse) for v in value]
    if isinstance(value, dict):
        return {k: reveal_value(v, reverse) for k, v in value.items()}
    return value


def _revealed(match: re.Match[str], reverse: dict[str, str]) -> str:
    if match.group("person"):
        return reverse.get(match.group("person"), match.group(0))
    key = f"[{match.group('bracketed') or match.group('bare')}]"
    return reverse.get(key, match.group(0))
