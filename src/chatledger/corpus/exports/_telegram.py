"""Telegram Desktop exports: ``result.json`` ("Machine-readable JSON"), alone, in its export
folder, or zipped.

Two shapes, both written by Telegram Desktop's exporter:

* a **single chat** (a chat's ⋮ → Export chat history): top-level ``name``, ``type``, ``id`` and
  ``messages``;
* a **full export** (Settings → Advanced → Export Telegram data): ``chats.list[]`` (and
  ``left_chats.list[]``), each a chat of the shape above, beside contacts, sessions and so on,
  which are not read.

Every chat is one conversation: key ``tg<id>`` (the chat id: stable across re-exports, and
letters first so pseudonymisation never mistakes it for a phone number), title the chat's name
("Saved Messages" for the chat with oneself, which has none). Telegram exports no member list,
so the members are the names the chat itself shows: senders, the actors and invitees of its
service messages, and users mentioned by name.

A message (``type: "message"``) is kept:

* **time** from ``date_unixtime`` (epoch seconds → aware UTC); exports older than that field
  have only ``date``, local time without a zone, kept naive (the summary says so);
* **speaker** ``from``; a deleted account has ``from: null`` and is shown as ``Deleted Account
  (user123…)`` from its ``from_id`` (so two deleted accounts stay two people); a channel post
  with neither (older exports) is the post's ``author`` signature, else the channel's name;
* **text** is ``text`` as plain text: a string, or a list of strings and ``{type, text}`` parts
  (bold, italic, links, mentions, code, hashtags …) joined, keeping what the reader sees; a
  ``text_link`` (words linking somewhere else) keeps its address in brackets after the words,
  ``the plan (https://…)``, since the address is part of what was said;
* **media** gets a short placeholder — ``[photo]``, ``[video]``, ``[voice message]``,
  ``[video message]``, ``[GIF]``, ``[audio: performer – title]``, ``[file: name.pdf]``,
  ``[location: place]``, ``[contact]``, ``[sticker 🥕]`` (kind ``sticker``), ``[poll] question
  (answer / answer)`` (kind ``poll``) — alone (kind ``media``) or before the caption; a
  forwarded message starts with ``[forwarded]``; ``reply_to_message_id`` becomes ``reply_to``;
  an edited message has its last text (the only one exported).

Not kept, and counted: service messages (``type: "service"``: group created, members added,
pins, title changes …) as ``service message`` — except **calls** (``phone_call`` and
``group_call``), which are kept as kind ``call`` with the caller as speaker: ``[call, 2 min 5
s]``, ``[missed call]``; ``type: "unsupported"`` items; messages with neither text nor media
(``empty message``); and each reaction (``reaction``: reactions are not messages).

Telegram Desktop has written two kinds of invalid JSON, both repaired (and noted): control
characters as ``\\x0B`` (tdesktop #27571) and, in 4.1, custom-emoji ``document_id`` values
without quotes (tdesktop #24961).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, ClassVar

from chatledger.core import InputError
from chatledger.corpus.exports._model import (
    Conversation,
    ExportMessage,
    MessageKind,
    ReadContext,
    in_time_order,
)
from chatledger.corpus.exports._reader import EXPORT_READERS, ExportReader
from chatledger.corpus.exports._source import ExportSource

RESULT_FILE = "result.json"
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
# An odd number of backslashes, then x and two hex digits: tdesktop's invalid "\x0B" escape.
_BAD_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\x([0-9A-Fa-f]{2})")
# tdesktop 4.1: "document_id": video_files/sticker.webm (a path without quotes).
_BARE_DOCUMENT = re.compile(r'("document_id":[ \t]*)(?![\s"\d-])([^\n]*?)([ \t]*\r?\n)')
_CALL_ACTIONS = {"phone_call": "call", "group_call": "group call"}
_MEDIA_TYPES = {
    "voice_message": "voice message",
    "video_message": "video message",
    "video_file": "video",
    "animation": "GIF",
}


@EXPORT_READERS.register("telegram")
class TelegramReader(ExportReader):
    kind: ClassVar[str] = "telegram"
    label: ClassVar[str] = "a Telegram Desktop export (result.json)"
    how_to_export = (
        "Telegram Desktop: a chat's ⋮ → Export chat history, or Settings → Advanced → Export "
        "Telegram data; format 'Machine-readable JSON'; give result.json, its folder or a zip"
    )

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        names = source.names()
        results = [n for n in names if PurePosixPath(n).name == RESULT_FILE]
        if results:
            head = source.head(results[0])
            return '"guild"' not in head and any(
                key in head for key in ('"messages"', '"chats"', '"personal_information"')
            )
        if len(names) == 1 and names[0].lower().endswith(".json"):
            head = source.head(names[0])
            return '"messages"' in head and ('"date_unixtime"' in head or '"from_id"' in head)
        return False

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        names = source.names()
        files = [n for n in names if PurePosixPath(n).name == RESULT_FILE]
        if not files:
            files = [n for n in names if n.lower().endswith(".json")][:1] if len(names) == 1 else []
        if not files:
            raise InputError(
                f"no {RESULT_FILE} in this folder: give the folder Telegram Desktop exported "
                "(format 'Machine-readable JSON') or its result.json",
                path=source.path,
            )
        tally = _Tally()
        for name in files:
            yield from _read_file(source, name, context, tally)
        if tally.edited:
            context.note(
                f"{tally.edited} Telegram message(s) were edited after sending: the last "
                "text is kept (the export has no other)"
            )


@dataclass
class _Tally:
    edited: int = 0


@dataclass
class _Chat:
    """One chat being read: its header fields, messages so far and the names it shows."""

    where: str
    key: str = ""
    title: str | None = None
    messages: list[ExportMessage] = field(default_factory=list)
    names: dict[str, None] = field(default_factory=dict)

    def name(self, value: str) -> None:
        if value.strip():
            self.names.setdefault(value, None)


@dataclass(frozen=True)
class _Place:
    """Where a message is, for an error: its line is counted only when one is raised."""

    scan: _Scan
    start: int
    path: str

    @property
    def line(self) -> int:
        return self.scan.line(self.start)


class _Scan:
    """Walks a JSON document a piece at a time (``json.JSONDecoder.raw_decode`` for each
    value), so a full export's chats are decoded one by one, never all at once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        match = _SPACE.match(self.text, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()
        return self.text[self.pos : self.pos + 1]

    def take(self, char: str) -> bool:
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def need(self, char: str) -> None:
        if not self.take(char):
            raise json.JSONDecodeError(f"Expecting {char!r}", self.text, self.pos)

    def value(self) -> Any:
        self.peek()
        found, self.pos = _DECODER.raw_decode(self.text, self.pos)
        return found

    def members(self) -> Iterator[str]:
        """The keys of the object here; the caller reads each key's value (``value``, or a
        walk) before asking for the next key."""
        self.need("{")
        if self.take("}"):
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise json.JSONDecodeError("Expecting a key", self.text, self.pos)
            self.need(":")
            yield key
            if not self.take(","):
                self.need("}")
                return

    def items(self) -> Iterator[int]:
        """The elements of the array here (their positions); the caller reads each."""
        self.need("[")
        if self.take("]"):
            return
        while True:
            yield self.pos
            if not self.take(","):
                self.need("]")
                return

    def line(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1


def _repair(text: str) -> tuple[str, int]:
    """``text`` with tdesktop's two kinds of invalid JSON made valid, and how many were fixed."""
    fixed = 0
    if "\\x" in text:
        text, count = _BAD_ESCAPE.subn(r"\1\\u00\2", text)
        fixed += count
    if '"document_id"' in text:
        text, count = _BARE_DOCUMENT.subn(_quote_document, text)
        fixed += count
    return text, fixed


def _quote_document(match: re.Match[str]) -> str:
    value, comma = match.group(2), ""
    if value.endswith(","):
        value, comma = value[:-1], ","
    return match.group(1) + json.dumps(value.rstrip()) + comma + match.group(3)


def _read_file(
    source: ExportSource, name: str, context: ReadContext, tally: _Tally
) -> Iterator[Conversation]:
    where = source.describe(name)
    text, fixed = _repair(source.read_text(name))
    if fixed:
        context.note(
            f"{name}: {fixed} piece(s) of invalid JSON written by Telegram Desktop were "
            "repaired (\\x escapes, unquoted custom-emoji ids)"
        )
    scan = _Scan(text)
    try:
        if scan.peek() != "{":
            raise InputError(
                "not a Telegram export: expected a JSON object with 'messages' (one chat) "
                "or 'chats' (a full export)",
                path=where,
            )
        found = False
        single = _Chat(where)
        for key in scan.members():
            if key in ("chats", "left_chats"):
                found = True
                yield from _chat_list(scan, key, where, context, tally)
            elif key == "messages":
                found = True
                _read_messages(scan, single, "messages", context, tally)
            elif key in ("name", "type", "id"):
                _header(single, key, scan.value())
            else:
                scan.value()
        if single.key or single.messages:
            yield _conversation(single, where)
        if not found:
            raise InputError(
                "not a Telegram export: no 'messages' (one chat) or 'chats' (a full export) "
                "at the top level",
                path=where,
            )
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=where, line=exc.lineno) from None


