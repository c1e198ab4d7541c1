"""Signal Desktop chats as signal-export (``sigexport``, carderne/signal-export) writes them.

Signal has no export of its own; ``sigexport DEST`` decrypts Signal Desktop's database and writes
one folder per chat, named after the contact or group (letters and digits only, ``Alice2`` for a
second ``Alice``), holding:

* ``data.json`` — despite the name, **JSON Lines**: one object per message, ``{"date":
  "2024-05-01T09:15:02.123000", "sender": "Aya", "body": "…", "quote": "", "sticker": null,
  "reactions": [["Jim", "👍"]], "attachments": [{"name": …, "path": …}], "deleted": false,
  "call": false, "missed": false}`` (``--no-json`` turns it off; older versions had fewer keys
  and ``sticker`` as a string). Read first when present.
* ``chat.md`` — ``[2024-05-01 09:15:02] Aya: text`` (older versions ``[2024-05-01, 09:15]``),
  a message running on to the next such line, with the quote as ``> …`` lines before the body,
  reactions as ``(- Jim: 👍 -)``, stickers as ``(( 👍 ))`` or a sticker link, attachments as
  ``![name](./media/…)`` / ``[name](./media/…)`` / ``(media not exported)``. Read when there is
  no ``data.json``; a line inside a message that happens to look like a header starts a new one.
* ``index.html`` (not read) and ``media/``. A group's ``meta.json`` beside them (what a separate
  ``sigexport --chat-members`` run writes, copied into the chat's folder) gives its name and
  members.

The export may be the whole ``DEST`` folder (or a zip of it), one chat's folder, or one
``data.json`` / ``chat.md`` file.

* **Conversations**: one per chat folder; key and title the chat's name — a group's
  ``meta.json`` ``name``, else the member or sender whose name the folder spells (``AyaSmith``
  → ``Aya Smith``: a name pseudonymisation knows), else the folder name.
* **Time**: signal-export writes the exporting computer's local time **without a zone**, so
  timestamps stay naive (pass ``--timezone`` to state the zone).
* **Speakers**: the names it writes; your own messages are ``Me`` → the ``--me`` name; a sender
  it could not name (``No-Sender``) → ``unknown``.
* **Kept**: messages with text; attachments as one ``[file: NAME]`` line each (``[media]`` or
  ``[attachment]`` for one the export left out; kind ``media`` when there is no text); stickers
  as ``[sticker 👍]`` (kind ``sticker``). A reply's quote is not added to its text; its
  ``reply_to`` is the latest earlier message of the chat with that text, when there is one.
  ``native_id`` is the message's line number in the file. Call records as kind ``call``, their
  description in brackets (``[Missed voice call]``), as the other formats keep calls.
* **Skipped, counted**: ``reaction`` (each one; reactions are not messages), ``deleted message``
  (deleted for everyone), ``empty message`` (no text, attachment or sticker: group and
  settings notices such as timer or group changes reach the export so).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any, ClassVar

from chatledger.core import InputError
from chatledger.corpus.exports._model import (
    Conversation,
    ExportMessage,
    MessageKind,
    ReadContext,
)
from chatledger.corpus.exports._reader import EXPORT_READERS, ExportReader
from chatledger.corpus.exports._source import ExportSource

JSON_FILE = "data.json"
MARKDOWN_FILE = "chat.md"
META_FILE = "meta.json"
_HEADER = re.compile(r"^\[(\d{4}-\d{2}-\d{2}),? (\d{2}:\d{2}(?::\d{2})?)\] (.*?): ?")
_REACTIONS = re.compile(r"\n\(- (.*) -\)$")
_STICKER_OLD = re.compile(r"\n\(\( (.*) \)\)$")
_STICKER_LINK = re.compile(r"\[([^\]\n]*)\]\(\.\./exported_stickers/[^)\s]*\)  $")
_ATTACHMENT_TAIL = re.compile(
    r"(?:!?\[([^\]\n]*)\]\(\./[^)\s]*\)  |\((media|attachment) not exported\)  )$"
)
_CALL = re.compile(
    r"^(?:(?:Incoming|Outgoing) (?:voice |video )?call(?: \([^)\n]*\))?"
    r"|Missed (?:voice |video )?call)$"
)
_DELETED = "(This message was deleted)"


@dataclass(frozen=True)
class _Parsed:
    """One message as signal-export wrote it, before it becomes an ExportMessage."""

    line: int
    date: datetime
    sender: str
    body: str
    quote: str
    sticker: str | None
    reactions: int
    attachments: tuple[str, ...]
    deleted: bool
    call: bool


@EXPORT_READERS.register("signal")
class SignalReader(ExportReader):
    kind: ClassVar[str] = "signal"
    label: ClassVar[str] = "a signal-export folder (Signal)"
    how_to_export = (
        "Signal Desktop via signal-export: quit Signal, `pip install signal-export`, "
        "`sigexport ~/signal-chats`; give that folder (or one chat's folder)"
    )

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        chats = _chat_files(source.names())
        if not chats:
            return False
        name = next(iter(chats.values()))
        try:
            head = source.head(name, 4096)
        except (InputError, OSError):
            return False
        first = next((line for line in head.splitlines() if line.strip()), "")
        if name.endswith(JSON_FILE):
            return first.startswith("{") and all(
                f'"{k}"' in first for k in ("date", "sender", "body")
            )
        return _HEADER.match(first) is not None

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        names = source.names()
        present = set(names)
        chats = _chat_files(names)
        if not chats:
            raise InputError(
                f"not a signal-export folder: no {JSON_FILE} or {MARKDOWN_FILE} in a chat folder",
                path=source.path,
            )
        for folder, name in chats.items():
            where = source.describe(name)
            if name.endswith(JSON_FILE):
                parsed = list(_read_json_lines(source, name, where))
            else:
                parsed = list(_read_markdown(source, name, where))
            group_name, members = _meta(source, folder, present)
            title = _title(_chat_name(source, folder), group_name, members, parsed)
            yield Conversation(
                key=title,
                title=title,
                messages=_messages(parsed, context),
                members=members,
            )


def _chat_files(names: list[str]) -> dict[str, str]:
    """Chat folder → the file to read there (``data.json`` over ``chat.md``)."""
    found: dict[str, str] = {}
    for name in names:
        path = PurePosixPath(name)
        if path.name not in (JSON_FILE, MARKDOWN_FILE):
            continue
        folder = str(path.parent) if str(path.parent) != "." else ""
        if found.get(folder, "").endswith(JSON_FILE):
            continue
        found[folder] = name
    return dict(sorted(found.items()))


def _chat_name(source: ExportSource, folder: str) -> str:
    """The chat's folder name (signal-export names it after the contact or group)."""
    if folder:
        return PurePosixPath(folder).name
    if source.is_single_file:
        return source.path.parent.name or source.path.stem
    return source.path.stem if source.is_zip else source.path.name


