"""WhatsApp chat exports: the ``.txt`` of "Export chat", alone or in the ``.zip`` it is shared as.

A message starts on a line that begins with a timestamp prefix; every other line belongs to the
message above it (multi-line messages). The two shapes, in the locales seen in real exports:

* Android ``10/03/2026, 18:04 - Ness Alderton: text`` (``10.03.26, 18:04 - ``, ``3/10/26,
  6:04 PM - ``, ``2026-03-10 18:04 - ``, ``20/6/2017 8:28 p. m. - ``, ``13.6.2018 klo 21.25 - ``);
* iOS ``[10/03/2026, 18:04:12] Ness Alderton: text`` (``[3/10/26, 6:04:12 PM]``,
  ``[10.03.26, 18:04:12]``, ``[1.1.2019, 12.00.00]``).

Dates are three numbers separated by ``/``, ``.`` or ``-``, in any of the orders phones write
them — day/month/year, month/day/year, year/month/day and year/day/month — with 2- or 4-digit
years (2-digit ones are 20xx); times are 24 h or 12 h (``AM``/``PM``, ``am``,
``a.m.``, ``a. m.``, with an ordinary, no-break U+00A0 or narrow no-break U+202F space before
the marker), seconds optional, ``:`` or ``.`` between the parts. Marks U+200E/U+200F (iOS puts
one before attachment lines, RTL locales around dates) are ignored in the prefix, stripped from
speaker names and from the start of a message's text, and kept anywhere else in the text.

**The order of the date's fields** is decided per file from all its dates, never guessed: the
orders under which every date is a date survive (a 4-digit field is the year, a field over 12
is no month, ``31/02`` is no date); when several do, the readings that put a message before 2009
(before WhatsApp) and then those that put the messages out of time order (a date more than a
day before one above it) are dropped. One order left, or several that read every date the
same: that order. Several that differ: an :class:`InputError` naming them and a date they read
differently (``--date-order`` then says which). None: an error naming, for each order, a date
it cannot read. ``ReadContext.date_order`` (``--date-order dmy|mdy|ymd|ydm``) overrides, and a
date that is no date in the order given or decided is an error naming the line. Times are naive
local times: WhatsApp writes no zone (the pipeline applies ``--timezone``).

**The speaker** is the text between the prefix and the first ``": "`` (colon and space) — a colon
not followed by a space stays in the name (``Team:Ness``); a name that itself contains ``": "``
is cut there (nothing in the file tells the two apart). A leading ``~`` (WhatsApp's mark for a
sender not in your contacts) is dropped: ``~ Nev`` is ``Nev``.

**Not messages** (skipped, counted by reason in the import summary):

* ``system message``: a line with no ``Name: `` (Android's "Messages and calls are end-to-end
  encrypted…", "Ness added Theo", "Ness left", "You created group …", security code changes);
  a line whose would-be name has an odd number of double quotes (``Ness changed the subject
  from "Trip" to "Trip: Lisbon"`` — the colon is inside the quoted subject); and iOS's system
  lines, which carry the chat's or group's name as the speaker: the encryption and
  security-code notices always, other events ("X added Y", "X left", "X created group",
  "X changed the subject …") when their text starts with iOS's U+200E mark or names the
  speaker themself (``Boris: Boris created group …``);
* ``deleted message``: "This message was deleted" / "You deleted this message" (and the German
  and Spanish forms);
* ``empty message``: nothing left after the name; ``text before the first message``: lines
  before the first timestamp.

**Kept, flagged by kind**: media placeholders are messages of kind ``media``, text kept
(``<Media omitted>``, ``<Medien ausgeschlossen>``, ``<Multimedia omitido>``, ``<Médias omis>``,
``image omitted`` / ``video`` / ``audio`` / ``sticker`` / ``GIF`` / ``document`` / ``Contact card
omitted``, ``Bild weggelassen`` …, ``<attached: 00000012-PHOTO-….jpg>`` and its translations,
``IMG-20260310-WA0003.jpg (file attached)``); missed calls are kind ``call``. WhatsApp's
``<This message was edited>`` suffix is removed from the text (a note counts them). The media
files beside the chat in a ``.zip`` are not read.

**Conversation**: one per chat ``.txt``; key and title from the file name (``WhatsApp Chat with
Ness Alderton.txt`` → ``WhatsApp Chat with Ness Alderton``; iOS's ``_chat.txt`` takes the name of
the zip or folder it is in). The file is read line by line as it streams from the disk or the
zip (exports are in time order), so memory holds one message, never the file; each pass over
the messages opens the file again.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import PurePosixPath
from typing import ClassVar, Literal

from chatledger.core import InputError
from chatledger.corpus.exports._model import (
    Conversation,
    ExportMessage,
    MessageKind,
    ReadContext,
)
from chatledger.corpus.exports._reader import EXPORT_READERS, ExportReader
from chatledger.corpus.exports._source import ExportSource

_MARKS = "\u200e\u200f"
# For matching only: marks dropped, no-break spaces made plain (the text itself keeps them).
_ODD = re.compile("[\u200e\u200f\u00a0\u202f]")
_PLAIN = str.maketrans({"\u200e": None, "\u200f": None, "\u00a0": " ", "\u202f": " "})
_SP = "[ \u00a0\u202f]"  # the spaces exports put inside a timestamp
_M = "[\u200e\u200f]*"  # marks, ignored anywhere in the prefix
_PREFIX = re.compile(
    rf"""
    [\ufeff\u200e\u200f]*
    (?P<open>\[)?{_M}
    (?P<a>\d{{1,4}}){_M}(?P<sep>[./-]){_SP}?{_M}(?P<b>\d{{1,2}}){_M}(?P=sep){_SP}?{_M}
    (?P<c>\d{{1,4}}){_M}
    (?:,{_SP}*|{_SP}+){_M}
    (?:[^\W\d_]{{1,4}}{_SP}+)?{_M}          # a short word such as Finnish "klo"
    (?P<h>\d{{1,2}})[:.](?P<mi>\d{{2}})(?:[:.](?P<s>\d{{2}}))?{_M}
    (?:{_SP}*(?P<ampm>[AaPp]\.?{_SP}?[Mm]\.?))?{_M}
    (?(open)\]{_SP}?|{_SP}+[-\u2013]{_SP})
    """,
    re.VERBOSE,
)
_STARTS = frozenset("0123456789[\ufeff\u200e\u200f")
_QUOTES = re.compile('["\u201c\u201d\u201e\u00ab\u00bb]')

# Notices that are never a person's words, whoever the export names as their speaker: the
# ones at the start of the text, and the security-code changes (searched when named).
_NOTICE = re.compile(
    r"Messages and calls are end-to-end encrypted\b"
    r"|Messages (?:you send )?to this (?:chat|group)(?: and calls)? are now secured with "
    r"end-to-end encryption"
    r"|Your security code with .+ changed\b"
    r"|You're now an admin$"
    r"|Nachrichten und Anrufe sind Ende-zu-Ende-verschlüsselt"
    r"|Los mensajes y las llamadas están cifrados de extremo a extremo",
    re.IGNORECASE,
)
_CODE_CHANGED = re.compile(r".{1,80}'s security code changed\b|.*Sicherheitsnummer.*geändert")
# Group events ("WHO did something"): system lines when iOS marks the text with U+200E or the
# event names the speaker themself.
_EVENT = re.compile(
    r"(?P<who>(?:(?!: ).)+?) (?:"
    r"added .+|removed .+|left|joined using this group's invite link|was added|were added"
    r"|created (?:group .+|this group)|changed the subject(?: from .+)? to .+"
    r"|changed (?:this group's|the group) (?:icon|description|name|settings).*"
    r"|deleted this group's icon|changed their phone number.*|changed to \+?[\d ()\u2011-]+"
    r"|turned (?:on|off) disappearing messages.*|is now an admin|are now an admin"
    r"|hat .+ hinzugefügt|hat die Gruppe .*(?:erstellt|verlassen)|hat dich hinzugefügt"
    r"|wurde hinzugefügt|hat den Betreff .+ geändert|hat das Gruppenbild geändert"
    r"|añadió a .+|creó el grupo .+|salió del grupo|cambió el asunto .+"
    r")\.?$"
)
_DELETED = re.compile(
    r"(?:This message was deleted|You deleted this message|Diese Nachricht wurde gelöscht"
    r"|Du hast diese Nachricht gelöscht|Se eliminó este mensaje|Eliminaste este mensaje"
    r"|Este mensaje fue eliminado)\.?",
    re.IGNORECASE,
)
_MEDIA = re.compile(
    r"<(?:Media omitted|Medien ausgeschlossen|Multimedia omitido|Médias omis)>"
    r"|(?:.+ )?(?:image|video|audio|sticker|GIF|document|Contact card) omitted"
    r"|(?:Bild|Video|Audio|GIF|Sticker|Dokument|Kontaktkarte) weggelassen"
    r"|(?:imagen omitida|documento omitido|audio omitido)"
    # iOS with media: "<attached: 00000012-PHOTO-….jpg>" and its translations, after a
    # document's name and page count if any.
    r"|(?:.+ )?<[^<>:]{2,30}:[ \u00a0]?[^<>]+\.[A-Za-z0-9]{1,5}>"
    # Android with media: "IMG-20260310-WA0003.jpg (file attached)" (any locale for files
    # WhatsApp named; the phrase for documents keeping their own names).
    r"|(?:IMG|VID|AUD|PTT|STK|DOC|GIF)-\d{8}-WA\d+\.[A-Za-z0-9]+ \(.+\)"
    r"|.+\.[A-Za-z0-9]{1,5} \((?:file attached|Datei angehängt|archivo adjunto)\)",
    re.IGNORECASE,
)
_MEDIA_ENDS = (">", ")", "omitted", "weggelassen", "omitida", "omitido")
_CALL = re.compile(
    r"(?:Missed (?:group )?(?:voice|video) call|Verpasster (?:Sprach|Video)anruf)\b.*",
    re.IGNORECASE,
)
_EDITED = re.compile(
    r"[ \u00a0]*[\u200e\u200f]*<(?:This message was edited|Diese Nachricht wurde bearbeitet\.?"
    r"|Se editó este mensaje\.?)>$"
)
_HOW = (
    "in the chat: ⋮ (Android) or the chat's name (iOS) → More → Export chat → Without media "
    "(or Attach media: a .zip); pass the .txt or the .zip"
)


@EXPORT_READERS.register("whatsapp")
class WhatsAppReader(ExportReader):
    kind: ClassVar[str] = "whatsapp"
    label: ClassVar[str] = "a WhatsApp chat export"
    how_to_export = _HOW

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        return bool(_chat_files(source, strict=True))

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        chats = _chat_files(source, strict=False)
        if not chats:
            raise InputError(
                "no WhatsApp chat in the export: expected a .txt whose lines start like "
                "'10/03/2026, 18:04 - Name: text' (Android) or '[10/03/2026, 18:04:12] Name: "
                "text' (iOS)",
                path=source.path,
            )
        others = len(source.names()) - len(chats)
        if others and not source.is_single_file:
            context.note(
                f"{others} other file(s) in the export (media) are not read; their messages "
                "are kept as media placeholders"
            )
        for name in chats:
            title = _title(source, name)
            yield Conversation(key=title, title=title, messages=_Chat(source, name, context))


@dataclass
class _Chat:
    """The messages of one chat file; every iteration reads the file again from the start."""

    source: ExportSource
    name: str
    context: ReadContext

    def __iter__(self) -> Iterator[ExportMessage]:
        return _read(self.source, self.name, self.context)


Order = Literal["dmy", "mdy", "ymd", "ydm"]
ORDERS: tuple[Order, ...] = ("dmy", "mdy", "ymd", "ydm")
SPELLED = {"dmy": "day/month/year", "mdy": "month/day/year", "ymd": "year/month/day",
           "ydm": "year/day/month"}  # fmt: skip
# WhatsApp appeared in 2009: a reading that puts a message before it is not this export's.
_FIRST_DAY = date(2009, 1, 1)
# A message may carry a time a little before the one above it (sent offline, delivered later);
# a reading that goes back further than this is not the file's order.
_SLACK = timedelta(days=1)


def read_date(order: Order, a: str, b: str, c: str) -> date | None:
    """The date of the fields ``a``, ``b``, ``c`` read in ``order``, or None when they are no
    date in that order (the year must be 2 or 4 digits — 2-digit years are 20xx — day and
    month at most 2)."""
    year, first, second = (c, a, b) if order in ("dmy", "mdy") else (a, b, c)
    if len(year) not in (2, 4) or len(first) > 2 or len(second) > 2:
        return None
    day, month = (first, second) if order in ("dmy", "ydm") else (second, first)
    try:
        return date(int(year) + (2000 if len(year) == 2 else 0), int(month), int(day))
    except ValueError:
        return None


@dataclass
class _Pending:
    """The message being read: its first line parsed, its continuation lines collected."""

    line: int
    moment: datetime
    speaker: str
    first: str
    skip: str | None = None
    more: list[str] = field(default_factory=list)


@dataclass
class _Dates:
    """Turns a prefix's fields into a datetime, in the order decided for the file."""

    order: Order
    where: str
    # Why this order: "as --date-order says", "as line 4's 13/03/26 says" …
    how: str
    _key: tuple[str, str, str] | None = None
    _date: date = date(1, 1, 1)

    def moment(self, match: re.Match[str], line: int) -> datetime:
        key = (match["a"], match["b"], match["c"])
        if key != self._key:
            found = read_date(self.order, *key)
            if found is None:
                sep = match["sep"]
                raise InputError(
                    f"{sep.join(key)} is not a date read as {SPELLED[self.order]} ({self.how}): "
                    "the file mixes date formats or is not one export; pass --date-order "
                    "(one of " + ", ".join(ORDERS) + ") if the order is another",
                    path=self.where,
                    line=line,
                )
            self._date, self._key = found, key
        hour, minute = int(match["h"]), int(match["mi"])
        second = int(match["s"]) if match["s"] else 0
        marker = match["ampm"]
        if marker:
            if hour > 12:
                raise InputError(
                    f"hour {hour} with {marker!r}: not a 12-hour time", path=self.where, line=line
                )
            hour = hour % 12 + (12 if marker[0] in "Pp" else 0)
        try:
            return datetime(self._date.year, self._date.month, self._date.day, hour, minute,
                            second)  # fmt: skip
        except ValueError as exc:
            raise InputError(f"not a time: {exc}", path=self.where, line=line) from None


