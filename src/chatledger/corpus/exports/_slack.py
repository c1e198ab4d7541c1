"""Slack workspace exports: the folder (or the ``.zip`` Slack mails a link to) an admin downloads
from *Workspace settings → Import/Export Data → Export*.

Layout: ``users.json`` (the people), ``channels.json`` (public channels), and where the export
has them ``groups.json`` (private channels), ``dms.json`` (direct messages) and ``mpims.json``
(group DMs); one folder per conversation holding one ``YYYY-MM-DD.json`` per day, a JSON list
of message objects. Channel and private-channel folders are named after the channel; DM
folders after the DM's id; group-DM folders after their ``mpdm-…`` name (either is looked for).
A zip may hold the export at its root or inside one folder.

* **Time**: ``ts`` is epoch seconds as a string (``"1700000000.000200"``) → aware UTC. A
  conversation's messages are sorted by ``ts``, which is also the message's id (``native_id``).
* **Speaker**: the user's real name, falling back to the display name, then the user name, then
  the id (``users.json``: ``real_name``, ``profile.real_name``, ``profile.display_name``,
  ``name``). A user id missing from ``users.json`` (a guest from another workspace, a user
  removed before the export) stays its id — as speaker and in mentions alike, so one person is
  one name everywhere; the summary notes how many ids were not found. A bot's message is
  spoken by the bot's user, else ``bot_profile.name``, else ``username``, else the bot id.
* **Text**: ``<@U…>`` and ``<@U…|label>`` → ``@`` + the speaker name of that user;
  ``<#C…|general>`` → ``#general``; ``<!here>``, ``<!channel>``, ``<!everyone>`` → ``@here`` …;
  ``<!subteam^S…|@team>`` and ``<!date^…|fallback>`` → their label; a link ``<https://x>`` →
  the URL, ``<https://x|label>`` → ``label (https://x)`` (the label alone when it only repeats the
  URL; ``mailto:`` links → the address) — so the URL stays visible to pseudonymisation; then
  ``&lt; &gt; &amp;`` unescaped (after the angle-bracket forms, which they would otherwise fake).
* **Kept**: ordinary messages, ``thread_broadcast`` (a reply also sent to the channel: one
  message), ``file_share`` and files on any kept message (one ``[file: NAME]`` line each;
  a message that is only files is kind ``media``), ``me_message`` (``/me waves``: the text as
  written, spoken by its user), ``bot_message``. Thread replies stay in time order in their
  channel; a reply's ``reply_to`` is its ``thread_ts``.
* **Skipped, counted by subtype**: every other subtype — ``channel_join``, ``channel_leave``,
  ``channel_topic``, ``channel_purpose``, ``channel_name``, ``pinned_item``, ``bot_add``,
  ``tombstone`` (a deleted thread parent) … — and ``empty message`` (no text, no files),
  ``duplicate message`` (a ``ts`` seen twice in one conversation).

Conversation key: the channel name (DMs and group DMs: their id, since an ``mpdm-`` name spells
out user names); title ``#channel`` (DMs: ``DM: `` and the members' names); members: the
channel's ``members`` resolved to speaker names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
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

_DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
_ANGLE = re.compile(r"<([^<>]*)>")
_KEPT_SUBTYPES = frozenset(
    {"thread_broadcast", "reply_broadcast", "file_share", "file_comment", "me_message",
     "bot_message"}
)  # fmt: skip
_INTEGRATION_LOGS = "integration_logs.json"
# A legacy file_share's generated text, and the uploader's comment if there was one.
_LEGACY_UPLOAD = re.compile(
    r"<@[A-Z0-9]+(?:\|[^>]*)?> (?:uploaded|shared|posted) a file: <[^>]*>"
    r"(?: and commented: (?P<comment>.*))?\Z",
    re.DOTALL,
)
_LOG_SLACK = 2  # seconds between a bot_add message and its integration log entry
# "added an integration to this channel: <https://x.slack.com/services/B0JL6UFSL|github>"
_SERVICE_LABEL = re.compile(r"<https?://[^|>]*/services/[^|>]*\|([^>]+)>")
# (metadata file, what its conversations are); the order conversations are read in.
_LISTS = (
    ("channels.json", "channel"),
    ("groups.json", "group"),
    ("mpims.json", "mpim"),
    ("dms.json", "dm"),
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@EXPORT_READERS.register("slack")
class SlackReader(ExportReader):
    kind: ClassVar[str] = "slack"
    label: ClassVar[str] = "a Slack workspace export"
    how_to_export = (
        "Slack (workspace admin): Workspace settings → Import/Export Data → Export; "
        "download the zip (a folder unpacked from it works too)"
    )

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        if source.is_single_file:
            return False
        names = set(source.names())
        return any(
            name.rsplit("/", 1)[-1] == "users.json"
            and f"{name[: -len('users.json')]}channels.json" in names
            for name in names
        )

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        workspace = _Workspace.load(source)
        for folder, info in workspace.conversation_folders():
            messages = list(_read_folder(workspace, folder, context))
            members = tuple(workspace.name(m) for m in info.members)
            yield Conversation(
                key=info.key, title=info.title(members), messages=iter(messages), members=members
            )
        missing = len(workspace.missing)
        if missing:
            context.note(
                f"{missing} Slack user id{'s are' if missing > 1 else ' is'} not in users.json "
                "and kept as the id (as speaker and in mentions)"
            )
        bots = len(workspace.unnamed_bots)
        if bots:
            context.note(
                f"{bots} bot{'s' if bots > 1 else ''} with no name in the export (no profile, "
                "user name or integration log entry) spoken as 'bot' and the bot id"
            )


@dataclass
class _Info:
    """One conversation's metadata entry (or a folder with none)."""

    key: str
    kind: str  # channel | group | mpim | dm | folder
    name: str
    members: list[str]

    def title(self, members: tuple[str, ...]) -> str:
        if self.kind in ("dm", "mpim"):
            return "DM: " + ", ".join(members) if members else f"DM {self.key}"
        return f"#{self.name}"


