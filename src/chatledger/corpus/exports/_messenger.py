"""Facebook Messenger exports: the "Download Your Information" JSON (``message_1.json``,
``message_2.json`` … per thread folder), and the JSON of end-to-end encrypted chats downloaded
from Messenger's secure storage.

**Download Your Information** (Format: JSON) puts each thread in its own folder —
``your_facebook_activity/messages/inbox/<thread>/`` (older archives: ``messages/inbox/``; also
``archived_threads``, ``filtered_threads``, ``message_requests`` and ``e2ee_cutover``) — as
``message_1.json``, ``message_2.json`` …, each ``{participants: [{name}], messages: [...],
title, thread_path, …}`` with the messages **newest first**, within a file and across files
(``message_1`` holds the newest). A thread folder is one conversation: its files are merged and
sorted oldest first (messages with the same millisecond keep their order). Give one thread
folder, the whole ``messages`` folder (every thread is a conversation), or the zip.

**Mojibake.** Facebook writes UTF-8 bytes as ``\\u00XX`` escapes, one per byte, so ``Zoë``
reads as ``ZoÃ«`` and 😀 as four Latin-1 characters. Every name, title and text is repaired
(``text.encode("latin-1").decode("utf-8")``); a string that does not round-trip that way (it
was not double-encoded) is kept as it is.

**Secure storage** (messenger.com/secure_storage/dyi, for end-to-end encrypted chats since
2024) writes one flat ``.json`` per thread with other keys: ``participants: [name, …]``,
``threadName``, ``messages: [{senderName, text, timestamp (ms), type, isUnsent, media: [{uri}],
reactions: [{actor, reaction}]}]``. It is read the same way (files of one thread — same name and
participants — are merged). The HTML version of Download Your Information is refused with one
line: request the JSON version.

Kept, per message: ``sender_name`` (speaker), ``timestamp_ms`` (epoch milliseconds → aware
UTC), ``content``; photos, videos, GIFs, audio and files become ``[photo]`` / ``[2 photos]``,
``[video]``, ``[GIF]``, ``[audio]``, ``[file: name.pdf]`` (kind ``media`` when there is no text,
before the text otherwise); a sticker ``[sticker]`` (kind ``sticker``); a shared link
``[link: https://…]`` unless the text already has it; a call (``type: "Call"``) kind ``call``:
``[call, 4 min 10 s]`` or ``[missed call]``. Conversation key: ``fb`` and a hash of the
``thread_path`` (the folder name is made of participants' names, which must not survive
pseudonymisation); title: ``title``; members: ``participants``.

Not kept, and counted: ``is_unsent`` messages (``unsent message``), joins and leaves
(``type: "Subscribe"`` / ``"Unsubscribe"``, ``system message``), messages with nothing in them
(``empty message``), and each reaction (``reaction``: reactions are not messages). Facebook
also writes some events as ordinary text ("Zoë named the group Trip."); they cannot be told
apart from messages in every language, so they are kept.
"""

from __future__ import annotations

import hashlib
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

_MESSAGE_FILE = re.compile(r"(?:^|/)message_(\d+)\.json$")
_HTML_FILE = re.compile(r"(?:^|/)message_\d+\.html$")
_SYSTEM = {"Subscribe", "Unsubscribe"}
_EXTENSIONS = {
    "photo": (".jpg", ".jpeg", ".png", ".webp", ".heic"),
    "video": (".mp4", ".mov", ".webm"),
    "audio": (".mp3", ".m4a", ".aac", ".wav", ".ogg", ".opus"),
    "GIF": (".gif",),
}


@EXPORT_READERS.register("messenger")
class MessengerReader(ExportReader):
    kind: ClassVar[str] = "messenger"
    label: ClassVar[str] = "a Facebook Messenger export"
    how_to_export = (
        "Facebook: Accounts Centre → Your information and permissions → Download your "
        "information → Messages, Format JSON; give a thread folder, the messages folder or the "
        "zip (encrypted chats: messenger.com/secure_storage/dyi)"
    )

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        return _has_threads(source) and not _from_instagram(source)

    @classmethod
    def accepts(cls, source: ExportSource) -> bool:
        return _has_threads(source)

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        names = source.names()
        folders: dict[str, list[tuple[int, str]]] = {}
        secure: list[str] = []
        for name in names:
            match = _MESSAGE_FILE.search(name)
            if match:
                folder = str(PurePosixPath(name).parent)
                folders.setdefault(folder, []).append((int(match.group(1)), name))
            elif name.lower().endswith(".json"):
                head = source.head(name)
                if _is_secure_storage(head):
                    secure.append(name)
                elif _is_dyi(head):
                    # The same thread JSON under another name (Instagram's, a renamed file):
                    # a thread of its own.
                    folders.setdefault(name, []).append((1, name))
        if not folders and not secure:
            html = any(_HTML_FILE.search(n) for n in names)
            raise InputError(
                "this is the HTML version of Facebook's Download Your Information: request it "
                "again with Format: JSON"
                if html
                else "not a Messenger export: expected message_1.json files (participants, "
                "messages with sender_name and timestamp_ms) or secure-storage JSON",
                path=source.path,
            )
        for folder in sorted(folders):
            yield _dyi_thread(source, folder, sorted(folders[folder]), context)
        yield from _secure_threads(source, secure, context)