def _read(source: ExportSource, name: str, context: ReadContext) -> Iterator[ExportMessage]:
    where = source.describe(name)
    dates = _dates(source, name, context)
    log = context.log
    edited = 0
    seen_prefix = False
    pending: _Pending | None = None
    with source.text_lines(name) as lines:
        for number, raw in enumerate(lines, start=1):
            line = raw.rstrip("\r\n")
            match = _prefix(line)
            if match is None:
                if pending is not None:
                    pending.more.append(line)
                elif line.strip():
                    log.skip("text before the first message")
                continue
            seen_prefix = True
            if pending is not None:
                message, was_edited = _finish(pending, context)
                edited += was_edited
                if message is not None:
                    yield message
            pending = _start(match, line, number, dates)
    if pending is not None:
        message, was_edited = _finish(pending, context)
        edited += was_edited
        if message is not None:
            yield message
    if not seen_prefix:
        raise InputError(
            "no line starts with a WhatsApp date and time ('10/03/2026, 18:04 - Name: text' "
            "or '[10/03/2026, 18:04:12] Name: text'): not a WhatsApp chat",
            path=where,
        )
    if edited:
        context.note(
            f"{where}: {edited} message(s) carried WhatsApp's '<This message was edited>' "
            "mark (or its translation); it was removed from their text"
        )


