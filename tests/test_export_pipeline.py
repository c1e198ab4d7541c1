"""The chat-export pipeline, format by format's common part: chunking, stable ids, aliases,
pseudonymisation and reveal, and the CSV reader — numbers worked out by hand."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from chatledger.core import InputError
from chatledger.corpus import read_chunks
from chatledger.corpus.exports import (
    ChunkingOptions,
    CsvMapping,
    ImportOptions,
    Pseudonymiser,
    PseudonymMap,
    import_chat_export,
    parse_duration,
    reveal_file,
)
from chatledger.corpus.exports._chunking import ChunkMessage, chunk_conversation
from chatledger.corpus.exports._ids import MessageIds, slug
from chatledger.corpus.exports._pipeline import default_key_path

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def messages(*minutes: float, text: str = "hello there") -> Iterator[ChunkMessage]:
    for i, minute in enumerate(minutes):
        moment = T0 + timedelta(minutes=minute)
        yield ChunkMessage(f"m-{i}", "Ana" if i % 2 else "Ben", moment, moment.isoformat(), text)


def ids_of(chunks: list[dict[str, object]]) -> list[list[str]]:
    return [[m["id"] for m in c["messages"]] for c in chunks]  # type: ignore[attr-defined]


# --- chunking -----------------------------------------------------------------------------------


def test_a_silence_longer_than_the_gap_starts_a_chunk() -> None:
    # 0, 10, 20 min; then 7 h later (> 6 h): two chunks. Exactly 6 h is not longer.
    chunks = list(chunk_conversation("c", None, messages(0, 10, 20, 440, 800), ChunkingOptions()))
    assert ids_of(chunks) == [["m-0", "m-1", "m-2"], ["m-3", "m-4"]]
    exact = list(chunk_conversation("c", None, messages(0, 360), ChunkingOptions()))
    assert len(exact) == 1
    assert [c["chunk_id"] for c in chunks] == ["c-0001", "c-0002"]
    assert chunks[0]["participants"] == ["Ben", "Ana"]


def test_a_full_chunk_passes_its_last_messages_on_but_a_silence_does_not() -> None:
    options = ChunkingOptions(max_messages=3, overlap=1)
    minutes = (0, 1, 2, 3, 4, 500, 501)
    chunks = list(chunk_conversation("c", "t", messages(*minutes), options))
    # [0 1 2] full → [2 3 4]; silence before 5 → [5 6], no overlap across the silence.
    assert ids_of(chunks) == [["m-0", "m-1", "m-2"], ["m-2", "m-3", "m-4"], ["m-5", "m-6"]]
    assert chunks[0]["title"] == "t"


def test_a_token_limit_never_splits_a_message_and_never_makes_a_chunk_of_repeats() -> None:
    # "Ben"/"Ana" (3 bytes) + text + 2 → ceil((3 + 18 + 2) / 4) = 6 tokens a message.
    text = "x" * 18
    options = ChunkingOptions(max_tokens=12, overlap=1, max_messages=10)
    chunks = list(chunk_conversation("c", None, messages(0, 1, 2, 3, text=text), options))
    # [0 1] (12) → carry 1; 1 + 2 = 12 → [1 2] → carry 2; [2 3].
    assert ids_of(chunks) == [["m-0", "m-1"], ["m-1", "m-2"], ["m-2", "m-3"]]
    tight = ChunkingOptions(max_tokens=6, overlap=1, max_messages=10)
    # No room for a carried message: it is dropped, never a chunk of the carried one alone.
    alone = list(chunk_conversation("c", None, messages(0, 1, 2, text=text), tight))
    assert ids_of(alone) == [["m-0"], ["m-1"], ["m-2"]]
    huge = list(chunk_conversation("c", None, messages(0, text="y" * 500), tight))
    assert ids_of(huge) == [["m-0"]]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("6h", 21600), ("90m", 5400), ("1d12h", 129600), ("45s", 45), ("0", 0), ("1.5h", 5400)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "6", "h", "6x", "6h 30", "-1h"])
def test_bad_durations_name_the_option(text: str) -> None:
    with pytest.raises(InputError, match=r"\[--gap\]"):
        parse_duration(text)


def test_overlap_must_stay_below_the_chunk_size() -> None:
    with pytest.raises(InputError, match=r"\[--overlap\]"):
        ChunkingOptions(max_messages=3, overlap=3)


# --- ids ----------------------------------------------------------------------------------------


def test_message_ids_are_stable_and_number_duplicates() -> None:
    first, again = MessageIds("chat"), MessageIds("chat")
    stamp = "2026-03-01T09:00:00Z"
    a = [
        first.next(stamp, "Ana", "ok"),
        first.next(stamp, "Ana", "ok"),
        first.next(stamp, "Ben", "ok"),
    ]
    assert a == [
        again.next(stamp, "Ana", "ok"),
        again.next(stamp, "Ana", "ok"),
        again.next(stamp, "Ben", "ok"),
    ]
    assert a[1] == a[0] + "-2" and a[2] != a[0]
    assert len(a[0]) == len("m-") + 12
    # Another conversation, another id for the same message.
    assert MessageIds("other").next(stamp, "Ana", "ok") != a[0]


def test_slugs() -> None:
    assert slug("WhatsApp Chat with Ness Alderton") == "whatsapp-chat-with-ness-alderton"
    assert slug("!!!") == "chat" and slug("Zoë & Co") == "zoë-co"


# --- pseudonymisation ---------------------------------------------------------------------------


def pseudonymiser(*names: str, region: str | None = None) -> Pseudonymiser:
    return Pseudonymiser(PseudonymMap(), names, phone_region=region)


def test_names_become_stable_pseudonyms_in_order_of_appearance() -> None:
    p = pseudonymiser("Ness Alderton", "Sam Ruiz", "Sam Lee")
    assert [p.name(n) for n in ("Sam Ruiz", "Ness Alderton", "Sam Lee")] == [
        "Person B",
        "Person A",
        "Person C",
    ]
    text = "NESS ALDERTON said Ness and Alderton will ask Sam; ness (lower case) too."
    # Full names and their parts in any case; "Sam" is shared → [NAME-1].
    assert p.text(text) == (
        "Person A said Person A and Person A will ask [NAME-1]; Person A (lower case) too."
    )


def test_phones_emails_and_urls_get_typed_placeholders() -> None:
    p = pseudonymiser("Ana Ruiz", region="GB")
    text = (
        "Call +44 7700 900123 or 07700 900456, mail ana@example.org, see https://x.org/a?b=1. "
        "Order 12345678 ships 2026-03-10 at 18:00; ref 10.03.2026."
    )
    assert p.text(text) == (
        "Call [PHONE-1] or [PHONE-2], mail [EMAIL-1], see [URL-1]. "
        "Order [NUMBER-1] ships 2026-03-10 at 18:00; ref 10.03.2026."
    )
    # The same value, the same placeholder.
    assert p.text("again +44 7700 900123") == "again [PHONE-1]"
    assert p.map.values["[URL-1]"] == "https://x.org/a?b=1"


def test_without_a_region_national_numbers_are_still_caught_as_digit_runs() -> None:
    p = pseudonymiser()
    assert p.text("ring 020 7946 0018 or 555-0100") == "ring [PHONE-1] or 555-0100"


# --- the pipeline through CSV -------------------------------------------------------------------

CSV = (
    "date,sender,message\n"
    '2026-03-01T10:00:00Z,Ness Alderton,"Hi Sam, call +44 7700 900123 or ness@example.com"\n'
    '2026-03-01T10:05:00Z,Sam,"Sure Ness.\nSee https://example.com/x."\n'
    "2026-03-02T10:05:00Z,Sam Ruiz,next day\n"
    "2026-03-02T10:06:00Z,Sam Ruiz,\n"
)


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "family.csv"
    path.write_text(CSV, encoding="utf-8")
    return path


def test_csv_import_counts_chunks_and_skips(export: Path, tmp_path: Path) -> None:
    options = ImportOptions(aliases={"Sam": "Sam Ruiz"})
    summary = import_chat_export(export, tmp_path / "out", options)
    assert (summary.kind, summary.conversations, summary.messages) == ("csv", 1, 3)
    assert (summary.participants, summary.chunks) == (2, 2)  # the alias merged "Sam"
    assert summary.skipped == {"empty message": 1}
    chunks = read_chunks(tmp_path / "out" / "chunks.jsonl")
    assert [len(c.messages) for c in chunks] == [2, 1]
    assert chunks[0].participants == ["Ness Alderton", "Sam Ruiz"]
    assert (
        chunks[0].messages[1].text == "Sure Ness.\nSee https://example.com/x."
    )  # quoted line break
    assert chunks[0].messages[0].timestamp == "2026-03-01T10:00:00Z"
    assert chunks[0].conversation_id == "family"


def test_a_re_import_gives_the_same_ids(export: Path, tmp_path: Path) -> None:
    import_chat_export(export, tmp_path / "a")
    import_chat_export(export, tmp_path / "b")
    assert (tmp_path / "a" / "chunks.jsonl").read_bytes() == (
        tmp_path / "b" / "chunks.jsonl"
    ).read_bytes()


def test_pseudonymised_import_keeps_nothing_real_and_reveal_restores_it(
    export: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    options = ImportOptions(pseudonymise=True, aliases={"Sam": "Sam Ruiz"})
    summary = import_chat_export(export, out, options)
    written = (out / "chunks.jsonl").read_text(encoding="utf-8")
    for secret in ("Ness", "Alderton", "Sam", "Ruiz", "7700", "ness@example.com", "example.com"):
        assert secret not in written
    # The key is kept outside the import folder, readable by its owner only.
    key = default_key_path(out)
    assert summary.pseudonyms_path == str(key) and not (out / "pseudonyms.json").exists()
    assert not key.is_relative_to(out) and stat.S_IMODE(key.stat().st_mode) == 0o600
    mapping = PseudonymMap.load(key)
    assert mapping.names == {"Ness Alderton": "Person A", "Sam Ruiz": "Person B"}
    # A re-import reuses the map: same pseudonyms, same ids.
    first = written
    import_chat_export(export, out, options)
    assert (out / "chunks.jsonl").read_text(encoding="utf-8") == first

    chunk = json.loads(first.splitlines()[0])
    extraction = {
        "chunk_id": chunk["chunk_id"],
        "model": "m",
        "extraction": {
            "summary": "Person A asks Person B to call [PHONE-1].",
            "action_items": [{"text": "Call Person A on [PHONE-1]", "owner": "Person B"}],
        },
    }
    (tmp_path / "x.jsonl").write_text(json.dumps(extraction) + "\nnot json\n", encoding="utf-8")
    result = reveal_file(tmp_path / "x.jsonl", key, tmp_path / "real.jsonl")
    assert (result.lines, result.revealed, result.unreadable) == (2, 1, 1)
    revealed = json.loads((tmp_path / "real.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert (
        revealed["extraction"]["summary"] == "Ness Alderton asks Sam Ruiz to call +44 7700 900123."
    )
    assert revealed["extraction"]["action_items"][0]["owner"] == "Sam Ruiz"


def test_csv_columns_by_flag_date_format_and_dialect(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_bytes(
        "\ufeffWhen;Who;What;Room\n01/03/2026 09:00;Ana;hi;a\n01/03/2026 09:01;Ben;yo;b\n".encode()
    )
    mapping = CsvMapping(
        timestamp="When",
        speaker="Who",
        text="What",
        conversation="Room",
        date_format="%d/%m/%Y %H:%M",
    )
    summary = import_chat_export(path, tmp_path / "out", ImportOptions(csv=mapping))
    assert (summary.conversations, summary.messages) == (2, 2)
    assert summary.notes and "without a time zone" in summary.notes[0]
    chunks = read_chunks(tmp_path / "out" / "chunks.jsonl")
    assert [c.conversation_id for c in chunks] == ["a", "b"]
    assert chunks[0].messages[0].timestamp == "2026-03-01T09:00:00"


def test_a_timestamp_the_format_cannot_read_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text(
        "time,from,text\n2026-03-01T09:00:00,Ana,hi\nyesterday,Ben,yo\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as info:
        import_chat_export(path, tmp_path / "out")
    assert str(info.value).startswith(f"{path}:3 [time]: cannot read 'yesterday' as a time")
    assert not (tmp_path / "out" / "chunks.jsonl").exists()


def test_csv_epoch_seconds_and_milliseconds_are_utc(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text(
        "timestamp,author,body\n1772355600,Ana,a\n1772355660000,Ben,b\n", encoding="utf-8"
    )
    import_chat_export(path, tmp_path / "out")
    chunk = read_chunks(tmp_path / "out" / "chunks.jsonl")[0]
    assert [m.timestamp for m in chunk.messages] == ["2026-03-01T09:00:00Z", "2026-03-01T09:01:00Z"]


def test_an_unknown_file_is_one_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.bin"
    path.write_bytes(b"\x00\x01\x02")
    with pytest.raises(InputError, match="cannot tell which app this export comes from"):
        import_chat_export(path, tmp_path / "out")


def test_first_and_last_are_ordered_by_the_moment_not_the_text(tmp_path: Path) -> None:
    path = tmp_path / "zones.csv"
    path.write_text(
        "timestamp,sender,message\n"
        "2026-03-28T23:00:00Z,Ana,late in UTC\n"
        "2026-03-29T00:30:00+02:00,Ben,earlier: 2026-03-28T22:30Z\n",
        encoding="utf-8",
    )
    summary = import_chat_export(
        path, tmp_path / "out", ImportOptions(chunking=ChunkingOptions(gap=timedelta(0)))
    )
    assert summary.first_message == "2026-03-29T00:30:00+02:00"
    assert summary.last_message == "2026-03-28T23:00:00Z"


def test_identical_messages_out_of_time_order_still_get_distinct_ids() -> None:
    # Queued offline: the same "ok" at 10:01 appears again after a 10:02 message.
    ids = MessageIds("chat")
    first = ids.next("2026-03-13T10:01:00", "Ana", "ok")
    ids.next("2026-03-13T10:02:00", "Bo", "x")
    assert ids.next("2026-03-13T10:01:00", "Ana", "ok") == first + "-2"


def test_an_out_of_order_duplicate_imports_and_extracts(tmp_path: Path) -> None:
    path = tmp_path / "queued.csv"
    path.write_text(
        "timestamp,sender,message\n2026-03-13T10:01:00,Ana,ok\n"
        "2026-03-13T10:02:00,Bo,x\n2026-03-13T10:01:00,Ana,ok\n",
        encoding="utf-8",
    )
    import_chat_export(path, tmp_path / "out")
    (chunk,) = read_chunks(tmp_path / "out" / "chunks.jsonl")  # unique ids, or this raises
    assert len({m.id for m in chunk.messages}) == 3


def test_a_media_file_counter_is_not_a_phone_number() -> None:
    p = pseudonymiser()
    line = "<attached: 00000012-PHOTO-2026-03-10-18-04-00.jpg> call 0044 7700 900123"
    assert p.text(line) == "<attached: 00000012-PHOTO-2026-03-10-18-04-00.jpg> call [PHONE-1]"
