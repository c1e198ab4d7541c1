"""The signal-export reader, on the hand-written exports in tests/data/exports/signal/.

``signal-chats/`` is a default export (both ``data.json`` — JSON Lines — and ``chat.md`` per
chat, ``index.html``, a group's ``meta.json``): AyaSmith, a one-to-one chat of 10 messages
(a reply, a photo, a file, reactions, a deleted message, a call record, a sticker, a notice
with no text, an attachment left out of the export), and CabinCrew, a group of 5. ``markdown-only/``
is a ``--no-json`` export in the older ``[YYYY-MM-DD, HH:MM]`` style. signal-export writes the
exporting computer's local time with no zone, so the times are naive (written without one).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from datetime import timedelta, timezone
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
from chatledger.corpus.exports._signal import SignalReader

FIXTURES = Path(__file__).resolve().parent / "data" / "exports" / "signal"
EXPORT = FIXTURES / "signal-chats"
MARKDOWN = FIXTURES / "markdown-only"

SKIPPED = {"deleted message": 1, "empty message": 2, "reaction": 6}
NAIVE_NOTE = (
    "the export gives local times without a time zone: timestamps are written without one "
    "(pass --timezone, e.g. Europe/Berlin, to state it)"
)


def test_import_counts_messages_skips_and_kinds(tmp_path: Path) -> None:
    summary = import_chat_export(EXPORT, tmp_path, ImportOptions(kind="signal", me="Lee"))
    # AyaSmith keeps 8 of 10 (the deleted message and the empty notice skipped); CabinCrew 4 of 5.
    assert summary.messages == 12
    assert summary.conversations == 2
    assert summary.participants == 4  # Lee, Aya Smith, Priya Shah, Jim Brown
    # Reactions: 1 + 2 in AyaSmith, 3 in CabinCrew.
    assert summary.skipped == SKIPPED
    assert summary.kinds == {"call": 1, "media": 1, "sticker": 1, "text": 9}
    assert summary.notes == [NAIVE_NOTE]
    assert (summary.first_message, summary.last_message) == (
        "2024-05-01T09:15:02",
        "2024-05-03T18:03:00",
    )
    chunks = read_chunks(tmp_path / "chunks.jsonl")
    # AyaSmith breaks at the night before the 2 May message (gap 6 h).
    assert [(c.chunk_id, c.title, len(c.messages)) for c in chunks] == [
        ("aya-smith-0001", "Aya Smith", 7),
        ("aya-smith-0002", "Aya Smith", 1),
        ("cabin-crew-0001", "Cabin Crew", 4),
    ]


def test_speakers_times_texts_attachments_and_stickers(tmp_path: Path) -> None:
    import_chat_export(EXPORT, tmp_path, ImportOptions(kind="signal"))
    first, second, crew = read_chunks(tmp_path / "chunks.jsonl")
    assert [(m.timestamp, m.speaker, m.text) for m in first.messages] == [
        ("2024-05-01T09:15:02", "Aya Smith", "Morning! Are you coming to the cabin?"),
        # signal-export's "Me" → the --me name, "me" by default.
        ("2024-05-01T09:16:40", "me", "Yes — leaving Friday at 6"),
        # A reply: its quote is not repeated in the text.
        ("2024-05-01T09:17:05", "Aya Smith", "Great, bring the stove"),
        ("2024-05-01T09:18:00", "me", "[file: photo.jpg]"),
        ("2024-05-01T09:18:30", "Aya Smith", "Nice view\nIs that the lake?\n[file: lake map.pdf]"),
        # A call record is kept as kind call, as the other formats keep calls.
        ("2024-05-01T09:20:00", "me", "[Outgoing voice call (accepted, 2m 5s)]"),
        ("2024-05-01T09:25:00", "Aya Smith", "[sticker 🎉]"),
    ]
    assert [(m.timestamp, m.text) for m in second.messages] == [
        ("2024-05-02T20:00:00", "See you tomorrow\n[media]"),
    ]
    assert [(m.speaker, m.text) for m in crew.messages] == [
        ("Jim Brown", "Who has the keys?"),  # signal-export drops backticks
        ("Priya Shah", "Me! I'll bring them"),
        ("me", "Great. Gate code is 4821"),
        ("Aya Smith", "Line one\n\nLine three, after a blank line"),
    ]
    assert crew.participants == ["Jim Brown", "Priya Shah", "me", "Aya Smith"]


def test_replies_ids_and_members_from_the_reader() -> None:
    context = ReadContext(me="Lee")
    with ExportSource.open_path(EXPORT) as source:
        chats = [
            (c.key, c.members, list(c.messages))
            for c in SignalReader().conversations(source, context)
        ]
    assert [(key, members) for key, members, _ in chats] == [
        # The folder AyaSmith spells its speaker Aya Smith; the group's name is in meta.json.
        ("Aya Smith", ()),
        ("Cabin Crew", ("Aya Smith", "Jim Brown", "Priya Shah")),
    ]
    aya, crew = chats[0][2], chats[1][2]
    # native_id: the line in data.json; a reply points at the line of the quoted message.
    assert [(m.native_id, m.reply_to) for m in aya[:3]] == [("1", None), ("2", None), ("3", "2")]
    assert (crew[2].speaker, crew[2].native_id, crew[2].reply_to) == ("Lee", "3", "2")
    assert [m.kind for m in aya] == [
        "text", "text", "text", "media", "text", "call", "sticker", "text",
    ]  # fmt: skip
    # Naive: the exporting computer's local time, to the microsecond as data.json has it.
    assert aya[0].timestamp.isoformat() == "2024-05-01T09:15:02.123000"
    assert aya[0].timestamp.tzinfo is None


def test_chat_md_alone_reads_the_same_as_data_json(tmp_path: Path) -> None:
    markdown_only = tmp_path / "export"
    shutil.copytree(EXPORT, markdown_only)
    for data in markdown_only.rglob("data.json"):
        data.unlink()
    from_json = import_chat_export(EXPORT, tmp_path / "json", ImportOptions())
    from_md = import_chat_export(markdown_only, tmp_path / "md", ImportOptions())
    assert from_json.kind == from_md.kind == "signal"
    assert from_md.skipped == SKIPPED
    assert (tmp_path / "md" / "chunks.jsonl").read_text(encoding="utf-8") == (
        tmp_path / "json" / "chunks.jsonl"
    ).read_text(encoding="utf-8")


def test_an_older_markdown_only_export(tmp_path: Path) -> None:
    summary = import_chat_export(MARKDOWN, tmp_path, ImportOptions(me="Lee"))
    assert summary.kind == "signal"
    assert (summary.messages, summary.conversations, summary.chunks) == (6, 1, 1)
    assert summary.skipped == {"reaction": 1}
    assert summary.kinds == {"call": 1, "media": 1, "sticker": 1, "text": 3}
    (chunk,) = read_chunks(tmp_path / "chunks.jsonl")
    assert chunk.title == "Jim Brown"
    assert [(m.timestamp, m.speaker, m.text) for m in chunk.messages] == [
        ("2023-11-20T07:45:00", "Jim Brown", "Train is delayed, ETA 08:30"),
        # The quote block before the body is dropped; a colon in the text stays.
        ("2023-11-20T07:46:00", "Lee", "No worries: I'll wait by the café"),
        ("2023-11-20T07:50:00", "Jim Brown", "[sticker 😅]"),
        ("2023-11-20T07:52:00", "Jim Brown", "[Missed voice call]"),
        # A header right after a message's line (no blank line between) still starts one.
        ("2023-11-20T07:58:00", "Jim Brown", "Here now, platform 2"),
        ("2023-11-20T07:59:00", "Lee", "[file: IMG_20231120_075900.jpg]"),
    ]


def test_one_chat_folder_one_file_or_a_zip(tmp_path: Path) -> None:
    for path in (EXPORT / "AyaSmith", EXPORT / "AyaSmith" / "data.json"):
        with ExportSource.open_path(path) as source:
            assert detect_kind(source) == "signal"
        summary = import_chat_export(path, tmp_path / path.name, ImportOptions())
        assert (summary.messages, summary.chunks) == (8, 2)
        assert read_chunks(tmp_path / path.name / "chunks.jsonl")[0].chunk_id == "aya-smith-0001"
    archive = tmp_path / "signal.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(EXPORT.rglob("*")):
            if path.is_file():
                out.write(path, "signal-chats/" + path.relative_to(EXPORT).as_posix())
    summary = import_chat_export(archive, tmp_path / "zip", ImportOptions())
    assert (summary.kind, summary.messages, summary.conversations) == ("signal", 12, 2)


def test_pseudonymised_chunks_hold_no_name_not_even_the_folders(tmp_path: Path) -> None:
    import_chat_export(EXPORT, tmp_path, ImportOptions(me="Lee Grant", pseudonymise=True))
    text = (tmp_path / "chunks.jsonl").read_text(encoding="utf-8")
    for secret in ("Aya", "Smith", "Jim", "Brown", "Priya", "Shah", "Lee", "Grant"):
        assert secret not in text, secret
    chunks = read_chunks(tmp_path / "chunks.jsonl")
    assert [c.chunk_id for c in chunks] == ["person-a-0001", "person-a-0002", "cabin-crew-0001"]


def test_a_folder_that_spells_no_name_is_the_title(tmp_path: Path) -> None:
    chat = tmp_path / "NotetoSelf"
    chat.mkdir()
    line = (EXPORT / "AyaSmith" / "data.json").read_text(encoding="utf-8").splitlines()[1]
    (chat / "data.json").write_text(line + "\n", encoding="utf-8")  # one message, from Me
    import_chat_export(chat, tmp_path / "out", ImportOptions())
    (chunk,) = read_chunks(tmp_path / "out" / "chunks.jsonl")
    assert (chunk.chunk_id, chunk.title) == ("notetoself-0001", "NotetoSelf")


def test_timezone_states_the_zone_of_the_naive_times(tmp_path: Path) -> None:
    summary = import_chat_export(
        EXPORT, tmp_path, ImportOptions(timezone=timezone(timedelta(hours=1)))
    )
    assert summary.notes == []
    first = read_chunks(tmp_path / "chunks.jsonl")[0].messages[0]
    assert first.timestamp == "2024-05-01T09:15:02+01:00"


def test_sniff(tmp_path: Path) -> None:
    with ExportSource.open_path(EXPORT) as source:
        assert SignalReader.sniff(source)
    other = tmp_path / "other"
    (other / "Chat").mkdir(parents=True)
    (other / "Chat" / "data.json").write_text('{\n  "messages": []\n}\n', encoding="utf-8")
    with ExportSource.open_path(other) as source:
        assert not SignalReader.sniff(source)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "chat.md").write_text("# My chat notes\n", encoding="utf-8")
    with ExportSource.open_path(notes) as source:
        assert not SignalReader.sniff(source)


def test_bad_lines_name_file_line_and_field(tmp_path: Path) -> None:
    chat = tmp_path / "Broken"
    chat.mkdir()
    good = (EXPORT / "AyaSmith" / "data.json").read_text(encoding="utf-8").splitlines()[0]
    bad = json.loads(good) | {"date": "yesterday"}
    (chat / "data.json").write_text(good + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_chat_export(chat, tmp_path / "out", ImportOptions(kind="signal"))
    assert (caught.value.line, caught.value.field) == (2, "date")
    assert caught.value.path == f"{chat}:data.json"
    (chat / "data.json").write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_chat_export(chat, tmp_path / "out", ImportOptions(kind="signal"))
    assert caught.value.line == 2
    (chat / "data.json").unlink()
    (chat / "chat.md").write_text("Some preface\n[2024-05-01 09:15:02] A: hi\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_chat_export(chat, tmp_path / "out", ImportOptions(kind="signal"))
    assert caught.value.line == 1