def _chat_list(
    scan: _Scan, key: str, where: str, context: ReadContext, tally: _Tally
) -> Iterator[Conversation]:
    if scan.peek() != "{":
        scan.value()
        return
    for sub in scan.members():
        if sub != "list" or scan.peek() != "[":
            scan.value()
            continue
        for index, _ in enumerate(scan.items()):
            chat = _Chat(where)
            path = f"{key}.list[{index}]"
            if scan.peek() != "{":
                raise InputError(
                    "expected a chat object", path=where, line=scan.line(scan.pos), field=path
                )
            for chat_key in scan.members():
                if chat_key == "messages":
                    _read_messages(scan, chat, f"{path}.messages", context, tally)
                elif chat_key in ("name", "type", "id"):
                    _header(chat, chat_key, scan.value())
                else:
                    scan.value()
            yield _conversation(chat, where)


def _header(chat: _Chat, key: str, value: Any) -> None:
    if key == "id" and isinstance(value, int | str) and str(value):
        chat.key = f"tg{value}"
    elif key == "name" and isinstance(value, str) and value.strip():
        chat.title = value
    elif key == "type" and value == "saved_messages" and chat.title is None:
        chat.title = "Saved Messages"


def _conversation(chat: _Chat, where: str) -> Conversation:
    key = chat.key or f"tg-{PurePosixPath(where).parent.name or 'chat'}"
    return Conversation(
        key=key,
        title=chat.title,
        messages=in_time_order(chat.messages),
        members=tuple(chat.names),
    )