def _prefix(line: str) -> re.Match[str] | None:
    """The timestamp prefix at the start of ``line``, if it is one: day/month first with a 2- or
    4-digit year, or a 4-digit year first (``1.2.3 10:00 - `` inside a message is text)."""
    if not line or line[0] not in _STARTS:
        return None
    match = _PREFIX.match(line)
    if match is None:
        return None
    first, last = len(match["a"]), len(match["c"])
    if (first == 4 and last <= 2) or (first <= 2 and last in (2, 4)):
        return match
    return None


def _start(match: re.Match[str], line: str, number: int, dates: _Dates) -> _Pending:
    moment = dates.moment(match, number)
    rest = line[match.end() :].lstrip(_MARKS)
    cut = rest.find(": ")
    if cut < 0:
        if rest.endswith(":") and rest[:-1].strip():
            cut = len(rest) - 1  # "Name:" and nothing else on the line
        else:
            return _Pending(number, moment, "", rest, skip="system message")
    head, text = rest[:cut], rest[cut + 2 :]
    speaker = _speaker(head)
    if not speaker or len(_QUOTES.findall(head)) % 2:
        # No name, or an event whose quoted subject holds the colon:
        # 'Ness changed the subject from "Trip" to "Trip: Lisbon"'.
        return _Pending(number, moment, "", rest, skip="system message")
    marked = text[:1] in _MARKS
    probe = _plain(text.lstrip(_MARKS))
    skip = None
    if _NOTICE.match(probe) or (
        ("security code" in probe or "Sicherheitsnummer" in probe) and _CODE_CHANGED.match(probe)
    ):
        skip = "system message"
    elif marked or probe.startswith(speaker):
        # Only an event marked by iOS, or naming the speaker themself, is a system line.
        event = _EVENT.match(probe)
        if event is not None and (marked or _speaker(event["who"]) == speaker):
            skip = "system message"
    return _Pending(number, moment, speaker, text.lstrip(_MARKS), skip=skip)


