"""Discord, as DiscordChatExporter (DCE) writes it: one JSON file per channel, thread or direct
message (``Guild - channel [id].json``), alone or a folder (or zip) of them.

A file is ``{"guild", "channel", "dateRange", "exportedAt", "messages": [...], "messageCount"}``;
each file is one conversation: key ``dc<channel id>`` (stable across re-exports), title ``Guild
#channel`` (a direct message: the channel's name, which DCE sets to the other people's names).
Discord exports no member list; the members are the authors and the users mentioned.

A message is kept when its ``type`` is ``Default`` or ``Reply`` (or a bot's answer to a command,
``ChatInputCommand`` / ``ContextMenuCommand``):

* **time** ``timestamp``, ISO 8601 with the offset DCE wrote (the exporting machine's, or UTC
  with ``--utc``): kept as given, aware;
* **speaker** the author's ``nickname`` (DCE writes the server nickname, else the display name)
  over ``name`` (the account name);
* **text** ``content``: DCE has already turned mentions into ``@name``, ``#channel`` and
  ``:emoji:`` (kept as they are); a file exported with ``--markdown false`` still has the raw
  ``<@123…>`` and ``<:emoji:123…>``, resolved here from the message's ``mentions`` the same way;
* **attachments** become ``[attachment: photo.png]`` (kind ``media`` when there is no text,
  before the text otherwise), stickers ``[sticker: name]`` (kind ``sticker``), an embed on a
  message with nothing else (a bot's card) ``[embed] title — description`` (kind ``other``), a
  forwarded message ``[forwarded] its text``; link previews beside text are not repeated;
* a **reply** keeps ``reference.messageId`` as ``reply_to``; an **edited** message
  (``timestampEdited``) has its current text, the only one exported (counted in a note);
* a **call** (``Call``, in direct messages) is kept as kind ``call``: ``[call, 12 min]``.

A channel DCE split into several files (``--partition``: ``… [part 2].json``) is one
conversation: files with the same channel id are merged.

Not kept, and counted: every other type — DCE's system messages (``GuildMemberJoin``,
``ChannelPinnedMessage``, ``RecipientAdd``, ``ChannelNameChange``, ``ThreadCreated``, boosts …)
— as ``system message``; messages with nothing in them (``empty message``); and each reaction
(``reaction``: reactions are not messages).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
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

# DCE writes MessageKind.ToString(): the name, or the number for a kind it has no name for.
_KEPT = {"Default", "Reply", "ChatInputCommand", "ContextMenuCommand", "0", "19", "20", "23"}
_CALL = {"Call", "3"}
_REPLY = {"Reply", "19"}
_DIRECT = {"DirectTextChat", "DirectGroupTextChat"}
_RAW_USER = re.compile(r"<@!?(\d+)>")
_RAW_EMOJI = re.compile(r"<a?:(\w+):\d+>")
_CHANNEL_ID = re.compile(r'"channel"\s*:\s*\{\s*"id"\s*:\s*"?(\d+)')


@EXPORT_READERS.register("discord")
class DiscordReader(ExportReader):
    kind: ClassVar[str] = "discord"
    label: ClassVar[str] = "a DiscordChatExporter file (Discord)"
    how_to_export = (
        "DiscordChatExporter (github.com/Tyrrrz/DiscordChatExporter), format JSON: one file per "
        "channel; give a file or the folder of them"
    )

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        candidates = [n for n in source.names() if n.lower().endswith(".json")]
        return any(_is_dce(source.head(name)) for name in candidates[:20])

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        names = [n for n in source.names() if n.lower().endswith(".json")]
        heads = {n: source.head(n) for n in names}
        files = [n for n in names if _is_dce(heads[n])]
        if not files:
            shown = names[0] if len(names) == 1 else None
            raise InputError(
                "not a DiscordChatExporter export: expected JSON with top-level 'guild', "
                "'channel' and 'messages' (export with --format Json)",
                path=source.describe(shown),
            )
        others = [n for n in names if n not in set(files)]
        if others:
            context.note(
                f"{len(others)} .json file(s) that are not DiscordChatExporter exports were "
                f"left out: {', '.join(others[:3])}{' …' if len(others) > 3 else ''}"
            )
        # A channel DCE split into parts ("… [part 2].json") is one conversation.
        channels: dict[str, list[str]] = {}
        for name in files:
            found = _CHANNEL_ID.search(heads[name])
            channels.setdefault(found.group(1) if found else name, []).append(name)
        edited = 0
        for parts in channels.values():
            conversation, count = _read_files(source, parts, context)
            edited += count
            yield conversation
        if edited:
            context.note(
                f"{edited} Discord message(s) were edited after sending: the current text is "
                "kept (the export has no other)"
            )


def _is_dce(head: str) -> bool:
    return head.lstrip("\ufeff \t\r\n").startswith("{") and all(
        f'"{key}"' in head for key in ("guild", "channel", "messages")
    )


def _read_files(
    source: ExportSource, parts: list[str], context: ReadContext
) -> tuple[Conversation, int]:
    """One channel: its file, or the parts DCE split it into (``--partition``)."""
    messages: list[ExportMessage] = []
    names: dict[str, None] = {}
    edited = 0
    key, title = "", None
    for number, name in enumerate(parts):
        where = source.describe(name)
        try:
            data = json.loads(source.read_text(name))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", path=where, line=exc.lineno) from None
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            raise InputError(
                "not a DiscordChatExporter export: expected 'messages' to be a list", path=where
            )
        if number == 0:
            guild, channel = _dict(data.get("guild")), _dict(data.get("channel"))
            channel_id = channel.get("id")
            if isinstance(channel_id, str | int) and str(channel_id):
                key = f"dc{channel_id}"
            title = _title(guild, channel)
        for index, raw in enumerate(data["messages"]):
            if not isinstance(raw, dict):
                raise InputError(
                    "expected a message object", path=where, field=f"messages[{index}]"
                )
            message = _message(raw, names, context, where, index)
            if message is not None:
                messages.append(message)
                edited += bool(raw.get("timestampEdited"))
    return (
        Conversation(
            key=key or f"dc-{PurePosixPath(parts[0]).stem}",
            title=title,
            messages=in_time_order(messages),
            members=tuple(names),
        ),
        edited,
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _title(guild: dict[str, Any], channel: dict[str, Any]) -> str | None:
    name, server = _str(channel.get("name")), _str(guild.get("name"))
    if channel.get("type") in _DIRECT or not server:
        return name or None
    return f"{server} #{name}" if name else server


def _person(user: Any) -> str:
    """The name a user is shown under: nickname over account name."""
    if not isinstance(user, dict):
        return ""
    for key in ("nickname", "name"):
        value = user.get(key)
        if isinstance(value, str) and value.strip():
            return value
    value = user.get("id")
    return f"user {value}" if isinstance(value, str | int) else ""


def _message(
    raw: dict[str, Any], names: dict[str, None], context: ReadContext, where: str, index: int
) -> ExportMessage | None:
    for reaction in raw.get("reactions") or ():
        count = reaction.get("count", 1) if isinstance(reaction, dict) else 1
        context.log.skip("reaction", count if isinstance(count, int) and count > 0 else 1)
    kind = str(raw.get("type", "Default"))
    if kind not in _KEPT and kind not in _CALL:
        context.log.skip("system message")
        return None
    speaker = _person(raw.get("author")) or "unknown"
    names.setdefault(speaker, None)
    mentioned: dict[str, str] = {}
    for user in raw.get("mentions") or ():
        shown = _person(user)
        if shown:
            names.setdefault(shown, None)
            if isinstance(user, dict) and user.get("id") is not None:
                mentioned[str(user["id"])] = shown
    moment = _moment(raw, where, index)
    reference = raw.get("reference")
    reply = reference.get("messageId") if isinstance(reference, dict) else None
    reply_to = str(reply) if kind in _REPLY and reply else None
    native = str(raw["id"]) if raw.get("id") is not None else None
    if kind in _CALL:
        return ExportMessage(moment, speaker, _call_text(raw, moment), "call", native)
    body = _resolve(_str(raw.get("content")), mentioned)
    forwarded = raw.get("forwardedMessage")
    if not body.strip() and isinstance(forwarded, dict):
        extra, _ = _extras(forwarded)
        inner = _resolve(_str(forwarded.get("content")), mentioned)
        body = " ".join(p for p in ("[forwarded]", extra, inner) if p)
    extra, extra_kind = _extras(raw)
    if not body.strip() and not extra:
        extra, extra_kind = _embed(raw), "other"
    if not body.strip() and not extra:
        context.log.skip("empty message")
        return None
    text = f"{extra} {body}" if extra and body.strip() else (extra or body)
    message_kind: MessageKind = extra_kind if extra and not body.strip() else "text"
    return ExportMessage(moment, speaker, text, message_kind, native, reply_to)


def _moment(raw: dict[str, Any], where: str, index: int) -> datetime:
    stamp = raw.get("timestamp")
    try:
        if isinstance(stamp, str):
            return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        pass
    raise InputError(
        f"cannot read {stamp!r} as a time (DCE writes ISO 8601 with an offset)",
        path=where,
        field=f"messages[{index}].timestamp",
    )


def _resolve(content: str, mentioned: dict[str, str]) -> str:
    """Raw Discord markup (``--markdown false``) as DCE would show it."""
    if "<" not in content:
        return content
    content = _RAW_USER.sub(
        lambda m: f"@{mentioned[m.group(1)]}" if m.group(1) in mentioned else m.group(0), content
    )
    return _RAW_EMOJI.sub(lambda m: f":{m.group(1)}:", content)


def _extras(raw: dict[str, Any]) -> tuple[str, MessageKind]:
    """Placeholders for a message's attachments and stickers, and the kind they make it."""
    parts: list[str] = []
    for item in raw.get("attachments") or ():
        name = item.get("fileName") if isinstance(item, dict) else None
        parts.append(f"[attachment: {name}]" if isinstance(name, str) and name else "[attachment]")
    stickers = [
        item.get("name") if isinstance(item, dict) else None for item in raw.get("stickers") or ()
    ]
    for name in stickers:
        parts.append(f"[sticker: {name}]" if isinstance(name, str) and name else "[sticker]")
    kind: MessageKind = "sticker" if stickers and len(stickers) == len(parts) else "media"
    return " ".join(parts), kind


def _embed(raw: dict[str, Any]) -> str:
    for embed in raw.get("embeds") or ():
        if not isinstance(embed, dict):
            continue
        words = [
            v.strip()
            for v in (embed.get("title"), embed.get("description"))
            if isinstance(v, str) and v.strip()
        ]
        if words:
            return "[embed] " + " — ".join(words)
    return ""


def _call_text(raw: dict[str, Any], moment: datetime) -> str:
    ended = raw.get("callEndedTimestamp")
    if isinstance(ended, str):
        try:
            minutes = int((datetime.fromisoformat(ended) - moment).total_seconds() // 60)
        except (ValueError, TypeError):
            return "[call]"
        return f"[call, {minutes} min]" if minutes > 0 else "[call, under a minute]"
    return "[call]"
