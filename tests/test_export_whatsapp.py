"""The WhatsApp reader on hand-made exports (tests/data/exports/whatsapp/): Android and iOS,
24 h and 12 h, day and month first, dots and dashes, U+202F and U+200E, multi-line messages,
system lines, media, deleted and edited messages, zips — counts and times worked out by hand."""

from __future__ import annotations

import json
import shutil
import tracemalloc
import zipfile
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from chatledger.core import InputError
from chatledger.corpus.exports import (
    ExportMessage,
    ExportSource,
    ImportOptions,
    ReadContext,
    detect_kind,
    import_chat_export,
)
from chatledger.corpus.exports._model import DateOrder
from chatledger.corpus.exports._whatsapp import WhatsAppReader

DATA = Path(__file__).resolve().parent / "data" / "exports" / "whatsapp"
NNB, LRM = "\u202f", "\u200e"


def read(
    path: Path, date_order: DateOrder = "auto"
) -> tuple[list[tuple[str | None, list[ExportMessage]]], ReadContext]:
    """Every conversation's title and messages, and the context (skips, notes)."""
    context = ReadContext(date_order=date_order)
    with ExportSource.open_path(path) as source:
        chats = [
            (c.title, list(c.messages)) for c in WhatsAppReader().conversations(source, context)
        ]
    return chats, context


def one(path: Path, date_order: DateOrder = "auto") -> tuple[list[ExportMessage], ReadContext]:
    chats, context = read(path, date_order)
    assert len(chats) == 1
    return chats[0][1], context


