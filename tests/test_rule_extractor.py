"""The offline rule-based extractor ("offline:rules"): validity on every chunk we have, and
hand-checked behaviour of each rule on small chunks written for this file."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import (
    ActionItem,
    Chunk,
    Decision,
    Entity,
    ExtractionV3,
    InputError,
    Link,
    OpenQuestion,
    QAPair,
    RecordStatus,
)
from chatledger.corpus import read_chunks, read_extractions
from chatledger.extractors import EXTRACTORS, RuleBasedExtractor, get_extractor
from chatledger.scoring import score_chunk
from conftest import SHARED_EXAMPLES, require_shared

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_EXAMPLE = ROOT / "src" / "chatledger" / "data" / "examples"
SHARED_EXAMPLE = SHARED_EXAMPLES / "chunk.json"
CORPUS_PARTS = sorted(
    (ROOT / "src" / "chatledger" / "data" / "corpus" / "parts").glob("*_chunks.jsonl")
)

EXTRACTOR = RuleBasedExtractor()
ANA, BEN, CAL = "Ana Silva", "Ben Okafor", "Cal Reyes"


def chat(
    *lines: tuple[str, str], participants: tuple[str, ...] = (ANA, BEN), chunk_id: str = "t-1"
) -> Chunk:
    """A chunk whose messages m1, m2, ... are ``(speaker, text)`` pairs."""
    messages = [{"id": f"m{i}", "speaker": s, "text": t} for i, (s, t) in enumerate(lines, 1)]
    return Chunk.model_validate(
        {"chunk_id": chunk_id, "participants": list(participants), "messages": messages}
    )


# Written for this file: everyday chats that exercise every rule at once.
SYNTHETIC = [
    chat(
        (ANA, "Morning! Did the venue confirm the booking for Saturday?"),
        (
            BEN,
            "Yes, they emailed at 9. Deposit is $200, here's the invoice https://example.org/inv/7.",
        ),
        (ANA, "I think the deposit is too high. How about $150?"),
        (BEN, "That's my final offer, take it or leave it."),
        (ANA, "Fine, I'll pay the $200 today. Careful, the payment portal is flaky."),
        (BEN, "Thanks! Assuming the caterer is free, we're all set. Bye for now."),
        chunk_id="syn-venue",
    ),
    chat(
        (ANA, "Hi both, quick planning chat for the offsite next week."),
        (BEN, "Cal, can you book the train tickets?"),
        (CAL, "Sure, I'll do it tonight."),
        (ANA, "Let's go with the 8am train then."),
        (CAL, "Agreed. Booked the tickets, done."),
        (BEN, "Great work, thank you!"),
        participants=(ANA, BEN, CAL),
        chunk_id="syn-offsite",
    ),
    chat(
        (ANA, "This is ridiculous, the delivery is late again and I'm furious."),
        (BEN, "I hate this, it's awful and stupid."),
        (ANA, "Obviously the courier lost it?"),
        chunk_id="syn-angry",
    ),
    chat((ANA, "   "), (BEN, "ok"), chunk_id="syn-blank"),
    chat(chunk_id="syn-empty"),
]


def _example_chunks() -> list[Any]:
    """The bundled example chunks and the shared one; a missing shared example stays a case
    of its own (``None``) that fails in CI and is skipped elsewhere (conftest.require_shared)."""
    chunks: list[Any] = list(read_chunks(BUNDLED_EXAMPLE / "chunks.jsonl"))
    if SHARED_EXAMPLE.exists():
        chunks.append(Chunk.model_validate_json(SHARED_EXAMPLE.read_text(encoding="utf-8")))
    else:
        chunks.append(pytest.param(None, id="shared-example"))
    return chunks


def _corpus_chunks() -> Iterator[Chunk]:
    for path in CORPUS_PARTS:
        yield from read_chunks(path)


def _cited_ids(e: ExtractionV3) -> set[str]:
    groups = (
        e.decisions,
        e.action_items,
        e.open_questions,
        e.claims,
        e.warnings,
        e.qa_pairs,
        e.emotional_tone,
        e.implicit_assumptions,
        e.negotiation_patterns,
    )
    ids = {i for group in groups for item in group for i in item.evidence}
    ids.update(e.evidence_message_ids)
    if e.emotional_arc is not None:
        ids.update(t.message_id for t in e.emotional_arc.turning_points)
    for phase in e.conversation_phases:
        ids.update((phase.start_message_id, phase.end_message_id))
    return ids


def check_extraction(chunk: Chunk) -> ExtractionV3:
    """Everything that must hold for any chunk: valid v3, real ids, full phase cover, stable."""
    extraction = EXTRACTOR.extract(chunk)
    round_trip = ExtractionV3.model_validate(json.loads(extraction.model_dump_json()))
    assert round_trip == extraction
    positions = {m.id: i for i, m in enumerate(chunk.messages)}
    assert _cited_ids(extraction) <= set(positions)
    spans = [
        (positions[p.start_message_id], positions[p.end_message_id])
        for p in extraction.conversation_phases
    ]
    if chunk.messages:
        # Phases tile the messages: first starts at 0, each starts right after the previous
        # one ends, the last ends at the last message.
        assert spans[0][0] == 0
        assert spans[-1][1] == len(chunk.messages) - 1
        assert all(start <= end for start, end in spans)
        assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(spans))
        assert extraction.summary.strip()
        assert extraction.emotional_arc is not None
    else:
        assert spans == []
    assert RuleBasedExtractor().extract(chunk) == extraction  # deterministic, no hidden state
    return extraction


@pytest.mark.parametrize("chunk", _example_chunks(), ids=lambda c: c.chunk_id)
def test_example_chunk_is_valid(chunk: Chunk | None) -> None:
    if chunk is None:
        path = require_shared(SHARED_EXAMPLE, "the shared example chunk")
        chunk = Chunk.model_validate_json(path.read_text(encoding="utf-8"))
    check_extraction(chunk)


@pytest.mark.parametrize("chunk", SYNTHETIC, ids=lambda c: c.chunk_id)
def test_synthetic_chunks_are_valid(chunk: Chunk) -> None:
    check_extraction(chunk)


def test_bundled_corpus_chunks_are_valid() -> None:
    # The package ships both parts (36 chunks); a missing part is a packaging fault, not a skip.
    assert [p.name for p in CORPUS_PARTS] == ["part1_chunks.jsonl", "part2_chunks.jsonl"]
    chunks = list(_corpus_chunks())
    assert len(chunks) == 36
    for chunk in chunks:
        check_extraction(chunk)


def test_question_without_answer_is_an_open_question() -> None:
    e = EXTRACTOR.extract(chat((ANA, "Who is bringing the cables?")))
    assert e.open_questions == [
        OpenQuestion(
            text="Who is bringing the cables?", asked_by=ANA, evidence=["m1"], confidence=0.7
        )
    ]
    assert e.qa_pairs == []
    assert e.evidence_message_ids == ["m1"]


def test_yes_no_reply_makes_a_qa_pair() -> None:
    e = EXTRACTOR.extract(chat((ANA, "Is the studio booked for Friday?"), (BEN, "Yes, till nine.")))
    assert e.qa_pairs == [
        QAPair(
            question="Is the studio booked for Friday?",
            answer="Yes",
            asked_by=ANA,
            answered_by=BEN,
            evidence=["m1", "m2"],
        )
    ]
    assert e.open_questions == []


def test_greeting_question_is_not_an_open_question() -> None:
    e = EXTRACTOR.extract(chat((ANA, "Hi, how are you?")))
    assert e.open_questions == [] and e.qa_pairs == []


def test_commitment_is_an_action_item_owned_by_the_speaker_with_due_date() -> None:
    e = EXTRACTOR.extract(chat((BEN, "I'll send the invoice tomorrow.")))
    assert e.action_items == [
        ActionItem(
            text="Send the invoice tomorrow",
            owner=BEN,
            due="tomorrow",
            status="open",
            evidence=["m1"],
            confidence=0.6,
        )
    ]


def test_accepted_request_is_owned_by_whoever_accepts() -> None:
    e = EXTRACTOR.extract(chat((ANA, "Can you print the setlist?"), (BEN, "Will do.")))
    assert e.action_items == [
        ActionItem(text="Print the setlist", owner=BEN, evidence=["m1", "m2"], confidence=0.7)
    ]
    assert e.open_questions == []  # the request is not also a question


def test_refused_request_stays_with_the_named_addressee() -> None:
    e = EXTRACTOR.extract(
        chat(
            (ANA, "Cal, can you book the room?"),
            (BEN, "I can't help today."),
            participants=(ANA, BEN, CAL),
        )
    )
    # "I can't" is no acceptance, so the owner is the participant named in the request.
    assert e.action_items == [
        ActionItem(text="Book the room", owner=CAL, evidence=["m1"], confidence=0.5)
    ]


def test_owner_reporting_done_closes_the_item() -> None:
    e = EXTRACTOR.extract(
        chat((ANA, "I'll book the table for Saturday."), (BEN, "Great."), (ANA, "Booked, done."))
    )
    [item] = e.action_items
    assert (item.status, item.due, item.evidence) == ("done", "Saturday", ["m1", "m3"])


def test_url_becomes_a_link_with_its_sentence_as_context() -> None:
    e = EXTRACTOR.extract(chat((ANA, "The agenda is here: https://example.org/agenda.")))
    assert e.links == [Link(url="https://example.org/agenda", context="The agenda is here")]


def test_take_it_or_leave_it_is_an_ultimatum_and_a_priced_offer_anchors() -> None:
    e = EXTRACTOR.extract(
        chat(
            (ANA, "I can do $450 for the bike."),
            (BEN, "That's my final price, take it or leave it."),
        )
    )
    assert {(m.pattern, m.actor) for m in e.negotiation_patterns} == {
        ("anchoring", ANA),
        ("ultimatum", BEN),
    }
    assert [p.phase for p in e.conversation_phases] == ["negotiation"]


def test_soft_moves_need_a_negotiation() -> None:
    # "I need" is a self_need move only when something is being bargained over.
    calm = EXTRACTOR.extract(chat((ANA, "I need a coffee before the meeting.")))
    assert calm.negotiation_patterns == []
    bargaining = EXTRACTOR.extract(
        chat((ANA, "I need the water, can I have 2 of them?"), (BEN, "Deal."))
    )
    assert ("self_need", ANA) in {(m.pattern, m.actor) for m in bargaining.negotiation_patterns}


def test_lets_go_with_friday_is_a_decision() -> None:
    accepted = EXTRACTOR.extract(chat((ANA, "Let's go with Friday."), (BEN, "Agreed.")))
    assert accepted.decisions == [
        Decision(text="Go with Friday", made_by=[ANA, BEN], evidence=["m1", "m2"], confidence=0.7)
    ]
    alone = EXTRACTOR.extract(chat((ANA, "Let's go with Friday.")))
    assert alone.decisions == [
        Decision(text="Go with Friday", made_by=[ANA], evidence=["m1"], confidence=0.5)
    ]


def test_lets_do_it_decides_the_previous_proposal() -> None:
    e = EXTRACTOR.extract(
        chat(
            (BEN, "Maybe 2 foods to you and all the wood for me?"),
            (ANA, "Sounds fair, let's do it."),
        )
    )
    assert e.decisions == [
        Decision(
            text="Maybe 2 foods to you and all the wood for me",
            made_by=[BEN, ANA],
            evidence=["m1", "m2"],
            confidence=0.5,
        )
    ]


def test_opinion_becomes_a_claim_with_polarity_and_subject() -> None:
    e = EXTRACTOR.extract(chat((ANA, "I think the new venue is awful.")))
    [claim] = e.claims
    # VADER compound of the sentence is -0.4588 <= -0.05 → con; "new" is skipped after "the".
    assert (claim.text, claim.subject, claim.polarity, claim.speaker) == (
        "The new venue is awful",
        "venue",
        "con",
        ANA,
    )
    assert claim.confidence == 0.6


def test_warnings_and_their_severity() -> None:
    e = EXTRACTOR.extract(
        chat(
            (ANA, "Be careful, the road is icy."),
            (BEN, "Pay today or else we cancel."),
            (ANA, "Don't forget the keys."),
        )
    )
    assert [(w.text, w.severity) for w in e.warnings] == [
        ("Be careful, the road is icy", "medium"),
        ("Pay today or else we cancel", "high"),
        ("Don't forget the keys", "low"),
    ]


def test_assumption_cue_and_temporal_since() -> None:
    e = EXTRACTOR.extract(
        chat(
            (ANA, "Assuming the train is on time, we arrive at noon."),
            (BEN, "I have been here since Monday morning."),
        )
    )
    assert [(a.text, a.held_by) for a in e.implicit_assumptions] == [("The train is on time", ANA)]


def test_entities_typed_by_cue() -> None:
    e = EXTRACTOR.extract(
        chat((ANA, "Ask Theo about the Jazz Festival in Leeds on Saturday, tickets are £40."))
    )
    assert e.entities == [
        Entity(name=ANA, type="person"),
        Entity(name=BEN, type="person"),
        Entity(name="Saturday", type="date"),
        Entity(name="£40", type="other"),
        Entity(name="Theo", type="person"),
        Entity(name="Jazz Festival", type="event"),
        Entity(name="Leeds", type="location"),
    ]


def test_tone_arc_and_phases_of_a_row() -> None:
    e = EXTRACTOR.extract(
        chat(
            (ANA, "Hi Ben, how are you?"),
            (BEN, "Hello! All good."),
            (ANA, "This is ridiculous, the delivery is late again and I'm furious."),
            (BEN, "I hate this, it's awful and stupid."),
            (ANA, "Bye for now."),
        )
    )
    # Anger words: Ana "ridiculous", "furious" (m3); Ben "hate", "stupid" (m4; "awful" is
    # disgust). Intensity = |compound| of that message: 0.7351 → 0.74, 0.8779 → 0.88.
    assert [(t.speaker, t.emotion, t.intensity, t.evidence) for t in e.emotional_tone] == [
        (ANA, "anger", 0.74, ["m3"]),
        (BEN, "anger", 0.88, ["m4"]),
    ]
    arc = e.emotional_arc
    assert arc is not None
    # Thirds of 5 messages are 2 long: m1-m2 hold no emotion word → neutral; m4-m5 → anger.
    assert (arc.opening_mood, arc.closing_mood) == ("neutral", "anger")
    # Compounds y = [0, .4926, -.7351, -.8779, 0] at x = [0, .25, .5, .75, 1]:
    # slope = Sxy/Sxx = -0.342625/0.625 = -0.548, intercept = -0.22408 + 0.274 = 0.050;
    # residuals -0.050, 0.580, -0.511, -0.517, 0.498 → RMS sqrt(1.1148/5) = 0.472 >= 0.4
    # with n = 5 >= 4 → volatile.
    assert arc.trajectory == "volatile"
    # Jumps >= 0.5: m2→m3 |−.7351−.4926| = 1.228 and m4→m5 0.878 (m1→m2 is 0.49 < 0.5).
    assert [t.message_id for t in arc.turning_points] == ["m3", "m5"]
    # Labels: greeting in the first max(2, 5 // 5) = 2 messages, two negative messages in a
    # row, "bye" in the last two.
    assert [(p.phase, p.start_message_id, p.end_message_id) for p in e.conversation_phases] == [
        ("opening", "m1", "m2"),
        ("conflict", "m3", "m4"),
        ("closing", "m5", "m5"),
    ]


def test_blank_and_empty_chunks() -> None:
    blank = check_extraction(chat((ANA, "   "), (BEN, "ok")))
    assert blank.summary == "ok"  # the longest message (both are tiny); never empty
    # No messages: nothing but the listed participants, who are still entities.
    empty = EXTRACTOR.extract(chat())
    assert empty.model_dump(exclude_defaults=True) == {
        "entities": [{"name": ANA, "type": "person"}, {"name": BEN, "type": "person"}]
    }


def test_layer1_scores_on_the_example_worked_by_hand() -> None:
    [chunk] = read_chunks(BUNDLED_EXAMPLE / "chunks.jsonl")
    gold = read_extractions(BUNDLED_EXAMPLE / "reference.jsonl").get(chunk.chunk_id).extraction
    assert gold is not None
    scores = score_chunk(gold, EXTRACTOR.extract(chunk), chunk)
    # decisions: "Drop the ballad for Saturday and try it as an encore" matches the gold text
    # (token_set ≥ 60) and cites the same {m3, m4}: 0.75·1 + 0.25·1 = 1.0.
    assert scores["decisions"].score == pytest.approx(1.0)
    # action items: "Print the new setlist" by Jordan Pike, as in the gold: 0.70·1 + 0.30·1.
    assert scores["action_items"].score == pytest.approx(1.0)
    # open questions: "Who's bringing the spare cables, you or Theo?" vs "Who is bringing the
    # spare cables?": shared sorted tokens "bringing cables spare the who" (29 chars) against
    # it + " is" (32) → 2·29/61 = 95 ≥ 60 → 1 of 1 matched → F1 1.0.
    assert scores["open_questions"].score == pytest.approx(1.0)
    # Q/A: same question, answer "Yes" = "Yes": 0.60·1 + 0.40·1.
    assert scores["qa_pairs"].score == pytest.approx(1.0)
    assert scores["links"].score == pytest.approx(1.0)
    # entities: 4 exact (two participants, Saturday, Theo) + "Fifth" ~ "studio on Fifth"
    # (location, fuzzy only, credit 0.5) → credit 4.5 over 5 predicted and 5 gold → F1 0.9.
    assert scores["entities"].score == pytest.approx(0.9)
    # evidence ids: predicted m1..m5, gold {m2, m3, m4}: P = 3/5, R = 1 → F1 = 1.2/1.6 = 0.75.
    assert scores["evidence_message_ids"].score == pytest.approx(0.75)
    # tone: predicted {(Jordan, trust), (Mei, trust)}, gold {(Mei, anticipation),
    # (Jordan, trust)} → 1 of 2 each way → F1 0.5.
    assert scores["emotional_tone"].score == pytest.approx(0.5)
    # arc: opening neutral, closing trust, trajectory improving all agree; turning points
    # predicted {m2, m3} vs gold {m3}: 1 match, P = 1/2, R = 1 → F1 2/3 → (3 + 2/3)/4 = 11/12.
    assert scores["emotional_arc"].score == pytest.approx(11 / 12)


def test_registry_rebuilds_the_extractor_by_name() -> None:
    assert "offline:rules" in EXTRACTORS
    extractor = get_extractor("offline:rules")
    assert isinstance(extractor, RuleBasedExtractor)
    assert extractor.name == "offline:rules"


def test_extract_file_writes_readable_extraction_lines(tmp_path: Path) -> None:
    chunks_path = tmp_path / "chunks.jsonl"
    chunks_path.write_text(
        "\n".join(c.model_dump_json() for c in SYNTHETIC[:3]) + "\n", encoding="utf-8"
    )
    out = tmp_path / "out" / "offline.jsonl"
    assert RuleBasedExtractor().extract_file(chunks_path, out) == 3
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line["chunk_id"] for line in lines] == ["syn-venue", "syn-offsite", "syn-angry"]
    for line in lines:
        assert line["model"] == "offline:rules"
        usage = line["usage"]
        assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (0, 0, 0.0)
        assert usage["latency_s"] >= 0.0
    parsed = read_extractions(out)
    assert parsed.problems == []
    assert all(r.status is RecordStatus.OK for r in parsed.records.values())
    assert parsed.records["syn-venue"].extraction == EXTRACTOR.extract(SYNTHETIC[0])


def test_extract_file_names_the_bad_line(tmp_path: Path) -> None:
    chunks_path = tmp_path / "chunks.jsonl"
    chunks_path.write_text(
        SYNTHETIC[0].model_dump_json() + '\n{"chunk_id": ""}\n', encoding="utf-8"
    )
    with pytest.raises(InputError) as info:
        RuleBasedExtractor().extract_file(chunks_path, tmp_path / "out.jsonl")
    assert info.value.line == 2
    with pytest.raises(InputError, match="file not found"):
        RuleBasedExtractor().extract_file(tmp_path / "missing.jsonl", tmp_path / "out.jsonl")


def test_a_decision_with_nothing_left_after_its_openers_is_not_made() -> None:
    """CaSiNo dialogue 128 (CC BY 4.0, the shared data's full corpus) crashed the extractor:
    "I like that deal." decided an offer whose text was empty once its openers were stripped,
    and ``Decision(text="")`` failed validation. Now no decision is made from it."""
    a, b = "mturk_agent_1", "mturk_agent_2"
    chunk = chat(
        (b, "Hi! I was hoping to get 2 packages of firewood, 2 packages of water and 1 package "
            "of food and you can have the rest."),
        (a, "Hello. Is there a reason you prefer more water and firewood to food?"),
        (b, "I get cold very easily and also get thirsty a lot. What are your preferences?"),
        (a, "The 2 packages of food and 2 waters. I get thristy a lot too."),
        (b, "Ok, well if I can have 3 packages of firewood, 1 water and 1 food, you can have 2 "
            "packages of food and 2 waters. Does that sound good?"),
        (a, "I like that deal. "),
        (b, "Sounds good.🙂"),
        (a, "I think this would be a good even split of resources and would allow each of us to "
            "have extra supplies. 🙂"),
        (b, "I agree with you."),
        (a, "All that is left is to submit our deal. Nice working with you!"),
        (b, "[Submit-Deal] I get 3 Firewood, 1 Food, 1 Water; you get 0 Firewood, 2 Food, 2 Water"),
        (a, "[Accept-Deal]"),
        participants=(a, b),
    )  # fmt: skip
    extraction = check_extraction(chunk)
    assert all(d.text for d in extraction.decisions)
