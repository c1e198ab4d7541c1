"""iMessage: the Messages app's own database, ``~/Library/Messages/chat.db`` on a Mac.

The file is SQLite, opened **read-only** (``file:…?mode=ro`` with ``immutable=1``): nothing is
ever written to it, and a copy taken while Messages runs opens too. When a non-empty
``chat.db-wal`` lies beside it (recent changes SQLite has not yet moved into the main file,
which ``immutable`` would not see), the two are copied to a temporary folder and the copy is
read, WAL included. A ``chat.db`` inside a zip is copied out to a temporary file the same way.

* **Messages** come from ``message`` joined to ``chat`` through ``chat_message_join``, in each
  chat by ``date`` (then ``ROWID``); a message joined to no chat is skipped (``message in no
  chat``). ``native_id`` is the message ``guid``; ``reply_to`` is ``thread_originator_guid``
  (an inline reply).
* **Time**: ``date`` counts from the Apple epoch, 2001-01-01 00:00 UTC — in nanoseconds on
  macOS 10.13 and later, in seconds before; told apart by magnitude (≥ 10¹¹ is nanoseconds:
  as seconds that would be the year 5170) → aware UTC.
* **Speakers**: ``is_from_me`` → the ``--me`` name (default ``me``); otherwise ``handle.id`` of
  the message's ``handle_id``, the phone number or e-mail address (chat.db holds no contact
  names: map them with ``--alias "+15551234567=Ness"``); in a one-to-one chat a message with no
  handle is the other person's. Members: the chat's handles (``chat_handle_join``).
* **Text**: ``text``, or when it is NULL (recent macOS) the body decoded from
  ``attributedBody``, an ``NSAttributedString`` archived in Apple's typedstream format — see
  :func:`decode_attributed_body`. Each attachment's U+FFFC placeholder becomes a ``[file:
  NAME]`` line (``attachment.transfer_name`` via ``message_attachment_join``; attachments with
  no placeholder are listed after the text); a message that is only attachments is kind
  ``media``.
* **Skipped, counted**: ``tapback`` (``associated_message_type`` 2000–3999: a love, like,
  dislike, laugh, emphasis, question or emoji tapback, and its removal), ``sticker on a
  message`` (1000), group events by ``item_type`` (``group member added`` / ``group member
  removed``, ``group renamed``, ``group photo changed`` or ``group event``, ``FaceTime or
  SharePlay``, other ``item_type N``), ``unsent message``, ``app message`` (an iMessage app
  balloon with no text), ``empty message``, ``unreadable attributedBody``.

Conversation key: ``chat_identifier`` (the phone number or address of a one-to-one chat, a
``chat…`` id for a group); title: the group's ``display_name`` when it has one, else the
``chat_identifier``.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal

from chatledger.core import InputError
from chatledger.corpus.exports._model import Conversation, ExportMessage, MessageKind, ReadContext
from chatledger.corpus.exports._reader import EXPORT_READERS, ExportReader
from chatledger.corpus.exports._source import ExportSource

SQLITE_MAGIC = b"SQLite format 3\x00"
APPLE_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)
_NANOSECONDS_FROM = 10**11
OBJECT_REPLACEMENT = "\ufffc"
_DB_NAMES = ("chat.db", "sms.db")  # a Mac's; an iPhone backup's
# Columns read from ``message``; any an older macOS lacks is read as NULL.
_MESSAGE_COLUMNS = (
    "guid",
    "text",
    "attributedBody",
    "handle_id",
    "date",
    "is_from_me",
    "item_type",
    "group_action_type",
    "group_title",
    "associated_message_type",
    "balloon_bundle_id",
    "cache_has_attachments",
    "thread_originator_guid",
    "date_retracted",
)
_REQUIRED = {"message": ("ROWID", "date"), "chat": ("ROWID",), "chat_message_join": ("chat_id",)}


@EXPORT_READERS.register("imessage")
class IMessageReader(ExportReader):
    kind: ClassVar[str] = "imessage"
    label: ClassVar[str] = "an iMessage database (chat.db)"
    how_to_export = (
        "iMessage (macOS): copy ~/Library/Messages/chat.db (and chat.db-wal beside it) "
        "somewhere readable — Terminal needs Full Disk Access"
    )

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        name = _db_member(source)
        if name is None:
            return False
        try:
            with source.open(name) as handle:
                if handle.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                    return False
        except (InputError, OSError):
            return False
        local = _local_file(source, name)
        if local is None:  # inside a zip: the header and the name must do
            return PurePosixPath(name).name in _DB_NAMES
        try:
            with _connect(local, immutable=True) as db:
                return {"message", "chat_message_join"} <= _tables(db)
        except sqlite3.Error:
            return False

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        name = _db_member(source)
        if name is None:
            raise InputError(
                "no chat.db here (copy ~/Library/Messages/chat.db from the Mac)", path=source.path
            )
        with _opened(source, name) as db:
            yield from _Database(db, source.describe(name)).conversations(context)


def _db_member(source: ExportSource) -> str | None:
    names = source.names()
    if source.is_single_file:
        return names[0]
    found = [n for n in names if PurePosixPath(n).name in _DB_NAMES]
    return min(found, key=lambda n: (n.count("/"), n)) if found else None


def _local_file(source: ExportSource, name: str) -> Path | None:
    if source.is_zip:
        return None
    return source.local_path() if source.is_single_file else source.path / name


def _connect(path: Path, *, immutable: bool) -> sqlite3.Connection:
    query = "mode=ro&immutable=1" if immutable else "mode=ro"
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True)
    db.row_factory = sqlite3.Row
    return db


@contextmanager
def _opened(source: ExportSource, name: str) -> Iterator[sqlite3.Connection]:
    """The database read-only: in place, or a temporary copy when a WAL must be read or the
    file is inside a zip."""
    local = _local_file(source, name)
    wal = local.with_name(local.name + "-wal") if local is not None else None
    if local is not None and not (wal is not None and wal.is_file() and wal.stat().st_size):
        db = _checked(local, immutable=True)
        try:
            yield db
        finally:
            db.close()
        return
    with tempfile.TemporaryDirectory(prefix="chatledger-imessage-") as scratch:
        copy = Path(scratch) / "chat.db"
        try:
            if local is not None and wal is not None:
                shutil.copyfile(local, copy)
                shutil.copyfile(wal, f"{copy}-wal")
            else:
                _extract(source, name, copy)
                if source.has(name + "-wal"):
                    _extract(source, name + "-wal", Path(f"{copy}-wal"))
        except OSError as exc:
            raise InputError(
                f"cannot copy the database to a temporary folder: {exc.strerror or exc}",
                path=source.describe(name),
            ) from None
        db = _checked(copy, immutable=False, shown=source.describe(name))
        try:
            yield db
        finally:
            db.close()


def _extract(source: ExportSource, name: str, target: Path) -> None:
    with source.open(name) as member, target.open("wb") as out:
        shutil.copyfileobj(member, out)


def _checked(path: Path, *, immutable: bool, shown: str | None = None) -> sqlite3.Connection:
    where = shown or str(path)
    try:
        db = _connect(path, immutable=immutable)
        tables = _tables(db)
    except sqlite3.Error as exc:
        raise InputError(f"cannot read the database: {exc}", path=where) from None
    for table, columns in _REQUIRED.items():
        if table not in tables:
            db.close()
            raise InputError(
                f"not an iMessage chat.db: no {table!r} table (found: "
                f"{', '.join(sorted(tables)) or 'none'})",
                path=where,
            )
        missing = [c for c in columns if c.lower() not in _columns(db, table)]
        if missing:
            db.close()
            raise InputError(f"table {table!r} has no column {missing[0]!r}", path=where)
    return db


def _tables(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(row[0]) for row in rows}


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]).lower() for row in db.execute(f"PRAGMA table_info({table})")}


class _Database:
    def __init__(self, db: sqlite3.Connection, where: str) -> None:
        self.db = db
        self.where = where
        self.tables = _tables(db)
        self.message_columns = _columns(db, "message")
        self.chat_columns = _columns(db, "chat")
        self.handles = self._handles()

    def _handles(self) -> dict[int, str]:
        if "handle" not in self.tables:
            return {}
        rows = self.db.execute("SELECT ROWID, id FROM handle")
        return {int(r[0]): str(r[1]) for r in rows if r[1] is not None}

    def _chat_column(self, name: str) -> str:
        return f"c.{name}" if name.lower() in self.chat_columns else f"NULL AS {name}"

    def conversations(self, context: ReadContext) -> Iterator[Conversation]:
        orphans = self.db.execute(
            "SELECT COUNT(*) FROM message m WHERE NOT EXISTS "
            "(SELECT 1 FROM chat_message_join j WHERE j.message_id = m.ROWID)"
        ).fetchone()[0]
        if orphans:
            context.log.skip("message in no chat", int(orphans))
        chats = self.db.execute(
            f"SELECT c.ROWID AS rowid, {self._chat_column('chat_identifier')}, "
            f"{self._chat_column('display_name')}, {self._chat_column('guid')} "
            "FROM chat c ORDER BY c.ROWID"
        ).fetchall()
        for chat in chats:
            members = self._members(int(chat["rowid"]))
            identifier = chat["chat_identifier"] or chat["guid"] or f"chat {chat['rowid']}"
            title = (chat["display_name"] or "").strip() or str(identifier)
            yield Conversation(
                key=str(identifier),
                title=title,
                messages=self._messages(int(chat["rowid"]), members, context),
                members=members,
            )

    def _members(self, chat_id: int) -> tuple[str, ...]:
        if "chat_handle_join" not in self.tables:
            return ()
        rows = self.db.execute(
            "SELECT handle_id FROM chat_handle_join WHERE chat_id = ? ORDER BY handle_id",
            (chat_id,),
        )
        found = (self.handles.get(int(r[0])) for r in rows if r[0] is not None)
        return tuple(dict.fromkeys(h for h in found if h))

    def _messages(
        self, chat_id: int, members: tuple[str, ...], context: ReadContext
    ) -> Iterator[ExportMessage]:
        columns = ", ".join(
            f"m.{c}" if c.lower() in self.message_columns else f"NULL AS {c}"
            for c in _MESSAGE_COLUMNS
        )
        rows = self.db.execute(
            f"SELECT m.ROWID AS rowid, {columns} FROM message m "
            "JOIN chat_message_join j ON j.message_id = m.ROWID "
            "WHERE j.chat_id = ? ORDER BY m.date, m.ROWID",
            (chat_id,),
        )
        lone = members[0] if len(members) == 1 else None
        for row in rows:
            message = self._message(row, lone, context)
            if message is not None:
                yield message

    def _message(
        self, row: sqlite3.Row, lone: str | None, context: ReadContext
    ) -> ExportMessage | None:
        reason = _not_a_message(row)
        if reason is not None:
            context.log.skip(reason)
            return None
        text = row["text"]
        if text is None and row["attributedBody"] is not None:
            text = decode_attributed_body(bytes(row["attributedBody"]))
            if text is None:
                context.log.skip("unreadable attributedBody")
                return None
        text = str(text or "")
        if row["balloon_bundle_id"]:
            text = text.replace("\ufffd", "")
        files = self._attachments(int(row["rowid"])) if row["cache_has_attachments"] else []
        text, kind = _with_attachments(text, files)
        if not text.strip():
            if row["date_retracted"]:
                context.log.skip("unsent message")
            elif row["balloon_bundle_id"]:
                context.log.skip("app message")
            else:
                context.log.skip("empty message")
            return None
        if row["is_from_me"]:
            speaker = context.me
        else:
            handle = row["handle_id"]
            speaker = (self.handles.get(int(handle)) if handle else None) or lone or "unknown"
        thread = row["thread_originator_guid"]
        return ExportMessage(
            timestamp=apple_time(row["date"], self.where),
            speaker=speaker,
            text=text,
            kind=kind,
            native_id=str(row["guid"]) if row["guid"] is not None else str(row["rowid"]),
            reply_to=str(thread) if thread else None,
        )

    def _attachments(self, message_id: int) -> list[str]:
        if "message_attachment_join" not in self.tables or "attachment" not in self.tables:
            return []
        names = _columns(self.db, "attachment")
        picked = [c for c in ("transfer_name", "filename") if c in names]
        select = ", ".join(f"a.{c}" for c in picked) or "NULL"
        rows = self.db.execute(
            f"SELECT {select} FROM message_attachment_join j "
            "JOIN attachment a ON a.ROWID = j.attachment_id "
            "WHERE j.message_id = ? ORDER BY j.attachment_id",
            (message_id,),
        ).fetchall()
        found = []
        for row in rows:
            name = next((str(v) for v in tuple(row) if v), "")
            found.append(PurePosixPath(name.replace("\\", "/")).name if name else "")
        return found


def _not_a_message(row: sqlite3.Row) -> str | None:
    associated = int(row["associated_message_type"] or 0)
    if 2000 <= associated <= 3999:
        return "tapback"
    if associated == 1000:
        return "sticker on a message"
    item_type = int(row["item_type"] or 0)
    if item_type == 0 and not row["group_title"]:
        return None
    action = int(row["group_action_type"] or 0)
    if item_type == 1:
        return "group member removed" if action == 1 else "group member added"
    if item_type == 2 or row["group_title"]:
        return "group renamed"
    if item_type == 3:
        return "group photo changed" if action == 1 else "group event"
    if item_type == 6:
        return "FaceTime or SharePlay"
    return f"item_type {item_type}"


def _with_attachments(text: str, files: list[str]) -> tuple[str, MessageKind]:
    """U+FFFC placeholders → ``[file: NAME]`` lines; kind ``media`` when nothing else is said."""
    labels = iter(f"[file: {name}]" if name else "[file]" for name in files)
    parts: list[str] = []
    pieces = text.split(OBJECT_REPLACEMENT)
    said = False
    for index, piece in enumerate(pieces):
        if piece.strip():
            parts.append(piece.strip())
            said = True
        if index < len(pieces) - 1:
            parts.append(next(labels, "[file]"))
    parts.extend(labels)  # attachments the text has no placeholder for
    shown = "\n".join(parts)
    return shown, ("text" if said or not parts else "media")


def apple_time(value: Any, where: str) -> datetime:
    """``message.date`` → aware UTC: seconds or nanoseconds since 2001-01-01 UTC."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"cannot read {value!r} as a time", path=where, field="message.date")
    number = int(value)
    if abs(number) >= _NANOSECONDS_FROM:
        return APPLE_EPOCH + timedelta(microseconds=number // 1000)
    return APPLE_EPOCH + timedelta(seconds=number)


# --- attributedBody: an NSAttributedString in typedstream ----------------------------------------

_STREAM_SIGNATURES: dict[bytes, Literal["little", "big"]] = {
    b"streamtyped": "little",
    b"typedstream": "big",
}
_NSSTRING = b"NSString"
_TAG_INT16 = 0x81
_TAG_INT32 = 0x82
_FIRST_TAG = 0x80  # 0x80–0x91 are tags, not one-byte integers


def decode_attributed_body(blob: bytes) -> str | None:
    """The message text inside an ``attributedBody`` blob, or None when it cannot be found.

    The blob is an ``NSAttributedString`` archived with NeXT/Apple's *typedstream* format: a
    header (version byte 4, a length byte 11, ``streamtyped`` for little-endian or
    ``typedstream`` for big-endian, then the system version), then the objects. The attributed
    string's first object is its plain ``NSString``: after the ``NSString`` class name comes the
    class version, a type string introduced by ``0x84 0x01 '+'`` (the ``+`` type: a byte string),
    its length as a typedstream integer — one byte 0–127, or ``0x81`` then a 2-byte integer, or
    ``0x82`` then a 4-byte integer, in the stream's byte order — then that many bytes of UTF-8.
    Only that payload is read; the attributes after it (fonts, links, attachment GUIDs) are not.
    """
    if len(blob) < 16 or blob[0] != 4 or blob[1] != 11:
        return None
    order = _STREAM_SIGNATURES.get(blob[2:13])
    if order is None:
        return None
    marker = blob.find(_NSSTRING, 13)
    if marker < 0:
        return None
    plus = blob.find(b"\x84\x01+", marker + len(_NSSTRING))
    if plus < 0 or plus - marker > 32:
        return None
    at = plus + 3
    if at >= len(blob):
        return None
    head = blob[at]
    if head == _TAG_INT16:
        length, at = int.from_bytes(blob[at + 1 : at + 3], order, signed=True), at + 3
    elif head == _TAG_INT32:
        length, at = int.from_bytes(blob[at + 1 : at + 5], order, signed=True), at + 5
    elif head >= _FIRST_TAG:
        return None
    else:
        length, at = head, at + 1
    if length < 0 or at + length > len(blob):
        return None
    return blob[at : at + length].decode("utf-8", errors="replace")
