"""Chat exports end to end, as a user runs them: ``corpus import`` → ``extract --model
offline:rules`` → ``run``, for every format's fixture; and pseudonymisation with a model on the
loopback fake server, which must never see a real name, phone number or e-mail address."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply, openai_body
from test_cli_errors import chatledger

EXPORTS = Path(__file__).resolve().parent / "data" / "exports"

# kind → (export path under tests/data/exports, extra import arguments)
ROUND_TRIPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "whatsapp": ("whatsapp/android_24h_dmy.txt", ()),
    "telegram": ("telegram/full/result.json", ()),
    "slack": ("slack/workspace", ()),
    "discord": ("discord", ()),
    "imessage": ("imessage/chat.db", ("--me", "Ness Alderton")),
    "messenger": ("messenger/dyi", ()),
    "signal": ("signal/signal-chats", ()),
    "csv": ("csv/family.csv", ()),
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Every format's fixture through ``corpus import KIND``, each into a folder of its own:
    the folder and each import's JSON summary."""
    root = tmp_path_factory.mktemp("imported")
    summaries: dict[str, Any] = {}
    for kind, (export, extra) in ROUND_TRIPS.items():
        result = chatledger(
            "corpus", "import", kind, str(EXPORTS / export), "--out", kind, "--format", "json",
            *extra, cwd=root,
        )  # fmt: skip
        assert result.code == 0, (kind, result.err)
        summaries[kind] = json.loads(result.out)
    return root, summaries


@pytest.mark.parametrize("kind", sorted(ROUND_TRIPS))
def test_import(kind: str, imported: tuple[Path, dict[str, Any]]) -> None:
    root, summaries = imported
    summary = summaries[kind]
    assert summary["kind"] == kind and summary["messages"] > 0 and summary["chunks"] > 0
    chunks = (root / kind / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(chunks) == summary["chunks"]


def test_every_format_s_chunks_extract_and_run_through_every_layer(
    imported: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """``extract --model offline:rules`` and ``run`` (every layer, the report) on the chunks
    of all eight formats as one corpus — each format's conversations named KIND-… so that
    their ids cannot meet. Each format ran its own extract and run before: the same commands
    on the same chunks, with eight times their start-up."""
    root, summaries = imported
    lines = []
    for kind in sorted(ROUND_TRIPS):
        for line in (root / kind / "chunks.jsonl").read_text(encoding="utf-8").splitlines():
            chunk = json.loads(line)
            chunk["chunk_id"] = f"{kind}-{chunk['chunk_id']}"
            chunk["conversation_id"] = f"{kind}-{chunk['conversation_id']}"
            lines.append(json.dumps(chunk, ensure_ascii=False) + "\n")
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "chunks.jsonl").write_text("".join(lines), encoding="utf-8")
    total = sum(summary["chunks"] for summary in summaries.values())
    assert len(lines) == total
    extracted = chatledger(
        "extract", "--model", "offline:rules", "--chunks", "corpus/chunks.jsonl",
        "--out", "corpus/rules.jsonl", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert extracted.code == 0, extracted.err
    assert json.loads(extracted.out)["written"] == total
    (tmp_path / "run.yaml").write_text(
        "chunks: corpus/chunks.jsonl\n"
        "reference: {file: corpus/rules.jsonl, name: rules}\n"
        "challengers: [{model: offline:rules, name: again}]\n"
        "layers: [extraction, judge, downstream]\njudges: [grounding]\n"
        "stats: {bootstrap_resamples: 200}\n",
        encoding="utf-8",
    )
    ran = chatledger("run", "run.yaml", "--out", "run", "--format", "json", cwd=tmp_path)
    assert ran.code == 0, ran.err
    board = json.loads(ran.out)["leaderboard"]
    assert [m["name"] for m in board] == ["again"]
    # The same extractor on the same chunks: downstream agrees completely, in every format's
    # conversations (an agreement below 1 anywhere would pull the whole below 1).
    assert board[0]["layers"]["downstream"] == pytest.approx(1.0)
    record = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert record["chunks"] == total
    assert (tmp_path / "run" / "report.html").exists()


def test_auto_detects_the_format(tmp_path: Path) -> None:
    for kind, (export, extra) in ROUND_TRIPS.items():
        result = chatledger(
            "corpus", "import", str(EXPORTS / export), "--out", kind, "--format", "json", *extra,
            cwd=tmp_path,
        )  # fmt: skip
        assert result.code == 0, result.err
        assert json.loads(result.out)["kind"] == kind


# --- pseudonymisation: nothing real reaches the model ------------------------------------------

# kind → (export, import arguments, secrets that must never leave the machine, what reveal
# restores). WhatsApp shows an unsaved contact as a phone number: the name she signs with is
# known only once an alias says so (names come from the export, never from guessing).
PRIVATE: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], str]] = {
    "csv": (
        "csv/family.csv",
        (),
        ("Ness", "Alderton", "Sam", "Ruiz", "Priya", "Shah", "7700", "900123", "sam.ruiz",
         "example.com", "cabins.example.org"),
        "Ness Alderton asked Sam Ruiz; call +44 7700 900123 or mail sam.ruiz@example.com.",
    ),
    "whatsapp": (
        "whatsapp/private_details.txt",
        ("--alias", "+44 7700 900456=Priya", "--date-order", "dmy"),
        ("Ness", "Alderton", "Sam", "Ruiz", "Priya", "7700", "900123", "900456", "sam.ruiz",
         "example.com", "cabins.example.org"),
        "Ness Alderton asked Sam Ruiz; call 07700 900123 or mail sam.ruiz@example.com.",
    ),
}  # fmt: skip