@dataclass
class _Workspace:
    source: ExportSource
    root: str  # "" or "folder/" inside a zip
    names: set[str]
    users: dict[str, str]
    channels: dict[str, str]  # channel id → name, for <#C…> links
    infos: list[tuple[_Info, list[str]]]  # each entry and the folder names to look for
    missing: set[str] = field(default_factory=set)
    unnamed_bots: set[str] = field(default_factory=set)
    _days: dict[str, list[str]] | None = None
    _bots: dict[str, str] | None = None

    @classmethod
    def load(cls, source: ExportSource) -> _Workspace:
        names = set(source.names())
        roots = sorted(
            (n[: -len("users.json")] for n in names if n.rsplit("/", 1)[-1] == "users.json"),
            key=lambda r: (r.count("/"), r),
        )
        if not roots:
            raise InputError(
                "not a Slack export: no users.json (export the workspace from Slack's "
                "Import/Export Data page)",
                path=source.path,
            )
        root = roots[0]
        users = _users(source, root + "users.json")
        channels: dict[str, str] = {}
        infos: list[tuple[_Info, list[str]]] = []
        for filename, kind in _LISTS:
            member = root + filename
            if member not in names:
                continue
            for index, entry in enumerate(_json_list(source, member)):
                if not isinstance(entry, dict):
                    raise InputError(
                        "expected an object", path=source.describe(member), field=f"[{index}]"
                    )
                cid = _string(entry.get("id"))
                name = _string(entry.get("name")) or cid
                if not cid and not name:
                    raise InputError(
                        "a conversation with neither id nor name",
                        path=source.describe(member),
                        field=f"[{index}]",
                    )
                if cid and kind in ("channel", "group"):
                    channels[cid] = name
                raw_members = entry.get("members")
                members = (
                    [m for m in raw_members if isinstance(m, str)]
                    if isinstance(raw_members, list)
                    else []
                )
                key = cid if kind in ("dm", "mpim") and cid else name
                folders = list(dict.fromkeys(f for f in (name, cid) if f))
                infos.append((_Info(key, kind, name, members), folders))
        return cls(source, root, names, users, channels, infos)

    def name(self, user_id: str) -> str:
        found = self.users.get(user_id)
        if found is None:
            self.missing.add(user_id)
            return user_id
        return found

    def bot_name(self, bot_id: str) -> str | None:
        """A bot's name where its message carries none: a bot user in users.json, else the
        integration that added it — the archive's integration log entry of the same channel
        and second as the ``bot_add`` message naming the bot id (``GitHub Notifications
        (Legacy)``), else the label of that message's link (``github``)."""
        if self._bots is None:
            self._bots = self._bot_index()
        return self._bots.get(bot_id)

    def _bot_index(self) -> dict[str, str]:
        names: dict[str, str] = {}
        # (channel as the log writes it: its id or its name) → [(second, service)]
        logged: dict[str, list[tuple[int, str]]] = {}
        log_file = self.root + _INTEGRATION_LOGS
        if log_file in self.names:
            for entry in _json_list(self.source, log_file):
                if not isinstance(entry, dict):
                    continue
                service = _string(entry.get("service_type")) or _string(entry.get("app_type"))
                if _string(entry.get("bot_id")) and service:
                    names.setdefault(entry["bot_id"], service)
                logged_at = _ts(entry.get("date"))
                if service and entry.get("change_type") == "added" and logged_at is not None:
                    logged.setdefault(_string(entry.get("channel")), []).append(
                        (int(logged_at), service)
                    )
        ids = {name: cid for cid, name in self.channels.items()}
        for folder, files in self.days.items():
            entries = logged.get(ids.get(folder, ""), []) + logged.get(folder, [])
            for member in files:
                if b'"bot_add"' not in self.source.read_bytes(member):
                    continue
                for item in _json_list(self.source, member):
                    if not isinstance(item, dict) or item.get("subtype") != "bot_add":
                        continue
                    bot = _string(item.get("bot_id"))
                    second = int(_ts(item.get("ts")) or 0)
                    # The log's entry for the same addition: same channel, within 2 seconds
                    # (the log and the message are written apart), the nearest.
                    near = sorted((abs(at - second), at, svc) for at, svc in entries)
                    label = _SERVICE_LABEL.search(_string(item.get("text")))
                    found = (near[0][2] if near and near[0][0] <= _LOG_SLACK else "") or (
                        label.group(1) if label else ""
                    )
                    if bot and found:
                        names.setdefault(bot, found)
        return names

    def conversation_folders(self) -> Iterator[tuple[str, _Info]]:
        """Each conversation's folder (relative to the export), metadata entries first, then
        any folder of day files no entry names (kept, keyed by the folder name)."""
        with_days = self.days
        used: set[str] = set()
        for info, folders in self.infos:
            folder = next((f for f in folders if f in with_days and f not in used), None)
            if folder is None:
                continue
            used.add(folder)
            yield folder, info
        for folder in sorted(set(with_days) - used):
            yield folder, _Info(folder, "folder", folder, [])

    @property
    def days(self) -> dict[str, list[str]]:
        """Folder → its ``YYYY-MM-DD.json`` members in date order (indexed once)."""
        if self._days is None:
            found: dict[str, list[str]] = {}
            for name in self.names:
                if not name.startswith(self.root):
                    continue
                parts = PurePosixPath(name[len(self.root) :]).parts
                if len(parts) == 2 and _DAY_FILE.match(parts[1]):
                    found.setdefault(parts[0], []).append(name)
            self._days = {folder: sorted(files) for folder, files in found.items()}
        return self._days


