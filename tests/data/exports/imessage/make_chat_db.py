"""Builds ``chat.db``, the iMessage fixture: ``python make_chat_db.py [PATH]``.

The tables and columns are the ones chat.db really has that the reader touches (message, chat,
handle, chat_message_join, chat_handle_join, attachment, message_attachment_join — their
declarations follow macOS's, trimmed to those columns and a few neighbours). All content is
made up. ``attributed_body`` writes an ``NSAttributedString`` in Apple's typedstream format by
hand, the way recent macOS stores a message body when ``text`` is NULL.

What is in it (times UTC; ``date`` in nanoseconds since 2001-01-01 except chat 3, from 2012,
in seconds):

chat 1, one-to-one with +447700900123 (no display name), 2024-03-01 18:00–18:08:
  18:00:00 them  "Are we still on for Friday?"
  18:01:30 me    text NULL, attributedBody "Yes! Leaving at 6 — can you bring the stove?"
  18:02:00 them  tapback 2001 (liked) on it                          → skipped: tapback
  18:03:00 them  "\\ufffcHere's the route" + attachment route.png
  18:04:00 me    "\\ufffc" + attachment IMG_0042.HEIC                  → kind media
  18:05:00 me    tapback removal 3001                                → skipped: tapback
  18:06:00 them  text NULL, attributedBody of 195 bytes (length as 0x81 + 2 bytes)
  18:07:00 me    ""                                                  → skipped: empty message
  18:08:00 me    "See you at 6", an inline reply to the 18:00 message
chat 2, group "Cabin crew" (chat493827161), 2024-03-02 09:00–09:11:
  09:00:00 me    item_type 2, renamed to "Cabin crew"                → skipped: group renamed
  09:00:05 me    item_type 1, action 0, added +15555550142           → skipped: group member added
  09:01:00 sam.ruiz@example.com "Hi all, welcome Priya"
  09:02:00 +15555550142 (SMS) "Thanks! Who's driving?"
  09:03:00 me    "I am"
  09:04:00 sam   tapback 2000 (loved)                                → skipped: tapback
  09:05:00 me    item_type 3, action 1, new group photo              → skipped: group photo changed
  09:06:00 +447700900123 text NULL, attributedBody "🚗 I'll take the second car"
  09:07:00 me    item_type 1, action 1, removed +447700900123        → skipped: group member removed
  09:08:00 sam   sticker placed on a message (1000)                  → skipped: sticker on a message
  09:09:00 sam   text NULL, attributedBody not typedstream
                                               → skipped: unreadable attributedBody
  09:11:00 sam   text NULL, attributedBody NULL, date_retracted set  → skipped: unsent message
chat 3, one-to-one with sam.ruiz@example.com, dates in seconds, 2012-06-15:
  14:30:00 them  "Old phone, old times"
  14:31:00 me    "Ha, 2012!"
and one message joined to no chat                                    → skipped: message in no chat
"""

from __future__ import annotations

import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

APPLE_EPOCH = datetime(2001, 1, 1, tzinfo=UTC)
LONG_TEXT = (
    "Packing list: tent, two sleeping bags, the blue stove, four gas canisters, head torches, "
    "a first-aid kit, the big cool box, marshmallows, and the paper map in case the signal "
    "drops near the lake."
)

