"""Text encodings of chat exports (issue 30): UTF-16 with and without a byte-order mark is read
like UTF-8; Latin-1 / CP-1252 with ``--encoding``; a byte that does not decode is a counted
problem named on its own line (its line, column and value), not a refusal of the file — unless
``--strict`` — and every message is kept. The path is named once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatledger.corpus import read_chunks
from chatledger.corpus.exports import ImportOptions, import_chat_export
from chatledger.corpus.exports._source import ExportSource, detect_codec
from test_cli_errors import assert_one_error_line, chatledger

WHATSAPP = Path(__file__).resolve().parent / "data" / "exports" / "whatsapp"
TEXT = (WHATSAPP / "android_24h_dmy.txt").read_text(encoding="utf-8")


def texts(out: Path) -> list[str]:
    return [m.text for c in read_chunks(out / "chunks.jsonl") for m in c.messages]


def run(path: Path, out: Path, **options: object) -> dict[str, object]:
    summary = import_chat_export(
        path,
        out,
        ImportOptions(kind="whatsapp", **options),  # type: ignore[arg-type]
    )
    return summary.model_dump()


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_utf16_with_or_without_a_bom_reads_like_utf8(tmp_path: Path, codec: str) -> None:
    for folder, data in (("utf8", TEXT.encode()), ("other", TEXT.encode(codec))):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "chat.txt").write_bytes(data)
    first = run(tmp_path / "utf8" / "chat.txt", tmp_path / "a")
    second = run(tmp_path / "other" / "chat.txt", tmp_path / "b")
    assert second["messages"] == first["messages"] == 7
    assert second["problems"] == {}
    assert texts(tmp_path / "b") == texts(tmp_path / "a")
    # The chunks are the same byte for byte.
    assert (tmp_path / "b" / "chunks.jsonl").read_bytes() == (
        tmp_path / "a" / "chunks.jsonl"
    ).read_bytes()


def test_codec_detection_from_the_first_bytes() -> None:
    assert detect_codec("10/03/2026, 18:01 - Ness: hi".encode("utf-16-le"), None) == "utf-16-le"
    assert detect_codec("10/03/2026, 18:01 - Ness: hi".encode("utf-16-be"), None) == "utf-16-be"
    assert detect_codec("\ufeffZoë".encode("utf-16-le"), None) == "utf-16"
    assert detect_codec("Zoë".encode(), None) == "utf-8-sig"
    assert detect_codec("Zoë".encode("cp1252"), None) == "utf-8-sig"  # stays UTF-8: counted
    assert detect_codec(b"anything", "latin-1") == "latin-1"
    assert detect_codec(b"anything", "UTF8") == "utf-8-sig"  # a BOM dropped either way


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_bom_of_a_chat_mostly_not_ascii(tmp_path: Path, codec: str) -> None:
    # A Russian chat: a third of its characters ASCII (dates, times, separators), the rest
    # Cyrillic, whose high byte is 0x04 — NULs only in the ASCII characters' high bytes.
    body = "".join(
        f"13/03/2026, 18:{i:02d} - Наталья Смирнова: Привет! Встречаемся завтра у вокзала\n"
        for i in range(30)
    )
    data = body.encode(codec)
    assert detect_codec(data, None) == codec
    (tmp_path / "chat.txt").write_bytes(data)
    done = run(tmp_path / "chat.txt", tmp_path / "out")
    assert done["messages"] == 30 and done["problems"] == {}
    assert texts(tmp_path / "out")[0] == "Привет! Встречаемся завтра у вокзала"


def test_cp1252_with_encoding_reads_every_character(tmp_path: Path) -> None:
    # "Zoë", "café", "€", the en dash and curly quotes CP-1252 has (0x80–0x9F) and Latin-1 not.
    body = (
        "13/03/2026, 09:00 - Ness Alderton: Zoë’s café — 12 €\n"
        "13/03/2026, 09:01 - Theo Pike: fine\n"
        "13/03/2026, 09:02 - Zoë Brandt: “ok”\n"
    )
    (tmp_path / "cp.txt").write_bytes(body.encode("cp1252"))
    plain = run(tmp_path / "cp.txt", tmp_path / "guessed")
    # Without --encoding UTF-8 fails on lines 1 and 3 (the first bad byte of each named): both
    # counted, all three messages kept, the speaker's "Zoë" with U+FFFD for its "ë".
    assert plain["problems"] == {"lines with bytes that do not decode": 2}
    assert plain["messages"] == 3
    note = next(n for n in plain["notes"] if "do not decode" in n)  # type: ignore[attr-defined]
    assert "cp.txt:1: byte 0xEB at column 38 is not UTF-8" in note
    assert "cp.txt:3: byte 0xEB at column 23 is not UTF-8" in note
    assert "--encoding cp1252" in note
    done = run(tmp_path / "cp.txt", tmp_path / "cp", encoding="cp1252")
    assert done["problems"] == {} and done["participants"] == 3
    assert texts(tmp_path / "cp") == ["Zoë’s café — 12 €", "fine", "“ok”"]
    latin = run(tmp_path / "cp.txt", tmp_path / "latin", encoding="latin-1")
    # Latin-1 has no ’ — € “ ”: they read as C1 control characters, never as an error.
    assert latin["problems"] == {} and texts(tmp_path / "latin")[0] == "Zoë\x92s café \x97 12 \x80"


def test_one_bad_byte_deep_in_a_big_file_is_named_on_its_own_line(tmp_path: Path) -> None:
    # 4,100 messages; a Latin-1 "é" on line 4,001 (the bug said "after line 3,899"), another
    # on line 2 (it said "after line 0"); every message is kept, both lines are counted.
    lines = [f"13/02/2026, 10:{i % 60:02d} - Ness Alderton: message {i}" for i in range(4100)]
    lines.insert(0, "13/02/2026, 09:59 - Theo Pike: first")
    raw = [line.encode() for line in lines]
    raw[1] = raw[1].replace(b"message 0", b"caf\xe9 0")
    raw[4000] = raw[4000].replace(b"message", b"m\xe9ssage")
    (tmp_path / "big.txt").write_bytes(b"\n".join(raw) + b"\n")
    done = run(tmp_path / "big.txt", tmp_path / "out")
    assert done["messages"] == 4101
    assert done["problems"] == {"lines with bytes that do not decode": 2}
    note = next(n for n in done["notes"] if "do not decode" in n)  # type: ignore[attr-defined]
    assert "big.txt:2: byte 0xE9 at column 39 is not UTF-8" in note
    assert "big.txt:4001: byte 0xE9 at column 37 is not UTF-8" in note
    kept = texts(tmp_path / "out")
    assert kept[1] == "caf\ufffd 0" and kept[4000] == "m\ufffdssage 3999"


def test_a_bad_byte_in_a_utf16_file_is_counted_too(tmp_path: Path) -> None:
    data = TEXT.encode("utf-16-le")
    # An unpaired low surrogate (DC00) in the middle of line 4's text.
    at = data.index("booked".encode("utf-16-le"))
    (tmp_path / "w.txt").write_bytes(data[:at] + b"\x00\xdc" + data[at:])
    done = run(tmp_path / "w.txt", tmp_path / "out")
    assert done["messages"] == 7
    assert done["problems"] == {"lines with bytes that do not decode": 1}
    note = next(n for n in done["notes"] if "do not decode" in n)  # type: ignore[attr-defined]
    assert "w.txt:4: byte" in note and "is not UTF-16" in note and "cp1252" not in note


def test_json_exports_count_bad_bytes_on_their_line(tmp_path: Path) -> None:
    # A Slack day file with a Latin-1 byte inside a message's text on its line 3.
    slack = tmp_path / "slack"
    slack.mkdir()
    (slack / "users.json").write_text('[{"id": "U1", "real_name": "Ness Alderton"}]')
    (slack / "channels.json").write_text('[{"id": "C1", "name": "general", "members": ["U1"]}]')
    (slack / "general").mkdir()
    day = b'[\n {"type": "message", "user": "U1", "ts": "1700000000.0001",\n  "text": "caf\xe9"}\n]'
    (slack / "general" / "2023-11-14.json").write_bytes(day)
    done = import_chat_export(slack, tmp_path / "out", ImportOptions(kind="slack")).model_dump()
    assert done["messages"] == 1
    assert done["problems"] == {"lines with bytes that do not decode": 1}
    assert any("general/2023-11-14.json:3: byte 0xE9 at column 15" in n for n in done["notes"])
    assert texts(tmp_path / "out") == ["caf\ufffd"]


def test_strict_stops_at_the_first_bad_byte_in_one_line(tmp_path: Path) -> None:
    raw = TEXT.encode().replace(b"Flights", b"Fl\xefghts")
    (tmp_path / "chat.txt").write_bytes(raw)
    refused = chatledger(
        "corpus", "import", "whatsapp", "chat.txt", "--out", "out", "--strict", cwd=tmp_path
    )
    assert_one_error_line(refused, 2, "chat.txt:4:", "byte 0xEF at column 38 is not UTF-8")
    assert refused.err.count("chat.txt") == 1  # the path once
    assert "--encoding cp1252" in refused.err
    assert not (tmp_path / "out" / "chunks.jsonl").exists()
    # Without --strict the same file imports, the line counted in the JSON summary.
    kept = chatledger(
        "corpus", "import", "whatsapp", "chat.txt", "--out", "out", "--format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert kept.code == 0, kept.err
    summary = json.loads(kept.out)
    assert summary["messages"] == 7
    assert summary["problems"] == {"lines with bytes that do not decode": 1}
    assert sum(n.count("chat.txt:4:") for n in summary["notes"]) == 1


def test_an_unknown_encoding_is_one_line_naming_the_option(tmp_path: Path) -> None:
    (tmp_path / "chat.txt").write_text(TEXT, encoding="utf-8")
    refused = chatledger(
        "corpus", "import", "whatsapp", "chat.txt", "--out", "out", "--encoding", "klingon",
        cwd=tmp_path,
    )  # fmt: skip
    assert_one_error_line(refused, 2, "--encoding", "klingon")


def test_a_member_read_twice_counts_its_bad_line_once(tmp_path: Path) -> None:
    # Pseudonymisation reads the export twice (names first): the count stays one.
    raw = TEXT.encode().replace(b"Flights", b"Fl\xefghts")
    (tmp_path / "chat.txt").write_bytes(raw)
    with ExportSource.open_path(tmp_path / "chat.txt") as source:
        for _ in range(2):
            with source.text_lines("chat.txt") as lines:
                assert sum(1 for _ in lines) == len(TEXT.splitlines())
            source.read_text("chat.txt")
        assert [(b.line, b.column, b.byte) for b in source.bad_bytes] == [(4, 38, 0xEF)]
