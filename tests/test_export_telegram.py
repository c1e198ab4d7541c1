"""The Telegram Desktop reader: hand-written result.json exports (a single chat, a full export),
read through ``import_chat_export`` into chunks — every number below worked out by hand from
tests/data/exports/telegram/."""

from __future__ import annotations

import json
import shutil
import zipfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

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
from chatledger.corpus.exports._telegram import TelegramReader

DATA = Path(__file__).parent / "data" / "exports" / "telegram"
SINGLE = DATA / "single"
FULL = DATA / "full"

# The group chat, oldest first: (speaker, timestamp in UTC, text). date_unixtime is epoch
# seconds, so every time is aware UTC (the fixture's "date" is the same instant at +01:00).
GROUP = [
    ("Ness Alderton", "2026-03-01T09:01:00Z", "Morning all! Who has the shed key?"),
    (
        "Sam Ruiz",
        "2026-03-01T09:03:30Z",
        "I do. Seeds are in the blue box, see https://example.org/seeds — ask @zoek or "
        "Priya Shah about the rota (https://example.org/rota).",
    ),
    ("Zoë Kowalski", "2026-03-01T09:05:00Z", "[photo]"),
    ("Zoë Kowalski", "2026-03-01T09:06:00Z", "[photo] The tomatoes survived the frost"),
    ("Ness Alderton", "2026-03-01T09:07:00Z", "[sticker 🥕]"),
    ("Sam Ruiz", "2026-03-01T09:09:00Z", "[voice message]"),
    (
        "Zoë Kowalski",
        "2026-03-01T09:10:00Z",
        "[poll] Work party on Saturday? (Yes, morning / Afternoon / Can't make it)",
    ),
    ("Ness Alderton", "2026-03-01T11:30:00Z", "[group call, 10 min]"),
    ("Deleted Account (user1009)", "2026-03-01T12:00:00Z", "hello?"),
    ("Ness Alderton", "2026-03-01T12:01:00Z", "Bring gloves\nand the big trowel"),
    ("Sam Ruiz", "2026-03-01T12:10:00Z", "[location: Plot 14, Hill Lane]"),
    ("Zoë Kowalski", "2026-03-01T12:11:00Z", "[forwarded] Water before 9am"),
    ("Ness Alderton", "2026-03-01T12:15:00Z", "See you Saturday 🌱"),
    ("Priya Shah", "2026-03-01T12:21:00Z", "Thanks for adding me!"),
    ("Sam Ruiz", "2026-03-02T08:00:00Z", "Key is back under the pot."),
]


def shown(path: Path) -> list[tuple[str, str | None, str]]:
    return [(m.speaker, m.timestamp, m.text) for chunk in read_chunks(path) for m in chunk.messages]


def test_a_single_chat_export_becomes_one_conversation_of_fifteen_messages(
    tmp_path: Path,
) -> None:
    summary = import_chat_export(SINGLE, tmp_path, ImportOptions(kind="telegram"))
    assert summary.kind == "telegram"
    assert (summary.conversations, summary.messages, summary.participants) == (1, 15, 5)
    # 20 items: 15 kept; 3 service (create_group, pin_message, invite_members), 1 unsupported,
    # 1 with neither text nor media; and 2 + 1 reactions on message 17.
    assert summary.skipped == {
        "empty message": 1,
        "reaction": 3,
        "service message": 3,
        "unsupported message": 1,
    }
    assert summary.kinds == {"call": 1, "media": 3, "poll": 1, "sticker": 1, "text": 9}
    assert (summary.first_message, summary.last_message) == (
        "2026-03-01T09:01:00Z",
        "2026-03-02T08:00:00Z",
    )
    assert any("1 Telegram message(s) were edited" in note for note in summary.notes)
    # The last message comes 19 h 39 min after the one before (> 6 h): a second chunk.
    assert summary.chunks == 2
    chunks = read_chunks(tmp_path / "chunks.jsonl")
    assert [c.chunk_id for c in chunks] == ["tg4815162342-0001", "tg4815162342-0002"]
    assert {c.conversation_id for c in chunks} == {"tg4815162342"}
    assert {c.title for c in chunks} == {"Allotment Crew"}
    assert [len(c.messages) for c in chunks] == [14, 1]
    assert chunks[0].participants == [
        "Ness Alderton",
        "Sam Ruiz",
        "Zoë Kowalski",
        "Deleted Account (user1009)",
        "Priya Shah",
    ]
    assert shown(tmp_path / "chunks.jsonl") == GROUP


