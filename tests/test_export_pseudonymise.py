"""Pseudonymisation that holds (issue 30), case by case: every variant of a known name, the
user's aliases, the number and place placeholders — and what must stay as written (ordinary
words, dates, versions). Then ``--names-from-text``'s preview and the key's place and mode."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from chatledger.corpus.exports import Pseudonymiser, PseudonymMap
from chatledger.corpus.exports._names import name_candidates
from test_cli_errors import chatledger

LEAKS = Path(__file__).resolve().parent / "data" / "exports" / "leaks"
CHAT = LEAKS / "WhatsApp Chat with Samuel Ruiz-García.txt"
PEOPLE = ["Samuel Ruiz-García", "Ness Alderton", "Will Bishop", "Mary-Jane O'Neil", "Li Wu"]
NICKNAMES = {"Sam": "Samuel Ruiz-García", "Sammy": "Samuel Ruiz-García", "Nessie": "Ness Alderton"}


@pytest.fixture
def pseudonymiser() -> Pseudonymiser:
    # Person A … E in the order given; the nicknames mean their people.
    return Pseudonymiser(PseudonymMap(), PEOPLE, aliases=NICKNAMES)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Each part of a hyphenated name, with and without accents, in any case.
        ("Ruiz-García, Ruiz, García, Garcia", "Person A, Person A, Person A, Person A"),
        ("RUIZ-GARCIA ruiz-garcía GARCÍA", "Person A Person A Person A"),
        ("SAMUEL, samuel, Samuel", "Person A, Person A, Person A"),
        # Possessives with a straight, a curly or no apostrophe.
        ("Sam's, Sam’s, Sams, Alderton’s", "Person A's, Person A’s, Person A's, Person B’s"),
        # Nicknames from the aliases, in any case, possessive too.
        (
            "Sammy, SAMMY, sammy, Sammys, Nessie's",
            "Person A, Person A, Person A, Person A's, Person B's",
        ),
        # A part that is an everyday word: replaced only capitalised or in capitals.
        ("I will ask Will. WILL!", "I will ask Person C. Person C!"),
        # Hyphenated first name, apostrophe in the surname written three ways.
        (
            "Mary-Jane's, Mary, Jane, O'Neil, O’Neil, ONeil",
            "Person D's, Person D, Person D, Person D, Person D, Person D",
        ),
        # Two-letter parts: capitalised or in capitals, never the lower-case word.
        ("Li said wu; Wu and LI", "Person E said wu; Person E and Person E"),
    ],
)
def test_every_variant_of_a_known_name(
    pseudonymiser: Pseudonymiser, text: str, expected: str
) -> None:
    assert pseudonymiser.text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Samuelson and the same sample from Samsung",  # a name inside a longer word
        "Jo said no. No! Is it on? Go on",  # two-letter words are not Li or Wu
        "meet on 2026-03-10 at 10:30, version 1.2.3, COVID-19, year 2026",
        "I have 3 Kids and 12 apples; in 2024 Park Run was fun",
    ],
)
def test_what_is_not_a_name_or_a_number_stays(pseudonymiser: Pseudonymiser, text: str) -> None:
    assert pseudonymiser.text(text) == text
    assert pseudonymiser.map.values == {}


def test_numbers_and_places_get_typed_placeholders(pseudonymiser: Pseudonymiser) -> None:
    text = (
        "IBAN GB33BUKB20201555555555, DE89 3704 0044 0532 0130 00, FR1420041010050500013M02606"
        " and GB34BUKB20201555555555 (check digits off by one: still an IBAN). "
        "Cards 4111-1111-1111-1111 and 5500 0000 0000 0004; order 4111 1111 1111 1112. "
        "acct 12345678, sort code 20-00-00, Konto: 0532013000. "
        "NW1 6XE, SW1A 1AA, K1A 0B1, 1012 AB Amsterdam, CA 94103, 90210-1234, 75001 Paris. "
        "221B Baker Street, 10 Downing St, 1600 Pennsylvania Avenue NW, Hauptstraße 5, "
        "Calle Mayor 3, 12 rue de Rivoli, Room 101 Main Street."
    )
    assert pseudonymiser.text(text) == (
        "IBAN [IBAN-1], [IBAN-2], [IBAN-3] and [IBAN-4] (check digits off by one: still an "
        "IBAN). Cards [CARD-1] and [CARD-2]; order [NUMBER-1]. "
        "acct [ACCOUNT-1], sort code [ACCOUNT-2], Konto: [ACCOUNT-3]. "
        "[POSTCODE-1], [POSTCODE-2], [POSTCODE-3], [POSTCODE-4] Amsterdam, CA [POSTCODE-5], "
        "[POSTCODE-6], [POSTCODE-7] Paris. "
        "[ADDRESS-1], [ADDRESS-2], [ADDRESS-3], [ADDRESS-4], [ADDRESS-5], [ADDRESS-6], Room "
        "[ADDRESS-7]."
    )
    values = pseudonymiser.map.values
    assert values["[IBAN-2]"] == "DE89 3704 0044 0532 0130 00"
    assert values["[ACCOUNT-2]"] == "20-00-00" and values["[ADDRESS-1]"] == "221B Baker Street"
    # The same original, the same placeholder.
    assert pseudonymiser.text("again: 221B Baker Street") == "again: [ADDRESS-1]"


def test_an_iban_shaped_word_that_schwifty_rejects_stays(pseudonymiser: Pseudonymiser) -> None:
    # "XX" is no country; GB needs 22 characters, not 20.
    text = "codes XX12ABCD12345678901 and GB33BUKB202015555555"
    assert "[IBAN" not in pseudonymiser.text(text)


def test_names_from_text_preview(tmp_path: Path) -> None:
    done = chatledger(
        "corpus", "import", "whatsapp", str(CHAT), "--names-from-text", "names.yaml",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.err
    found = {c["text"]: (c["count"], c["why"]) for c in json.loads(done.out)["candidates"]}
    # Sam: capitalised mid-sentence ("at Sam's", "Sam will"); Priya ("and Priya's coat"):
    # the possessive is the name; Priyas opens a message and is no dictionary word. Known
    # speakers (Ruiz, Ness …) are not offered; SAM (capitals) and Sammy (web2 has "sammy")
    # are not found — the preview is a help, the aliases file the rule.
    assert found["Sam"] == (2, "capitalised")
    assert found["Priya"] == (1, "capitalised")
    assert found["Priyas"] == (1, "capitalised, not a dictionary word")
    assert not {"Ruiz", "Ness", "Samuel", "Alderton", "Decision", "Morning"} & set(found)
    written = tmp_path / "names.yaml"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600  # it quotes the chat
    assert not (tmp_path / "chunks.jsonl").exists()
    # Accepting the preview as it is: every candidate becomes a name the import replaces.
    imported = chatledger(
        "corpus", "import", "whatsapp", str(CHAT), "--out", "out", "--pseudonymise",
        "--aliases", "names.yaml", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert imported.code == 0, imported.err
    chunks = (tmp_path / "out" / "chunks.jsonl").read_text(encoding="utf-8")
    for name in ("Sam", "Priya", "Priyas", "Berlin", "London"):
        assert f" {name} " not in chunks and f" {name}'" not in chunks, name


def test_name_candidates_by_rule() -> None:
    texts = [
        "ping hfaran about it, hfaran knows",  # twice, no dictionary word: a handle
        "I told Hamza. Hamza's fine",  # mid-sentence capital; the possessive folds in
        "Monday works. Will you? I will",  # a weekday; "Will" is also "will"
        "cc @tkral",
        "Zyxx opened it",  # a sentence start no dictionary has
    ]
    found = {c.text: (c.count, c.why) for c in name_candidates(texts, known=["Ness Alderton"])}
    assert found == {
        "hfaran": (2, "not a dictionary word"),
        "Hamza": (2, "capitalised"),
        "tkral": (1, "@mention"),
        "Zyxx": (1, "capitalised, not a dictionary word"),
    }


def test_a_key_inside_the_import_folder_is_warned_about(tmp_path: Path) -> None:
    done = chatledger(
        "corpus", "import", "whatsapp", str(CHAT), "--out", "out", "--pseudonymise",
        "--key", "out/private/key.json", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert any("do not share" in n for n in summary["notes"])
    key = tmp_path / "out" / "private" / "key.json"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
