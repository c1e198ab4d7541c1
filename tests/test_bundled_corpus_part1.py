"""Bundled corpus, part 1: conversations 1-3 (family, work launch, landlord) and their gold.

The chunks and the hand-written gold v3 extractions live in
``src/chatledger/data/corpus/parts/part1_*.jsonl``. These tests pin what the files must satisfy
to be usable as the embedded default: they load cleanly, every reference points into its own
chunk, phases tile each chunk in order, the gold scores 1.0 against itself on every layer-1
field except ``confidence`` (DESIGN.md §1), and the downstream consumers have drift, loops and
escalation to find (DESIGN.md §5).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import pytest
from rapidfuzz import fuzz, utils

import chatledger
from chatledger.core import Chunk, ExtractionV3, RecordStatus
from chatledger.corpus import ExtractionFile, read_chunks, read_extractions
from chatledger.scoring import ScoringConfig, score_records

PARTS = Path(chatledger.__file__).parent / "data" / "corpus" / "parts"
CHUNKS = PARTS / "part1_chunks.jsonl"
GOLD = PARTS / "part1_gold.jsonl"
CONVERSATIONS = ("family-logistics", "work-launch", "landlord-dispute")
NEGATIVE = {"anger", "fear", "disgust", "sadness"}


@pytest.fixture(scope="module")
def chunks() -> list[Chunk]:
    return read_chunks(CHUNKS)


@pytest.fixture(scope="module")
def gold() -> ExtractionFile:
    return read_extractions(GOLD)


def _pairs(chunks: list[Chunk], gold: ExtractionFile) -> Iterator[tuple[Chunk, ExtractionV3]]:
    for chunk in chunks:
        extraction = gold.records[chunk.chunk_id].extraction
        assert extraction is not None
        yield chunk, extraction


def test_chunks_shape(chunks: list[Chunk]) -> None:
    # 3 conversations x 6 chunks; messages per chunk counted by hand from the file:
    # family 16+18+19+16+17+19 = 105, work 16+16+17+18+17+15 = 99, landlord 12+15+15+14+13+12 = 81
    # → 285 in all.
    assert [c.chunk_id for c in chunks] == [
        f"{conv}-{n:02d}" for conv in CONVERSATIONS for n in range(1, 7)
    ]
    sizes = [len(c.messages) for c in chunks]
    assert sizes == [16, 18, 19, 16, 17, 19, 16, 16, 17, 18, 17, 15, 12, 15, 15, 14, 13, 12]
    assert sum(sizes) == 285
    assert all(8 <= n <= 30 for n in sizes)
    ids = [m.id for c in chunks for m in c.messages]
    assert len(set(ids)) == len(ids) == 285
    for chunk in chunks:
        assert all(" " in name for name in chunk.participants)  # full names
        assert {m.speaker for m in chunk.messages} <= set(chunk.participants)


def test_timestamps_are_iso_utc_in_time_order_over_several_days(chunks: list[Chunk]) -> None:
    for conv in CONVERSATIONS:
        stamps = [m.timestamp for c in chunks if c.conversation_id == conv for m in c.messages]
        assert all(s is not None and s.endswith("Z") for s in stamps)
        times = [datetime.fromisoformat(s) for s in stamps if s is not None]
        assert times == sorted(times)
        # One day per chunk: six distinct days per conversation.
        assert len({t.date() for t in times}) == 6


def test_gold_loads_clean(chunks: list[Chunk], gold: ExtractionFile) -> None:
    assert gold.problems == []
    assert set(gold.records) == {c.chunk_id for c in chunks}
    assert all(r.status is RecordStatus.OK for r in gold.records.values())
    assert {r.model for r in gold.records.values()} == {"gold:hand-written"}


def test_every_reference_is_a_message_of_its_chunk(
    chunks: list[Chunk], gold: ExtractionFile
) -> None:
    for chunk, ext in _pairs(chunks, gold):
        own = {m.id for m in chunk.messages}
        cited: list[str] = list(ext.evidence_message_ids)
        for field in (
            "decisions",
            "action_items",
            "open_questions",
            "claims",
            "warnings",
            "qa_pairs",
            "emotional_tone",
            "implicit_assumptions",
            "negotiation_patterns",
        ):
            for item in getattr(ext, field):
                assert item.evidence, (chunk.chunk_id, field, item)
                cited.extend(item.evidence)
        assert ext.emotional_arc is not None
        cited.extend(t.message_id for t in ext.emotional_arc.turning_points)
        for phase in ext.conversation_phases:
            cited.extend((phase.start_message_id, phase.end_message_id))
        assert set(cited) <= own, (chunk.chunk_id, set(cited) - own)


def test_people_are_the_chunks_participants(chunks: list[Chunk], gold: ExtractionFile) -> None:
    for chunk, ext in _pairs(chunks, gold):
        people = set(chunk.participants)
        named: list[str | None] = [n for d in ext.decisions for n in d.made_by]
        named += [a.owner for a in ext.action_items if a.owner is not None]
        named += [q.asked_by for q in ext.open_questions]
        named += [c.speaker for c in ext.claims]
        named += [n for q in ext.qa_pairs for n in (q.asked_by, q.answered_by)]
        named += [t.speaker for t in ext.emotional_tone]
        named += [a.held_by for a in ext.implicit_assumptions]
        named += [n.actor for n in ext.negotiation_patterns]
        assert set(named) <= people, (chunk.chunk_id, set(named) - people)


def test_phases_tile_each_chunk_in_message_order(chunks: list[Chunk], gold: ExtractionFile) -> None:
    for chunk, ext in _pairs(chunks, gold):
        position = {m.id: i for i, m in enumerate(chunk.messages)}
        spans = [
            (position[p.start_message_id], position[p.end_message_id])
            for p in ext.conversation_phases
        ]
        assert spans[0][0] == 0 and spans[-1][1] == len(chunk.messages) - 1
        for start, end in spans:
            assert start <= end
        for (_, end), (start, _) in pairwise(spans):
            assert start == end + 1, chunk.chunk_id  # contiguous, no gap, no overlap


@pytest.mark.parametrize("matcher", ["token_set", "guarded"])
def test_gold_scores_one_against_itself_except_confidence(
    chunks: list[Chunk], gold: ExtractionFile, matcher: str
) -> None:
    report = score_records(
        gold.records, gold.records, chunks, ScoringConfig.default("v3", matcher=matcher)
    )
    assert report.invalid == report.missing == 0
    for name, summary in report.fields.items():
        if name != "confidence":
            assert summary.score == 1.0, name
    for result in report.chunks:
        for name, score in result.fields.items():
            if name != "confidence":
                assert score.score == 1.0, (result.chunk_id, name)
                assert all(v == 1.0 for v in score.components.values()), (result.chunk_id, name)
    # Every item matches itself, so every bin has accuracy 1 and ECE = 1 − mean confidence:
    # the 213 confidences of decisions/action items/open questions/claims sum to 171.0, so
    # confidence = 171/213 = 0.80282 and the composite = 1 − 0.042·(1 − 171/213) = 0.99172.
    confidence = report.fields["confidence"]
    assert confidence.components["n_items"] == 213
    assert confidence.score == pytest.approx(171 / 213, abs=1e-9)
    assert report.extraction_composite == pytest.approx(1 - 0.042 * (42 / 213), abs=1e-9)


def test_item_counts_per_field(chunks: list[Chunk], gold: ExtractionFile) -> None:
    expected = {
        "topics": 72,
        "entities": 186,
        "decisions": 31,
        "action_items": 73,
        "open_questions": 21,
        "claims": 88,
        "links": 10,
        "warnings": 22,
        "evidence_message_ids": 154,
        "qa_pairs": 38,
        "emotional_tone": 81,
        "conversation_phases": 72,
        "implicit_assumptions": 54,
        "negotiation_patterns": 51,
    }
    counts = dict.fromkeys(expected, 0)
    for _, ext in _pairs(chunks, gold):
        for field in expected:
            counts[field] += len(getattr(ext, field))
    assert counts == expected
    # Every chunk has a summary and an arc; 31 + 73 + 21 + 88 = 213 confidence-bearing items.
    assert sum(counts[f] for f in ("decisions", "action_items", "open_questions", "claims")) == 213


def _mentions(chunks: list[Chunk], gold: ExtractionFile) -> list[tuple[str, str, str, str, str]]:
    """(conversation, chunk, speaker, subject, polarity) in time order: chunk order, then the
    first message each claim cites (the order the drift consumer reads claims in)."""
    out = []
    for chunk, ext in _pairs(chunks, gold):
        position = {m.id: i for i, m in enumerate(chunk.messages)}
        ordered = sorted(
            enumerate(ext.claims), key=lambda p: (min(position[m] for m in p[1].evidence), p[0])
        )
        for _, claim in ordered:
            assert claim.speaker is not None
            out.append(
                (
                    chunk.conversation_id,
                    chunk.chunk_id,
                    claim.speaker,
                    claim.subject,
                    claim.polarity,
                )
            )
    return out


def test_drift_has_the_intended_polarity_changes(chunks: list[Chunk], gold: ExtractionFile) -> None:
    last: dict[tuple[str, str, str], str] = {}
    events = set()
    for conv, chunk_id, speaker, subject, polarity in _mentions(chunks, gold):
        key = (conv, speaker, subject)
        if key in last and last[key] != polarity:
            events.add((chunk_id, speaker, subject, last[key], polarity))
        last[key] = polarity
    assert events == {
        ("family-logistics-03", "Tilly Ruiz", "Luigi's", "pro", "con"),
        ("family-logistics-05", "Sam Ruiz", "car", "pro", "con"),
        ("work-launch-02", "Tom Becker", "Brightwave", "neutral", "pro"),
        ("work-launch-03", "Tom Becker", "Brightwave", "pro", "con"),
        ("work-launch-04", "Priya Shah", "Brightwave", "pro", "con"),
        ("work-launch-04", "Tom Becker", "launch date", "neutral", "con"),
        ("work-launch-06", "Tom Becker", "Relay", "neutral", "pro"),
        ("work-launch-06", "Tom Becker", "EU data residency", "con", "pro"),
        ("landlord-dispute-03", "Gareth Hollis", "boiler", "pro", "con"),
        ("landlord-dispute-04", "Gareth Hollis", "boiler", "con", "pro"),
        ("landlord-dispute-04", "Chloe Brennan", "boiler", "con", "pro"),
        ("landlord-dispute-06", "Chloe Brennan", "deposit deduction", "con", "pro"),
        ("landlord-dispute-06", "Gareth Hollis", "replacement", "con", "pro"),
    }


def test_drift_subjects_do_not_collide_across_topics(
    chunks: list[Chunk], gold: ExtractionFile
) -> None:
    # Drift clusters subjects by token-set ≥ 60, so two different subjects of one conversation
    # that score ≥ 60 would merge and invent drift. The only such pair is intended: both are
    # the security review, and its only speakers never change polarity on it.
    for conv in CONVERSATIONS:
        subjects = sorted({m[3] for m in _mentions(chunks, gold) if m[0] == conv})
        processed = [utils.default_process(s) for s in subjects]
        close = {
            (a, b)
            for i, a in enumerate(subjects)
            for j, b in enumerate(subjects)
            if i < j and fuzz.token_set_ratio(processed[i], processed[j]) >= 60
        }
        expected = (
            {("security review sign-off", "vendor security review")}
            if conv == "work-launch"
            else set()
        )
        assert close == expected, conv


def test_recurring_unresolved_items_for_loops(chunks: list[Chunk], gold: ExtractionFile) -> None:
    questions: dict[str, list[str]] = {}
    open_actions: dict[str, list[str]] = {}
    done_actions: dict[str, list[str]] = {}
    for chunk, ext in _pairs(chunks, gold):
        for q in ext.open_questions:
            questions.setdefault(q.text, []).append(chunk.chunk_id)
        for a in ext.action_items:
            target = open_actions if a.status == "open" else done_actions
            target.setdefault(a.text, []).append(chunk.chunk_id)
    assert questions["What is actually wrong with the car?"] == [
        "family-logistics-04",
        "family-logistics-05",
        "family-logistics-06",
    ]
    security = [
        cid
        for text, ids in questions.items()
        if text.startswith("Who signs off the security review")
        for cid in ids
    ]
    assert sorted(security) == [f"work-launch-{n:02d}" for n in range(1, 7)]
    certificate = "Send the tenants the current gas safety certificate"
    assert open_actions[certificate] == [f"landlord-dispute-{n:02d}" for n in range(2, 7)]
    assert certificate not in done_actions
    # A recurring item that *is* resolved later, so loops must not report it.
    assert open_actions["Call TechPulse about the date change"] == [
        "work-launch-04",
        "work-launch-05",
    ]
    assert done_actions["Call TechPulse about the date change"] == ["work-launch-06"]


def test_escalation_signals(chunks: list[Chunk], gold: ExtractionFile) -> None:
    argument = set()
    peak = set()
    for chunk, ext in _pairs(chunks, gold):
        if (
            any(n.pattern == "ultimatum" for n in ext.negotiation_patterns)
            or any(w.severity == "high" for w in ext.warnings)
            or any(p.phase == "conflict" for p in ext.conversation_phases)
        ):
            argument.add(chunk.chunk_id)
        if any(t.emotion in NEGATIVE and t.intensity >= 0.7 for t in ext.emotional_tone):
            peak.add(chunk.chunk_id)
    assert argument == {
        "family-logistics-02",
        "family-logistics-04",
        "work-launch-03",
        "work-launch-04",
        "landlord-dispute-02",
        "landlord-dispute-03",
        "landlord-dispute-04",
        "landlord-dispute-05",
    }
    assert peak == {
        "family-logistics-02",
        "family-logistics-04",
        "work-launch-04",
        "landlord-dispute-03",
    }