SCHEMA = """
CREATE TABLE handle (ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE, id TEXT NOT NULL,
    country TEXT, service TEXT NOT NULL, uncanonicalized_id TEXT,
    person_centric_id TEXT, UNIQUE (id, service));
CREATE TABLE chat (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL,
    style INTEGER, state INTEGER, account_id TEXT, properties BLOB, chat_identifier TEXT,
    service_name TEXT, room_name TEXT, account_login TEXT, is_archived INTEGER DEFAULT 0,
    last_addressed_handle TEXT, display_name TEXT, group_id TEXT, is_filtered INTEGER DEFAULT 0,
    successful_query INTEGER);
CREATE TABLE message (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL,
    text TEXT, replace INTEGER DEFAULT 0, service_center TEXT, handle_id INTEGER DEFAULT 0,
    subject TEXT, country TEXT, attributedBody BLOB, version INTEGER DEFAULT 0,
    type INTEGER DEFAULT 0, service TEXT, account TEXT, account_guid TEXT,
    error INTEGER DEFAULT 0, date INTEGER, date_read INTEGER, date_delivered INTEGER,
    is_delivered INTEGER DEFAULT 0, is_finished INTEGER DEFAULT 0, is_emote INTEGER DEFAULT 0,
    is_from_me INTEGER DEFAULT 0, is_empty INTEGER DEFAULT 0, is_read INTEGER DEFAULT 0,
    is_system_message INTEGER DEFAULT 0, is_sent INTEGER DEFAULT 0,
    cache_has_attachments INTEGER DEFAULT 0, item_type INTEGER DEFAULT 0,
    other_handle INTEGER DEFAULT 0, group_title TEXT, group_action_type INTEGER DEFAULT 0,
    associated_message_guid TEXT DEFAULT NULL, balloon_bundle_id TEXT DEFAULT NULL,
    payload_data BLOB, associated_message_type INTEGER DEFAULT 0,
    expressive_send_style_id TEXT DEFAULT NULL, reply_to_guid TEXT DEFAULT NULL,
    thread_originator_guid TEXT DEFAULT NULL, thread_originator_part TEXT DEFAULT NULL,
    date_retracted INTEGER DEFAULT 0, date_edited INTEGER DEFAULT 0,
    destination_caller_id TEXT DEFAULT NULL);
CREATE TABLE chat_message_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE,
    message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE,
    message_date INTEGER DEFAULT 0, PRIMARY KEY (chat_id, message_id));
CREATE TABLE chat_handle_join (chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE,
    handle_id INTEGER REFERENCES handle (ROWID) ON DELETE CASCADE, UNIQUE(chat_id, handle_id));
CREATE TABLE attachment (ROWID INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT UNIQUE NOT NULL,
    created_date INTEGER DEFAULT 0, start_date INTEGER DEFAULT 0, filename TEXT, uti TEXT,
    mime_type TEXT, transfer_state INTEGER DEFAULT 0, is_outgoing INTEGER DEFAULT 0,
    user_info BLOB, transfer_name TEXT, total_bytes INTEGER DEFAULT 0);
CREATE TABLE message_attachment_join (
    message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE,
    attachment_id INTEGER REFERENCES attachment (ROWID) ON DELETE CASCADE,
    UNIQUE(message_id, attachment_id));
"""


def apple_ns(iso: str) -> int:
    """An ISO time (UTC) as nanoseconds since 2001-01-01, as recent macOS stores ``date``."""
    delta = datetime.fromisoformat(iso).replace(tzinfo=UTC) - APPLE_EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000


def apple_seconds(iso: str) -> int:
    """The same in seconds, as macOS before 10.13 stored it."""
    return apple_ns(iso) // 1_000_000_000


# --- typedstream, by hand ---------------------------------------------------------------------


def _integer(value: int) -> bytes:
    """A typedstream integer: one byte, or 0x81 + 2 bytes, or 0x82 + 4 bytes (little-endian)."""
    if -110 <= value <= 127:
        return bytes([value & 0xFF])
    if -32768 <= value <= 32767:
        return b"\x81" + value.to_bytes(2, "little", signed=True)
    return b"\x82" + value.to_bytes(4, "little", signed=True)


def _new(text: bytes) -> bytes:
    """A shared string seen for the first time (0x84, its length, its bytes)."""
    return b"\x84" + _integer(len(text)) + text


def _ref(number: int) -> bytes:
    """A reference to the ``number``-th shared string or object (0x92 is the first)."""
    return bytes([0x92 + number])