def _read_folder(
    workspace: _Workspace, folder: str, context: ReadContext
) -> Iterator[ExportMessage]:
    """One conversation's messages, sorted by ``ts``."""
    rows: list[tuple[Decimal, str, dict[str, Any], str]] = []
    for member in workspace.days.get(folder, []):
        for index, item in enumerate(_json_list(workspace.source, member)):
            where = workspace.source.describe(member)
            if not isinstance(item, dict):
                raise InputError("expected a message object", path=where, field=f"[{index}]")
            ts = item.get("ts")
            stamp = _ts(ts)
            if stamp is None or not isinstance(ts, str | int | float):
                raise InputError(
                    f"cannot read {ts!r} as a Slack timestamp (epoch seconds)",
                    path=where,
                    field=f"[{index}].ts",
                )
            rows.append((stamp, str(ts), item, where))
    rows.sort(key=lambda row: row[0])
    seen: set[Decimal] = set()
    for stamp, ts, item, where in rows:
        if stamp in seen:
            context.log.skip("duplicate message")
            continue
        seen.add(stamp)
        message = _message(workspace, stamp, ts, item, context, where)
        if message is not None:
            yield message


def _message(
    workspace: _Workspace,
    stamp: Decimal,
    ts: str,
    item: Mapping[str, Any],
    context: ReadContext,
    where: str,
) -> ExportMessage | None:
    kind_of = item.get("type", "message")
    if kind_of != "message":
        context.log.skip(f"type {kind_of}")
        return None
    subtype = item.get("subtype")
    if subtype is not None and subtype not in _KEPT_SUBTYPES:
        context.log.skip(str(subtype))
        return None
    if item.get("hidden") is True:
        context.log.skip("hidden message")
        return None
    comment = item.get("comment")
    if subtype == "file_comment" and isinstance(comment, dict):
        # A legacy comment on a file: the commenter's words, said about the file.
        shared = item.get("file")
        name = _file_lines([shared])[0][len("[file: ") : -1] if isinstance(shared, dict) else ""
        said = render_text(_string(comment.get("comment")), workspace)
        text = f"[comment on file: {name}] {said}" if name else said
        files: list[str] = []
    else:
        raw = _string(item.get("text"))
        if subtype == "file_share" and isinstance(item.get("file"), dict):
            # Legacy: Slack wrote the upload itself as the text ("<@U…> uploaded a file:
            # <link|name> and commented: …"); the person's words are the comment alone, the
            # file is its [file: …] line below.
            upload = _LEGACY_UPLOAD.match(raw)
            if upload:
                raw = upload.group("comment") or ""
        text = render_text(raw, workspace)
        if not text.strip():
            text = _legacy_attachments_text(item.get("attachments"), workspace)
        # Files: "files" (today) or the legacy single "file" of a file_share.
        listed = item.get("files")
        single = item.get("file")
        files = _file_lines(listed if isinstance(listed, list) else [single] if single else [])
    kind: MessageKind = "text"
    if files:
        if text.strip():
            text = text.rstrip() + "\n" + "\n".join(files)
        else:
            text, kind = "\n".join(files), "media"
    if not text.strip():
        context.log.skip("empty message")
        return None
    thread = item.get("thread_ts")
    reply_to = str(thread) if isinstance(thread, str) and thread != ts else None
    speaker_item = item
    if subtype == "file_comment" and isinstance(comment, dict) and comment.get("user"):
        speaker_item = {"user": comment["user"]}
    return ExportMessage(
        timestamp=_EPOCH + timedelta(microseconds=int(stamp * 1_000_000)),
        speaker=_speaker(workspace, speaker_item),
        text=text,
        kind=kind,
        native_id=ts,
        reply_to=reply_to,
    )