def _read_messages(
    scan: _Scan, chat: _Chat, path: str, context: ReadContext, tally: _Tally
) -> None:
    if scan.peek() != "[":
        raise InputError(
            "expected a list of messages",
            path=chat.where,
            line=scan.line(scan.pos),
            field=path,
        )
    for index, start in enumerate(scan.items()):
        raw = scan.value()
        if not isinstance(raw, dict):
            raise InputError(
                "expected a message object",
                path=chat.where,
                line=scan.line(start),
                field=f"{path}[{index}]",
            )
        kind = raw.get("type")
        if not isinstance(kind, str) or (
            kind in ("message", "service") and "date" not in raw and "date_unixtime" not in raw
        ):
            # Telegram writes a type and a date on every item: anything else is another app's
            # JSON (a {"messages": [...]} of Discord, Instagram …), never read as empty.
            missing = "type" if not isinstance(kind, str) else "date"
            raise InputError(
                f"not a Telegram export: a message without '{missing}' (Telegram Desktop writes "
                "type, id and date on every message)",
                path=chat.where,
                line=scan.line(start),
                field=f"{path}[{index}]",
            )
        message = _message(raw, chat, context, tally, _Place(scan, start, f"{path}[{index}]"))
        if message is not None:
            chat.messages.append(message)


def _message(
    raw: dict[str, Any],
    chat: _Chat,
    context: ReadContext,
    tally: _Tally,
    place: _Place,
) -> ExportMessage | None:
    kind = raw.get("type")
    for reaction in raw.get("reactions") or ():
        count = reaction.get("count", 1) if isinstance(reaction, dict) else 1
        context.log.skip("reaction", count if isinstance(count, int) and count > 0 else 1)
    if kind == "service":
        for member in raw.get("members") or ():
            if isinstance(member, str):
                chat.name(member)
        inviter = raw.get("inviter")
        if isinstance(inviter, str):
            chat.name(inviter)
        actor = _speaker(raw.get("actor"), raw.get("actor_id"))
        chat.name(actor)
        action = raw.get("action")
        if action in _CALL_ACTIONS:
            return ExportMessage(
                _moment(raw, chat, place), actor, _call_text(raw, action), "call", _id(raw)
            )
        context.log.skip("service message")
        return None
    if kind != "message":
        context.log.skip("unsupported message" if kind == "unsupported" else f"type {kind}")
        return None
    if "from" in raw or "from_id" in raw:
        speaker = _speaker(raw.get("from"), raw.get("from_id"))
    else:  # a channel post in an older export: the signature, else the channel itself
        author = raw.get("author")
        speaker = author if isinstance(author, str) and author else chat.title or "unknown"
    chat.name(speaker)
    body = _plain(raw.get("text"), chat)
    if not body and raw.get("text_entities"):
        body = _plain(raw.get("text_entities"), chat)
    media, media_kind = _media(raw)
    if raw.get("forwarded_from"):
        media = f"[forwarded] {media}" if media else "[forwarded]"
    if not body.strip() and not media:
        context.log.skip("empty message")
        return None
    if raw.get("edited") or raw.get("edited_unixtime"):
        tally.edited += 1
    text = f"{media} {body}" if media and body.strip() else (media or body)
    message_kind: MessageKind = media_kind if media and not body.strip() else "text"
    reply = raw.get("reply_to_message_id")
    return ExportMessage(
        timestamp=_moment(raw, chat, place),
        speaker=speaker,
        text=text,
        kind=message_kind,
        native_id=_id(raw),
        reply_to=str(reply) if isinstance(reply, int | str) and str(reply) else None,
    )


