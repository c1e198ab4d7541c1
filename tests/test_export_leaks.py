"""The leak test: a chat seeded with every case pseudonymisation must catch — each part of a
hyphenated name, any letter case, accents dropped, possessives with and without an apostrophe,
nicknames from the aliases file, IBANs, a card and an account number, postcodes, street
addresses, phones, an e-mail address, a URL — imported with ``--pseudonymise`` as a user
runs it; none of the originals may reach ``chunks.jsonl`` or any prompt a model on 127.0.0.1
receives. Then ``corpus reveal`` restores every placeholder of the extractions, the rule
extractor's unbracketed ``PHONE-1`` included; the key is 0600 and outside the import folder."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from chatledger.corpus.exports import PseudonymMap
from chatledger.corpus.exports._pseudonyms import reveal_value
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body
from test_cli_errors import chatledger

LEAKS = Path(__file__).resolve().parent / "data" / "exports" / "leaks"
CHAT = LEAKS / "WhatsApp Chat with Samuel Ruiz-García.txt"
# Every original the chat holds that must not leave the machine, as whole words.
SECRETS = (
    "Samuel", "SAMUEL", "samuel", "Ruiz", "RUIZ", "García", "Garcia", "GARCIA", "Ness", "ness",
    "Alderton", "Priya", "Priyas", "Shah", "Sam", "SAM", "Sammy", "GB33", "BUKB",
    "DE89370400440532013000", "4111 1111 1111 1111", "31926819", "221B", "Baker Street",
    "NW1 6XE", "Hauptstraße", "10115", "07700 900123", "900456", "901820", "ness.alderton",
    "example.com", "cabins.example.org", "4821",
)  # fmt: skip


def leaked(text: str) -> list[str]:
    return [s for s in SECRETS if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text)]


def answer_from_prompt(body: dict[str, object]) -> dict[str, object]:
    """A model that repeats back the pseudonyms and placeholders it was shown."""
    prompt = "\n".join(str(m.get("content")) for m in body["messages"])  # type: ignore[attr-defined]
    shown = sorted(set(re.findall(r"\[[A-Z]+-\d+\]|Person [A-Z]\b", prompt)))
    extraction = {"summary": " ".join(shown), "topics": shown[:5]}
    return openai_body(json.dumps(extraction), model=body["model"])  # type: ignore[arg-type]


def test_nothing_real_reaches_the_chunks_or_the_model_and_reveal_restores_all(
    tmp_path: Path,
) -> None:
    key = tmp_path / "private" / "chat.key.json"
    imported = chatledger(
        "corpus", "import", "whatsapp", str(CHAT), "--out", "corpus", "--pseudonymise",
        "--aliases", str(LEAKS / "aliases.yaml"), "--key", str(key), "--format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert imported.code == 0, imported.err
    summary = json.loads(imported.out)
    assert summary["messages"] == 7 and summary["pseudonyms_path"] == str(key)
    chunks = (tmp_path / "corpus" / "chunks.jsonl").read_text(encoding="utf-8")
    assert leaked(chunks) == []
    # The key: where --key says, readable by its owner only, and nothing of it in the folder.
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert sorted(p.name for p in (tmp_path / "corpus").iterdir()) == ["chunks.jsonl"]
    mapping = PseudonymMap.load(key)
    assert mapping.names == {
        "Samuel Ruiz-García": "Person A", "Ness Alderton": "Person B", "Priya Shah": "Person C",
    }  # fmt: skip
    kinds = {k.strip("[]").rsplit("-", 1)[0] for k in mapping.values}
    assert kinds == {"IBAN", "CARD", "ACCOUNT", "POSTCODE", "ADDRESS", "PHONE", "EMAIL", "URL"}
    text = "\n".join(
        m["text"] for line in chunks.splitlines() for m in json.loads(line)["messages"]
    )
    assert text.splitlines()[:3] == [
        "Morning! Person A here, Person A on the booking.",
        "Person A, Person A, Person A or Person A? Person B is fine either way.",
        "Person C's bag and Person C's coat are at Person A's. Person A knows, Person A too.",
    ]

    # Every prompt a model receives, over real HTTP on the loopback.
    with FakeLLMServer() as server:
        server.always(OPENAI_PATH, Reply(body=answer_from_prompt))
        extracted = chatledger(
            "extract", "--model", f"openai-compatible:{server.url}/v1:fake", "--chunks",
            "corpus/chunks.jsonl", "--out", "model.jsonl", "--cache-dir", "cache", cwd=tmp_path,
        )  # fmt: skip
        sent = json.dumps(server.bodies(OPENAI_PATH), ensure_ascii=False)
    assert extracted.code == 0, extracted.err
    assert leaked(sent) == [] and "Person A" in sent and "[IBAN-1]" in sent

    # Reveal: the model's bracketed placeholders and the rule extractor's bare ones.
    rules = chatledger("extract", "--model", "offline:rules", "--chunks", "corpus/chunks.jsonl",
                       "--out", "rules.jsonl", cwd=tmp_path)  # fmt: skip
    assert rules.code == 0, rules.err
    assert re.search(
        r"(?<!\[)\b(?:PHONE|EMAIL|URL)-\d\b(?!\])", (tmp_path / "rules.jsonl").read_text()
    )
    for name in ("model", "rules"):
        done = chatledger("corpus", "reveal", f"{name}.jsonl", "--map", str(key), "--out",
                          f"{name}-real.jsonl", cwd=tmp_path)  # fmt: skip
        assert done.code == 0, done.err
        real = (tmp_path / f"{name}-real.jsonl").read_text(encoding="utf-8")
        left = [k for k in mapping.values if k in real or k.strip("[]") in real]
        assert left == [] and "Person A" not in real and "Person B" not in real, left
    real = (tmp_path / "model-real.jsonl").read_text(encoding="utf-8")
    assert "GB33 BUKB 2020 1555 5555 55" in real and "Samuel Ruiz-García" in real


def test_reveal_restores_bare_and_bracketed_placeholders_and_nothing_else() -> None:
    reverse = {"[PHONE-1]": "+44 7700 900123", "[URL-1]": "https://x.org", "Person A": "Ana Ruiz"}
    assert reveal_value(
        ["PHONE-1", "[PHONE-1]", "call PHONE-1.", "URL-1/URL-1", "Person A's"], reverse
    ) == ["+44 7700 900123", "+44 7700 900123", "call +44 7700 900123.",
          "https://x.org/https://x.org", "Ana Ruiz's"]  # fmt: skip
    # Not a placeholder of this map, or part of a longer token: left as it is.
    untouched = ["PHONE-12", "XPHONE-1", "PHONE-1b", "PHONE-1-2", "[PHONE-2]", "Person AB",
                 "COVID-19", "phone-1"]  # fmt: skip
    assert reveal_value(untouched, reverse) == untouched


def test_the_default_key_is_outside_the_import_folder(tmp_path: Path) -> None:
    done = chatledger(
        "corpus", "import", "whatsapp", str(CHAT), "--out", "corpus", "--pseudonymise",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.err
    key = Path(json.loads(done.out)["pseudonyms_path"])
    assert not key.is_relative_to(tmp_path / "corpus") and key.parent.name == "keys"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    # Beside the chunks only when asked, and the summary warns about sharing the folder.
    beside = chatledger(
        "corpus", "import", "whatsapp", str(CHAT), "--out", "shared", "--pseudonymise",
        "--key-beside-chunks", cwd=tmp_path,
    )  # fmt: skip
    assert beside.code == 0, beside.err
    assert stat.S_IMODE((tmp_path / "shared" / "pseudonyms.json").stat().st_mode) == 0o600
    assert "do not share" in " ".join(beside.err.split()) + " ".join(beside.out.split())