def chat(tmp_path: Path, *lines: str, name: str = "chat.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rows(messages: list[ExportMessage]) -> list[tuple[str, str, str, str]]:
    return [(m.timestamp.isoformat(), m.speaker, m.kind, m.text) for m in messages]


# --- the fixtures, message by message ----------------------------------------------------------


def test_android_24h_day_first() -> None:
    messages, context = one(DATA / "android_24h_dmy.txt")
    assert rows(messages) == [
        ("2026-03-10T18:04:00", "Ness Alderton", "text",
         "Flights are booked: TAP, Friday 13th, 07:40."),
        ("2026-03-10T18:05:00", "Theo Pike", "text", "Great! Who books the flat?"),
        # Four continuation lines, the blank one kept.
        ("2026-03-10T18:06:00", "Ness Alderton", "text",
         "Me. Three options:\n1. Alfama, 2 rooms\n2. Baixa: near the metro\n\n3. Belém"),
        ("2026-03-10T18:07:00", "Theo Pike", "media", "<Media omitted>"),
        ("2026-03-10T18:12:00", "Theo Pike", "text", "Baixa please"),
        ("2026-03-10T18:13:00", "Theo Pike", "media",
         "IMG-20260310-WA0003.jpg (file attached)\nThe view from the flat"),
        ("2026-03-13T07:15:00", "Theo Pike", "text", "At the gate 😀"),
    ]  # fmt: skip
    assert all(m.timestamp.tzinfo is None for m in messages)
    # Encryption notice, created group, added, subject change (its colon inside the quotes),
    # security code, left: 6; "This message was deleted" and "You deleted this message": 2.
    assert context.log.skipped == {"system message": 6, "deleted message": 2}
    # Day first from line 17's 13/03/2026: no guess to report; one edit mark removed.
    assert len(context.notes) == 1 and "1 message(s) carried" in context.notes[0]


def test_ios_12h_month_first_with_narrow_spaces_and_marks() -> None:
    messages, context = one(DATA / "ios_12h_mdy.txt")  # CRLF line ends, U+202F before PM
    assert rows(messages) == [
        ("2026-03-09T21:16:45", "Ness Alderton", "text",
         "Hi all! Plan for Friday: meet at 7:30 AM."),
        ("2026-03-09T21:17:03", "Sam Ruiz", "text", "Works for me"),  # "~ Sam Ruiz"
        # The line starts with U+200E, and so does its text.
        ("2026-03-09T21:17:30", "Ness Alderton", "media",
         "<attached: 00000012-PHOTO-2026-03-09-21-17-30.jpg>"),
        ("2026-03-09T23:58:59", "Sam Ruiz", "media", "image omitted"),
        ("2026-03-10T00:00:01", "Theo Pike", "text", "Midnight! Also:\nline two of Theo"),
        ("2026-03-14T08:05:00", "Sam Ruiz", "call", "Missed voice call"),
        ("2026-03-14T08:06:00", "Sam Ruiz", "text", "Landed 🛬"),
    ]  # fmt: skip
    # iOS names the group ("Lisbon crew") or the actor as the speaker of its system lines:
    # the encryption notice, "‎Ness Alderton created group …", "‎Ness Alderton added you".
    assert context.log.skipped == {"system message": 3, "deleted message": 1}
    # Month first from 3/14/26 (line 11); 12:00:01 AM is just after midnight, 12:30 PM noon.
    assert not any("day from month" in n for n in context.notes)


def test_german_dates_that_do_not_tell_are_refused_naming_the_orders_that_read_them() -> None:
    # 10.03.26 and 11.03.26 are dates as day/month/year (10 March), month/day/year (3 October)
    # and year/month/day (26 March 2010), all in time order: the file cannot decide.
    with pytest.raises(InputError) as caught:
        one(DATA / "german_dotted.txt")
    assert str(caught.value).endswith(
        "german_dotted.txt: cannot tell the order of day, month and year: every date reads as "
        "day/month/year or as month/day/year or as year/month/day (line 1's 10.03.26 is "
        "2026-03-10 (--date-order dmy) or 2026-10-03 (--date-order mdy) or 2010-03-26 "
        "(--date-order ymd)); pass --date-order dmy or mdy or ymd"
    )
    messages, context = one(DATA / "german_dotted.txt", date_order="dmy")
    assert rows(messages) == [
        ("2026-03-10T18:05:00", "Jörg Weiß", "text", "Treffen wir uns um 19:00?"),
        ("2026-03-10T18:06:00", "Zoë Brandt", "media", "<Medien ausgeschlossen>"),
        ("2026-03-11T09:30:00", "Jörg Weiß", "text", "Passt. Adresse: Hauptstr. 5"),
    ]
    assert context.log.skipped == {"system message": 2, "deleted message": 1}
    # --date-order mdy: 10.03.26 is 3 October, and nothing is guessed.
    flipped, context = one(DATA / "german_dotted.txt", date_order="mdy")
    assert [m.timestamp for m in flipped] == [
        datetime(2026, 10, 3, 18, 5), datetime(2026, 10, 3, 18, 6), datetime(2026, 11, 3, 9, 30)
    ]  # fmt: skip
    assert not any("day from month" in n for n in context.notes)


def test_spanish_a_m_p_m_with_no_break_spaces_and_four_digit_years() -> None:
    messages, context = one(DATA / "spanish_ampm.txt")
    assert rows(messages) == [
        ("2026-06-20T20:28:00", "Michelle Ortega", "text", "hola"),  # 8:28 p. m. (U+00A0)
        ("2026-06-20T20:29:00", "Michelle Ortega", "media", "<Multimedia omitido>"),
        ("2026-06-21T00:10:00", "Andrés Gil", "text", "¿Mañana a las 10:30?"),  # 12:10 a.m.
    ]
    assert context.log.skipped == {"deleted message": 1}  # "Se eliminó este mensaje."
    assert not any("day from month" in n for n in context.notes)  # 20/6: day first


def test_year_first_dates_finnish_klo_and_colons() -> None:
    messages, context = one(DATA / "android_year_first.txt")
    assert rows(messages) == [
        ("2026-03-10T18:04:00", "Matias Virtanen", "text", "Moi!"),
        ("2026-03-10T18:05:00", "Aino Laine", "text", "Hei: mitä kuuluu?"),
    ]
    assert context.notes == []  # year first reads one way only
    # [12.3.2026 klo 14.08.18], dotted times; 12.3 could be 3 December: the order is stated.
    messages, _ = one(DATA / "ios_fi_klo.txt", date_order="dmy")
    # The name ends at the first ": " — "Team:Aino" keeps its colon (no space after it).
    assert rows(messages) == [
        ("2026-03-12T14:08:18", "Matias Virtanen", "text", "Moi"),
        ("2026-03-12T14:09:02", "Team:Aino", "text", "Moi moi: mitä kuuluu?"),
    ]


# --- date order and bad dates --------------------------------------------------------------------


def test_the_first_telling_date_decides_and_a_contradiction_names_its_line(
    tmp_path: Path,
) -> None:
    path = chat(
        tmp_path,
        "01/02/26, 10:00 - Ana: one",
        "13/02/26, 10:00 - Ana: thirteenth of February",
        "02/14/26, 10:00 - Ana: fourteenth of February, month first",
    )
    with pytest.raises(InputError) as caught:
        one(path)
    # 01/02/26 is no year/day/month (month 26), 13/02/26 no month/day/year, and 02/14/26
    # neither day/month/year nor year/month/day (month 14): the error names each, at line 3.
    assert caught.value.line == 3
    assert caught.value.detail == (
        "no order of day, month and year reads every date — not year/day/month (line 1's "
        "01/02/26); not month/day/year (line 2's 13/02/26); not day/month/year (line 3's "
        "02/14/26); not year/month/day (line 3's 02/14/26): the file mixes date formats or is "
        "not one export"
    )
    # Decided early (line 2 leaves only month/day/year), a later date that contradicts it
    # stops the import at its own line.
    month_first = chat(tmp_path, "01/02/2026, 10:00 - Ana: one", "02/14/2026, 10:00 - Ana: two",
                       "13/02/2026, 10:00 - Ana: three", name="mdy.txt")  # fmt: skip
    with pytest.raises(InputError, match=r"13/02/2026 is not a date read as month/day/year "
                       r"\(as line 2's 02/14/2026 says\)") as caught:  # fmt: skip
        one(month_first)
    assert caught.value.line == 3
    # A stated order that a date cannot have.
    with pytest.raises(InputError) as caught:
        one(chat(tmp_path, "01/02/26, 10:00 - Ana: one", "13/02/26, 10:00 - Ana: two",
                 name="stated.txt"), date_order="mdy")  # fmt: skip
    assert caught.value.line == 2 and "as --date-order says" in str(caught.value)
    # No 31 February, and no 13 PM.
    # (31/02/26 is 26 February 2031 as year/month/day; with a 4-digit year it is no date.)
    with pytest.raises(InputError, match=r"not day/month/year \(line 1's 31/02/2026\)"):
        one(chat(tmp_path, "31/02/2026, 10:00 - Ana: one", name="feb.txt"))
    with pytest.raises(InputError, match="hour 13 with 'PM'") as caught:
        one(chat(tmp_path, "1/2/26, 9:00 AM - Ana: one", "1/2/26, 13:00 PM - Ana: two",
                 name="pm.txt"), date_order="dmy")  # fmt: skip
    assert caught.value.line == 2


def test_a_month_first_file_is_decided_by_its_second_field(tmp_path: Path) -> None:
    path = chat(tmp_path, "3/1/26, 9:00 AM - Ana: early", "3/31/26, 9:00 PM - Ana: late")
    messages, context = one(path)
    assert [m.timestamp for m in messages] == [datetime(2026, 3, 1, 9), datetime(2026, 3, 31, 21)]
    assert context.notes == []


def test_lines_shaped_almost_like_a_timestamp_are_text(tmp_path: Path) -> None:
    # Years of 1 or 3 digits, a 4-digit middle field: not WhatsApp's, so part of the message.
    path = chat(
        tmp_path,
        "13/03/26, 10:00 - Ana: steps",
        "1.2.3 10:00 - Bo: one",
        "1/2/202, 10:00 - Bo: two",
        "12:30 - lunch: yes",
        "2026/3/2026, 10:00 - Bo: three",
    )
    messages, _ = one(path, date_order="dmy")
    assert len(messages) == 1
    assert messages[0].text.splitlines()[1:] == [
        "1.2.3 10:00 - Bo: one", "1/2/202, 10:00 - Bo: two", "12:30 - lunch: yes",
        "2026/3/2026, 10:00 - Bo: three",
    ]  # fmt: skip


# --- what is a message ----------------------------------------------------------------------------


def test_system_lines_and_the_rules_for_speakers(tmp_path: Path) -> None:
    path = chat(
        tmp_path,
        "Exported by a tool: this line comes before any message",
        "[1/2/26, 10:00:00] Ness: Theo left",  # a sentence, not an event: kept
        f"[1/2/26, 10:00:01] Lisbon crew: {LRM}Theo left",  # marked by iOS: system
        "[1/2/26, 10:00:02] Boris: Boris changed this group's icon",  # names the speaker
        '[1/2/26, 10:00:03] Robert "Bob" Smith: balanced quotes are a name',
        "[1/2/26, 10:00:04] Ness Alderton: Messages and calls are end-to-end encrypted. No one",
        "[1/2/26, 10:00:05] You created group \u201cCrew: 2026\u201d",
        "[1/2/26, 10:00:05] +1 (777) 777\u20117777: +1 (777) 777\u20117777 joined using this "
        "group's invite link",
        "[1/2/26, 10:00:05] Lisbon crew: You're now an admin",
        "[1/2/26, 10:00:06] Ness: ",
        "[1/2/26, 10:00:07] Ness: \u200fשלום\u200f עולם",
        "[1/2/26, 10:00:08] Ness:",
        "still Ness's message",
    )
    messages, context = one(path, date_order="dmy")
    assert rows(messages) == [
        ("2026-02-01T10:00:00", "Ness", "text", "Theo left"),
        ("2026-02-01T10:00:03", 'Robert "Bob" Smith', "text", "balanced quotes are a name"),
        # A leading mark is dropped; marks inside the text stay.
        ("2026-02-01T10:00:07", "Ness", "text", "שלום\u200f עולם"),
        # "Ness:" alone on its line: the text is on the next line.
        ("2026-02-01T10:00:08", "Ness", "text", "\nstill Ness's message"),
    ]
    assert context.log.skipped == {
        "text before the first message": 1,
        "system message": 6,
        "empty message": 1,
    }


def test_media_placeholders_in_every_form_are_kind_media(tmp_path: Path) -> None:
    texts = [
        "<Media omitted>", "<Médias omis>", "sticker omitted", "GIF omitted", "audio omitted",
        "video omitted", "Contact card omitted", "test_document • 2 pages document omitted",
        "Bild weggelassen", "Sticker weggelassen", "<Anhang: 00000007-AUDIO-2026-02-01.opus>",
        "report • 1 page <attached: 00000009-report.pdf>", "STK-20260201-WA0001.webp (Datei "
        "angehängt)", "plan.pdf (archivo adjunto)", "IMG-20260201-WA0000.jpg (file attached)",
    ]  # fmt: skip
    lines = [f"[1/2/26, 10:00:{i:02d}] Ana: {LRM}{t}" for i, t in enumerate(texts)]
    lines += ["[1/2/26, 10:01:00] Ana: <note: buy milk>", "[1/2/26, 10:01:01] Ana: omitted"]
    messages, context = one(chat(tmp_path, *lines), date_order="dmy")
    assert [m.kind for m in messages] == ["media"] * len(texts) + ["text", "text"]
    assert [m.text for m in messages[: len(texts)]] == texts
    assert context.log.skipped == {}


def test_the_edit_mark_is_removed_and_counted(tmp_path: Path) -> None:
    path = chat(
        tmp_path,
        "1/2/26, 10:00 - Ana: first <This message was edited>",
        "1/2/26, 10:01 - Ana: two lines",
        "and the mark at the end <This message was edited>",
        "1/2/26, 10:02 - Ana: <This message was edited> stays inside a text",
    )
    messages, context = one(path, date_order="dmy")
    assert [m.text for m in messages] == [
        "first", "two lines\nand the mark at the end",
        "<This message was edited> stays inside a text",
    ]  # fmt: skip
    assert any("2 message(s) carried" in n for n in context.notes)


# --- files, zips and titles ---------------------------------------------------------------------


def test_a_chat_file_is_titled_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "WhatsApp Chat with Ness Alderton.txt"
    shutil.copy(DATA / "android_24h_dmy.txt", path)
    chats, _ = read(path)
    assert [title for title, _ in chats] == ["WhatsApp Chat with Ness Alderton"]
    # iOS's _chat.txt, unzipped into a folder: the folder's name.
    folder = tmp_path / "WhatsApp Chat - Lisbon crew"
    folder.mkdir()
    shutil.copy(DATA / "ios_12h_mdy.txt", folder / "_chat.txt")
    chats, _ = read(folder / "_chat.txt")
    assert [title for title, _ in chats] == ["WhatsApp Chat - Lisbon crew"]


def test_the_zip_ios_shares(tmp_path: Path) -> None:
    path = tmp_path / "WhatsApp Chat - Lisbon crew.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(DATA / "ios_12h_mdy.txt", "_chat.txt")
        archive.writestr("00000012-PHOTO-2026-03-09-21-17-30.jpg", b"\xff\xd8\xff\xe0 jpeg")
        archive.writestr("__MACOSX/._chat.txt", b"\x00\x05\x16\x07 AppleDouble \xff")
    with ExportSource.open_path(path) as source:
        assert detect_kind(source) == "whatsapp"
    chats, context = read(path)
    assert [(title, len(messages)) for title, messages in chats] == [
        ("WhatsApp Chat - Lisbon crew", 7)
    ]
    assert context.log.skipped == {"system message": 3, "deleted message": 1}
    assert any("2 other file(s) in the export (media) are not read" in n for n in context.notes)


def test_the_zip_android_shares_with_a_text_file_attached(tmp_path: Path) -> None:
    path = tmp_path / "WhatsApp Chat with Ness Alderton.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.write(DATA / "android_24h_dmy.txt", "WhatsApp Chat with Ness Alderton.txt")
        archive.writestr("IMG-20260310-WA0003.jpg", b"\xff\xd8")
        archive.writestr("notes.txt", "packing list\n- socks\n")  # a document, not a chat
    chats, _ = read(path)
    assert [(title, len(messages)) for title, messages in chats] == [
        ("WhatsApp Chat with Ness Alderton", 7)
    ]


def test_sniffing(tmp_path: Path) -> None:
    for name in ("android_24h_dmy.txt", "ios_12h_mdy.txt", "german_dotted.txt"):
        with ExportSource.open_path(DATA / name) as source:
            assert WhatsAppReader.sniff(source), name
    notes = chat(tmp_path, "", "Shopping: milk", "10/03/2026, 18:04 - Ana: hi", name="notes.txt")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Caf\xe9 au lait\n".encode("latin-1"))
    csv = tmp_path / "chat.csv"
    csv.write_text("timestamp,sender,text\n2026-03-10 18:04,Ana,hi\n", encoding="utf-8")
    for path in (notes, latin1, csv):
        with ExportSource.open_path(path) as source:
            assert not WhatsAppReader.sniff(source), path.name
    # Given as whatsapp anyway: a file with no WhatsApp line at all is one clear error.
    with pytest.raises(InputError, match="no line starts with a WhatsApp date and time"):
        one(chat(tmp_path, "just some text", name="plain.txt"))


# --- through the pipeline -----------------------------------------------------------------------


def test_time_zones_through_the_pipeline(tmp_path: Path) -> None:
    # New York is on daylight time (-04:00) from 8 March 2026; Berlin on winter time (+01:00).
    options = ImportOptions(kind="whatsapp", timezone=ZoneInfo("America/New_York"))
    summary = import_chat_export(DATA / "ios_12h_mdy.txt", tmp_path / "ny", options)
    assert (summary.first_message, summary.last_message) == (
        "2026-03-09T21:16:45-04:00", "2026-03-14T08:06:00-04:00"
    )  # fmt: skip
    assert summary.messages == 7 and summary.participants == 3
    assert summary.skipped == {"deleted message": 1, "system message": 3}
    assert summary.kinds == {"call": 1, "media": 2, "text": 4}
    berlin = ImportOptions(timezone=ZoneInfo("Europe/Berlin"))  # kind auto
    summary = import_chat_export(DATA / "android_24h_dmy.txt", tmp_path / "berlin", berlin)
    assert summary.kind == "whatsapp"
    assert summary.first_message == "2026-03-10T18:04:00+01:00"
    assert not any("time zone" in n for n in summary.notes)
    naive = import_chat_export(DATA / "android_24h_dmy.txt", tmp_path / "naive")
    assert naive.first_message == "2026-03-10T18:04:00"
    assert any("without a time zone" in n for n in naive.notes)
    lines = (tmp_path / "naive" / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
    chunk = json.loads(lines[0])
    # 18:04 … 18:13 in one chunk; 13/03 07:15 is more than 6 h later: a second chunk.
    assert len(lines) == 2 and chunk["title"] == "android_24h_dmy"
    assert chunk["participants"] == ["Ness Alderton", "Theo Pike"]
    assert [m["timestamp"] for m in chunk["messages"]][:2] == [
        "2026-03-10T18:04:00", "2026-03-10T18:05:00"
    ]  # fmt: skip


def test_every_pass_reads_the_file_again(tmp_path: Path) -> None:
    context = ReadContext()
    with ExportSource.open_path(DATA / "ios_12h_mdy.txt") as source:
        (conversation,) = WhatsAppReader().conversations(source, context)
        first, second = list(conversation.messages), list(conversation.messages)
    assert first == second and len(first) == 7
    # Pseudonymisation reads the export twice; the summary counts it once.
    options = ImportOptions(pseudonymise=True)
    summary = import_chat_export(DATA / "ios_12h_mdy.txt", tmp_path / "p", options)
    assert summary.messages == 7 and summary.skipped == {"deleted message": 1, "system message": 3}
    text = (tmp_path / "p" / "chunks.jsonl").read_text(encoding="utf-8")
    assert "Ness" not in text and "Sam Ruiz" not in text and "Person A" in text


def test_reading_streams_in_flat_memory(tmp_path: Path) -> None:
    # 20,000 messages (≈1.3 MB, a quarter of them on two lines): the reader holds one message.
    path = tmp_path / "big.txt"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(20_000):
            day, minute = 1 + (i // 1440) % 28, i % 1440
            handle.write(f"{day:02d}/03/2026, {minute // 60:02d}:{minute % 60:02d} - "
                         f"Speaker {i % 7}: message number {i} with some words\n")  # fmt: skip
            if i % 4 == 0:
                handle.write("and a second line\n")
    context = ReadContext()
    tracemalloc.start()
    try:
        with ExportSource.open_path(path) as source:
            (conversation,) = WhatsAppReader().conversations(source, context)
            count = sum(1 for _ in conversation.messages)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 20_000
    assert peak < 256 * 1024, peak  # measured 71 KB; a list of the messages would be ~10 MB