def _speaker(workspace: _Workspace, item: Mapping[str, Any]) -> str:
    user = _string(item.get("user"))
    is_bot = bool(item.get("bot_id")) or item.get("subtype") == "bot_message"
    if is_bot:
        if user and user in workspace.users:
            return workspace.users[user]
        profile = item.get("bot_profile")
        bot_name = _string(profile.get("name")) if isinstance(profile, dict) else ""
        bot_id = _string(item.get("bot_id"))
        for name in (bot_name, _string(item.get("username"))):
            if name:
                return name
        logged = workspace.bot_name(bot_id) if bot_id else None
        if logged:
            return logged
        if user:
            return workspace.name(user)
        if bot_id:
            workspace.unnamed_bots.add(bot_id)
            return f"bot {bot_id}"
        return "bot"
    if user:
        return workspace.name(user)
    return _string(item.get("username")) or "unknown"


def render_text(raw: str, workspace: _Workspace) -> str:
    """Slack's message markup as plain text (see the module docstring)."""
    if not raw:
        return ""

    def angle(match: re.Match[str]) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        if target.startswith("@"):
            return "@" + workspace.name(target[1:])
        if target.startswith("#"):
            channel = workspace.channels.get(target[1:])
            return "#" + (channel or label or target[1:])
        if target.startswith("!"):
            command = target[1:]
            if command in ("here", "channel", "everyone"):
                return "@" + command
            if label:
                return label
            return "@" + command.split("^", 1)[0]
        if target.startswith("mailto:"):
            return label or target[len("mailto:") :]
        if not label or _same_link(target, label):
            return target
        return f"{label} ({target})"

    text = _ANGLE.sub(angle, raw)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _same_link(url: str, label: str) -> bool:
    def bare(text: str) -> str:
        return re.sub(r"^[a-z]+://", "", text.strip(), flags=re.IGNORECASE).rstrip("/").lower()

    return bare(url) == bare(label)