def attributed_body(text: str) -> bytes:
    """``text`` archived as an NSAttributedString with one attribute run, as Messages does.

    Shared strings: 0 "@", 1 NSAttributedString, 2 NSObject, 3 NSString, 4 "+", 5 "iI",
    6 NSDictionary, 7 "i", 8 NSNumber, 9 NSValue, 10 "*". Objects: 0 the attributed string,
    1–2 its classes, 3 the NSString, 4 its class, 5 the attribute dictionary, 6 its class,
    7 the attribute name, 8 its NSNumber value, 9–10 its classes, 11 a C string.
    """
    data = text.encode("utf-8")
    utf16_units = len(text.encode("utf-16-le")) // 2
    key = b"__kIMMessagePartAttributeName"
    return b"".join(
        [
            b"\x04\x0bstreamtyped" + _integer(1000),  # version 4, signature, system 1000
            _new(b"@") + b"\x84",  # an object, new
            b"\x84" + _new(b"NSAttributedString") + b"\x00",  # its class, version 0
            b"\x84" + _new(b"NSObject") + b"\x00" + b"\x85",  # superclass; end of chain
            _ref(0) + b"\x84",  # "@": the plain string, new
            b"\x84" + _new(b"NSString") + b"\x01" + _ref(2),  # class NSString v1 < NSObject
            _new(b"+") + _integer(len(data)) + data + b"\x86",  # its UTF-8 bytes; end
            _new(b"iI") + _integer(1) + _integer(utf16_units),  # one run over all of it
            _ref(0) + b"\x84",  # "@": the run's attributes, new
            b"\x84" + _new(b"NSDictionary") + b"\x00" + _ref(2),
            _new(b"i") + _integer(1),  # one entry
            _ref(0) + b"\x84" + _ref(4) + _ref(4) + _integer(len(key)) + key + b"\x86",
            _ref(0) + b"\x84",  # the value: an NSNumber, new
            b"\x84" + _new(b"NSNumber") + b"\x00",
            b"\x84" + _new(b"NSValue") + b"\x00" + _ref(2),
            _new(b"*") + b"\x84" + _ref(7),  # its objCType, the C string "i"
            _ref(7) + _integer(0) + b"\x86",  # the value 0; end of the NSNumber
            b"\x86\x86",  # end of the dictionary; end of the attributed string
        ]
    )


# --- the database -----------------------------------------------------------------------------


