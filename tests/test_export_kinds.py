"""Kind checks (issue 30): a named kind is checked against the export's signature before it is
read, and another app's export is refused in one line naming what it looks like and the command
that reads it — never an empty ``chunks.jsonl`` with exit 0. Every reader against every other
format's fixture; Messenger and Instagram read each other's JSON (the same format) on purpose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatledger.core import InputError
from chatledger.corpus.exports import ExportSource, ImportOptions, detect_kind, import_chat_export
from test_cli_errors import assert_one_error_line, chatledger

EXPORTS = Path(__file__).resolve().parent / "data" / "exports"
FIXTURES = {
    "whatsapp": EXPORTS / "whatsapp" / "android_24h_dmy.txt",
    "telegram": EXPORTS / "telegram" / "single",
    "slack": EXPORTS / "slack" / "workspace",
    "discord": EXPORTS / "discord",
    "imessage": EXPORTS / "imessage" / "chat.db",
    "messenger": EXPORTS / "messenger" / "dyi",
    "instagram": EXPORTS / "instagram",
    "signal": EXPORTS / "signal" / "signal-chats",
    "csv": EXPORTS / "csv" / "family.csv",
}
# What the refusal calls each format ("it looks like …").
LOOKS_LIKE = {
    "whatsapp": "a WhatsApp chat export",
    "telegram": "a Telegram Desktop export (result.json)",
    "slack": "a Slack workspace export",
    "discord": "a DiscordChatExporter file (Discord)",
    "imessage": "an iMessage database (chat.db)",
    "messenger": "a Facebook Messenger export",
    "instagram": "an Instagram export",
    "signal": "a signal-export folder (Signal)",
    "csv": "a CSV file",
}
SAME_FORMAT = {("messenger", "instagram"), ("instagram", "messenger")}


@pytest.mark.parametrize("own", sorted(FIXTURES))
def test_auto_names_every_fixture_right(own: str) -> None:
    with ExportSource.open_path(FIXTURES[own]) as source:
        assert detect_kind(source) == own


@pytest.mark.parametrize(
    ("kind", "own"),
    [(k, o) for k in sorted(FIXTURES) for o in sorted(FIXTURES) if k != o],
)
def test_a_named_kind_refuses_another_apps_export(tmp_path: Path, kind: str, own: str) -> None:
    if (kind, own) in SAME_FORMAT:
        summary = import_chat_export(FIXTURES[own], tmp_path, ImportOptions(kind=kind))
        assert summary.messages == {"instagram": 5, "messenger": 17}[own]
        return
    with pytest.raises(InputError) as caught:
        import_chat_export(FIXTURES[own], tmp_path, ImportOptions(kind=kind))
    message = str(caught.value)
    assert "\n" not in message
    assert f"not {LOOKS_LIKE[kind]}: it looks like {LOOKS_LIKE[own]}" in message
    assert f"import it with: chatledger corpus import {own} PATH" in message
    assert not (tmp_path / "chunks.jsonl").exists()


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        # The issue's own case: a top-level "messages" list of something else.
        ('{"messages": [{"foo": 1}]}', "a message without 'type'"),
        (
            '{"name": "x", "messages": [{"id": 1, "type": "message", "text": "hi"}]}',
            "without 'date'",
        ),
    ],
)
def test_telegram_messages_need_their_type_and_date(
    tmp_path: Path, body: str, fragment: str
) -> None:
    (tmp_path / "result.json").write_text(body, encoding="utf-8")
    refused = chatledger(
        "corpus", "import", "telegram", "result.json", "--out", "out", cwd=tmp_path
    )
    assert_one_error_line(refused, 2, "result.json", fragment)
    assert not (tmp_path / "out" / "chunks.jsonl").exists()


def test_an_import_that_keeps_nothing_is_refused(tmp_path: Path) -> None:
    service = [
        {"id": i, "type": "service", "date": "2026-03-05T18:00:00", "date_unixtime": "1772733600",
         "actor": "Ness", "action": "pin_message", "text": ""}
        for i in (1, 2)
    ]  # fmt: skip
    (tmp_path / "result.json").write_text(
        json.dumps({"name": "Pins", "type": "personal_chat", "id": 9, "messages": service}),
        encoding="utf-8",
    )
    refused = chatledger(
        "corpus", "import", "telegram", "result.json", "--out", "out", cwd=tmp_path
    )
    assert_one_error_line(refused, 2, "no message to import", "nothing was written")
    assert not (tmp_path / "out" / "chunks.jsonl").exists()