def answer_with_names(body: dict[str, Any]) -> dict[str, Any]:
    """A model that reports the people and numbers it was shown, in its extraction."""
    prompt = "\n".join(str(m.get("content")) for m in body["messages"])
    people = sorted({w for w in prompt.split() if w.startswith("Person")} | {"Person A"})
    extraction = {
        "summary": "Person A asked Person B; call [PHONE-1] or mail [EMAIL-1].",
        "action_items": [{"text": "Bring the tent", "owner": "Person A", "status": "open"}],
        "entities": [{"name": "Person B", "type": "person"}],
        "topics": people[:3],
    }
    return openai_body(json.dumps(extraction), model=body["model"])


@pytest.mark.parametrize("kind", sorted(PRIVATE))
def test_with_pseudonymise_no_real_name_number_or_address_reaches_the_model(
    kind: str, tmp_path: Path
) -> None:
    export, extra, secrets, restored = PRIVATE[kind]
    imported = chatledger(
        "corpus", "import", kind, str(EXPORTS / export), "--out", "corpus", "--pseudonymise",
        "--phone-region", "GB", "--key", "corpus.key.json", *extra, cwd=tmp_path,
    )  # fmt: skip
    assert imported.code == 0, imported.err
    chunks_text = (tmp_path / "corpus" / "chunks.jsonl").read_text(encoding="utf-8")
    with FakeLLMServer() as server:
        server.always(OPENAI_PATH, Reply(body=answer_with_names))
        extracted = chatledger(
            "extract", "--model", f"openai-compatible:{server.url}/v1:fake", "--chunks",
            "corpus/chunks.jsonl", "--out", "out.jsonl", "--cache-dir", "cache", cwd=tmp_path,
        )  # fmt: skip
        sent = json.dumps(server.bodies(OPENAI_PATH))
        calls = server.calls()
    assert extracted.code == 0, extracted.err
    assert calls == chunks_text.count("\n") > 0
    for secret in secrets:
        assert secret not in sent, secret
        assert secret not in chunks_text, secret
    assert "Person A" in sent and "[PHONE-1]" in sent and "[EMAIL-1]" in sent
    # The map is where --key put it, outside the folder, and reveal restores the originals.
    assert (tmp_path / "corpus.key.json").exists()
    assert not (tmp_path / "corpus" / "pseudonyms.json").exists()
    revealed = chatledger(
        "corpus", "reveal", "out.jsonl", "--map", "corpus.key.json", "--out", "real.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert revealed.code == 0, revealed.err
    line = json.loads((tmp_path / "real.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert line["extraction"]["summary"] == restored
    assert line["extraction"]["action_items"][0]["owner"] == "Ness Alderton"
    assert line["extraction"]["entities"][0]["name"] == "Sam Ruiz"
