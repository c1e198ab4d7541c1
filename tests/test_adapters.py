"""AMI and CaSiNo adapters: chunks + partial human gold, checked against the files themselves.

Every expected count is computed here a second way (a plain XML / JSON count that does not use
the adapter) and also written down as the number observed on the shared data (AMI ES2002a-d,
CaSiNo train + valid), so a silent change in either the data or the adapter shows up.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import FIELDS_V3, ExtractionV3, InputError
from chatledger.corpus import (
    ImportSummary,
    import_corpus,
    read_ami,
    read_casino,
    read_chunks,
    read_extractions,
)
from conftest import SHARED_DATA, require_shared

AMI = SHARED_DATA / "ami" / "ami_public_manual_1.6.2"
CASINO = SHARED_DATA / "casino"
NITE = "{http://nite.sourceforge.net/}"
MEETINGS = ("ES2002a", "ES2002b", "ES2002c", "ES2002d")


# A missing data set fails the tests that read it in CI and skips them elsewhere, naming the
# path and CHATLEDGER_DATA (conftest.require_shared).
@pytest.fixture(scope="module")
def ami_data() -> Path:
    return require_shared(AMI, "the AMI sample")


@pytest.fixture(scope="module")
def casino_data() -> Path:
    return require_shared(CASINO, "CaSiNo")


needs_ami = pytest.mark.usefixtures("ami_data")
needs_casino = pytest.mark.usefixtures("casino_data")


def _xml(path: Path) -> ET.Element:
    return ET.fromstring(path.read_bytes())


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _check_gold_against_chunks(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every chunk loads as a Chunk; every gold line is valid v3 citing only its chunk's ids."""
    chunks = {c.chunk_id: c for c in read_chunks(out / "chunks.jsonl")}
    gold = _jsonl(out / "gold.jsonl")
    assert [g["chunk_id"] for g in gold] == list(chunks)
    empty = ExtractionV3().model_dump(mode="json")
    for line in gold:
        assert set(line) == {"chunk_id", "model", "covers", "extraction"}
        assert set(line["covers"]) <= set(FIELDS_V3)
        extraction = ExtractionV3.model_validate(line["extraction"])
        ids = {m.id for m in chunks[line["chunk_id"]].messages}
        dumped = extraction.model_dump(mode="json")
        for name, value in dumped.items():
            if name not in line["covers"]:
                assert value == empty[name], (line["chunk_id"], name)
        cited = list(extraction.evidence_message_ids)
        for name in ("decisions", "action_items", "open_questions", "claims", "qa_pairs"):
            cited += [m for item in getattr(extraction, name) for m in item.evidence]
        cited += [m for item in extraction.negotiation_patterns for m in item.evidence]
        assert set(cited) <= ids, line["chunk_id"]
    return chunks, gold


def _total(gold: list[dict[str, Any]], field: str) -> int:
    return sum(len(g["extraction"][field]) for g in gold)


# ----------------------------------------------------------------------------------- AMI