def _meta(
    source: ExportSource, folder: str, present: set[str]
) -> tuple[str | None, tuple[str, ...]]:
    """A group's name and members from its ``meta.json``, when the chat folder has one."""
    name = f"{folder}/{META_FILE}" if folder else META_FILE
    if source.is_single_file or name not in present:
        return None, ()
    try:
        meta = json.loads(source.read_text(name))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg}", path=source.describe(name), line=exc.lineno
        ) from None
    if not isinstance(meta, dict):
        return None, ()
    group = meta.get("name")
    members = meta.get("members")
    names = (
        (m.get("name") or m.get("display_name") for m in members if isinstance(m, dict))
        if isinstance(members, list)
        else ()
    )
    found = tuple(n for n in names if isinstance(n, str) and n.strip())
    return (group.strip() if isinstance(group, str) and group.strip() else None), found


def _title(folder: str, group: str | None, members: tuple[str, ...], parsed: list[_Parsed]) -> str:
    """The chat's name. signal-export names the folder after the contact or group with every
    character but letters and digits dropped (``Aya Smith`` → ``AyaSmith``, a second one
    ``AyaSmith2``): the name it came from is the group's name in ``meta.json``, or the member or
    sender it spells — so that name, which pseudonymisation knows, is used; else the folder's."""
    if group:
        return group
    stem = re.sub(r"\d+$", "", folder)
    for name in dict.fromkeys([*members, *(p.sender.strip() for p in parsed)]):
        if name in ("Me", "No-Sender", ""):
            continue
        squashed = "".join(ch for ch in name if ch.isalnum())
        if squashed and squashed in (folder, stem):
            return name
    return folder


def _messages(parsed: list[_Parsed], context: ReadContext) -> Iterator[ExportMessage]:
    by_text: dict[str, str] = {}
    kept: list[ExportMessage] = []
    for item in sorted(parsed, key=_when):
        if item.reactions:
            context.log.skip("reaction", item.reactions)
        if item.deleted:
            context.log.skip("deleted message")
            continue
        body = item.body
        kind: MessageKind = "text"
        if item.call:
            # A call record, as the other formats keep them: kind call, in brackets.
            body, kind = f"[{body.strip() or 'call'}]", "call"
        extras = [a if a.startswith("[") else f"[file: {a}]" for a in item.attachments]
        if item.sticker is not None:
            extras.append(f"[sticker {item.sticker}]" if item.sticker else "[sticker]")
        if not body.strip():
            if not extras:
                context.log.skip("empty message")
                continue
            kind = "sticker" if item.sticker is not None and not item.attachments else "media"
            text = "\n".join(extras)
        else:
            text = "\n".join([body, *extras])
        native = str(item.line)
        reply_to = by_text.get(item.quote) if item.quote else None
        if body.strip() and kind == "text":
            by_text[body] = native
        kept.append(
            ExportMessage(
                timestamp=item.date,
                speaker=_speaker(item.sender, context),
                text=text,
                kind=kind,
                native_id=native,
                reply_to=reply_to,
            )
        )
    return iter(kept)


