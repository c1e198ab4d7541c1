"""WhatsApp chat exports: the ``.txt`` of "Export chat", alone or in the ``.zip`` it is shared as.

A message starts on a line that begins with a timestamp prefix; every other line belongs to the
message above it (multi-line messages). The two shapes, in the locales seen in real exports:

* Android ``10/03/2026, 18:04 - Ness Alderton: text`` (``10.03.26, 18:04 - ``, ``3/10/26,
  6:04 PM - ``, ``2026-03-10 18:04 - ``, ``20/6/2017 8:28 p. m. - ``, ``13.6.2018 klo 21.25 - ``);
* iOS ``[10/03/2026, 18:04:12] Ness Alderton: text`` (``[3/10/26, 6:04:12 PM]``,
  ``[10.03.26, 18:04:12]``, ``[1.1.2019, 12.00.00]``).

Dates are day, month and year separated by ``/``, ``.`` or ``-`` (2- or 4-digit years; 2-digit
ones are 20xx), or year first (``2026-03-10``); times are 24 h or 12 h (``AM``/``PM``, ``am``,
``a.m.``, ``a. m.``, with an ordinary, no-break U+00A0 or narrow no-break U+202F space before
the marker), seconds optional, ``:`` or ``.`` between the parts. Marks U+200E/U+200F (iOS puts
one before attachment lines, RTL locales around dates) are ignored in the prefix, stripped from
speaker names and from the start of a message's text, and kept anywhere else in the text.

**Day or month first** is decided per file from the values: a first field over 12 means day
first, a second field over 12 month first; a file where no field tells (every date in the 1st
to 12th of a month) is read day first, with a note saying so. ``ReadContext.date_order``
(``--date-order dmy|mdy``) overrides. Dates that contradict the decision (``13/03/26`` and
``03/14/26`` in one file), or that are not dates at all, are an :class:`InputError` naming the
line. Times are naive local times: WhatsApp writes no zone (the pipeline applies ``--timezone``).

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
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


Order = Literal["dmy", "mdy"]


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
    """Turns a prefix's fields into a datetime, day or month first as decided for the file."""

    order: Order
    where: str
    # The line that decided the order (auto), or None when --date-order gave it or no date told.
    decided_by: tuple[int, str] | None
    how: str
    _key: tuple[str, str, str] | None = None
    _date: tuple[int, int, int] = (1, 1, 1)

    def moment(self, match: re.Match[str], line: int) -> datetime:
        key = (match["a"], match["b"], match["c"])
        if key != self._key:
            self._date = self._ymd(key, match, line)
            self._key = key
        hour, minute = int(match["h"]), int(match["mi"])
        second = int(match["s"]) if match["s"] else 0
        marker = match["ampm"]
        if marker:
            if hour > 12:
                raise InputError(
                    f"hour {hour} with {marker!r}: not a 12-hour time", path=self.where, line=line
                )
            hour = hour % 12 + (12 if marker[0] in "Pp" else 0)
        year, month, day = self._date
        try:
            return datetime(year, month, day, hour, minute, second)
        except ValueError as exc:
            raise InputError(f"not a time: {exc}", path=self.where, line=line) from None

    def _ymd(
        self, key: tuple[str, str, str], match: re.Match[str], line: int
    ) -> tuple[int, int, int]:
        a, b, c = key
        sep = match["sep"]
        shown = f"{a}{sep}{b}{sep}{c}"
        if len(a) == 4:
            year, month, day = int(a), int(b), int(c)
        else:
            first, second = int(a), int(b)
            year = int(c) + (2000 if len(c) == 2 else 0)
            if self.decided_by is not None:
                line_no, date = self.decided_by
                if (self.order == "dmy" and second > 12) or (self.order == "mdy" and first > 12):
                    raise InputError(
                        f"the dates contradict each other: {shown} is month first but {date} "
                        f"(line {line_no}) is day first; pass --date-order dmy or mdy"
                        if self.order == "dmy"
                        else f"the dates contradict each other: {shown} is day first but "
                        f"{date} (line {line_no}) is month first; pass --date-order dmy or mdy",
                        path=self.where,
                        line=line,
                    )
            day, month = (first, second) if self.order == "dmy" else (second, first)
        try:
            datetime(year, month, day)
        except ValueError:
            order = {"dmy": "day/month/year", "mdy": "month/day/year"}[self.order]
            raise InputError(
                f"{shown} is not a date read as {order} ({self.how})", path=self.where, line=line
            ) from None
        return year, month, day


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
    """How this file's dates read: ``--date-order`` when given, else decided from the values
    (one quick pass, stopping at the first date that tells)."""
    where = source.describe(name)
    if context.date_order != "auto":
        return _Dates(context.date_order, where, None, "as --date-order says")
    ambiguous = False
    with source.text_lines(name) as lines:
        for number, raw in enumerate(lines, start=1):
            match = _prefix(raw)
            if match is None or len(match["a"]) == 4:
                continue  # year first (2026-03-10) reads one way only
            ambiguous = True
            a, b = int(match["a"]), int(match["b"])
            shown = f"{match['a']}{match['sep']}{match['b']}{match['sep']}{match['c']}"
            if a > 12:
                return _Dates("dmy", where, (number, shown), f"as line {number}'s {shown} says")
            if b > 12:
                return _Dates("mdy", where, (number, shown), f"as line {number}'s {shown} says")
    if ambiguous:
        context.note(
            f"{where}: no date tells day from month (none past the 12th), so dates were read "
            "day first (dd/mm/yy); pass --date-order mdy if they are month first"
        )
    return _Dates("dmy", where, None, "assumed: no date tells")