def _plain(text: str) -> str:
    return text.translate(_PLAIN) if _ODD.search(text) else text


def _speaker(head: str) -> str:
    name = _plain(head).strip()
    if name.startswith("~ ") or name.startswith("~"):
        name = name[1:].lstrip()
    return name


def _finish(pending: _Pending, context: ReadContext) -> tuple[ExportMessage | None, bool]:
    """The finished message (None when skipped, counted) and whether it carried the edit mark."""
    if pending.skip is not None:
        context.log.skip(pending.skip)
        return None, False
    text = "\n".join([pending.first, *pending.more]) if pending.more else pending.first
    text = text.rstrip()
    edited = False
    if text.endswith(">"):
        stripped = _EDITED.sub("", text)
        edited = stripped != text
        text = stripped.rstrip()
    probe = _plain(text.split("\n", 1)[0]).strip()
    if "\n" not in text and _DELETED.fullmatch(probe):
        context.log.skip("deleted message")
        return None, edited
    if not text:
        context.log.skip("empty message")
        return None, edited
    kind: MessageKind = "text"
    if probe.endswith(_MEDIA_ENDS) and _MEDIA.fullmatch(probe):
        kind = "media"
    elif _CALL.fullmatch(probe):
        kind = "call"
    return ExportMessage(pending.moment, pending.speaker, text, kind), edited