def _legacy_attachments_text(attachments: Any, workspace: _Workspace) -> str:
    """A bot message's text when it is all in legacy ``attachments`` (pretext, text, fallback)."""
    if not isinstance(attachments, list):
        return ""
    parts: list[str] = []
    for attachment in attachments:
        if not isinstance(attachment, dict):
            continue
        for key in ("pretext", "title", "text"):
            value = _string(attachment.get(key))
            link = _string(attachment.get("title_link")) if key == "title" else ""
            if value:
                shown = render_text(value, workspace)
                parts.append(f"{shown} ({link})" if link and link not in shown else shown)
        if not any(_string(attachment.get(k)) for k in ("pretext", "title", "text")):
            fallback = _string(attachment.get("fallback"))
            if fallback:
                parts.append(render_text(fallback, workspace))
    return "\n".join(parts)


def _file_lines(files: Any) -> list[str]:
    if not isinstance(files, list):
        return []
    lines = []
    for item in files:
        if not isinstance(item, dict):
            continue
        if item.get("mode") == "tombstone":
            lines.append("[deleted file]")
            continue
        name = _string(item.get("name")) or _string(item.get("title"))
        lines.append(f"[file: {name}]" if name else "[file]")
    return lines


def _users(source: ExportSource, member: str) -> dict[str, str]:
    users: dict[str, str] = {}
    for index, entry in enumerate(_json_list(source, member)):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise InputError(
                "expected a user object with an id", path=source.describe(member),
                field=f"[{index}]",
            )  # fmt: skip
        profile = entry.get("profile")
        profile = profile if isinstance(profile, dict) else {}
        candidates = (
            entry.get("real_name"),
            profile.get("real_name"),
            profile.get("display_name"),
            entry.get("name"),
        )
        users[entry["id"]] = next(
            (c.strip() for c in candidates if isinstance(c, str) and c.strip()), entry["id"]
        )
    return users


def _json_list(source: ExportSource, member: str) -> list[Any]:
    text = source.read_text(member)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON: {exc.msg}", path=source.describe(member), line=exc.lineno
        ) from None
    if not isinstance(value, list):
        raise InputError(
            f"expected a JSON list, found {type(value).__name__}", path=source.describe(member)
        )
    return value


def _ts(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() and 0 <= number < 10**11 else None


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""