def build(path: Path) -> Path:
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany(
        "INSERT INTO handle (ROWID, id, country, service, uncanonicalized_id) "
        "VALUES (?, ?, ?, ?, ?)",
        [
            (1, "+447700900123", "gb", "iMessage", None),
            (2, "sam.ruiz@example.com", "us", "iMessage", None),
            (3, "+15555550142", "us", "SMS", "5555550142"),
        ],
    )
    db.executemany(
        "INSERT INTO chat (ROWID, guid, style, chat_identifier, service_name, display_name) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (1, "iMessage;-;+447700900123", 45, "+447700900123", "iMessage", ""),
            (2, "iMessage;+;chat493827161", 43, "chat493827161", "iMessage", "Cabin crew"),
            (3, "iMessage;-;sam.ruiz@example.com", 45, "sam.ruiz@example.com", "iMessage", None),
        ],
    )
    db.executemany(
        "INSERT INTO chat_handle_join (chat_id, handle_id) VALUES (?, ?)",
        [(1, 1), (2, 1), (2, 2), (2, 3), (3, 2)],
    )
    messages: list[dict[str, object]] = [
        # chat 1
        dict(chat=1, handle_id=1, date=apple_ns("2024-03-01T18:00:00"),
             text="Are we still on for Friday?"),
        dict(chat=1, handle_id=1, is_from_me=1, date=apple_ns("2024-03-01T18:01:30"),
             attributedBody=attributed_body("Yes! Leaving at 6 — can you bring the stove?")),
        dict(chat=1, handle_id=1, date=apple_ns("2024-03-01T18:02:00"),
             text="Liked “Yes! Leaving at 6 — can you bring the stove?”",
             associated_message_type=2001, associated_message_guid="p:0/MSG-0002"),
        dict(chat=1, handle_id=1, date=apple_ns("2024-03-01T18:03:00"),
             text="\ufffcHere's the route", cache_has_attachments=1),
        dict(chat=1, handle_id=1, is_from_me=1, date=apple_ns("2024-03-01T18:04:00"),
             text="\ufffc", cache_has_attachments=1),
        dict(chat=1, handle_id=1, is_from_me=1, date=apple_ns("2024-03-01T18:05:00"),
             text="Removed a like from “Here's the route”",
             associated_message_type=3001, associated_message_guid="p:1/MSG-0004"),
        dict(chat=1, handle_id=1, date=apple_ns("2024-03-01T18:06:00"),
             attributedBody=attributed_body(LONG_TEXT)),
        dict(chat=1, handle_id=1, is_from_me=1, date=apple_ns("2024-03-01T18:07:00"), text=""),
        dict(chat=1, handle_id=1, is_from_me=1, date=apple_ns("2024-03-01T18:08:00"),
             text="See you at 6", thread_originator_guid="MSG-0001",
             thread_originator_part="0:0:27"),
        # chat 2
        dict(chat=2, handle_id=0, is_from_me=1, date=apple_ns("2024-03-02T09:00:00"),
             item_type=2, group_title="Cabin crew"),
        dict(chat=2, handle_id=0, is_from_me=1, date=apple_ns("2024-03-02T09:00:05"),
             item_type=1, group_action_type=0, other_handle=3),
        dict(chat=2, handle_id=2, date=apple_ns("2024-03-02T09:01:00"),
             text="Hi all, welcome Priya"),
        dict(chat=2, handle_id=3, date=apple_ns("2024-03-02T09:02:00"),
             text="Thanks! Who's driving?", service="SMS"),
        dict(chat=2, handle_id=0, is_from_me=1, date=apple_ns("2024-03-02T09:03:00"), text="I am"),
        dict(chat=2, handle_id=2, date=apple_ns("2024-03-02T09:04:00"), text="Loved “I am”",
             associated_message_type=2000, associated_message_guid="p:0/MSG-0014"),
        dict(chat=2, handle_id=0, is_from_me=1, date=apple_ns("2024-03-02T09:05:00"),
             item_type=3, group_action_type=1),
        dict(chat=2, handle_id=1, date=apple_ns("2024-03-02T09:06:00"),
             attributedBody=attributed_body("🚗 I'll take the second car")),
        dict(chat=2, handle_id=0, is_from_me=1, date=apple_ns("2024-03-02T09:07:00"),
             item_type=1, group_action_type=1, other_handle=1),
        dict(chat=2, handle_id=2, date=apple_ns("2024-03-02T09:08:00"), text="\ufffc",
             associated_message_type=1000, associated_message_guid="p:0/MSG-0017"),
        dict(chat=2, handle_id=2, date=apple_ns("2024-03-02T09:09:00"),
             attributedBody=b"bplist00\xd4\x01\x02not a typedstream"),
        dict(chat=2, handle_id=2, date=apple_ns("2024-03-02T09:11:00"),
             date_retracted=apple_ns("2024-03-02T09:12:00"),
             date_edited=apple_ns("2024-03-02T09:12:00")),
        # chat 3: macOS before 10.13, seconds
        dict(chat=3, handle_id=2, date=apple_seconds("2012-06-15T14:30:00"),
             text="Old phone, old times"),
        dict(chat=3, handle_id=2, is_from_me=1, date=apple_seconds("2012-06-15T14:31:00"),
             text="Ha, 2012!"),
        # in no chat (left behind by a deleted conversation)
        dict(chat=None, handle_id=2, date=apple_ns("2024-03-03T12:00:00"), text="orphan"),
    ]  # fmt: skip
    for rowid, message in enumerate(messages, start=1):
        chat = message.pop("chat")
        message.setdefault("service", "iMessage")
        columns = ["ROWID", "guid", *message]
        values = [rowid, f"MSG-{rowid:04d}", *message.values()]
        db.execute(
            f"INSERT INTO message ({', '.join(columns)}) VALUES ({', '.join('?' * len(values))})",
            values,
        )
        if chat is not None:
            db.execute(
                "INSERT INTO chat_message_join (chat_id, message_id, message_date) "
                "VALUES (?, ?, ?)",
                (chat, rowid, message["date"]),
            )
    db.executemany(
        "INSERT INTO attachment (ROWID, guid, filename, mime_type, transfer_name, total_bytes) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (1, "ATT-0001", "~/Library/Messages/Attachments/ab/11/ATT-0001/route.png",
             "image/png", "route.png", 48213),
            (2, "ATT-0002", "~/Library/Messages/Attachments/cd/12/ATT-0002/IMG_0042.HEIC",
             "image/heic", "IMG_0042.HEIC", 1830221),
        ],
    )  # fmt: skip
    db.executemany(
        "INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (?, ?)",
        [(4, 1), (5, 2)],
    )
    db.commit()
    db.close()
    return path


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("chat.db")
    print(build(target))