@EXPORT_READERS.register("instagram")
class InstagramReader(MessengerReader):
    """Instagram's "Download your information" JSON: Messenger's thread format (``messages``
    with ``sender_name``, ``timestamp_ms``, ``content``; the same double-encoded UTF-8), under
    ``your_instagram_activity/messages/inbox/<thread>/message_1.json``."""

    kind: ClassVar[str] = "instagram"
    label: ClassVar[str] = "an Instagram export"
    how_to_export = (
        "Instagram: Accounts Centre → Your information and permissions → Download your "
        "information → Messages, Format JSON; give a thread folder, the messages folder or the zip"
    )

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        return _has_threads(source) and _from_instagram(source)


def _has_threads(source: ExportSource) -> bool:
    names = source.names()
    threads = [n for n in names if _MESSAGE_FILE.search(n)]
    if threads:
        head = source.head(threads[0])
        return '"participants"' in head or '"sender_name"' in head
    others = [n for n in names if n.lower().endswith(".json")][:20]
    return any(_is_thread(source.head(n)) for n in others)


def _from_instagram(source: ExportSource) -> bool:
    # Told from Messenger's only by where it lies (your_instagram_activity/, a zip named
    # instagram-…, a folder in the path as given); a thread file with nothing of the
    # kind reads as Messenger — the same reading either way.
    return "instagram" in str(source.path).lower() or any(
        "instagram" in n.lower() for n in source.names()[:200]
    )


def _is_thread(head: str) -> bool:
    return _is_secure_storage(head) or _is_dyi(head)


def _is_dyi(head: str) -> bool:
    return '"messages"' in head and '"sender_name"' in head and '"timestamp_ms"' in head


def _is_secure_storage(head: str) -> bool:
    return '"participants"' in head and ('"senderName"' in head or '"threadName"' in head)


def fix_mojibake(text: Any) -> str:
    """Facebook's double-encoded UTF-8 (``Zo\\u00c3\\u00ab``) read back (``Zoë``); a string
    that does not round-trip is returned as it is. Anything but a string is ``""``."""
    if not isinstance(text, str):
        return ""
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def _load(source: ExportSource, name: str) -> dict[str, Any]:
    where = source.describe(name)
    try:
        data = json.loads(source.read_text(name))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=where, line=exc.lineno) from None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise InputError(
            "not a Messenger thread: expected an object with 'participants' and a list of "
            "'messages'",
            path=where,
        )
    return data


@dataclass
class _Thread:
    """One thread being read: the names it shows, and its messages."""

    names: dict[str, None] = field(default_factory=dict)
    messages: list[ExportMessage] = field(default_factory=list)

    def name(self, value: str) -> None:
        if value.strip():
            self.names.setdefault(value, None)


def _key(*parts: str) -> str:
    return "fb" + hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]


def _dyi_thread(
    source: ExportSource, folder: str, files: list[tuple[int, str]], context: ReadContext
) -> Conversation:
    thread = _Thread()
    title: str | None = None
    path = folder
    raws: list[tuple[Any, str, int]] = []
    for number, (_, name) in enumerate(files):
        data = _load(source, name)
        if number == 0:
            title = fix_mojibake(data.get("title")) or None
            given = data.get("thread_path")
            path = given if isinstance(given, str) and given else folder
            for person in data.get("participants") or ():
                if isinstance(person, dict):
                    thread.name(fix_mojibake(person.get("name")))
        raws.extend((raw, name, index) for index, raw in enumerate(data["messages"]))
    # Newest first within and across files: reversed, then a stable sort keeps the order of
    # messages that share a millisecond.
    for raw, name, index in reversed(raws):
        message = _dyi_message(raw, thread, context, source.describe(name), index)
        if message is not None:
            thread.messages.append(message)
    return Conversation(
        key=_key(path),
        title=title,
        messages=in_time_order(thread.messages),
        members=tuple(thread.names),
    )


def _reactions(raw: dict[str, Any], thread: _Thread, context: ReadContext) -> None:
    for reaction in raw.get("reactions") or ():
        context.log.skip("reaction")
        if isinstance(reaction, dict):
            thread.name(fix_mojibake(reaction.get("actor")))


def _moment(value: Any, where: str, field: str) -> datetime:
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000.0 if value > 1e11 else float(value)
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            pass
    raise InputError(
        f"cannot read {value!r} as a time (epoch milliseconds)", path=where, field=field
    )