def _id(raw: dict[str, Any]) -> str | None:
    value = raw.get("id")
    return str(value) if isinstance(value, int | str) else None


def _speaker(name: Any, user_id: Any) -> str:
    if isinstance(name, str) and name.strip():
        return name
    if isinstance(user_id, str | int) and str(user_id):
        return f"Deleted Account ({user_id})"
    return "Deleted Account"


def _moment(raw: dict[str, Any], chat: _Chat, place: _Place) -> datetime:
    stamp = raw.get("date_unixtime")
    try:
        if stamp is not None:
            return datetime.fromtimestamp(int(stamp), UTC)
        date = raw.get("date")
        if isinstance(date, str):
            return datetime.fromisoformat(date)
    except (ValueError, OverflowError, OSError):
        pass
    raise InputError(
        f"cannot read the time of message {raw.get('id')!r}: "
        f"date_unixtime={stamp!r}, date={raw.get('date')!r}",
        path=chat.where,
        line=place.line,
        field=f"{place.path}.date_unixtime",
    )


def _plain(text: Any, chat: _Chat) -> str:
    """Telegram's ``text`` (a string, or strings and ``{type, text}`` parts) as plain text."""
    if isinstance(text, str):
        return text
    if not isinstance(text, list):
        return ""
    out: list[str] = []
    for part in text:
        if isinstance(part, str):
            out.append(part)
            continue
        if not isinstance(part, dict):
            continue
        words = part.get("text")
        words = words if isinstance(words, str) else ""
        kind = part.get("type")
        if kind == "text_link":
            href = part.get("href")
            if isinstance(href, str) and href and href != words:
                words = f"{words} ({href})" if words else href
        elif kind == "mention_name":
            chat.name(words)
        out.append(words)
    return "".join(out)


def _media(raw: dict[str, Any]) -> tuple[str, MessageKind]:
    """The placeholder for what the message carries besides text, and its kind."""
    media_type = raw.get("media_type")
    if media_type == "sticker":
        emoji = raw.get("sticker_emoji")
        return (f"[sticker {emoji}]" if isinstance(emoji, str) and emoji else "[sticker]"), (
            "sticker"
        )
    poll = raw.get("poll")
    if isinstance(poll, dict):
        question = poll.get("question") if isinstance(poll.get("question"), str) else ""
        answers = [
            a["text"]
            for a in poll.get("answers") or ()
            if isinstance(a, dict) and isinstance(a.get("text"), str)
        ]
        shown = f"[poll] {question}".rstrip()
        return (f"{shown} ({' / '.join(answers)})" if answers else shown), "poll"
    if isinstance(media_type, str) and media_type in _MEDIA_TYPES:
        return f"[{_MEDIA_TYPES[media_type]}]", "media"
    if media_type == "audio_file":
        who = " – ".join(
            v for v in (raw.get("performer"), raw.get("title")) if isinstance(v, str) and v
        )
        return (f"[audio: {who}]" if who else "[audio]"), "media"
    if raw.get("photo"):
        return "[photo]", "media"
    if raw.get("file"):
        return _file_placeholder(raw), "media"
    if "location_information" in raw or raw.get("place_name"):
        place = ", ".join(
            v for v in (raw.get("place_name"), raw.get("address")) if isinstance(v, str) and v
        )
        return (f"[location: {place}]" if place else "[location]"), "media"
    if raw.get("contact_information") or raw.get("contact_vcard"):
        return "[contact]", "media"
    if isinstance(raw.get("game_title"), str):
        return f"[game: {raw['game_title']}]", "other"
    if raw.get("invoice_information"):
        return "[invoice]", "other"
    return "", "text"


def _file_placeholder(raw: dict[str, Any]) -> str:
    name = raw.get("file_name")
    if not (isinstance(name, str) and name):
        path = raw.get("file")
        # "(File not included. Change data exporting settings to download.)" has no name.
        name = (
            PurePosixPath(path).name if isinstance(path, str) and not path.startswith("(") else ""
        )
    return f"[file: {name}]" if name else "[file]"


def _call_text(raw: dict[str, Any], action: str) -> str:
    label = _CALL_ACTIONS[action]
    reason = raw.get("discard_reason")
    seconds = raw.get("duration_seconds", raw.get("duration"))
    if reason == "missed":
        return f"[missed {label}]"
    if reason == "busy":
        return f"[{label}: busy]"
    if isinstance(seconds, int) and seconds > 0:
        minutes, rest = divmod(seconds, 60)
        spoken = " ".join(
            part
            for part in (f"{minutes} min" if minutes else "", f"{rest} s" if rest else "")
            if part
        )
        return f"[{label}, {spoken}]"
    return f"[{label}]"
