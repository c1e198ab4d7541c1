"""Format corners (issue 30), from a legacy (2016) Slack archive and an Instagram export, every
figure worked out by hand from tests/data/exports/slack/legacy and tests/data/exports/instagram.

Slack's legacy archive: a ``file_comment`` (a person's comment on a file, here a code block) is
that person's message; the legacy singular ``"file": {...}`` of a ``file_share`` is its
``[file: name]`` line (and the upload text Slack generated is not the person's words); a bot
message with neither profile nor user name is spoken by the integration that added the bot —
the ``integration_logs.json`` entry of the same channel (by id or by name) within two seconds of
the ``bot_add`` message, else the label of that message's link —, and a bot nothing names is
``bot <id>``, noted. Instagram: its own kind, told apart by where the threads lie; ``messenger``
reads the same JSON, and a thread file under any name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chatledger.corpus import read_chunks
from chatledger.corpus.exports import ImportOptions, import_chat_export
from test_cli_errors import assert_one_error_line, chatledger

EXPORTS = Path(__file__).resolve().parent / "data" / "exports"
LEGACY = EXPORTS / "slack" / "legacy"
INSTAGRAM = EXPORTS / "instagram"
THREAD = INSTAGRAM / "your_instagram_activity/messages/inbox/zoekowalski_17845/message_1.json"


def said(out: Path) -> list[tuple[str, str, str]]:
    return [
        (c.conversation_id, m.speaker, m.text) for c in read_chunks(out / "chunks.jsonl")
        for m in c.messages
    ]  # fmt: skip


def test_the_legacy_archive_keeps_comments_files_and_names_its_bots(tmp_path: Path) -> None:
    summary = import_chat_export(LEGACY, tmp_path, ImportOptions(kind="slack"))
    # dev: 8 items — a join and a bot_add skipped, 6 kept; ci: a bot_add skipped, 1 kept.
    assert (summary.conversations, summary.messages) == (2, 7)
    assert summary.skipped == {"bot_add": 2, "channel_join": 1}
    assert summary.kinds == {"media": 1, "text": 6}
    # Speakers: Inès, tkral (no real or display name: the user name), two named bots and the
    # unnamed one.
    assert summary.participants == 5
    assert summary.notes == [
        "1 bot with no name in the export (no profile, user name or integration log entry) "
        "spoken as 'bot' and the bot id"
    ]
    assert said(tmp_path) == [
        # B0JL6UFSL: its bot_add at …487 s in #dev (C0DEV), the log's "added" entry for C0DEV
        # at …488 s: 1 s apart, the log's service name wins over the link's "github". The
        # attachment's pretext, title with its link and text, in that order.
        ("dev", "GitHub Notifications (Legacy)",
         "[tornado] Pull request opened by tkral\n"
         "#1612 Fix IOStream close (https://github.com/tornadoweb/tornado/pull/1612)\n"
         "Close the stream before the callback runs"),
        # The upload: Slack's "uploaded a file: <link|bench.py>" is not tkral's words.
        ("dev", "tkral", "[file: bench.py]"),
        # The comment on the file is Inès's, code block and all.
        ("dev", "Inès Moreau",
         "[comment on file: bench.py] ```for _ in range(3):\n    timeit.timeit(run)```"),
        ("dev", "tkral", "thanks @Inès Moreau, merging after CI > green"),
        ("dev", "Inès Moreau",
         "hfaran wrote the first IOStream patch, ask hfaran before you merge"),
        ("dev", "bot B0NOLOG", "Build #88 passed"),
        # B0JENKINS: its bot_add text has no link; the log names #ci by name, 1 s earlier.
        ("ci", "Jenkins CI", "tornado-master #412 success after 3 min"),
    ]  # fmt: skip


def test_an_upload_with_a_comment_keeps_the_comment_and_its_file(tmp_path: Path) -> None:
    export = tmp_path / "export"
    shutil.copytree(LEGACY, export)
    day = export / "dev" / "2016-01-21.json"
    items = json.loads(day.read_text(encoding="utf-8"))
    share = next(i for i in items if i.get("subtype") == "file_share")
    share["text"] += " and commented: numbers from <@U0ABMOREAU|imoreau>'s laptop"
    share["file"] = {"id": "F0DEL", "mode": "tombstone"}  # deleted since: still a file line
    day.write_text(json.dumps(items), encoding="utf-8")
    summary = import_chat_export(export, tmp_path / "out", ImportOptions(kind="slack"))
    assert summary.kinds == {"text": 7}
    assert ("dev", "tkral", "numbers from @Inès Moreau's laptop\n[deleted file]") in said(
        tmp_path / "out"
    )


def test_without_a_log_the_bot_add_link_names_the_bot(tmp_path: Path) -> None:
    export = tmp_path / "export"
    shutil.copytree(LEGACY, export)
    (export / "integration_logs.json").unlink()
    import_chat_export(export, tmp_path / "out", ImportOptions(kind="slack"))
    speakers = [speaker for _, speaker, _ in said(tmp_path / "out")]
    # B0JL6UFSL: the link's label; B0JENKINS: nothing names it any more.
    assert speakers == [
        "github", "tkral", "Inès Moreau", "tkral", "Inès Moreau", "bot B0NOLOG", "bot B0JENKINS"
    ]  # fmt: skip


def test_pseudonymised_legacy_archive_and_a_name_only_in_text(tmp_path: Path) -> None:
    done = chatledger(
        "corpus", "import", "slack", str(LEGACY), "--out", "out", "--pseudonymise",
        "--key", "k/key.json", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.err
    chunks = (tmp_path / "out" / "chunks.jsonl").read_text(encoding="utf-8")
    # tkral is a user (name only): his handle in the bot's pretext is his pseudonym too.
    for original in ("Inès", "Moreau", "Ines", "tkral", "imoreau"):
        assert original not in chunks, original
    assert "Pull request opened by Person " in chunks
    # hfaran is no user of the archive, only written in text: not caught (documented) …
    assert chunks.count("hfaran") == 2
    # … until the preview offers him and the aliases file, accepted, names him.
    preview = chatledger(
        "corpus", "import", "slack", str(LEGACY), "--names-from-text", "names.yaml",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert preview.code == 0, preview.err
    found = {c["text"]: c["why"] for c in json.loads(preview.out)["candidates"]}
    assert found["hfaran"] == "not a dictionary word"
    again = chatledger(
        "corpus", "import", "slack", str(LEGACY), "--out", "out", "--pseudonymise",
        "--key", "k/key.json", "--aliases", "names.yaml", cwd=tmp_path,
    )  # fmt: skip
    assert again.code == 0, again.err
    chunks = (tmp_path / "out" / "chunks.jsonl").read_text(encoding="utf-8")
    assert "hfaran" not in chunks and "tkral" not in chunks


def test_instagram_is_its_own_kind_and_reads_like_messenger(tmp_path: Path) -> None:
    summary = import_chat_export(INSTAGRAM, tmp_path / "ig")
    assert summary.kind == "instagram"
    # Five messages; the heart reaction is not one (counted), the shared post is its link.
    assert (summary.conversations, summary.messages, summary.participants) == (1, 5, 2)
    assert summary.skipped == {"reaction": 1}
    assert summary.kinds == {"media": 1, "other": 1, "text": 3}
    assert said(tmp_path / "ig") == [
        ("fb526a596347d5", "ness.alderton", "Are we still on for Lisbon? It’s booked"),
        ("fb526a596347d5", "Zoë Kowalski", "Sí! Saturday then 😊"),
        ("fb526a596347d5", "Zoë Kowalski", "[photo]"),
        ("fb526a596347d5", "ness.alderton", "[link: https://www.instagram.com/p/C4xYz/]"),
        ("fb526a596347d5", "Zoë Kowalski", "Zoë Kowalski liked a message"),
    ]
    # messenger reads the same folder to the same chunks, byte for byte.
    as_messenger = import_chat_export(INSTAGRAM, tmp_path / "fb", ImportOptions(kind="messenger"))
    assert as_messenger.messages == 5
    assert (tmp_path / "fb" / "chunks.jsonl").read_bytes() == (
        tmp_path / "ig" / "chunks.jsonl"
    ).read_bytes()


@pytest.mark.parametrize("name", ["zoe.json", "inbox/chat-with-zoe.json", "message_7.json"])
def test_messenger_reads_a_thread_under_any_name(tmp_path: Path, name: str) -> None:
    target = tmp_path / "export" / name
    target.parent.mkdir(parents=True)
    shutil.copy(THREAD, target)
    for kind in ("messenger", "auto"):
        summary = import_chat_export(tmp_path / "export", tmp_path / kind, ImportOptions(kind=kind))
        assert (summary.kind, summary.messages) == ("messenger", 5)
    # One file given directly, too.
    single = import_chat_export(target, tmp_path / "one", ImportOptions(kind="messenger"))
    assert single.messages == 5


def test_instagram_refuses_another_apps_file_in_one_line(tmp_path: Path) -> None:
    refused = chatledger(
        "corpus", "import", "instagram", str(EXPORTS / "telegram" / "single" / "result.json"),
        "--out", "out", cwd=tmp_path,
    )  # fmt: skip
    assert_one_error_line(refused, 2, "result.json", "Telegram")


def test_where_a_thread_file_lies_names_the_app(tmp_path: Path) -> None:
    # chat-miner keeps its Instagram sample as instagram/test_export.json.
    target = tmp_path / "instagram" / "test_export.json"
    target.parent.mkdir()
    shutil.copy(THREAD, target)
    assert import_chat_export(target, tmp_path / "out").kind == "instagram"
    elsewhere = tmp_path / "chats" / "test_export.json"
    elsewhere.parent.mkdir()
    shutil.copy(THREAD, elsewhere)
    assert import_chat_export(elsewhere, tmp_path / "out2").kind == "messenger"
