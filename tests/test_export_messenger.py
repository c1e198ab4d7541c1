"""The Facebook Messenger reader: a hand-made Download Your Information export (two threads, one
split over message_1.json and message_2.json, every string double-encoded as Facebook writes
it) and a secure-storage file, read through ``import_chat_export`` into chunks — every number
below worked out by hand from tests/data/exports/messenger/."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from datetime import UTC, datetime
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
from chatledger.corpus.exports._messenger import MessengerReader, fix_mojibake

DATA = Path(__file__).parent / "data" / "exports" / "messenger"
DYI = DATA / "dyi"
INBOX = DYI / "your_facebook_activity" / "messages" / "inbox"
ZOE_THREAD = INBOX / "zoekowalski_10158337212343"
SECURE = DATA / "secure_storage"

# The thread with Zoë, oldest first, in UTC (timestamp_ms is epoch milliseconds). The photo and
# "Look at the queue" share a millisecond and sit in different files: they keep their order.
ZOE = "Zoë Kowalski"
NESS = "Ness Alderton"
ZOE_MESSAGES = [
    (ZOE, "2026-02-14T18:00:00Z", "Café tonight? ☕"),
    (NESS, "2026-02-14T18:01:30Z", "Yes! The one on Rue Saint-Honoré 😀"),
    (NESS, "2026-02-14T18:02:00Z", "[photo]"),
    (NESS, "2026-02-14T18:02:00Z", "Look at the queue"),
    (ZOE, "2026-02-14T18:05:00Z", "[sticker]"),
    (ZOE, "2026-02-14T18:07:00Z", "[video] Dancing 💃"),
    (NESS, "2026-02-14T18:10:00Z", "https://example.org/menu"),
    (ZOE, "2026-02-14T18:11:00Z", "[link: https://example.org/tickets]"),
    (ZOE, "2026-02-14T18:12:00Z", "[call, 4 min 10 s]"),
    (NESS, "2026-02-14T18:20:00Z", "[missed call]"),
    (ZOE, "2026-02-14T18:21:00Z", "[audio]"),
    (NESS, "2026-02-14T18:22:00Z", "[file: tickets_feb.pdf] Tickets attached"),
    (ZOE, "2026-02-15T09:00:00Z", "Thanks for last night — it’s my new favourite place"),
    (NESS, "2026-02-15T09:01:00Z", "[GIF]"),
    (NESS, "2026-02-15T09:02:00Z", "[2 photos] Two more"),
]


def fb_key(thread_path: str) -> str:
    return "fb" + hashlib.sha256(thread_path.encode("utf-8")).hexdigest()[:12]


def test_the_fixture_is_written_the_way_facebook_writes_it() -> None:
    raw = (ZOE_THREAD / "message_1.json").read_text(encoding="utf-8")
    assert "Zo\\u00c3\\u00ab Kowalski" in raw
    assert "Zoë" not in raw
    # message_1 holds the newest messages, newest first; message_2 the oldest.
    first = json.loads(raw)["messages"]
    older = json.loads((ZOE_THREAD / "message_2.json").read_text(encoding="utf-8"))["messages"]
    stamps = [m["timestamp_ms"] for m in first + older]
    assert stamps == sorted(stamps, reverse=True)


def test_a_download_your_information_folder_is_one_conversation_per_thread(
    tmp_path: Path,
) -> None:
    summary = import_chat_export(DYI, tmp_path)
    assert summary.kind == "messenger"
    # Zoë's thread keeps 15 of its 17; the group keeps 2 of 4 (an add and a leave).
    assert (summary.conversations, summary.messages, summary.participants) == (2, 17, 3)
    assert summary.skipped == {
        "empty message": 1,
        "reaction": 3,
        "system message": 2,
        "unsent message": 1,
    }
    assert summary.kinds == {"call": 2, "media": 3, "other": 1, "sticker": 1, "text": 10}
    assert (summary.first_message, summary.last_message) == (
        "2026-02-14T18:00:00Z",
        "2026-02-20T10:02:00Z",
    )
    chunks = read_chunks(tmp_path / "chunks.jsonl")
    trip, zoe = fb_key("inbox/tripplanning_7654321098"), fb_key("inbox/zoekowalski_10158337212343")
    # Zoë's thread: 18:22 on the 14th to 09:00 on the 15th is over the 6 h gap.
    assert [(c.chunk_id, c.title) for c in chunks] == [
        (f"{trip}-0001", "Trip Planning 🏔️"),
        (f"{zoe}-0001", "Zoë Kowalski"),
        (f"{zoe}-0002", "Zoë Kowalski"),
    ]
    assert [(m.speaker, m.text) for m in chunks[0].messages] == [
        (NESS, "Who’s in for Chamonix?"),
        ("Tomás Ferreira", "Moi ! Je réserve le chalet"),
    ]
    assert [(m.speaker, m.timestamp, m.text) for c in chunks[1:] for m in c.messages] == (
        ZOE_MESSAGES
    )
    assert chunks[1].participants == [ZOE, NESS]


def test_one_thread_folder_and_a_zip_read_alike(tmp_path: Path) -> None:
    summary = import_chat_export(ZOE_THREAD, tmp_path / "thread")
    assert (summary.kind, summary.conversations, summary.messages) == ("messenger", 1, 15)
    archive = tmp_path / "facebook-nessalderton-2026-03-02.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(DYI.rglob("*.json")):
            zipped.write(path, path.relative_to(DYI).as_posix())
        zipped.writestr("your_facebook_activity/messages/autofill_information.json", "{}")
    with ExportSource.open_path(archive) as source:
        assert detect_kind(source) == "messenger"
    summary = import_chat_export(archive, tmp_path / "zip")
    assert (summary.conversations, summary.messages) == (2, 17)
    import_chat_export(DYI, tmp_path / "folder")
    zipped_text = (tmp_path / "zip" / "chunks.jsonl").read_text(encoding="utf-8")
    assert zipped_text == (tmp_path / "folder" / "chunks.jsonl").read_text(encoding="utf-8")


def test_members_and_kinds_from_the_thread() -> None:
    with ExportSource.open_path(DYI) as source:
        trip, zoe = list(MessengerReader().conversations(source, ReadContext()))
        messages = list(zoe.messages)
    # The participants list, repaired: Sam left the group, but stays a member.
    assert trip.members == ("Zoë Kowalski", "Ness Alderton", "Sam Ruiz", "Tomás Ferreira")
    assert zoe.members == (ZOE, NESS)
    assert messages[1].timestamp == datetime(2026, 2, 14, 18, 1, 30, 250000, tzinfo=UTC)
    assert [m.kind for m in messages[2:5]] == ["media", "text", "sticker"]
    assert [m.kind for m in messages[7:10]] == ["other", "call", "call"]


def test_secure_storage_json_is_read_too(tmp_path: Path) -> None:
    with ExportSource.open_path(SECURE) as source:
        assert detect_kind(source) == "messenger"
    summary = import_chat_export(SECURE, tmp_path)
    assert (summary.conversations, summary.messages) == (1, 4)
    assert summary.skipped == {"reaction": 1, "unsent message": 1}
    (chunk,) = read_chunks(tmp_path / "chunks.jsonl")
    assert chunk.title == "Zoë Kowalski"
    # Written as real UTF-8 (not double-encoded): the repair leaves it as it is.
    assert [(m.speaker, m.timestamp, m.text) for m in chunk.messages] == [
        (NESS, "2026-03-01T20:00:00Z", "Home now"),
        (ZOE, "2026-03-01T20:01:00Z", "[photo]"),
        (ZOE, "2026-03-01T20:03:00Z", "Tu es où ? 😊"),
        (NESS, "2026-03-01T20:04:00Z", "[2 videos] Ski videos"),
    ]
    both = import_chat_export(DATA, tmp_path / "both")
    assert (both.conversations, both.messages) == (3, 21)


@pytest.mark.parametrize(
    ("given", "fixed"),
    [
        ("Zo\u00c3\u00ab", "Zoë"),
        ("\u00f0\u009f\u0098\u0080", "😀"),
        ("it\u00e2\u0080\u0099s", "it’s"),
        ("plain ascii", "plain ascii"),
        ("Zoë", "Zoë"),  # already right: "Zoë" as Latin-1 bytes is not UTF-8
        ("10 €", "10 €"),  # not Latin-1 at all
        (None, ""),
    ],
)
def test_mojibake_is_repaired_only_where_it_round_trips(given: str | None, fixed: str) -> None:
    assert fix_mojibake(given) == fixed


def test_pseudonymising_leaves_no_name_not_even_in_the_folder_derived_ids(
    tmp_path: Path,
) -> None:
    import_chat_export(DYI, tmp_path, ImportOptions(pseudonymise=True))
    written = (tmp_path / "chunks.jsonl").read_text(encoding="utf-8")
    for name in ("Zoë", "Zoe", "zoe", "Kowalski", "Ness", "Tomás", "tripplanning"):
        assert name not in written
    zoe = read_chunks(tmp_path / "chunks.jsonl")[1]
    assert zoe.participants == ["Person A", "Person B"]
    assert zoe.title == "Person A"


def test_the_html_version_is_refused_with_one_line(tmp_path: Path) -> None:
    thread = tmp_path / "messages" / "inbox" / "zoekowalski_10158337212343"
    thread.mkdir(parents=True)
    (thread / "message_1.html").write_text("<html></html>", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_chat_export(tmp_path / "messages", tmp_path / "out", ImportOptions(kind="messenger"))
    assert "HTML version" in str(caught.value)
    assert "Format: JSON" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_threads_are_one_line_naming_file_and_field(tmp_path: Path) -> None:
    thread = tmp_path / "inbox" / "x_1"
    shutil.copytree(ZOE_THREAD, thread)
    (thread / "message_2.json").write_text("[]", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_chat_export(thread, tmp_path / "o1", ImportOptions(kind="messenger"))
    assert "message_2.json" in str(caught.value)
    assert "not a Messenger thread" in str(caught.value)
    bad = {"participants": [{"name": "A"}], "messages": [{"sender_name": "A", "content": "x"}]}
    (thread / "message_2.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_chat_export(thread, tmp_path / "o2", ImportOptions(kind="messenger"))
    assert caught.value.field == "messages[0].timestamp_ms"
    (thread / "message_2.json").write_text('{"messages": [\n}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_chat_export(thread, tmp_path / "o3", ImportOptions(kind="messenger"))
    assert caught.value.line == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="not a Messenger export"):
        import_chat_export(empty, tmp_path / "o4", ImportOptions(kind="messenger"))
