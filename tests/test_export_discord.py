"""The DiscordChatExporter reader: a hand-written folder of three channel exports (two channels
of a server, one direct message), read through ``import_chat_export`` into chunks — every
number below worked out by hand from tests/data/exports/discord/."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from chatledger.core import InputError, Message
from chatledger.corpus import read_chunks
from chatledger.corpus.exports import (
    ExportSource,
    ImportOptions,
    ReadContext,
    detect_kind,
    import_chat_export,
)
from chatledger.corpus.exports._discord import DiscordReader

DATA = Path(__file__).parent / "data" / "exports" / "discord"
GENERAL = DATA / "Book Club - general [1107745960451674193].json"
OFF_TOPIC = DATA / "Book Club - off-topic [1107745960451674194].json"
DIRECT = DATA / "Direct Messages - Zoë [1107745960451674195].json"

# #general, oldest first, times as DCE wrote them (the exporting machine's offset: +01:00
# before the switch to summer time on 29 March, +02:00 after). Message ...009 comes last in the
# file but was sent at 09:59:30, before the bot's card.
GENERAL_MESSAGES = [
    ("Ness", "2026-03-28T18:01:00+01:00", "Welcome Priya! This month: Piranesi."),
    ("Priya", "2026-03-28T18:03:10+01:00", "Thanks @Ness! Halfway through already."),
    ("samruiz", "2026-03-28T18:05:00+01:00", "[attachment: cover.jpg]"),
    ("samruiz", "2026-03-28T18:06:00+01:00", "[attachment: notes.pdf] My notes so far"),
    ("Zoë", "2026-03-28T18:12:00+01:00", "[sticker: Wave]"),
    ("Ness", "2026-03-28T21:15:00+01:00", "Meeting is Sunday 30 March at 19:00 (not Saturday)"),
    ("Priya", "2026-03-29T09:59:30+02:00", "Morning! Finished it last night."),
    (
        "Bookworm",
        "2026-03-29T10:00:00+02:00",
        "[embed] Reading poll — Next book: vote with 📗 or 📘",
    ),
    ("Zoë", "2026-03-29T10:05:00+02:00", "Same here 📚"),
]


def triples(chunk_messages: Sequence[Message]) -> list[tuple[str, str | None, str]]:
    return [(m.speaker, m.timestamp, m.text) for m in chunk_messages]


def test_a_folder_of_three_channel_exports_is_three_conversations(tmp_path: Path) -> None:
    summary = import_chat_export(DATA, tmp_path)
    assert summary.kind == "discord"
    # #general keeps 9 of 13, #off-topic 2 of 2, the direct message 2 of 3.
    assert (summary.conversations, summary.messages, summary.participants) == (3, 13, 5)
    # System: GuildMemberJoin, ChannelPinnedMessage, ThreadCreated and an unnamed type 46;
    # empty: ...011; reactions: 2 (👋) + 1 (❤️) + 3 (📚).
    assert summary.skipped == {"empty message": 1, "reaction": 6, "system message": 4}
    assert summary.kinds == {"call": 1, "media": 1, "other": 1, "sticker": 1, "text": 9}
    assert any("1 Discord message(s) were edited" in note for note in summary.notes)
    chunks = read_chunks(tmp_path / "chunks.jsonl")
    # #general: 21:15 (+01:00) to 09:59:30 (+02:00) is 11 h 44 min 30 s, over the 6 h gap.
    assert summary.chunks == 4
    assert [(c.chunk_id, c.title) for c in chunks] == [
        ("dc1107745960451674193-0001", "Book Club #general"),
        ("dc1107745960451674193-0002", "Book Club #general"),
        ("dc1107745960451674194-0001", "Book Club #off-topic"),
        ("dc1107745960451674195-0001", "Zoë"),
    ]
    assert triples(chunks[0].messages) + triples(chunks[1].messages) == GENERAL_MESSAGES
    assert [len(c.messages) for c in chunks] == [6, 3, 2, 2]
    assert chunks[0].participants == ["Ness", "Priya", "samruiz", "Zoë"]
    assert triples(chunks[3].messages) == [
        ("Zoë", "2026-03-31T20:00:00+02:00", "[call, 12 min]"),
        ("Ness", "2026-03-31T20:20:00+02:00", "[forwarded] Library sale on Saturday!"),
    ]


def test_one_file_a_zip_and_detection(tmp_path: Path) -> None:
    with ExportSource.open_path(GENERAL) as source:
        assert detect_kind(source) == "discord"
    summary = import_chat_export(GENERAL, tmp_path / "one")
    assert (summary.kind, summary.conversations, summary.messages) == ("discord", 1, 9)
    archive = tmp_path / "exports.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in (GENERAL, OFF_TOPIC, DIRECT):
            zipped.write(path, f"Book Club/{path.name}")
        zipped.writestr(f"Book Club/{GENERAL.name}_Files/cover-5F3A.jpg", b"\xff\xd8")
    summary = import_chat_export(archive, tmp_path / "zip")
    assert (summary.kind, summary.conversations, summary.messages) == ("discord", 3, 13)
    whole = import_chat_export(DATA, tmp_path / "folder")
    assert whole.messages == 13
    zipped_text = (tmp_path / "zip" / "chunks.jsonl").read_text(encoding="utf-8")
    assert zipped_text == (tmp_path / "folder" / "chunks.jsonl").read_text(encoding="utf-8")


def test_times_keep_their_offset_replies_and_kinds() -> None:
    with ExportSource.open_path(DATA) as source:
        general, off_topic, direct = list(DiscordReader().conversations(source, ReadContext()))
        messages = {m.native_id: m for m in general.messages}
        replies = list(off_topic.messages)
    first = messages["1300000000000000002"]
    assert first.timestamp == datetime(2026, 3, 28, 18, 1, 0, 456000, timezone(timedelta(hours=1)))
    assert first.timestamp.utcoffset() == timedelta(hours=1)
    assert messages["1300000000000000003"].reply_to == "1300000000000000002"
    # A pin also carries a reference, but it is not a reply (and not a message).
    assert "1300000000000000006" not in messages
    assert [messages[f"130000000000000000{i}"].kind for i in (4, 5, 7)] == [
        "media",
        "text",
        "sticker",
    ]
    assert messages["1300000000000000010"].kind == "other"
    assert replies[1].reply_to == "1300000000000000101"
    assert general.key == "dc1107745960451674193"
    # Authors and the users mentioned, nickname over account name (Sam has no nickname).
    assert general.members == ("Ness", "Priya", "samruiz", "Zoë", "Bookworm")
    assert direct.title == "Zoë"


def test_raw_markup_from_a_markdown_free_export_is_resolved_like_dce_does() -> None:
    # #off-topic was exported with --markdown false: <@id>, <@!id> and <:name:id> as Discord
    # stores them; the message's own "mentions" say who the ids are.
    with ExportSource.open_path(OFF_TOPIC) as source:
        (chat,) = list(DiscordReader().conversations(source, ReadContext()))
    assert [m.text for m in chat.messages] == [
        "@Ness did you bring the :bookmark: stickers?",
        "Yes! @Priya has the spares",
    ]


def test_pseudonymising_covers_mentions_written_as_at_names(tmp_path: Path) -> None:
    import_chat_export(DATA, tmp_path, ImportOptions(pseudonymise=True))
    written = (tmp_path / "chunks.jsonl").read_text(encoding="utf-8")
    for name in ("Ness", "Priya", "samruiz", "Zoë"):
        assert name not in written
    first = read_chunks(tmp_path / "chunks.jsonl")[0]
    assert first.messages[1].text == "Thanks @Person A! Halfway through already."


def dce(messages: list[dict[str, object]], channel_id: str = "42") -> str:
    return json.dumps(
        {
            "guild": {"id": "1", "name": "G"},
            "channel": {"id": channel_id, "type": "GuildTextChat", "name": "c"},
            "messages": messages,
        }
    )


def test_json_files_that_are_not_dce_exports_are_left_out_with_a_note(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    shutil.copytree(DATA, folder)
    (folder / "settings.json").write_text('{"theme": "dark"}', encoding="utf-8")
    (folder / "readme.txt").write_text("hi", encoding="utf-8")
    summary = import_chat_export(folder, tmp_path / "out", ImportOptions(kind="discord"))
    assert summary.messages == 13
    assert any("1 .json file(s) that are not DiscordChatExporter" in n for n in summary.notes)
    with pytest.raises(InputError, match="not a DiscordChatExporter export") as caught:
        import_chat_export(folder / "settings.json", tmp_path / "o2", ImportOptions(kind="discord"))
    assert "settings.json" in str(caught.value)


def test_bad_files_are_one_line_naming_file_line_or_field(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "guild": {},\n  "channel": {},\n  "messages": [,]\n}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_chat_export(broken, tmp_path / "o1", ImportOptions(kind="discord"))
    assert (caught.value.line, "not valid JSON" in str(caught.value)) == (4, True)
    when = tmp_path / "when.json"
    author = {"id": "7", "name": "a", "nickname": "A"}
    when.write_text(
        dce([{"id": "1", "type": "Default", "timestamp": "yesterday", "author": author}]),
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        import_chat_export(when, tmp_path / "o2", ImportOptions(kind="discord"))
    assert caught.value.field == "messages[0].timestamp"
    assert "'yesterday'" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unknown_user_mentions_stay_raw_and_a_call_without_an_end_is_just_a_call(
    tmp_path: Path,
) -> None:
    author = {"id": "7", "name": "a.b", "nickname": None}
    path = tmp_path / "c.json"
    path.write_text(
        dce(
            [
                {
                    "id": "1",
                    "type": "Default",
                    "timestamp": "2026-01-01T10:00:00Z",
                    "author": author,
                    "content": "ping <@999>",
                    "mentions": [],
                },
                {
                    "id": "2",
                    "type": "Call",
                    "timestamp": "2026-01-01T10:01:00+00:00",
                    "callEndedTimestamp": None,
                    "author": author,
                    "content": "Started a call.",
                },
                {
                    "id": "3",
                    "type": "Call",
                    "timestamp": "2026-01-01T10:02:00+00:00",
                    "callEndedTimestamp": "2026-01-01T10:02:40+00:00",
                    "author": author,
                },
            ]
        ),
        encoding="utf-8",
    )
    import_chat_export(path, tmp_path / "out")
    (chunk,) = read_chunks(tmp_path / "out" / "chunks.jsonl")
    assert triples(chunk.messages) == [
        ("a.b", "2026-01-01T10:00:00Z", "ping <@999>"),
        ("a.b", "2026-01-01T10:01:00Z", "[call]"),
        ("a.b", "2026-01-01T10:02:00Z", "[call, under a minute]"),
    ]


def test_a_channel_split_into_parts_is_one_conversation(tmp_path: Path) -> None:
    # DCE --partition writes "… [part 1].json", "… [part 2].json": same channel, same header.
    whole = json.loads(GENERAL.read_text(encoding="utf-8"))
    folder = tmp_path / "parts"
    folder.mkdir()
    stem = GENERAL.stem
    for number, messages in ((1, whole["messages"][:5]), (2, whole["messages"][5:])):
        part = {**whole, "messages": messages, "messageCount": len(messages)}
        (folder / f"{stem} [part {number}].json").write_text(json.dumps(part), encoding="utf-8")
    summary = import_chat_export(folder, tmp_path / "split")
    assert (summary.conversations, summary.messages, summary.chunks) == (1, 9, 2)
    import_chat_export(GENERAL, tmp_path / "one")
    split_text = (tmp_path / "split" / "chunks.jsonl").read_text(encoding="utf-8")
    assert split_text == (tmp_path / "one" / "chunks.jsonl").read_text(encoding="utf-8")
