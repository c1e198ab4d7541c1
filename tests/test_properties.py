"""Properties of layer 1 over random valid v3 extractions (Hypothesis).

- self-comparison scores exactly 1.0 on every field but ``confidence``, which is 1 − ECE of the
  model's own confidences with every item correct (DESIGN.md §1);
- every score and component lies in [0, 1];
- the symmetric set/text F1 fields do not care which side is the reference;
- dropping challenger items never raises the recall of a text F1 field.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.core import CONFIDENCE_FIELDS, DEFAULT_VOCABULARY, Chunk, ExtractionV3
from chatledger.scoring import ScoringConfig, expected_calibration_error, score_chunk, score_records
from conftest import records

SETTINGS = settings(max_examples=60, deadline=None)

WORDS = (
    "the", "ballad", "kills", "energy", "setlist", "studio", "fifth", "encore", "cables",
    "saturday", "venue", "budget", "print", "rehearsal", "seven", "Jordan", "?!",
)  # fmt: skip
PARTICIPANT_SETS = (
    ("Ness Alderton", "Sam Ruiz"),
    ("Jordan Pike", "Mei Chen", "Theo"),
    ("A",),
)
URLS = (
    "http://www.Example.com/a/",
    "http://example.com/a",
    "example.com/b",
    "https://b.org/x?b=2&a=1",
    "https://b.org/x?a=1&b=2#top",
    "https://c.net",
)
MATCHERS = ("token_set", "guarded")
TEXT_F1_FIELDS = ("topics", "open_questions", "warnings", "implicit_assumptions")
SYMMETRIC_FIELDS = (
    "topics",
    "links",
    "evidence_message_ids",
    "emotional_tone",
    "negotiation_patterns",
    "summary",
)

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
confidence = st.none() | st.integers(0, 100).map(lambda k: k / 100)


def enum(kind: str) -> st.SearchStrategy[str]:
    return st.sampled_from(DEFAULT_VOCABULARY[kind])


def items(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(strategy, max_size=4)


@st.composite
def chunks(draw: st.DrawFn) -> Chunk:
    participants = draw(st.sampled_from(PARTICIPANT_SETS))
    n = draw(st.integers(1, 8))
    messages = [
        {"id": f"m-{i}", "speaker": draw(st.sampled_from(participants)), "text": draw(text)}
        for i in range(1, n + 1)
    ]
    return Chunk.model_validate(
        {"chunk_id": "c-1", "participants": list(participants), "messages": messages}
    )


@st.composite
def extractions(draw: st.DrawFn, chunk: Chunk) -> ExtractionV3:
    """A valid random v3 extraction whose names and message ids come from ``chunk``."""
    ids = [m.id for m in chunk.messages]
    full_names = list(chunk.participants)
    # Participants as written, shortened ("Ness"), case-changed, plus a stranger.
    names = st.sampled_from(
        [*full_names, *(p.split()[0] for p in full_names), *(p.upper() for p in full_names), "X"]
    )
    name = st.none() | names
    msg = st.sampled_from(ids)
    evidence = st.lists(msg, max_size=3)

    def item(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries(fields)

    arc = st.none() | item(
        opening_mood=enum("emotion"),
        closing_mood=enum("emotion"),
        trajectory=enum("trajectory"),
        turning_points=items(item(message_id=msg, description=st.just(""))),
    )
    data = draw(
        st.fixed_dictionaries(
            {
                "topics": items(text),
                "entities": items(item(name=st.sampled_from(WORDS) | names | text,
                                       type=enum("entity_type"))),
                "decisions": items(item(text=text, made_by=st.lists(names, max_size=2),
                                        evidence=evidence, confidence=confidence)),
                "action_items": items(item(text=text, owner=name, status=enum("status"),
                                           evidence=evidence, confidence=confidence)),
                "open_questions": items(item(text=text, asked_by=name, evidence=evidence,
                                             confidence=confidence)),
                "claims": items(item(text=text, subject=st.just("") | text,
                                     polarity=enum("polarity"), speaker=name,
                                     evidence=evidence, confidence=confidence)),
                "links": items(item(url=st.sampled_from(URLS))),
                "warnings": items(item(text=text, severity=enum("severity"), evidence=evidence)),
                "evidence_message_ids": st.lists(msg, max_size=4),
                "summary": st.just("") | text,
                "qa_pairs": items(item(question=text, answer=st.none() | text,
                                       asked_by=name, answered_by=name, evidence=evidence)),
                "emotional_tone": items(item(speaker=names, emotion=enum("emotion"),
                                             intensity=st.floats(0, 1), evidence=evidence)),
                "emotional_arc": arc,
                "conversation_phases": items(item(phase=enum("phase"), start_message_id=msg,
                                                  end_message_id=msg)),
                "implicit_assumptions": items(item(text=text, held_by=name, evidence=evidence)),
                "negotiation_patterns": items(item(pattern=enum("negotiation_pattern"),
                                                   actor=name, text=st.just("") | text,
                                                   evidence=evidence)),
            }
        )
    )  # fmt: skip
    return ExtractionV3.model_validate(data)


@st.composite
def one_extraction(draw: st.DrawFn) -> tuple[Chunk, ExtractionV3, str]:
    chunk = draw(chunks())
    return chunk, draw(extractions(chunk)), draw(st.sampled_from(MATCHERS))


@st.composite
def two_extractions(draw: st.DrawFn) -> tuple[Chunk, ExtractionV3, ExtractionV3, str]:
    chunk = draw(chunks())
    return (
        chunk,
        draw(extractions(chunk)),
        draw(extractions(chunk)),
        draw(st.sampled_from(MATCHERS)),
    )


def _config(matcher: str) -> ScoringConfig:
    return ScoringConfig.default("v3", matcher)


@SETTINGS
@given(one_extraction())
def test_self_comparison_is_exactly_one(case: tuple[Chunk, ExtractionV3, str]) -> None:
    chunk, extraction, matcher = case
    scores = score_chunk(extraction, extraction, chunk, _config(matcher))
    for name, field in scores.items():
        if name != "confidence":
            assert field.score == 1.0, (name, field)
    items_ = [item for name in CONFIDENCE_FIELDS for item in getattr(extraction, name)]
    stated = [item.confidence for item in items_ if item.confidence is not None]
    got = scores["confidence"].score
    if not items_:
        assert got == 1.0  # nothing on either side: they agree
    elif not stated:
        assert got == 0.0  # items but no confidences: calibration cannot be shown
    else:
        assert got == 1.0 - expected_calibration_error([(c, True) for c in stated])
        # All items correct: every bin's gap is 1 − its mean confidence, so
        # ECE = 1 − mean confidence and the score is the mean confidence.
        assert abs(got - sum(stated) / len(stated)) < 1e-9


@SETTINGS
@given(two_extractions())
def test_scores_and_components_in_unit_interval(
    case: tuple[Chunk, ExtractionV3, ExtractionV3, str],
) -> None:
    chunk, ref, pred, matcher = case
    for with_chunk in (chunk, None):
        for name, field in score_chunk(ref, pred, with_chunk, _config(matcher)).items():
            assert 0.0 <= field.score <= 1.0, (name, field)
            for component, value in field.components.items():
                if component != "n_items":
                    assert 0.0 <= value <= 1.0, (name, component, field)


@SETTINGS
@given(two_extractions())
def test_symmetric_fields_ignore_which_side_is_reference(
    case: tuple[Chunk, ExtractionV3, ExtractionV3, str],
) -> None:
    chunk, a, b, matcher = case
    forward = score_chunk(a, b, chunk, _config(matcher))
    backward = score_chunk(b, a, chunk, _config(matcher))
    for name in SYMMETRIC_FIELDS:
        assert forward[name].score == backward[name].score, name
        if "precision" in forward[name].components:
            assert forward[name].components["precision"] == backward[name].components["recall"]


@SETTINGS
@given(two_extractions(), st.data())
def test_dropping_challenger_items_never_raises_recall(
    case: tuple[Chunk, ExtractionV3, ExtractionV3, str], data: st.DataObject
) -> None:
    chunk, ref, pred, matcher = case
    kept: dict[str, Any] = {}
    for name in TEXT_F1_FIELDS:
        values = getattr(pred, name)
        keep = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
        kept[name] = [v for v, k in zip(values, keep, strict=True) if k]
    smaller = pred.model_copy(update=kept)
    full = score_chunk(ref, pred, chunk, _config(matcher))
    reduced = score_chunk(ref, smaller, chunk, _config(matcher))
    for name in TEXT_F1_FIELDS:
        if getattr(ref, name) or getattr(smaller, name):
            # (with an empty reference, emptying the challenger turns 0 into agreement: 1)
            assert reduced[name].components["recall"] <= full[name].components["recall"], name


# ---- run level: both aggregates over several chunks ----------------------------------------


@st.composite
def runs_of_chunks(draw: st.DrawFn) -> tuple[list[Chunk], list[ExtractionV3], list[ExtractionV3]]:
    chunk_list = [
        draw(chunks()).model_copy(update={"chunk_id": f"c-{i}"})
        for i in range(draw(st.integers(1, 4)))
    ]
    return (
        chunk_list,
        [draw(extractions(c)) for c in chunk_list],
        [draw(extractions(c)) for c in chunk_list],
    )


def _run_report(chunk_list: list[Chunk], ref: list[ExtractionV3], pred: list[ExtractionV3]):  # type: ignore[no-untyped-def]
    reference = records((c.chunk_id, e) for c, e in zip(chunk_list, ref, strict=True))
    challenger = records((c.chunk_id, e) for c, e in zip(chunk_list, pred, strict=True))
    return score_records(reference, challenger, chunk_list)


@SETTINGS
@given(runs_of_chunks())
def test_run_self_comparison_is_one_under_both_aggregates(
    case: tuple[list[Chunk], list[ExtractionV3], list[ExtractionV3]],
) -> None:
    chunk_list, ref, _ = case
    report = _run_report(chunk_list, ref, ref)
    for name, field in report.fields.items():
        if name == "confidence":
            continue
        assert field.macro == 1.0 and field.micro["score"] == 1.0, (name, field)
        if "f1" in field.micro:
            assert field.micro["f1"] == 1.0 and field.n_matched == field.n_reference, name


@SETTINGS
@given(runs_of_chunks())
def test_run_figures_in_unit_interval_and_pooled_f1_symmetric(
    case: tuple[list[Chunk], list[ExtractionV3], list[ExtractionV3]],
) -> None:
    chunk_list, a, b = case
    forward = _run_report(chunk_list, a, b)
    backward = _run_report(chunk_list, b, a)
    for name, field in forward.fields.items():
        for value in (field.score, field.macro, *field.micro.values()):
            assert 0.0 <= value <= 1.0 + 1e-12, (name, field)
        # summary and emotional_arc match no items: they have no matched count at all
        assert (field.n_matched is None) == (name in ("summary", "emotional_arc")), name
        if field.n_matched is not None:
            assert field.n_matched <= min(field.n_reference, field.n_predicted) + 1e-9, name
    for name in SYMMETRIC_FIELDS:
        f, g = forward.fields[name], backward.fields[name]
        assert f.micro["score"] == pytest.approx(g.micro["score"]), name
        if "f1" in f.micro:
            assert f.micro["precision"] == pytest.approx(g.micro["recall"]), name
            assert (f.n_reference, f.n_predicted) == (g.n_predicted, g.n_reference), name


@SETTINGS
@given(runs_of_chunks(), st.data())
def test_dropping_challenger_items_never_raises_pooled_recall(
    case: tuple[list[Chunk], list[ExtractionV3], list[ExtractionV3]], data: st.DataObject
) -> None:
    chunk_list, ref, pred = case
    smaller = []
    for extraction in pred:
        kept: dict[str, Any] = {}
        for name in TEXT_F1_FIELDS:
            values = getattr(extraction, name)
            keep = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
            kept[name] = [v for v, k in zip(values, keep, strict=True) if k]
        smaller.append(extraction.model_copy(update=kept))
    full = _run_report(chunk_list, ref, pred)
    reduced = _run_report(chunk_list, ref, smaller)
    for name in TEXT_F1_FIELDS:
        if full.fields[name].n_reference:
            assert reduced.fields[name].micro["recall"] <= full.fields[name].micro["recall"], name
            assert reduced.fields[name].n_matched <= full.fields[name].n_matched, name