# --- which files are chats, and the date order ----------------------------------------------------


def _chat_files(source: ExportSource, *, strict: bool) -> list[str]:
    """The chat ``.txt`` files of the export. A single file given by the user is read as a chat
    unless ``strict`` (sniffing); in a zip or a folder only ``.txt`` files whose first line is a
    WhatsApp line count (an attached ``notes.txt`` is media)."""
    names = source.names()
    if source.is_single_file and not strict:
        return names
    found = []
    for name in names:
        base = PurePosixPath(name)
        if base.suffix.lower() != ".txt" or base.name.startswith("._") or "__MACOSX" in base.parts:
            continue
        if _looks_like_chat(source, name):
            found.append(name)
    return found


def _looks_like_chat(source: ExportSource, name: str) -> bool:
    try:
        with source.text_lines(name) as lines:
            for count, raw in enumerate(lines):
                line = raw.rstrip("\r\n")
                if line.strip():
                    match = _prefix(line)
                    return match is not None and bool(line[match.end() :].strip())
                if count > 20:
                    return False
    except (InputError, OSError):
        return False
    return False


def _title(source: ExportSource, name: str) -> str:
    member = PurePosixPath(name)
    if member.stem.lower() != "_chat":
        return member.stem
    if len(member.parts) > 1:
        return member.parts[-2]
    if source.is_single_file:
        return source.path.resolve().parent.name or member.stem
    return source.path.stem if source.is_zip else source.path.name


def _dates(source: ExportSource, name: str, context: ReadContext) -> _Dates:
    """How this file's dates read: ``--date-order`` when given, else decided from the file's
    own dates (one pass over their prefixes, stopping once only one order reads them all)."""
    where = source.describe(name)
    if context.date_order != "auto":
        return _Dates(context.date_order, where, "as --date-order says")
    survey = _Survey()
    with source.text_lines(name) as lines:
        for number, raw in enumerate(lines, start=1):
            if raw and raw[0] in _STARTS:
                match = _prefix(raw)
                if match is not None and survey.add(match, number):
                    break
    return survey.decide(where, context)