def test_the_folder_its_result_json_and_a_zip_of_the_folder_read_alike(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(SINGLE / "result.json", "ChatExport_2026-03-02/result.json")
        zipped.writestr("ChatExport_2026-03-02/photos/photo_1@01-03-2026_10-05-00.jpg", b"\xff")
    outputs = []
    for index, path in enumerate((SINGLE, SINGLE / "result.json", archive)):
        with ExportSource.open_path(path) as source:
            assert detect_kind(source) == "telegram"
        out = tmp_path / f"out{index}"
        summary = import_chat_export(path, out)
        assert (summary.kind, summary.messages) == ("telegram", 15)
        outputs.append((out / "chunks.jsonl").read_text(encoding="utf-8"))
    # Same export, same chunks and message ids, whatever it came as.
    assert outputs[0] == outputs[1] == outputs[2]


def test_replies_native_ids_kinds_and_members_come_from_the_export() -> None:
    context = ReadContext()
    with ExportSource.open_path(SINGLE) as source:
        (chat,) = list(TelegramReader().conversations(source, context))
        messages = list(chat.messages)
    assert chat.key == "tg4815162342"
    by_id = {m.native_id: m for m in messages}
    assert by_id["3"].reply_to == "2"
    assert by_id["2"].reply_to is None
    assert [by_id[i].kind for i in ("4", "5", "6", "9", "10")] == [
        "media",
        "text",
        "sticker",
        "poll",
        "call",
    ]
    assert by_id["2"].timestamp == datetime(2026, 3, 1, 9, 1, tzinfo=UTC)
    # Members: the create_group list, the name mentioned without a username, and the
    # deleted account — the names the export shows, for pseudonymisation.
    assert chat.members == (
        "Ness Alderton",
        "Sam Ruiz",
        "Zoë Kowalski",
        "Priya Shah",
        "Deleted Account (user1009)",
    )


def test_a_full_export_reads_every_chat_and_left_chat(tmp_path: Path) -> None:
    summary = import_chat_export(FULL, tmp_path)
    assert summary.kind == "telegram"
    # Sam (5 kept: 3 texts/files and 2 calls), Saved Messages (1), the left group (1 of 2).
    assert (summary.conversations, summary.messages, summary.chunks) == (3, 7, 3)
    assert summary.skipped == {"service message": 1}
    assert summary.kinds == {"call": 2, "media": 1, "text": 4}
    chunks = read_chunks(tmp_path / "chunks.jsonl")
    assert [(c.conversation_id, c.title) for c in chunks] == [
        ("tg1002", "Sam Ruiz"),
        ("tg1001", "Saved Messages"),
        ("tg1357924680", "Seed Swap 2025"),
    ]
    assert [(m.speaker, m.timestamp, m.text) for m in chunks[0].messages] == [
        ("Ness Alderton", "2026-03-05T17:00:00Z", "Are you coming to the plot today?"),
        ("Sam Ruiz", "2026-03-05T17:05:00Z", "[call, 2 min 5 s]"),
        ("Ness Alderton", "2026-03-05T17:30:00Z", "[missed call]"),
        ("Sam Ruiz", "2026-03-05T17:31:00Z", "Sorry, was driving. Yes at 6."),
        ("Sam Ruiz", "2026-03-05T17:32:00Z", "[file: rota_march.pdf]"),
    ]
    assert [(m.speaker, m.text) for m in chunks[2].messages] == [
        ("Tomás Ferreira", "Last call for bean seeds")
    ]
    # Contacts and personal information are not messages and are not read into chunks.
    assert "+44 7700 900123" not in (tmp_path / "chunks.jsonl").read_text(encoding="utf-8")


def test_pseudonymising_replaces_senders_and_the_names_mentioned(tmp_path: Path) -> None:
    import_chat_export(SINGLE, tmp_path, ImportOptions(pseudonymise=True))
    written = (tmp_path / "chunks.jsonl").read_text(encoding="utf-8")
    for name in ("Ness", "Alderton", "Sam Ruiz", "Zoë", "Priya", "user1009"):
        assert name not in written
    chunk = read_chunks(tmp_path / "chunks.jsonl")[0]
    # Members in order of first appearance: Ness A, Sam B, Zoë C, Priya D, deleted account E.
    assert chunk.participants == ["Person A", "Person B", "Person C", "Person E", "Person D"]
    assert "or Person D about the rota ([URL-2])" in chunk.messages[1].text


def write_export(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(text, encoding="utf-8")
    return folder


def test_an_export_without_date_unixtime_keeps_local_times_naive_and_says_so(
    tmp_path: Path,
) -> None:
    # Exports before date_unixtime existed have only "date", the exporting machine's local time.
    old = {
        "name": "Sam Ruiz",
        "type": "personal_chat",
        "id": 1002,
        "messages": [
            {"id": 1, "type": "message", "date": "2019-05-31T21:28:30", "from": "Sam Ruiz",
             "from_id": 1002, "text": "Old times"},
        ],
    }  # fmt: skip
    folder = write_export(tmp_path / "old", json.dumps(old))
    summary = import_chat_export(folder, tmp_path / "naive", ImportOptions(kind="telegram"))
    assert summary.first_message == "2019-05-31T21:28:30"
    assert any("without a time zone" in note for note in summary.notes)
    berlin = ImportOptions(kind="telegram", timezone=timezone(timedelta(hours=2)))
    summary = import_chat_export(folder, tmp_path / "zoned", berlin)
    assert summary.first_message == "2019-05-31T21:28:30+02:00"


def test_tdesktops_invalid_escapes_and_bare_document_ids_are_repaired(tmp_path: Path) -> None:
    # Written as Telegram Desktop writes them: "\x0B" for a control character (not JSON), and
    # in 4.1 a custom emoji's document_id without quotes.
    text = (
        '{\n "name": "Sam Ruiz",\n "type": "personal_chat",\n "id": 1002,\n "messages": [\n'
        '  {\n   "id": 1,\n   "type": "message",\n   "date": "2026-03-05T18:00:00",\n'
        '   "date_unixtime": "1772730000",\n   "from": "Sam Ruiz",\n   "from_id": "user1002",\n'
        '   "text": "tab\\x0Bhere and a real backslash-x: \\\\x41"\n  },\n'
        '  {\n   "id": 2,\n   "type": "message",\n   "date": "2026-03-05T18:01:00",\n'
        '   "date_unixtime": "1772730060",\n   "from": "Sam Ruiz",\n   "from_id": "user1002",\n'
        '   "text": [\n    "nice ",\n    {\n     "type": "custom_emoji",\n     "text": "😮",\n'
        '     "document_id": video_files/sticker (2).webm\n    }\n   ]\n  }\n ]\n}\n'
    )
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    summary = import_chat_export(write_export(tmp_path / "bad", text), tmp_path / "out")
    assert summary.messages == 2
    assert any("2 piece(s) of invalid JSON" in note for note in summary.notes)
    texts = [m.text for m in read_chunks(tmp_path / "out" / "chunks.jsonl")[0].messages]
    assert texts == ["tab\x0bhere and a real backslash-x: \\x41", "nice 😮"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("[]", None, "not a Telegram export: expected a JSON object"),
        ('{"about": "x", "contacts": {}}', None, "no 'messages' (one chat) or 'chats'"),
        ('{\n "name": "x",\n "messages": [\n  {"id": 1,,}\n ]\n}', 4, "not valid JSON"),
        ('{"id": 5, "messages": [1]}', 1, "[messages[0]]: expected a message object"),
    ],
)
def test_a_file_that_is_not_a_telegram_export_is_one_line_naming_it(
    tmp_path: Path, text: str, line: int | None, message: str
) -> None:
    folder = write_export(tmp_path / "x", text)
    with pytest.raises(InputError) as caught:
        import_chat_export(folder, tmp_path / "out", ImportOptions(kind="telegram"))
    assert message in str(caught.value)
    assert "result.json" in str(caught.value)
    assert caught.value.line == line
    assert "\n" not in str(caught.value)


def test_a_message_without_a_readable_time_names_its_place(tmp_path: Path) -> None:
    text = (
        '{\n "id": 7,\n "messages": [\n  {"id": 1, "type": "message", "date_unixtime": "1",'
        ' "from": "A", "text": "ok"},\n  {"id": 2, "type": "message", "date_unixtime": "soon",'
        ' "from": "A", "text": "?"}\n ]\n}'
    )
    with pytest.raises(InputError) as caught:
        import_chat_export(write_export(tmp_path / "x", text), tmp_path / "out")
    assert caught.value.line == 4
    assert caught.value.field == "messages[1].date_unixtime"
    assert "cannot read the time of message 2" in str(caught.value)


def test_a_folder_without_result_json_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    shutil.copytree(SINGLE, folder)
    (folder / "result.json").rename(folder / "notes.txt")
    with pytest.raises(InputError, match=r"no result\.json in this folder"):
        import_chat_export(folder, tmp_path / "out", ImportOptions(kind="telegram"))


def test_channel_posts_without_a_sender_are_the_signature_else_the_channel(
    tmp_path: Path,
) -> None:
    posts = {
        "name": "Garden Tips",
        "type": "public_channel",
        "id": 777,
        "messages": [
            {"id": 1, "type": "message", "date_unixtime": "1772355600", "text": "Sow peas now"},
            {"id": 2, "type": "message", "date_unixtime": "1772355660", "author": "Mira",
             "text": "Mulch!"},
        ],
    }  # fmt: skip
    import_chat_export(write_export(tmp_path / "c", json.dumps(posts)), tmp_path / "out")
    (chunk,) = read_chunks(tmp_path / "out" / "chunks.jsonl")
    assert [(m.speaker, m.text) for m in chunk.messages] == [
        ("Garden Tips", "Sow peas now"),
        ("Mira", "Mulch!"),
    ]
