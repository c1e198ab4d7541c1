"""The Slack workspace-export reader, on the hand-written export in tests/data/exports/slack/.

The fixture (all times UTC, Slack's ``ts`` being epoch seconds): five users in users.json —
Ness (``real_name``), Sam (only ``profile.display_name`` "Sam R"), Priya (only
``profile.real_name``), bob (only ``name``), a bot user — and U09GONE, who speaks and is
mentioned but is not in users.json. Conversations: #general (2 days, a thread whose reply is
filed out of order, a broadcast reply, a bot, files, /me), #random, the private #cabin-trip
(groups.json), a group DM (mpims.json, folder named by its name), a DM (dms.json, folder named
by its id) and a folder no metadata lists.
"""

from __future__ import annotations

import json
import shutil
import zipfile
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
from chatledger.corpus.exports._slack import SlackReader

WORKSPACE = Path(__file__).resolve().parent / "data" / "exports" / "slack" / "workspace"

SKIPPED = {
    "bot_add": 1,
    "channel_join": 2,
    "channel_leave": 1,
    "channel_topic": 1,
    "empty message": 1,
    "pinned_item": 1,
    "tombstone": 1,
}


def _zip(folder: Path, target: Path, inner: str = "") -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, inner + path.relative_to(folder).as_posix())
    return target


def test_import_counts_every_message_conversation_and_skip(tmp_path: Path) -> None:
    summary = import_chat_export(WORKSPACE, tmp_path, ImportOptions(kind="slack"))
    # general 8 (of 12), random 2 (of 5), cabin-trip 2, group DM 1 (of 2), DM 2, old-channel 1.
    assert summary.messages == 16
    assert summary.conversations == 6
    # Ness Alderton, Sam R, Priya Shah, Deploy Bot, bob, U09GONE.
    assert summary.participants == 6
    assert summary.skipped == SKIPPED
    assert summary.kinds == {"media": 1, "text": 15}
    assert summary.first_message == "2024-02-29T23:59:59Z"
    assert summary.last_message == "2024-03-05T18:00:00Z"
    assert summary.notes == [
        "1 Slack user id is not in users.json and kept as the id (as speaker and in mentions)"
    ]
    chunks = read_chunks(tmp_path / "chunks.jsonl")
    # #general splits at the night between its two days (gap 6 h); the rest are one chunk each.
    assert [(c.chunk_id, c.title, len(c.messages)) for c in chunks] == [
        ("general-0001", "#general", 4),
        ("general-0002", "#general", 4),
        ("random-0001", "#random", 2),
        ("cabin-trip-0001", "#cabin-trip", 2),
        ("g02mp-0001", "DM: Ness Alderton, Sam R, Priya Shah", 1),
        ("d01ns-0001", "DM: Ness Alderton, Sam R", 2),
        ("old-channel-0001", "#old-channel", 1),
    ]


def test_speakers_times_mentions_and_entities_in_the_chunks(tmp_path: Path) -> None:
    import_chat_export(WORKSPACE, tmp_path, ImportOptions(kind="slack"))
    chunks = {c.chunk_id: c for c in read_chunks(tmp_path / "chunks.jsonl")}
    day_one = [(m.timestamp, m.speaker, m.text) for m in chunks["general-0001"].messages]
    assert day_one == [
        # <@U02SAM> → the same name Sam speaks under (display name); &lt; &amp; unescaped.
        ("2024-03-01T09:00:00Z", "Ness Alderton",
         "Morning @Sam R! Cabin budget is <= £400 & split 3 ways"),
        # Filed after the thread reply in the day file, sorted by ts.
        ("2024-03-01T09:02:00Z", "Priya Shah", "@here I can drive. Ping #random for snacks"),
        # A thread reply, in time order in the channel; <@U…|label> → the user's name, not the
        # label; a labelled link keeps its URL; a label that only repeats the URL is dropped.
        ("2024-03-01T09:05:00Z", "Sam R",
         "@Ness Alderton works for me, see the lodge (https://cabins.example.org/lodge) and "
         "https://example.com"),
        ("2024-03-01T09:12:00Z", "Priya Shah", "Booked! >> confirmation in my inbox"),
    ]  # fmt: skip
    assert chunks["general-0001"].participants == ["Ness Alderton", "Priya Shah", "Sam R"]
    day_two = [(m.timestamp, m.speaker, m.text) for m in chunks["general-0002"].messages]
    assert day_two == [
        ("2024-03-02T10:00:00Z", "Deploy Bot", "Build #42 passed"),
        ("2024-03-02T10:05:00Z", "Sam R", "[file: tent-list.pdf]"),
        ("2024-03-02T10:06:00Z", "Ness Alderton", "Here's the map\n[file: map.png]"),
        ("2024-03-02T10:08:00Z", "Priya Shah", "is packing already"),
    ]
    # The user missing from users.json: their id, as speaker and in mentions (never the
    # mention's label, never a crash); <!channel> → @channel.
    assert [(m.speaker, m.text) for m in chunks["random-0001"].messages] == [
        ("U09GONE", "hi all, I'm new"),
        ("bob", "welcome @U09GONE! ask @bob or @channel"),
    ]
    assert [m.text for m in chunks["cabin-trip-0001"].messages] == [
        "Deposit is due Friday & it's non-refundable",
        "Paid ness@example.com receipt sent",
    ]
    assert chunks["g02mp-0001"].messages[0].text == "@drivers who's driving?"
    assert [m.timestamp for m in chunks["d01ns-0001"].messages] == [
        "2024-03-04T07:30:00Z",
        "2024-03-04T07:31:00Z",
    ]