@pytest.fixture(scope="module")
def ami(ami_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[ImportSummary, Path]:
    out = tmp_path_factory.mktemp("ami")
    return import_corpus("ami", ami_data.parent, out), out


def _linked_abstract_ids() -> set[str]:
    linked = set()
    for meeting in MEETINGS:
        for link in _xml(AMI / "extractive" / f"{meeting}.summlink.xml"):
            for pointer in link:
                if pointer.get("role") == "abstractive":
                    linked.add(pointer.get("href", "").split("#id(")[1].rstrip(")"))
    return linked


def _abstract_sentences(section: str) -> list[tuple[str, str]]:
    found = []
    for meeting in MEETINGS:
        for part in _xml(AMI / "abstractive" / f"{meeting}.abssumm.xml"):
            if part.tag == section:
                found += [
                    (s.get(f"{NITE}id", ""), (s.text or "").strip()) for s in part.iter("sentence")
                ]
    return [(i, t) for i, t in found if t != "*NA*"]


@needs_ami
def test_ami_chunks_and_gold_are_valid(ami: tuple[ImportSummary, Path]) -> None:
    summary, out = ami
    chunks, gold = _check_gold_against_chunks(out)
    assert summary.chunks == len(chunks) == 45
    assert all(g["model"] == "human:ami" for g in gold)
    # Chunks are topic segments of at most 120 acts (the default max_messages).
    assert max(len(c.messages) for c in chunks.values()) <= 120
    assert chunks["ES2002a-03"].title == "ES2002a: drawing animals on the whiteboard"


@needs_ami
def test_ami_one_message_per_dialogue_act(ami: tuple[ImportSummary, Path]) -> None:
    summary, out = ami
    acts = sum(
        len(_xml(f).findall("dact"))
        for f in (AMI / "dialogueActs").glob("ES2002?.?.dialog-act.xml")
    )
    assert acts == 3874  # 475 + 1003 + 1034 + 1362
    # 163 acts hold only laughter / disfluency markers and no words: they are not messages.
    assert summary.messages == acts - summary.dropped["dialogue acts without words"] == 3711
    messages = [m for c in read_chunks(out / "chunks.jsonl") for m in c.messages]
    assert len({m.id for m in messages}) == 3711
    first = next(m for m in messages if m.id == "ES2002a.A.dialog-act.dharshi.1")
    # words0..words12 of channel A (the ID): "Hi", ",", "I&#39;m", "David", ... ".".
    assert first.text == "Hi, I'm David and I'm supposed to be an industrial designer."
    assert first.speaker == "Industrial Designer"
    # dateOnly 13-12-04 and starttime 77.44 s → 00:01:17 on 2004-12-13.
    assert first.timestamp == "2004-12-13T00:01:17Z"


@needs_ami
def test_ami_text_is_unescaped_and_joined(ami: tuple[ImportSummary, Path]) -> None:
    _, out = ami
    texts = [m.text for c in read_chunks(out / "chunks.jsonl") for m in c.messages]
    raw = "".join((AMI / "words" / f).read_text("iso-8859-1") for f in os.listdir(AMI / "words"))
    assert raw.count("&#39;") == 1145  # entities in the source ...
    assert not any("&#" in t or "&amp;" in t for t in texts)  # ... none in the messages
    assert sum(t.count("'") for t in texts) >= 1000
    assert not any(re.search(r" [.,?]", t) for t in texts)  # punctuation attaches left
    assert not any("_" in t for t in texts)  # "T_V_" reads "TV"
    assert any("TV" in t for t in texts)
    assert any("Play-Doh's yellow" in t for t in texts)  # the separate "'s" token attaches


@needs_ami
def test_ami_speakers_are_the_meeting_roles(ami: tuple[ImportSummary, Path]) -> None:
    _, out = ami
    titles = {
        "PM": "Project Manager",
        "ME": "Marketing Expert",
        "UI": "User Interface Designer",
        "ID": "Industrial Designer",
    }
    role_of = {
        (meeting.get("observation"), speaker.get("nxt_agent")): titles[speaker.get("role", "")]
        for meeting in _xml(AMI / "corpusResources" / "meetings.xml").iter("meeting")
        if meeting.get("observation") in MEETINGS
        for speaker in meeting.iter("speaker")
    }
    # ES2002d swaps channels C and D (a comment in meetings.xml says so): C is the ME there.
    assert role_of["ES2002a", "C"] == "User Interface Designer"
    assert role_of["ES2002d", "C"] == "Marketing Expert"
    for chunk in read_chunks(out / "chunks.jsonl"):
        meeting = chunk.conversation_id
        assert chunk.participants == [role_of[meeting, agent] for agent in "ABCD"]
        for message in chunk.messages:
            assert message.speaker == role_of[meeting, message.id.split(".")[1]]


@needs_ami
def test_ami_action_items_match_abstractive_actions(ami: tuple[ImportSummary, Path]) -> None:
    summary, out = ami
    _, gold = _check_gold_against_chunks(out)
    actions = _abstract_sentences("actions")
    linked = [s for s in actions if s[0] in _linked_abstract_ids()]
    assert len(actions) == len(linked) == 7  # 3 + 3 + 1 + 0 (ES2002d says "*NA*")
    assert _total(gold, "action_items") == summary.gold_items["action_items"] == 7
    items = [a for g in gold for a in g["extraction"]["action_items"]]
    owners = {a["text"]: a["owner"] for a in items}
    # The owner is the participant the sentence names, not the PM who hands out the work.
    assert owners["The industrial designer will work on the working design of the remote."] == (
        "Industrial Designer"
    )
    assert owners["The marketing expert will work on trend watching"] == "Marketing Expert"
    assert owners["Some team members will design a prototype of the remote"] is None
    assert all(a["status"] == "open" and a["evidence"] for a in items)


@needs_ami
def test_ami_decisions(ami: tuple[ImportSummary, Path]) -> None:
    summary, out = ami
    _, gold = _check_gold_against_chunks(out)
    decisions = _abstract_sentences("decisions")
    linked = [s for s in decisions if s[0] in _linked_abstract_ids()]
    assert (len(decisions), len(linked)) == (28, 26)  # ES2002c s.14, s.15 have no links
    spans = sum(
        len(_xml(f).findall("decision")) for f in (AMI / "decision" / "manual").glob("*.xml")
    )
    assert spans == 11  # 3 in ES2002a + 8 in ES2002d
    matched = summary.sources["decision spans matching an abstractive decision"]
    extra = summary.sources["decision spans (transcript wording)"]
    assert (matched, extra) == (10, 1) and matched + extra == spans
    assert _total(gold, "decisions") == len(linked) + extra == 27
    assert summary.dropped["abstractive decisions without linked acts"] == 2


@needs_ami
def test_ami_open_questions_and_qa_pairs(ami: tuple[ImportSummary, Path]) -> None:
    summary, out = ami
    _chunks, gold = _check_gold_against_chunks(out)
    problems = _abstract_sentences("problems")
    assert len(problems) == summary.sources["abstractive problems"] == 14  # 1 + 5 + 7 + 1
    unanswered = summary.sources["unanswered question acts"]
    assert unanswered == 61
    assert _total(gold, "open_questions") == len(problems) + unanswered == 75
    pairs = [p for f in (AMI / "dialogueActs").glob("*adjacency-pairs.xml") for p in _xml(f)]
    roles = [{p.get("role") for p in pair} for pair in pairs]
    incomplete = sum(1 for r in roles if not {"source", "target"} <= r)
    assert (len(pairs), incomplete) == (899, 54)
    assert summary.dropped["adjacency pairs missing an end"] == incomplete
    # Q/A pairs: one per question act (Elicit-Inform/-Suggestion/-Assessment) with a response.
    da_type = {}
    for f in (AMI / "dialogueActs").glob("ES2002?.?.dialog-act.xml"):
        for act in _xml(f):
            kind = [p.get("href", "") for p in act if p.get("role") == "da-aspect"]
            da_type[act.get(f"{NITE}id")] = kind[0].split("#")[-1] if kind else ""
    qa = [p for g in gold for p in g["extraction"]["qa_pairs"]]
    assert len(qa) == 183
    questions = ("id(ami_da_5)", "id(ami_da_8)", "id(ami_da_11)")
    assert all(da_type[p["evidence"][0]] in questions for p in qa)
    assert all(p["asked_by"] and p["answered_by"] and p["answer"] for p in qa)
    assert all(len(p["evidence"]) >= 2 for p in qa)


@needs_ami
def test_ami_claims_from_argument_structures(ami: tuple[ImportSummary, Path]) -> None:
    summary, out = ami
    _, gold = _check_gold_against_chunks(out)
    statements = 0
    for f in (AMI / "argumentation" / "ae").glob("*.xml"):
        for unit in _xml(f):
            kind = next(p.get("href", "") for p in unit if p.get("role") == "type")
            statements += kind.endswith(("id(ae_1)", "id(ae_2)"))  # STA, WST
    assert statements == 227  # 46 + 34 + 55 + 92
    claims = [c for g in gold for c in g["extraction"]["claims"]]
    short = summary.dropped["statements shorter than min_words"]
    assert (len(claims), short) == (131, 96) and len(claims) + short == statements
    assert Counter(c["polarity"] for c in claims) == {"pro": 62, "neutral": 60, "con": 9}
    assert all(c["speaker"] and c["subject"] for c in claims)
    con = next(c for c in claims if c["text"].startswith("I think that will be a problem"))
    assert (con["polarity"], con["speaker"]) == ("con", "Industrial Designer")


@needs_ami
def test_ami_entities_topics_and_extractive(ami: tuple[ImportSummary, Path]) -> None:
    summary, out = ami
    _, gold = _check_gold_against_chunks(out)
    types = Counter(
        next(p.get("href", "") for p in ne if p.get("role") == "type").split("#")[-1]
        for f in (AMI / "namedEntities").glob("*.xml")
        for ne in _xml(f)
    )
    assert sum(types.values()) == 561
    assert types["id(ne_34)"] == summary.dropped["named entities: bare numbers (CARDINAL)"] == 161
    repeated = summary.dropped["named entities repeating one already in the chunk"]
    assert _total(gold, "entities") + repeated + 161 == 561
    assert _total(gold, "entities") == 274
    entities = {(e["name"], e["type"]) for g in gold for e in g["extraction"]["entities"]}
    assert {("Craig", "person"), ("Japan", "location"), ("Play-Doh", "product")} <= entities
    assert ("rubber", "other") in entities  # MATERIALS
    first = next(g for g in gold if g["chunk_id"] == "ES2002b-03")
    assert first["extraction"]["topics"] == [
        "interface specialist presentation",
        "evaluation of existing products",
    ]
    assert _total(gold, "evidence_message_ids") == summary.gold_items["evidence_message_ids"]
    assert summary.gold_items["evidence_message_ids"] == 642
    assert summary.gold_items["summary"] == 19  # chunks that hold an abstract sentence's links


@needs_ami
def test_ami_smaller_chunks_keep_every_item(tmp_path: Path) -> None:
    corpus = read_ami(AMI, max_messages=50, meetings="ES2002a,ES2002d")
    assert all(len(c.messages) <= 50 for c in corpus.chunks)
    assert {c.conversation_id for c in corpus.chunks} == {"ES2002a", "ES2002d"}
    decisions = sum(len(g.extraction.decisions) for g in corpus.gold)
    assert decisions == 3 + 8 + 1  # abstractive ES2002a + ES2002d, + the transcript-worded span


def _release_of(meeting: str, root: Path) -> Path:
    """A copy of the sample release holding one meeting's files (and the shared resources)."""
    import shutil

    for path in AMI.rglob("*"):
        shared = path.parent.name in ("ontologies", "corpusResources")
        if path.is_file() and (shared or path.name.startswith(f"{meeting}.")):
            target = root / path.relative_to(AMI)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return root


def _covered(root: Path) -> set[str]:
    return {name for g in read_ami(root).gold for name in g.covers}


@needs_ami
def test_ami_covers_only_what_survived_the_import(tmp_path: Path) -> None:
    """A layer whose items were all dropped, or whose argument units are all "Other
    (unlabelled)", covers nothing (DESIGN §7 human gold; issue 27)."""
    root = _release_of("ES2002a", tmp_path / "release")
    before = _covered(root)
    assert {"action_items", "claims"} <= before
    actions = {i for i, _ in _abstract_sentences("actions") if i.startswith("ES2002a.")}
    assert actions  # ES2002a's abstract names action items
    # Cut every summary link of the action sentences: each is then dropped ("without linked
    # acts"), and a gold saying "no action items" would score every prediction as invented.
    links = root / "extractive" / "ES2002a.summlink.xml"
    tree = ET.parse(links)
    for link in list(tree.getroot()):
        targets = {p.get("href", "").split("#id(")[-1].rstrip(")") for p in link}
        if targets & actions:
            tree.getroot().remove(link)
    tree.write(links, encoding="ISO-8859-1")
    # Every argument unit typed "Other (unlabeled)" (ae_6): the annotators marked no argument.
    for path in (root / "argumentation" / "ae").glob("ES2002a.*.argumentstructs.xml"):
        path.write_text(
            re.sub(
                r"ae-types\.xml#id\(ae_\d\)", "ae-types.xml#id(ae_6)", path.read_text("latin-1")
            ),
            encoding="latin-1",
        )
    corpus = read_ami(root)
    after = {name for g in corpus.gold for name in g.covers}
    assert after == before - {"action_items", "claims"}
    assert corpus.dropped["meetings with every action_items item dropped (not covered)"] == 1
    assert corpus.dropped["meetings whose argument units are all unlabelled (no claims)"] == 1


def test_ami_minimal_release_reads_without_optional_layers(tmp_path: Path) -> None:
    """A release with only words and dialogue acts: chunks by size, nothing covered."""
    root = tmp_path / "release"
    (root / "words").mkdir(parents=True)
    (root / "dialogueActs").mkdir()
    words = "".join(
        f'<w nite:id="X1a.A.words{i}" starttime="{i}.0" endtime="{i}.5"{extra}>{text}</w>'
        for i, (text, extra) in enumerate(
            [
                ("I&amp;#39;m", ""),
                ("here", ""),
                (",", ' punc="true"'),
                ("T_V_", ""),
                ("&#39;s", ""),
                ("fine", ""),
                ("?", ' punc="true"'),
            ]
        )
    )
    nite = 'xmlns:nite="http://nite.sourceforge.net/"'
    (root / "words" / "X1a.A.words.xml").write_text(
        f'<?xml version="1.0" encoding="ISO-8859-1"?><nite:root {nite}>{words}</nite:root>',
        encoding="iso-8859-1",
    )
    acts = "".join(
        f'<dact nite:id="X1a.A.dialog-act.{n}"><nite:child '
        f'href="X1a.A.words.xml#id(X1a.A.words{a})..id(X1a.A.words{b})"/></dact>'
        for n, (a, b) in enumerate([(0, 2), (3, 6)])
    )
    (root / "dialogueActs" / "X1a.A.dialog-act.xml").write_text(
        f"<nite:root {nite}>{acts}</nite:root>", encoding="utf-8"
    )
    summary = import_corpus("ami", root, tmp_path / "out", max_messages=1)
    chunks = read_chunks(tmp_path / "out" / "chunks.jsonl")
    assert [m.text for c in chunks for m in c.messages] == ["I'm here,", "TV's fine?"]
    assert [m.speaker for c in chunks for m in c.messages] == ["X1a.A", "X1a.A"]
    assert chunks[0].messages[0].timestamp == "2000-01-01T00:00:00Z"  # no meetings.xml
    assert summary.chunks == 2 and summary.gold_items == {}
    assert all(g["covers"] == [] for g in _jsonl(tmp_path / "out" / "gold.jsonl"))


# -------------------------------------------------------------------------------- CaSiNo


@pytest.fixture(scope="module")
def casino(
    casino_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ImportSummary, Path]:
    out = tmp_path_factory.mktemp("casino")
    return import_corpus("casino", casino_data, out), out


def _casino_dialogues() -> list[dict[str, Any]]:
    files = sorted((CASINO / "data" / "split").glob("casino_*.json"))
    return [d for f in files for d in json.loads(f.read_text(encoding="utf-8"))]


@needs_casino
def test_casino_counts_match_the_json(casino: tuple[ImportSummary, Path]) -> None:
    summary, out = casino
    chunks, gold = _check_gold_against_chunks(out)
    dialogues = _casino_dialogues()
    annotated = [d for d in dialogues if d["annotations"]]
    assert (len(dialogues), len(annotated)) == (930, 354)  # train 900 / 347, valid 30 / 7
    assert summary.chunks == len(chunks) == 930
    assert summary.messages == sum(len(d["chat_logs"]) for d in dialogues) == 12903
    utterances = sum(len(d["annotations"]) for d in annotated)
    assert utterances == summary.sources["annotated utterances"] == 4123  # 4047 + 76
    labels = Counter(
        label.strip()
        for d in annotated
        for _, text in d["annotations"]
        for label in text.split(",")
    )
    assert labels["non-strategic"] == 1306
    moves = [m for g in gold for m in g["extraction"]["negotiation_patterns"]]
    assert len(moves) == sum(labels.values()) - labels["non-strategic"] == 3925
    by_pattern = Counter(m["pattern"] for m in moves)
    assert by_pattern["appeal_to_fairness"] == labels["vouch-fair"] == 394
    assert by_pattern["undervalue_partner"] == labels["uv-part"] == 122
    assert by_pattern["elicit_preference"] == labels["elicit-pref"] == 338
    assert by_pattern["small_talk"] == labels["small-talk"] == 941
    assert len(by_pattern) == 9


@needs_casino
def test_casino_gold_fields(casino: tuple[ImportSummary, Path]) -> None:
    _, out = casino
    chunks, gold = _check_gold_against_chunks(out)
    dialogues = {f"casino-{d['dialogue_id']}": d for d in _casino_dialogues()}
    reasons = sum(
        1
        for d in dialogues.values()
        for info in d["participant_info"].values()
        for reason in info["value2reason"].values()
        if reason.strip()
    )
    assert _total(gold, "claims") == reasons == 5580  # 930 dialogues x 2 participants x 3
    for line in gold:
        chunk = chunks[line["chunk_id"]]
        annotated = bool(dialogues[line["chunk_id"]]["annotations"])
        expected = ["claims", "negotiation_patterns"] if annotated else ["claims"]
        assert line["covers"] == expected
        message = {m.id: m for m in chunk.messages}
        for move in line["extraction"]["negotiation_patterns"]:
            (cited,) = move["evidence"]
            assert (move["actor"], move["text"]) == (message[cited].speaker, message[cited].text)
        for claim in line["extraction"]["claims"]:
            assert claim["polarity"] == "pro"
            assert claim["subject"] in {"Food", "Water", "Firewood"}
            assert claim["speaker"] in chunk.participants
    first = chunks["casino-938"]
    assert first.participants == ["mturk_agent_1", "mturk_agent_2"]
    assert first.messages[-2].text == (
        "[Submit-Deal] I get 3 Water, 1 Firewood, 0 Food; you get 0 Water, 2 Firewood, 3 Food"
    )


@needs_casino
def test_casino_options() -> None:
    annotated = read_casino(CASINO, annotated_only=True)
    assert len(annotated.chunks) == 354
    few = read_casino(CASINO / "data" / "split" / "casino_valid.json", limit=5)
    assert [c.chunk_id for c in few.chunks][:1] == [f"casino-{_first_valid_id()}"]
    assert len(few.chunks) == 5


def _first_valid_id() -> int:
    data = json.loads((CASINO / "data" / "split" / "casino_valid.json").read_text("utf-8"))
    return int(data[0]["dialogue_id"])


# -------------------------------------------------------------------------------- errors


def test_wrong_paths_and_formats_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(InputError, match=re.escape(str(missing))):
        import_corpus("ami", missing, tmp_path / "out")
    with pytest.raises(InputError, match="no words/ directory"):
        import_corpus("ami", tmp_path, tmp_path / "out")
    bad = tmp_path / "casino_bad.json"
    bad.write_text('{"not": "a list"}', encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(str(bad))):
        import_corpus("casino", bad, tmp_path / "out")
    broken = tmp_path / "casino_broken.json"
    broken.write_text("[{", encoding="utf-8")
    with pytest.raises(InputError, match="not a JSON file"):
        import_corpus("casino", broken, tmp_path / "out")
    with pytest.raises(InputError, match="unknown corpus kind"):
        import_corpus("chat", tmp_path, tmp_path / "out")
    with pytest.raises(InputError, match="bad option"):
        import_corpus("casino", bad, tmp_path / "out", meetings=["ES2002a"])


@needs_ami
def test_unknown_meeting_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="ES2099z"):
        read_ami(AMI, meetings=["ES2099z"])


@needs_casino
def test_corpus_import_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chatledger.cli._app import main

    out = tmp_path / "casino"
    argv = ["corpus", "import", "casino", str(CASINO), "--out", str(out), "--annotated-only"]
    assert main([*argv, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # 347 annotated dialogues in train + 7 in valid (SOURCE.txt of the shared data).
    assert summary["chunks"] == 354
    assert len((out / "chunks.jsonl").read_text().splitlines()) == 354
    gold = read_extractions(out / "gold.jsonl")
    assert not gold.problems and len(gold.records) == 354
    assert all(r.covers and "negotiation_patterns" in r.covers for r in gold.records.values())
    assert main(["corpus", "import", "ami", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert "nowhere" in capsys.readouterr().err