def _when(item: _Parsed) -> float:
    moment = item.date
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _speaker(sender: str, context: ReadContext) -> str:
    sender = sender.strip()
    if sender == "Me":
        return context.me
    if not sender or sender == "No-Sender":
        return "unknown"
    return sender


# --- data.json (JSON Lines) --------------------------------------------------------------------


def _read_json_lines(source: ExportSource, name: str, where: str) -> Iterator[_Parsed]:
    with source.text_lines(name) as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", path=where, line=number) from None
            if not isinstance(value, dict):
                raise InputError("expected a message object", path=where, line=number)
            yield _from_json(value, where, number)


def _from_json(value: dict[str, Any], where: str, number: int) -> _Parsed:
    date = value.get("date")
    moment = _iso(date) if isinstance(date, str) else None
    if moment is None:
        raise InputError(f"cannot read {date!r} as a time", path=where, line=number, field="date")
    sender = value.get("sender")
    if not isinstance(sender, str):
        raise InputError("expected the sender's name", path=where, line=number, field="sender")
    body = value.get("body")
    body = body if isinstance(body, str) else ""
    quote = value.get("quote")
    reactions = value.get("reactions")
    attachments: list[str] = []
    for item in value.get("attachments") or []:
        if isinstance(item, dict):
            missing, name = item.get("missing_kind"), item.get("name")
            if isinstance(missing, str) and missing:
                attachments.append(f"[{missing}]")
            else:
                attachments.append(name if isinstance(name, str) and name else "[file]")
    return _Parsed(
        line=number,
        date=moment,
        sender=sender,
        body=body.rstrip(),
        quote=_quote_text(quote) if isinstance(quote, str) else "",
        sticker=_sticker_label(value.get("sticker")),
        reactions=len(reactions) if isinstance(reactions, list) else 0,
        attachments=tuple(attachments),
        deleted=value.get("deleted") is True,
        call=value.get("call") is True,
    )


def _sticker_label(sticker: Any) -> str | None:
    if isinstance(sticker, dict):
        emoji = sticker.get("emoji")
        return emoji if isinstance(emoji, str) else ""
    if isinstance(sticker, str) and sticker.strip():
        return sticker.strip()
    return None


def _quote_text(quote: str) -> str:
    """``"\\n\\n> line one\\n> line two\\n\\n"`` → ``"line one\\nline two"``."""
    lines = [line.removeprefix(">").removeprefix(" ") for line in quote.strip().splitlines()]
    return "\n".join(lines).strip()


def _iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        return None


# --- chat.md -----------------------------------------------------------------------------------


def _read_markdown(source: ExportSource, name: str, where: str) -> Iterator[_Parsed]:
    start = 0
    header: re.Match[str] | None = None
    body: list[str] = []
    with source.text_lines(name) as lines:
        for number, line in enumerate(lines, start=1):
            match = _HEADER.match(line)
            if match is not None:
                if header is not None:
                    yield _from_markdown(header, body, start, where)
                header, start, body = match, number, [line[match.end() :]]
            elif header is None:
                if line.strip():
                    raise InputError(
                        "expected a message line like '[2024-05-01 09:15:02] Name: text'",
                        path=where,
                        line=number,
                    )
            else:
                body.append(line)
    if header is not None:
        yield _from_markdown(header, body, start, where)


def _from_markdown(header: re.Match[str], lines: list[str], number: int, where: str) -> _Parsed:
    day, clock, sender = header.groups()
    fmt = "%Y-%m-%d %H:%M:%S" if clock.count(":") == 2 else "%Y-%m-%d %H:%M"
    try:
        moment = datetime.strptime(f"{day} {clock}", fmt)
    except ValueError:
        raise InputError(f"cannot read {day} {clock} as a time", path=where, line=number) from None
    # Each message is written with a trailing newline and printed with another.
    text = "".join(lines).replace("\r\n", "\n").removesuffix("\n").removesuffix("\n")
    quote = ""
    if text.startswith("\n\n> "):
        head, sep, rest = text[2:].partition("\n\n")
        if sep and all(line.startswith(">") for line in head.splitlines()):
            quote, text = _quote_text(head), rest
    if text == _DELETED:
        return _Parsed(number, moment, sender, "", quote, None, 0, (), True, False)
    attachments: list[str] = []
    while (found := _ATTACHMENT_TAIL.search(text)) is not None:
        missing = found.group(2)
        attachments.insert(0, f"[{missing}]" if missing else found.group(1) or "[file]")
        text = text[: found.start()]
    sticker: str | None = None
    found = _STICKER_LINK.search(text) or _STICKER_OLD.search(text)
    if found is not None:
        label = found.group(1)
        sticker, text = ("" if label == "sticker" else label), text[: found.start()]
    reactions = 0
    if (found := _REACTIONS.search(text)) is not None:
        reactions = len(found.group(1).split(", "))
        text = text[: found.start()]
    body = text.rstrip()
    call = not attachments and sticker is None and _CALL.match(body) is not None
    return _Parsed(
        number, moment, sender, body, quote, sticker, reactions, tuple(attachments), False, call
    )