def _dyi_message(
    raw: Any, thread: _Thread, context: ReadContext, where: str, index: int
) -> ExportMessage | None:
    if not isinstance(raw, dict):
        raise InputError("expected a message object", path=where, field=f"messages[{index}]")
    _reactions(raw, thread, context)
    if raw.get("is_unsent"):
        context.log.skip("unsent message")
        return None
    kind = raw.get("type")
    if kind in _SYSTEM:
        context.log.skip("system message")
        return None
    speaker = fix_mojibake(raw.get("sender_name")) or "unknown"
    thread.name(speaker)
    moment = _moment(raw.get("timestamp_ms"), where, f"messages[{index}].timestamp_ms")
    if kind == "Call":
        return ExportMessage(moment, speaker, _call_text(raw), "call")
    body = fix_mojibake(raw.get("content"))
    parts: list[str] = []
    for key, label in (("photos", "photo"), ("videos", "video"), ("gifs", "GIF")):
        parts.append(_counted(raw.get(key), label))
    parts.append(_counted(raw.get("audio_files"), "audio"))
    for item in raw.get("files") or ():
        uri = item.get("uri") if isinstance(item, dict) else None
        parts.append(
            f"[file: {PurePosixPath(uri).name}]" if isinstance(uri, str) and uri else "[file]"
        )
    sticker = bool(raw.get("sticker"))
    if sticker:
        parts.append("[sticker]")
    share = raw.get("share")
    link = share.get("link") if isinstance(share, dict) else None
    if isinstance(link, str) and link and link not in body:
        parts.append(f"[link: {link}]")
    media = " ".join(p for p in parts if p)
    media_kind: MessageKind = "sticker" if sticker and media == "[sticker]" else "media"
    if media.startswith("[link:") and media.count("[") == 1:
        media_kind = "other"
    return _finish(moment, speaker, body, media, media_kind, context)


def _finish(
    moment: datetime,
    speaker: str,
    body: str,
    media: str,
    media_kind: MessageKind,
    context: ReadContext,
) -> ExportMessage | None:
    if not body.strip() and not media:
        context.log.skip("empty message")
        return None
    if media and body.strip():
        return ExportMessage(moment, speaker, f"{media} {body}")
    return ExportMessage(moment, speaker, media or body, media_kind if media else "text")


def _counted(items: Any, label: str) -> str:
    count = len(items) if isinstance(items, list) else 0
    if count == 0:
        return ""
    return f"[{label}]" if count == 1 else f"[{count} {label}s]"


def _call_text(raw: dict[str, Any]) -> str:
    seconds = raw.get("call_duration")
    if raw.get("missed") or not isinstance(seconds, int) or seconds <= 0:
        return "[missed call]"
    minutes, rest = divmod(seconds, 60)
    spoken = " ".join(
        part for part in (f"{minutes} min" if minutes else "", f"{rest} s" if rest else "") if part
    )
    return f"[call, {spoken}]"


def _secure_threads(
    source: ExportSource, names: list[str], context: ReadContext
) -> Iterator[Conversation]:
    """Secure-storage files, those of one thread (same name and participants) merged."""
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for name in names:
        data = _load(source, name)
        people = tuple(
            fix_mojibake(p) for p in data.get("participants") or () if isinstance(p, str)
        )
        groups.setdefault((fix_mojibake(data.get("threadName")), people), []).append(name)
    for (title, people), files in groups.items():
        thread = _Thread()
        for person in people:
            thread.name(person)
        for name in files:
            where = source.describe(name)
            for index, raw in enumerate(_load(source, name)["messages"]):
                message = _secure_message(raw, thread, context, where, index)
                if message is not None:
                    thread.messages.append(message)
        yield Conversation(
            key=_key("secure-storage", title, *sorted(people)),
            title=title or None,
            messages=in_time_order(thread.messages),
            members=tuple(thread.names),
        )


def _secure_message(
    raw: Any, thread: _Thread, context: ReadContext, where: str, index: int
) -> ExportMessage | None:
    if not isinstance(raw, dict):
        raise InputError("expected a message object", path=where, field=f"messages[{index}]")
    _reactions(raw, thread, context)
    if raw.get("isUnsent"):
        context.log.skip("unsent message")
        return None
    speaker = fix_mojibake(raw.get("senderName")) or "unknown"
    thread.name(speaker)
    moment = _moment(raw.get("timestamp"), where, f"messages[{index}].timestamp")
    labels: list[str] = []
    for item in raw.get("media") or ():
        uri = item.get("uri") if isinstance(item, dict) else None
        labels.append(_media_label(uri if isinstance(uri, str) else ""))
    media = " ".join(_counted([None] * labels.count(lb), lb) for lb in dict.fromkeys(labels))
    return _finish(moment, speaker, fix_mojibake(raw.get("text")), media, "media", context)


def _media_label(uri: str) -> str:
    suffix = PurePosixPath(uri).suffix.lower()
    for label, suffixes in _EXTENSIONS.items():
        if suffix in suffixes:
            return label
    return "file"