@dataclass
class _Survey:
    """The file's distinct dates (fields as written, first line) and the sequence they come
    in, and which orders still read every one of them."""

    dates: list[tuple[str, str, str, str, int]] = field(default_factory=list)
    sequence: array[int] = field(default_factory=lambda: array("I"))
    alive: list[Order] = field(default_factory=lambda: list(ORDERS))
    ruled_out: dict[Order, int] = field(default_factory=dict)  # order → index in dates
    _index: dict[tuple[str, str, str], int] = field(default_factory=dict)
    _last: tuple[str, str, str] | None = None

    def add(self, match: re.Match[str], line: int) -> bool:
        """Take one prefix; True once at most one order is left (the rest cannot revive)."""
        key = (match["a"], match["b"], match["c"])
        if key == self._last:
            return False
        self._last = key
        at = self._index.get(key)
        if at is None:
            at = self._index[key] = len(self.dates)
            self.dates.append((*key, match["sep"], line))
            for order in list(self.alive):
                # No phone writes a 4-digit year first with the day before the month: such a
                # file reads year/month/day (ISO 8601) unless --date-order says otherwise.
                if read_date(order, *key) is None or (order == "ydm" and len(key[0]) == 4):
                    self.alive.remove(order)
                    self.ruled_out[order] = at
        self.sequence.append(at)
        return len(self.alive) <= 1

    def shown(self, at: int) -> str:
        a, b, c, sep, line = self.dates[at]
        return f"line {line}'s {sep.join((a, b, c))}"

    def decide(self, where: str, context: ReadContext) -> _Dates:
        if not self.dates:  # no date at all: the reader says the file is no chat
            return _Dates("dmy", where, "no date in the file")
        if not self.alive:
            last = max(self.ruled_out.values())
            reasons = "; ".join(
                f"not {SPELLED[order]} ({self.shown(at)})"
                for order, at in sorted(self.ruled_out.items(), key=lambda kv: kv[1])
            )
            raise InputError(
                f"no order of day, month and year reads every date — {reasons}: the file mixes "
                "date formats or is not one export",
                path=where,
                line=self.dates[last][4],
            )
        if len(self.alive) == 1:
            order = self.alive[0]
            told = max((at for o, at in self.ruled_out.items()), default=0)
            return _Dates(order, where, f"as {self.shown(told)} says")
        candidates, why = list(self.alive), []
        readings = {o: [read_date(o, *d[:3]) for d in self.dates] for o in candidates}
        plausible = [o for o in candidates if all(d and d >= _FIRST_DAY for d in readings[o])]
        if plausible and len(plausible) < len(candidates):
            why.append("the other readings put messages before 2009, when WhatsApp began")
            candidates = plausible
        in_order = [o for o in candidates if self._in_time_order(readings[o])]
        if in_order and len(in_order) < len(candidates):
            why.append("the other readings put the messages out of time order")
            candidates = in_order
        if len(candidates) == 1:
            order = candidates[0]
            context.note(f"{where}: dates read as {SPELLED[order]}: {'; '.join(why)}")
            return _Dates(order, where, f"decided from the whole file: {'; '.join(why)}")
        differing = next(
            (i for i in range(len(self.dates)) if len({readings[o][i] for o in candidates}) > 1),
            None,
        )
        if differing is None:  # every date reads the same in every order left
            return _Dates(candidates[0], where, "every order left reads the same dates")
        ways = " or ".join(f"{readings[o][differing]} (--date-order {o})" for o in candidates)
        raise InputError(
            "cannot tell the order of day, month and year: every date reads as "
            + " or as ".join(SPELLED[o] for o in candidates)
            + f" ({self.shown(differing)} is {ways}); pass --date-order "
            + " or ".join(candidates),
            path=where,
        )

    def _in_time_order(self, readings: list[date | None]) -> bool:
        latest: date | None = None
        for at in self.sequence:
            found = readings[at]
            assert found is not None  # every date reads in an order still alive
            if latest is not None and found < latest - _SLACK:
                return False
            if latest is None or found > latest:
                latest = found
        return True
