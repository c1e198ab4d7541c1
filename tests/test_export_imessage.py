"""The iMessage chat.db reader, on tests/data/exports/imessage/chat.db — built by
make_chat_db.py beside it, whose docstring lists every row (times UTC)."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import sqlite3
import stat
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from chatledger.core import InputError
from chatledger.corpus import read_chunks
from chatledger.corpus.exports import (
    ExportSource,
    ImportOptions,
    ReadContext,
    detect_kind,
    import_chat_export,
)
from chatledger.corpus.exports._imessage import (
    IMessageReader,
    apple_time,
    decode_attributed_body,
)

FIXTURES = Path(__file__).resolve().parent / "data" / "exports" / "imessage"
CHAT_DB = FIXTURES / "chat.db"

SKIPPED = {
    "empty message": 1,
    "group member added": 1,
    "group member removed": 1,
    "group photo changed": 1,
    "group renamed": 1,
    "message in no chat": 1,
    "sticker on a message": 1,
    "tapback": 3,
    "unreadable attributedBody": 1,
    "unsent message": 1,
}


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_chat_db", FIXTURES / "make_chat_db.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dump(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return list(db.iterdump())
    finally:
        db.close()


def test_the_committed_chat_db_is_what_the_script_builds(tmp_path: Path) -> None:
    built = _builder().build(tmp_path / "chat.db")
    assert _dump(built) == _dump(CHAT_DB)


def test_import_counts_messages_skips_and_kinds(tmp_path: Path) -> None:
    summary = import_chat_export(CHAT_DB, tmp_path, ImportOptions(kind="imessage", me="Lee"))
    # chat 1: 6 of 9 rows; the group: 4 of 12; chat 3: 2; one row in no chat.
    assert summary.messages == 12
    assert summary.conversations == 3
    # Lee, +447700900123, sam.ruiz@example.com, +15555550142.
    assert summary.participants == 4
    assert summary.skipped == SKIPPED
    assert summary.kinds == {"media": 1, "text": 11}
    assert summary.first_message == "2012-06-15T14:30:00Z"
    assert summary.last_message == "2024-03-02T09:06:00Z"
    chunks = read_chunks(tmp_path / "chunks.jsonl")
    assert [(c.chunk_id, c.title, len(c.messages)) for c in chunks] == [
        ("447700900123-0001", "+447700900123", 6),
        ("chat493827161-0001", "Cabin crew", 4),
        ("sam-ruiz-example-com-0001", "sam.ruiz@example.com", 2),
    ]


def test_speakers_times_bodies_and_attachments(tmp_path: Path) -> None:
    import_chat_export(CHAT_DB, tmp_path, ImportOptions(kind="imessage", me="Lee"))
    one, group, old = read_chunks(tmp_path / "chunks.jsonl")
    long_text = _builder().LONG_TEXT
    assert len(long_text.encode("utf-8")) == 195  # over 127: its length is 0x81 + 2 bytes
    assert [(m.timestamp, m.speaker, m.text) for m in one.messages] == [
        ("2024-03-01T18:00:00Z", "+447700900123", "Are we still on for Friday?"),
        # text NULL: the body comes from attributedBody; is_from_me → the --me name.
        ("2024-03-01T18:01:30Z", "Lee", "Yes! Leaving at 6 — can you bring the stove?"),
        ("2024-03-01T18:03:00Z", "+447700900123", "[file: route.png]\nHere's the route"),
        ("2024-03-01T18:04:00Z", "Lee", "[file: IMG_0042.HEIC]"),
        ("2024-03-01T18:06:00Z", "+447700900123", long_text),
        ("2024-03-01T18:08:00Z", "Lee", "See you at 6"),
    ]
    assert one.participants == ["+447700900123", "Lee"]
    assert [(m.speaker, m.text) for m in group.messages] == [
        ("sam.ruiz@example.com", "Hi all, welcome Priya"),
        ("+15555550142", "Thanks! Who's driving?"),
        ("Lee", "I am"),
        ("+447700900123", "🚗 I'll take the second car"),
    ]
    # Dates in seconds (macOS before 10.13), told from nanoseconds by magnitude.
    assert [(m.timestamp, m.speaker) for m in old.messages] == [
        ("2012-06-15T14:30:00Z", "sam.ruiz@example.com"),
        ("2012-06-15T14:31:00Z", "Lee"),
    ]


def test_me_defaults_to_me_and_the_reader_gives_members_ids_and_replies() -> None:
    context = ReadContext()
    with ExportSource.open_path(CHAT_DB) as source:
        chats = [
            (c.key, c.members, list(c.messages))
            for c in IMessageReader().conversations(source, context)
        ]
    assert [(key, members) for key, members, _ in chats] == [
        ("+447700900123", ("+447700900123",)),
        ("chat493827161", ("+447700900123", "sam.ruiz@example.com", "+15555550142")),
        ("sam.ruiz@example.com", ("sam.ruiz@example.com",)),
    ]
    first = chats[0][2]
    assert [m.speaker for m in first] == ["+447700900123", "me", "+447700900123", "me",
                                         "+447700900123", "me"]  # fmt: skip
    assert [m.kind for m in first] == ["text", "text", "text", "media", "text", "text"]
    assert first[-1].native_id == "MSG-0009" and first[-1].reply_to == "MSG-0001"
    assert first[1].timestamp.isoformat() == "2024-03-01T18:01:30+00:00"
    assert context.log.skipped["tapback"] == 3


def test_pseudonymised_chunks_hold_no_handle_or_me(tmp_path: Path) -> None:
    import_chat_export(CHAT_DB, tmp_path, ImportOptions(me="Lee Grant", pseudonymise=True))
    text = (tmp_path / "chunks.jsonl").read_text(encoding="utf-8")
    for secret in ("7700", "900123", "sam.ruiz", "example.com", "5555550142", "Lee", "Grant"):
        assert secret not in text, secret
    # A handle in a key or title becomes its placeholder: phone-1, [PHONE-1].
    assert [(c.chunk_id, c.title) for c in read_chunks(tmp_path / "chunks.jsonl")] == [
        ("phone-1-0001", "[PHONE-1]"),
        ("chat493827161-0001", "Cabin crew"),
        ("email-1-0001", "[EMAIL-1]"),
    ]


def test_the_database_is_only_read(tmp_path: Path) -> None:
    folder = tmp_path / "Messages"
    folder.mkdir()
    copy = folder / "chat.db"
    shutil.copyfile(CHAT_DB, copy)
    before = hashlib.sha256(copy.read_bytes()).hexdigest()
    copy.chmod(stat.S_IRUSR)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)  # nothing can be created beside it
    try:
        summary = import_chat_export(copy, tmp_path / "out", ImportOptions())
    finally:
        folder.chmod(stat.S_IRWXU)
    assert summary.kind == "imessage" and summary.messages == 12
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in folder.iterdir()) == ["chat.db"]


def test_a_copy_of_a_live_database_reads_its_wal_too(tmp_path: Path) -> None:
    live = tmp_path / "live" / "chat.db"
    live.parent.mkdir()
    shutil.copyfile(CHAT_DB, live)
    db = sqlite3.connect(live)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute(
            "INSERT INTO message (ROWID, guid, text, handle_id, date, is_from_me) "
            "VALUES (100, 'MSG-0100', 'Only in the WAL', 1, ?, 0)",
            (_builder().apple_ns("2024-03-01T18:09:00"),),
        )
        db.execute("INSERT INTO chat_message_join (chat_id, message_id) VALUES (1, 100)")
        db.commit()
        # Copied while Messages still has it open: the new rows are only in chat.db-wal.
        copied = tmp_path / "copied"
        copied.mkdir()
        shutil.copyfile(live, copied / "chat.db")
        shutil.copyfile(f"{live}-wal", copied / "chat.db-wal")
    finally:
        db.close()
    assert (copied / "chat.db-wal").stat().st_size > 0
    summary = import_chat_export(copied / "chat.db", tmp_path / "out", ImportOptions())
    assert summary.messages == 13
    assert read_chunks(tmp_path / "out" / "chunks.jsonl")[0].messages[-1].text == (
        "Only in the WAL"
    )
    assert sorted(p.name for p in copied.iterdir()) == ["chat.db", "chat.db-wal"]


def test_a_chat_db_inside_a_zip_is_read_from_a_temporary_copy(tmp_path: Path) -> None:
    archive = tmp_path / "messages.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.write(CHAT_DB, "Messages/chat.db")
        out.writestr("Messages/Attachments/readme.txt", "not read")
    with ExportSource.open_path(archive) as source:
        assert detect_kind(source) == "imessage"
    summary = import_chat_export(archive, tmp_path / "zip", ImportOptions())
    import_chat_export(CHAT_DB, tmp_path / "file", ImportOptions())
    assert summary.messages == 12 and summary.skipped == SKIPPED
    assert (tmp_path / "zip" / "chunks.jsonl").read_bytes() == (
        tmp_path / "file" / "chunks.jsonl"
    ).read_bytes()


def test_sniff_wants_sqlite_with_the_message_tables(tmp_path: Path) -> None:
    with ExportSource.open_path(CHAT_DB) as source:
        assert IMessageReader.sniff(source)
        assert detect_kind(source) == "imessage"
    backup = tmp_path / "backup"
    backup.mkdir()
    shutil.copyfile(CHAT_DB, backup / "sms.db")  # an iPhone backup's copy of the same tables
    with ExportSource.open_path(backup) as source:
        assert detect_kind(source) == "imessage"
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE message (id INTEGER)")
    db.commit()
    db.close()
    text = tmp_path / "chat.db"
    text.write_text("SQLite format 2, honestly", encoding="utf-8")
    for path in (other, text):
        with ExportSource.open_path(path) as source:
            assert not IMessageReader.sniff(source)


def test_not_a_chat_db_is_one_error(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE message (ROWID INTEGER PRIMARY KEY, date INTEGER)")
    db.execute("CREATE TABLE chat_message_join (chat_id INTEGER, message_id INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match=r"not an iMessage chat\.db: no 'chat' table") as caught:
        import_chat_export(other, tmp_path / "out", ImportOptions(kind="imessage"))
    assert caught.value.path == str(other)
    garbage = tmp_path / "chat.db"
    garbage.write_bytes(b"\x00" * 4096)
    with pytest.raises(InputError, match="cannot read the database"):
        import_chat_export(garbage, tmp_path / "out", ImportOptions(kind="imessage"))


# --- attributedBody and dates -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Yes! Leaving at 6 — can you bring the stove?",  # one-byte length
        "é" * 100,  # 200 bytes: 0x81 and a 2-byte length
        "x" * 40_000,  # 0x82 and a 4-byte length
        "",
        "\ufffcline one\nline two 🚗",
    ],
)
def test_decode_attributed_body(text: str) -> None:
    blob = _builder().attributed_body(text)
    assert decode_attributed_body(blob) == text


def test_decode_attributed_body_big_endian_and_refusals() -> None:
    # "typedstream" is the big-endian signature: a 2-byte length is read high byte first.
    payload = "b" * 300
    big = (
        b"\x04\x0btypedstream\x81\x03\xe8\x84\x01@\x84\x84\x84\x08NSString\x01\x85"
        b"\x84\x01+\x81" + len(payload).to_bytes(2, "big") + payload.encode() + b"\x86"
    )
    assert decode_attributed_body(big) == payload
    good = _builder().attributed_body("hello")
    assert decode_attributed_body(b"bplist00" + good[8:]) is None  # not typedstream
    assert decode_attributed_body(good.replace(b"NSString", b"NSNumber")) is None
    assert decode_attributed_body(good[: good.index(b"hello") + 2]) is None  # cut short
    assert decode_attributed_body(b"") is None


def test_apple_time_by_magnitude() -> None:
    assert apple_time(0, "x").isoformat() == "2001-01-01T00:00:00+00:00"
    assert apple_time(731_008_800, "x").isoformat() == "2024-03-01T18:00:00+00:00"
    assert apple_time(731_008_800_123_456_789, "x").isoformat() == (
        "2024-03-01T18:00:00.123456+00:00"
    )
    with pytest.raises(InputError):
        apple_time(None, "x")