def test_the_reader_gives_ids_replies_members_and_kinds() -> None:
    context = ReadContext()
    with ExportSource.open_path(WORKSPACE) as source:
        conversations = [
            (c.key, c.members, list(c.messages))
            for c in SlackReader().conversations(source, context)
        ]
    keys = [key for key, _, _ in conversations]
    assert keys == ["general", "random", "cabin-trip", "G02MP", "D01NS", "old-channel"]
    general = conversations[0][2]
    assert [m.native_id for m in general[:4]] == [
        "1709283600.000200",
        "1709283720.000400",
        "1709283900.000300",
        "1709284320.000600",
    ]
    # The reply and the broadcast reply point at the thread; the parent points nowhere.
    assert [m.reply_to for m in general[:4]] == [
        None,
        None,
        "1709283600.000200",
        "1709283600.000200",
    ]
    assert general[0].timestamp.isoformat() == "2024-03-01T09:00:00.000200+00:00"
    assert [m.kind for m in general[4:]] == ["text", "media", "text", "text"]
    assert conversations[1][1] == ("Ness Alderton", "bob", "U09GONE")
    assert conversations[5][1] == ()


def test_a_zip_with_the_export_inside_a_folder_reads_the_same(tmp_path: Path) -> None:
    archive = _zip(WORKSPACE, tmp_path / "Cabin Slack export.zip", inner="Cabin Slack export/")
    with ExportSource.open_path(archive) as source:
        assert detect_kind(source) == "slack"
    summary = import_chat_export(archive, tmp_path / "out", ImportOptions())
    assert summary.kind == "slack"
    assert (summary.messages, summary.conversations, summary.chunks) == (16, 6, 7)
    assert summary.skipped == SKIPPED
    folder = import_chat_export(WORKSPACE, tmp_path / "folder", ImportOptions())
    assert (tmp_path / "out" / "chunks.jsonl").read_text(encoding="utf-8") == (
        tmp_path / "folder" / "chunks.jsonl"
    ).read_text(encoding="utf-8")
    assert folder.kind == "slack"


def test_sniff_needs_users_and_channels_side_by_side(tmp_path: Path) -> None:
    (tmp_path / "users.json").write_text("[]", encoding="utf-8")
    with ExportSource.open_path(tmp_path) as source:
        assert not SlackReader.sniff(source)
    (tmp_path / "channels.json").write_text("[]", encoding="utf-8")
    with ExportSource.open_path(tmp_path) as source:
        assert SlackReader.sniff(source)
    with ExportSource.open_path(tmp_path / "users.json") as source:
        assert not SlackReader.sniff(source)


def test_pseudonymised_chunks_hold_no_name_mention_or_address(tmp_path: Path) -> None:
    summary = import_chat_export(
        WORKSPACE, tmp_path, ImportOptions(kind="slack", pseudonymise=True)
    )
    text = (tmp_path / "chunks.jsonl").read_text(encoding="utf-8")
    for secret in ("Ness", "Alderton", "Sam R", "Priya", "Shah", "bob", "U09GONE", "example"):
        assert secret not in text, secret
    assert summary.pseudonyms_path is not None
    mapping = json.loads(Path(summary.pseudonyms_path).read_text(encoding="utf-8"))
    # Members listed first (general's), then speakers as they appear.
    assert mapping["names"]["Ness Alderton"] == "Person A"
    assert "@Person B" in text  # "@Sam R" in Ness's first message
    assert summary.messages == 16


def _broken(tmp_path: Path, day: str) -> Path:
    folder = tmp_path / "export"
    shutil.copytree(WORKSPACE, folder)
    (folder / "general" / "2024-03-03.json").write_text(day, encoding="utf-8")
    return folder


def test_bad_json_in_a_day_file_names_the_file_and_line(tmp_path: Path) -> None:
    folder = _broken(tmp_path, '[\n  {"ts": "1709460000.0", "user": "U01NESS",\n  "text": }\n]')
    with pytest.raises(InputError) as caught:
        import_chat_export(folder, tmp_path / "out", ImportOptions(kind="slack"))
    assert caught.value.path == f"{folder}:general/2024-03-03.json"
    assert caught.value.line == 3


def test_a_message_without_a_readable_ts_is_an_error_naming_it(tmp_path: Path) -> None:
    folder = _broken(tmp_path, '[{"type": "message", "user": "U01NESS", "text": "hi"}]')
    with pytest.raises(InputError) as caught:
        import_chat_export(folder, tmp_path / "out", ImportOptions(kind="slack"))
    assert caught.value.field == "[0].ts"
    assert "general/2024-03-03.json" in str(caught.value)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("<https://example.com/a?b=1&amp;c=2>", "https://example.com/a?b=1&c=2"),
        ("<http://example.com/|example.com>", "http://example.com/"),
        ("<#C01GEN>", "#general"),
        ("<#C99NOPE|archived>", "#archived"),
        ("<!everyone> <!here|@here>", "@everyone @here"),
        ("<!date^1709283600^{date_short}|1 Mar 2024>", "1 Mar 2024"),
        ("<@U03PRI> &amp;lt; stays &lt;", "@Priya Shah &lt; stays <"),
        ("a &lt;@U01NESS&gt; b", "a <@U01NESS> b"),  # escaped brackets are text, not mentions
    ],
)
def test_render_text(raw: str, shown: str) -> None:
    from chatledger.corpus.exports._slack import _Workspace, render_text

    with ExportSource.open_path(WORKSPACE) as source:
        workspace = _Workspace.load(source)
    assert render_text(raw, workspace) == shown
