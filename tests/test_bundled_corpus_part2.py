"""The bundled corpus, part 2: conversations used-car, trip-planning and group-chat.

Checks that the hand-written chunks and their gold extractions load cleanly, that every message
reference points into its own chunk, that the gold scores 1.0 against itself on every layer-1
field except ``confidence`` (DESIGN.md §1), and that the downstream consumers of §5 have
something to find (drift, loops, escalation, several days per conversation).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from rapidfuzz import fuzz, utils

import chatledger
from chatledger.core import Chunk, ExtractionV3, RecordStatus
from chatledger.corpus import ExtractionFile, read_chunks, read_extractions
from chatledger.scoring import ScoringConfig, score_records

PARTS = Path(chatledger.__file__).parent / "data" / "corpus" / "parts"
CHUNKS_PATH = PARTS / "part2_chunks.jsonl"
GOLD_PATH = PARTS / "part2_gold.jsonl"
CONVERSATIONS = {"used-car": "car", "trip-planning": "trip", "group-chat": "grp"}
ID_KEYS = {"evidence", "evidence_message_ids", "message_id", "start_message_id", "end_message_id"}


@pytest.fixture(scope="module")
def chunks() -> list[Chunk]:
    return read_chunks(CHUNKS_PATH)


@pytest.fixture(scope="module")
def gold() -> ExtractionFile:
    return read_extractions(GOLD_PATH)


def _extraction(gold: ExtractionFile, chunk_id: str) -> ExtractionV3:
    extraction = gold.records[chunk_id].extraction
    assert extraction is not None
    return extraction


def _by_conversation(chunks: list[Chunk], conversation: str) -> list[Chunk]:
    return [c for c in chunks if c.conversation_id == conversation]


def _similar(a: str, b: str) -> bool:
    """DESIGN.md §3 text match: token_set_ratio with default_process, threshold 0.60."""
    return fuzz.token_set_ratio(a, b, processor=utils.default_process) >= 60


def _referenced_ids(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ID_KEYS:
                found.extend([value] if isinstance(value, str) else value)
            else:
                found.extend(_referenced_ids(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_referenced_ids(value))
    return found


def test_chunks_load_with_the_documented_shape(chunks: list[Chunk]) -> None:
    # 3 conversations x 6 chunks = 18; message counts per chunk hand-counted when written:
    # used-car 17+17+18+16+18+18 = 104, trip 17+14+17+17+19+18 = 102, group 17+15+15+17+16+18 = 98
    assert len(chunks) == 18
    assert Counter(c.conversation_id for c in chunks) == {conv: 6 for conv in CONVERSATIONS}
    sizes = {
        conv: sum(len(c.messages) for c in _by_conversation(chunks, conv)) for conv in CONVERSATIONS
    }
    assert sizes == {"used-car": 104, "trip-planning": 102, "group-chat": 98}
    all_ids = [m.id for c in chunks for m in c.messages]
    assert len(all_ids) == 304 == len(set(all_ids))  # unique across the whole corpus
    for conv, prefix in CONVERSATIONS.items():
        for n, chunk in enumerate(_by_conversation(chunks, conv), start=1):
            assert chunk.chunk_id == f"{conv}-{n:02d}"
            assert 8 <= len(chunk.messages) <= 30
            assert all(re.fullmatch(rf"{prefix}-c{n}-m\d\d", m.id) for m in chunk.messages)
            assert {m.speaker for m in chunk.messages} <= set(chunk.participants)
            assert all(" " in p for p in chunk.participants)  # full names


def test_timestamps_are_iso_utc_and_chunk_order_is_time_order(chunks: list[Chunk]) -> None:
    for conv in CONVERSATIONS:
        times: list[datetime] = []
        for chunk in _by_conversation(chunks, conv):
            for message in chunk.messages:
                assert message.timestamp is not None and message.timestamp.endswith("Z")
                times.append(datetime.fromisoformat(message.timestamp))
        assert times == sorted(times)
        # spread over several days: 7 distinct days each (6 chunks, the last spans two days)
        assert len({t.date() for t in times}) == 7


def test_gold_loads_with_no_problems(chunks: list[Chunk], gold: ExtractionFile) -> None:
    assert gold.problems == []
    assert gold.model == "gold:hand-written"
    assert list(gold.records) == [c.chunk_id for c in chunks]
    assert all(r.status is RecordStatus.OK for r in gold.records.values())


def test_every_message_reference_exists_in_its_chunk(
    chunks: list[Chunk], gold: ExtractionFile
) -> None:
    for chunk in chunks:
        extraction = _extraction(gold, chunk.chunk_id)
        ids = {m.id for m in chunk.messages}
        referenced = _referenced_ids(extraction.model_dump())
        assert referenced, chunk.chunk_id
        assert set(referenced) <= ids, (chunk.chunk_id, set(referenced) - ids)


def test_phases_cover_the_chunk_in_message_order(chunks: list[Chunk], gold: ExtractionFile) -> None:
    for chunk in chunks:
        position = {m.id: i for i, m in enumerate(chunk.messages)}
        spans = [
            (position[p.start_message_id], position[p.end_message_id])
            for p in _extraction(gold, chunk.chunk_id).conversation_phases
        ]
        assert spans[0][0] == 0 and spans[-1][1] == len(chunk.messages) - 1
        assert all(start <= end for start, end in spans)
        # each phase starts no earlier than the previous one and leaves no gap after it
        for (s1, e1), (s2, _) in pairwise(spans):
            assert s1 <= s2 <= e1 + 1


def test_item_counts_per_field(gold: ExtractionFile) -> None:
    counts = {
        name: sum(len(getattr(r.extraction, name)) for r in gold.records.values())
        for name in (
            "topics",
            "entities",
            "decisions",
            "action_items",
            "open_questions",
            "claims",
            "links",
            "warnings",
            "evidence_message_ids",
            "qa_pairs",
            "emotional_tone",
            "conversation_phases",
            "implicit_assumptions",
            "negotiation_patterns",
        )
    }
    assert counts == {
        "topics": 95,
        "entities": 147,
        "decisions": 25,
        "action_items": 63,
        "open_questions": 14,
        "claims": 91,
        "links": 15,
        "warnings": 13,
        "evidence_message_ids": 133,
        "qa_pairs": 29,
        "emotional_tone": 70,
        "conversation_phases": 76,
        "implicit_assumptions": 49,
        "negotiation_patterns": 53,
    }
    assert all(r.extraction is not None and r.extraction.summary for r in gold.records.values())
    assert all(
        r.extraction is not None and r.extraction.emotional_arc is not None
        for r in gold.records.values()
    )


def test_gold_against_itself_scores_one_except_confidence(
    chunks: list[Chunk], gold: ExtractionFile
) -> None:
    report = score_records(gold.records, gold.records, chunks, ScoringConfig.default())
    assert report.invalid == 0 and report.missing == 0 and report.excluded_chunks == []
    for name, summary in report.fields.items():
        if name != "confidence":
            assert summary.score == 1.0, name
    # Every item matches itself, so each ECE bin has accuracy 1 and
    # 1 − ECE = 1 − Σ|B|/n·(1 − conf(B)) = mean confidence = 158.3 / 193 = 1583/1930 ≈ 0.820207
    # (decisions 25 + action items 63 + open questions 14 + claims 91 = 193 items).
    confidence = report.fields["confidence"]
    assert confidence.components["n_items"] == 193
    assert confidence.score == pytest.approx(1583 / 1930, abs=1e-12)
    # composite = 1 − 0.042·(1 − 1583/1930) = 1 − 0.042·347/1930 ≈ 0.9924487
    assert report.extraction_composite == pytest.approx(1 - 0.042 * 347 / 1930, abs=1e-9)


def test_claims_drift_on_reused_subjects(gold: ExtractionFile) -> None:
    def polarity(chunk_id: str, speaker: str, subject: str) -> list[str]:
        return [
            c.polarity
            for c in _extraction(gold, chunk_id).claims
            if c.speaker == speaker and c.subject == subject
        ]

    assert polarity("used-car-03", "Marcus Bell", "price") == ["con"]
    assert polarity("used-car-04", "Marcus Bell", "price") == ["pro"]
    assert polarity("used-car-05", "Priya Raman", "car condition") == ["pro"]
    assert polarity("used-car-06", "Priya Raman", "car condition") == ["con"]
    assert polarity("trip-planning-01", "Lena Fischer", "camping") == ["pro"]
    assert polarity("trip-planning-03", "Lena Fischer", "camping") == ["con"]
    assert polarity("trip-planning-01", "Ben Okafor", "camping") == ["pro"]
    assert polarity("trip-planning-05", "Ben Okafor", "camping") == ["con"]
    assert polarity("group-chat-02", "Hannah Liu", "cleaner") == ["con"]
    assert polarity("group-chat-04", "Hannah Liu", "cleaner") == ["pro"]
    assert polarity("group-chat-02", "Jake Whitfield", "chore rota") == ["con"]
    assert polarity("group-chat-05", "Jake Whitfield", "chore rota") == ["pro"]


@pytest.mark.parametrize(
    ("conversation", "first_text", "expected_chunks"),
    [
        (
            "trip-planning",
            "Do we need to reserve the ferry or can we just drive on?",
            [2, 3, 4, 5, 6],
        ),
        ("group-chat", "Has anyone heard back from Steve about the boiler?", [2, 4, 5, 6]),
        (
            "used-car",
            "Can the car get a pre-purchase inspection at a shop before buying?",
            [1, 2, 3, 4],
        ),
    ],
)
def test_open_questions_recur_as_loops(
    chunks: list[Chunk],
    gold: ExtractionFile,
    conversation: str,
    first_text: str,
    expected_chunks: list[int],
) -> None:
    members = _by_conversation(chunks, conversation)
    recurring: dict[int, list[str]] = {}
    for n, chunk in enumerate(members, start=1):
        texts = [
            q.text
            for q in _extraction(gold, chunk.chunk_id).open_questions
            if _similar(first_text, q.text)
        ]
        if texts:
            recurring[n] = texts
    assert list(recurring) == expected_chunks
    # DESIGN.md §5: a loop stays open while no decision or answered question from the chunk of
    # its last recurrence onwards matches it (fuzzy ≥ 0.60)
    loop_texts = [t for texts in recurring.values() for t in texts]
    for chunk in members[expected_chunks[-1] - 1 :]:
        extraction = _extraction(gold, chunk.chunk_id)
        closers = [d.text for d in extraction.decisions]
        closers += [qa.question for qa in extraction.qa_pairs if qa.answer]
        assert not any(_similar(t, c) for t in loop_texts for c in closers), chunk.chunk_id


def test_escalation_flags(gold: ExtractionFile) -> None:
    argument, peak = set(), set()
    for chunk_id, record in gold.records.items():
        e = record.extraction
        assert e is not None
        if (
            any(n.pattern == "ultimatum" for n in e.negotiation_patterns)
            or any(w.severity == "high" for w in e.warnings)
            or any(p.phase == "conflict" for p in e.conversation_phases)
        ):
            argument.add(chunk_id)
        if any(
            t.emotion in {"anger", "fear", "disgust", "sadness"} and t.intensity >= 0.7
            for t in e.emotional_tone
        ):
            peak.add(chunk_id)
    assert argument == {"used-car-04", "used-car-06", "trip-planning-06", "group-chat-04"}
    assert peak == {"used-car-06", "trip-planning-06", "group-chat-04"}
