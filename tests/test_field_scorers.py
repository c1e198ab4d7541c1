"""The 17 layer-1 field scorers (DESIGN.md §3), each checked against numbers worked out by hand.

Text pairs used below and their token-set similarity (RapidFuzz, after default_process):
unrelated phrases ("weather forecast" vs "catering menu" = 34.5, "parking" vs "catering menu" = 50)
stay under the 60 cutoff; a text whose tokens are a subset of the other's scores 100.
"""

from __future__ import annotations

from typing import Any

import pytest

from chatledger.core import FIELDS_V3, ExtractionV3
from chatledger.scoring import FIELD_SCORERS, expected_calibration_error, normalise_url, score_chunk
from conftest import (
    claim,
    example_chunk,
    example_reference,
    ext,
    field_score,
    make_chunk,
    texts,
    with_certain_confidences,
)

# --------------------------------------------------------------------------------------------
# Rules shared by every field


def _full() -> ExtractionV3:
    """The bundled example (every field filled) plus a warning, which it lacks."""
    data = example_reference().model_dump()
    data["warnings"] = [{"text": "the van has no spare tyre", "severity": "high"}]
    return ExtractionV3.model_validate(data)


def _emptied(extraction: ExtractionV3, name: str) -> ExtractionV3:
    """``extraction`` with field ``name`` empty (confidence: every item that carries one)."""
    data = extraction.model_dump()
    empty: dict[str, Any] = {"summary": "", "emotional_arc": None}
    if name == "confidence":
        for item_field in ("decisions", "action_items", "open_questions", "claims"):
            data[item_field] = []
    else:
        data[name] = empty.get(name, [])
    return ExtractionV3.model_validate(data)


def test_all_seventeen_scorers_are_registered() -> None:
    assert set(FIELD_SCORERS) == set(FIELDS_V3)
    assert len(FIELDS_V3) == 17


@pytest.mark.parametrize("name", FIELDS_V3)
def test_identical_scores_one(name: str) -> None:
    full = with_certain_confidences(_full())
    score = field_score(name, full, full, example_chunk())
    assert score.score == 1.0


@pytest.mark.parametrize("name", FIELDS_V3)
def test_both_empty_scores_one(name: str) -> None:
    score = field_score(name, ExtractionV3(), ExtractionV3(), make_chunk())
    assert score.score == 1.0


@pytest.mark.parametrize("name", FIELDS_V3)
def test_challenger_side_empty_scores_zero(name: str) -> None:
    full = _full()
    score = field_score(name, full, _emptied(full, name), example_chunk())
    assert score.score == 0.0
    # (confidence reports its worst ECE, 1, and the item count alongside)
    assert all(v == 0.0 for k, v in score.components.items() if k not in ("n_items", "ece"))


@pytest.mark.parametrize("name", [f for f in FIELDS_V3 if f != "confidence"])
def test_reference_side_empty_scores_zero(name: str) -> None:
    full = _full()
    score = field_score(name, _emptied(full, name), full, example_chunk())
    assert score.score == 0.0


def test_example_self_comparison_confidence_is_one_minus_ece() -> None:
    # Example confidences, all correct: 0.9, 0.85, 0.9 in (0.8, 0.9] -> |1 - 0.8833|·3/5 = 0.07;
    # 0.8 in (0.7, 0.8] -> 0.2·1/5 = 0.04; 0.6 in (0.5, 0.6] -> 0.4·1/5 = 0.08. ECE = 0.19.
    full = example_reference()
    scores = score_chunk(full, full, example_chunk())
    assert scores["confidence"].score == pytest.approx(0.81)
    assert all(s.score == 1.0 for name, s in scores.items() if name != "confidence")


# Both sides non-empty, but nothing matches: every "over matched pairs" component is 0.
NO_MATCH_CASES: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    (
        "decisions",
        {"decisions": [{"text": "book the venue", "evidence": ["m-1"]}]},
        {"decisions": [{"text": "weather forecast", "evidence": ["m-1"]}]},
        "evidence_jaccard",
    ),
    (
        "action_items",
        {"action_items": [{"text": "book the venue", "owner": "Ness Alderton"}]},
        {"action_items": [{"text": "weather forecast", "owner": "Ness Alderton"}]},
        "owner_accuracy",
    ),
    (
        "claims",
        {"claims": [claim("catering menu is great", "catering", "pro")]},
        {"claims": [claim("weather forecast", "catering", "pro")]},
        "polarity_accuracy",
    ),
    (
        "claims",
        {"claims": [claim("catering menu is great", "catering", "pro")]},
        {"claims": [claim("weather forecast", "catering", "pro")]},
        "subject_consistency",
    ),
    (
        "qa_pairs",
        {"qa_pairs": [{"question": "catering menu?", "answer": None}]},
        {"qa_pairs": [{"question": "weather forecast?", "answer": None}]},
        "answer_agreement",
    ),
    (
        "conversation_phases",
        {
            "conversation_phases": [
                {"phase": "opening", "start_message_id": "m-1", "end_message_id": "m-2"}
            ]
        },
        {
            "conversation_phases": [
                {"phase": "closing", "start_message_id": "m-1", "end_message_id": "m-2"}
            ]
        },
        "mean_iou",
    ),
    (
        "entities",
        {"entities": [{"name": "Lisbon", "type": "location"}]},
        {"entities": [{"name": "Lisbon", "type": "person"}]},  # type differs: no match
        "exact_share",
    ),
]


@pytest.mark.parametrize(("name", "ref", "pred", "component"), NO_MATCH_CASES)
def test_matched_pair_component_without_pairs_is_zero(
    name: str, ref: dict[str, Any], pred: dict[str, Any], component: str
) -> None:
    score = field_score(name, ext(**ref), ext(**pred), make_chunk())
    # Even where the unmatched items agree (same polarity, subject, owner, evidence, range).
    assert score.components[component] == 0.0
    assert score.score == 0.0


# --------------------------------------------------------------------------------------------
# 1 topics — fuzzy set F1


def test_topics_two_of_three() -> None:
    ref = ext(topics=["budget", "venue booking", "catering menu"])
    pred = ext(topics=["Budget!", "venue booking", "weather forecast", "parking"])
    # matches: budget, venue booking -> 2. P = 2/4, R = 2/3, F1 = 2·2/(4+3) = 4/7.
    s = field_score("topics", ref, pred)
    assert s.components["precision"] == pytest.approx(0.5)
    assert s.components["recall"] == pytest.approx(2 / 3)
    assert s.score == pytest.approx(4 / 7)


# --------------------------------------------------------------------------------------------
# 2 entities — lenient NER F1


def test_entity_partial_name_gets_half_credit() -> None:
    ref = ext(entities=[{"name": "Ness Alderton", "type": "person"}])
    pred = ext(entities=[{"name": "Ness", "type": "person"}])
    # token-set("ness", "ness alderton") = 100 >= 70, names differ -> credit 0.5.
    # P = 0.5/1, R = 0.5/1, F1 = 0.5.
    s = field_score("entities", ref, pred)
    assert s.components["precision"] == 0.5
    assert s.components["recall"] == 0.5
    assert s.score == 0.5
    assert s.components["exact_share"] == 0.0


def test_entities_exact_fuzzy_and_wrong_type() -> None:
    ref = ext(
        entities=[
            {"name": "Ness Alderton", "type": "person"},
            {"name": "Lisbon", "type": "location"},
            {"name": "Acme", "type": "organization"},
        ]
    )
    pred = ext(
        entities=[
            {"name": "Ness", "type": "person"},  # fuzzy only: 0.5
            {"name": "lisbon", "type": "location"},  # same normalised name: 1
            {"name": "Acme", "type": "person"},  # type differs: 0
        ]
    )
    # credit = 1.5; P = 1.5/3 = 0.5, R = 1.5/3 = 0.5, F1 = 0.5; exact share = 1 of 2 matches.
    s = field_score("entities", ref, pred)
    assert s.score == pytest.approx(0.5)
    assert s.components["exact_share"] == 0.5


def test_entities_prefer_exact_partner_among_equal_matches() -> None:
    # "Ness" matches both at 100; the exact partner must be chosen so credit is 2, not 1.
    ref = ext(
        entities=[{"name": "Ness Alderton", "type": "person"}, {"name": "Ness", "type": "person"}]
    )
    pred = ext(
        entities=[{"name": "Ness", "type": "person"}, {"name": "Ness Alderton", "type": "person"}]
    )
    assert field_score("entities", ref, pred).score == 1.0


# --------------------------------------------------------------------------------------------
# 3 decisions — 0.75·text F1 + 0.25·mean evidence Jaccard


def test_decisions_two_of_three_with_evidence_jaccard() -> None:
    ref = ext(
        decisions=[
            {"text": "book the venue", "evidence": ["m-1", "m-2"]},
            {"text": "hire a caterer", "evidence": ["m-3"]},
            {"text": "weather forecast", "evidence": ["m-4"]},
        ]
    )
    pred = ext(
        decisions=[
            {"text": "book the venue", "evidence": ["m-2", "m-3"]},  # J = 1/3
            {"text": "hire a caterer", "evidence": ["m-3"]},  # J = 1
        ]
    )
    # P = 2/2, R = 2/3, F1 = 0.8; mean J = (1/3 + 1)/2 = 2/3; matched share 2·2/(3+2) = 0.8.
    # score = 0.75·0.8 + 0.25·2/3·0.8 = 0.6 + 0.1333 = 0.7333
    s = field_score("decisions", ref, pred)
    assert s.components["text_f1"] == pytest.approx(0.8)
    assert s.components["evidence_jaccard"] == pytest.approx(2 / 3)
    assert s.score == pytest.approx(0.6 + 0.25 * 2 / 3 * 0.8)


def test_decisions_two_empty_evidence_sets_agree() -> None:
    one = ext(decisions=[{"text": "book the venue"}])
    assert field_score("decisions", one, one).components["evidence_jaccard"] == 1.0


# --------------------------------------------------------------------------------------------
# 4 action items — 0.70·text F1 + 0.30·owner accuracy × matched share 2M/(R+P)


def test_action_item_owner_resolves_through_chunk() -> None:
    ref = ext(action_items=[{"text": "print the setlist", "owner": "Ness Alderton"}])
    pred = ext(action_items=[{"text": "print the setlist", "owner": "Ness"}])
    # With the chunk, "Ness" -> participant "Ness Alderton": owner accuracy 1, score 1.
    assert field_score("action_items", ref, pred, make_chunk()).score == 1.0
    # Without participants the names stay as written: owner 0 -> 0.70·1 + 0.30·0 = 0.70.
    assert field_score("action_items", ref, pred, None).score == pytest.approx(0.70)


def test_action_items_partial_with_one_wrong_owner() -> None:
    ref = ext(
        action_items=[
            {"text": "print the setlist", "owner": "Ness Alderton"},
            {"text": "bring spare cables", "owner": "Sam Ruiz"},
        ]
    )
    pred = ext(
        action_items=[
            {"text": "print the setlist", "owner": "ness"},  # -> Ness Alderton: right
            {"text": "bring spare cables", "owner": "Ness"},  # -> Ness Alderton: wrong
            {"text": "weather forecast", "owner": "Sam"},
        ]
    )
    # P = 2/3, R = 2/2, F1 = 0.8; owner accuracy 1/2; matched share 2·2/(2+3) = 0.8.
    # score = 0.70·0.8 + 0.30·0.5·0.8 = 0.56 + 0.12 = 0.68
    s = field_score("action_items", ref, pred, make_chunk())
    assert s.components["text_f1"] == pytest.approx(0.8)
    assert s.components["owner_accuracy"] == 0.5
    assert s.score == pytest.approx(0.68)


def test_one_match_of_five_cannot_add_the_whole_owner_term() -> None:
    # DESIGN §3: a term over matched pairs counts in proportion to the matched share 2M/(R+P).
    ref = ext(
        action_items=[
            {"text": "print the setlist", "owner": "Ness Alderton"},
            {"text": "book the rehearsal studio", "owner": "Sam Ruiz"},
            {"text": "email the venue about parking", "owner": "Sam Ruiz"},
            {"text": "buy new guitar strings", "owner": "Ness Alderton"},
            {"text": "call the sound engineer", "owner": "Sam Ruiz"},
        ]
    )
    pred = ext(
        action_items=[
            {"text": "print the setlist", "owner": "Ness"},  # the one match, right owner
            {"text": "weather forecast", "owner": "Sam"},
            {"text": "pizza toppings", "owner": "Sam"},
            {"text": "holiday photos", "owner": "Ness"},
            {"text": "train timetable", "owner": "Sam"},
        ]
    )
    # M = 1, R = P = 5: P = R = F1 = 0.2; owner accuracy 1/1 = 1; matched share 2·1/10 = 0.2.
    # score = 0.70·0.2 + 0.30·1·0.2 = 0.14 + 0.06 = 0.20 (the old rule gave 0.14 + 0.30 = 0.44)
    s = field_score("action_items", ref, pred, make_chunk())
    assert s.components == {"text_f1": pytest.approx(0.2), "owner_accuracy": 1.0}
    assert s.score == pytest.approx(0.20)


# --------------------------------------------------------------------------------------------
# 5 open questions — text F1


def test_open_questions_one_of_three() -> None:
    ref = ext(open_questions=texts("who brings the cables", "when is soundcheck", "catering menu"))
    pred = ext(open_questions=texts("Who brings the cables?", "weather forecast"))
    # 1 match. P = 1/2, R = 1/3, F1 = 2·1/(2+3) = 0.4.
    s = field_score("open_questions", ref, pred)
    assert s.components["precision"] == 0.5
    assert s.components["recall"] == pytest.approx(1 / 3)
    assert s.score == pytest.approx(0.4)


# --------------------------------------------------------------------------------------------
# 6 claims — 0.60·text F1 + 0.25·polarity accuracy + 0.15·subject consistency


def test_claims_all_polarities_flipped_score_075() -> None:
    ref = ext(
        claims=[
            claim("the ballad kills the energy", "ballad", "con"),
            claim("the encore slot suits the ballad", "ballad", "pro"),
            claim("the studio on fifth is cheap", "studio", "pro"),
        ]
    )
    flipped = {"pro": "con", "con": "pro"}
    pred = ext(
        claims=[claim(c.text, c.subject, flipped[c.polarity]) for c in ref.claims],
    )
    # text F1 1, polarity 0, subjects group identically (1): 0.60 + 0 + 0.15 = 0.75.
    s = field_score("claims", ref, pred)
    assert s.components == {
        "text_f1": 1.0,
        "polarity_accuracy": 0.0,
        "subject_consistency": 1.0,
    }
    assert s.score == pytest.approx(0.75)


def test_claims_two_of_three_one_polarity_wrong() -> None:
    ref = ext(
        claims=[
            claim("the ballad kills the energy", "ballad", "con"),
            claim("the studio on fifth is cheap", "studio", "pro"),
            claim("weather forecast", "weather", "neutral"),
        ]
    )
    pred = ext(
        claims=[
            claim("the ballad kills the energy", "ballad", "con"),
            claim("the studio on fifth is cheap", "studio", "neutral"),
        ]
    )
    # P = 1, R = 2/3, F1 = 0.8; polarity 1/2; one pair (0, 1): different subjects on both sides
    # -> consistency 1; matched share 2·2/(3+2) = 0.8.
    # score = 0.60·0.8 + (0.25·0.5 + 0.15·1)·0.8 = 0.48 + 0.1 + 0.12 = 0.70
    s = field_score("claims", ref, pred)
    assert s.score == pytest.approx(0.70)


@pytest.mark.parametrize(("pred_subject", "expected"), [("The Ballad", 1.0), ("venue", 0.0)])
def test_subject_consistency_single_matched_claim(pred_subject: str, expected: float) -> None:
    ref = ext(claims=[claim("the ballad kills the energy", "ballad", "con")])
    pred = ext(claims=[claim("the ballad kills the energy", pred_subject, "con")])
    s = field_score("claims", ref, pred)
    assert s.components["subject_consistency"] == expected
    # 0.60 + 0.25 + 0.15·expected
    assert s.score == pytest.approx(0.85 + 0.15 * expected)


def test_subject_consistency_three_claims_different_grouping() -> None:
    ref = ext(
        claims=[
            claim("the ballad kills the energy", "ballad", "con"),
            claim("the encore slot suits the ballad", "ballad", "pro"),
            claim("the studio on fifth is cheap", "studio", "pro"),
        ]
    )
    pred = ext(
        claims=[
            claim("the ballad kills the energy", "ballad", "con"),
            claim("the encore slot suits the ballad", "studio", "pro"),
            claim("the studio on fifth is cheap", "studio", "pro"),
        ]
    )
    # pairs: (0,1) ref same / pred different -> disagree; (0,2) different / different -> agree;
    # (1,2) different / same -> disagree. Consistency = 1/3.
    # score = 0.60 + 0.25 + 0.15/3 = 0.90
    s = field_score("claims", ref, pred)
    assert s.components["subject_consistency"] == pytest.approx(1 / 3)
    assert s.score == pytest.approx(0.90)


# --------------------------------------------------------------------------------------------
# 7 links — set F1 on normalised URLs


def test_normalise_url() -> None:
    assert normalise_url("http://www.Example.com/a/") == normalise_url("http://example.com/a")
    assert normalise_url("example.com/a") == "https://example.com/a"
    assert normalise_url("https://b.org:443/x?b=2&a=1#top") == "https://b.org/x?a=1&b=2"
    assert normalise_url("http://example.com/a") != normalise_url("http://example.com/b")


def test_links_two_of_two_with_one_extra() -> None:
    ref = ext(links=[{"url": "http://www.Example.com/a/"}, {"url": "https://b.org/x?b=2&a=1"}])
    pred = ext(
        links=[
            {"url": "http://example.com/a"},
            {"url": "https://b.org/x?a=1&b=2#frag"},
            {"url": "https://c.net/"},
        ]
    )
    # 2 matches. P = 2/3, R = 2/2, F1 = 2·2/(3+2) = 0.8.
    s = field_score("links", ref, pred)
    assert s.score == pytest.approx(0.8)


# --------------------------------------------------------------------------------------------
# 8 warnings — text F1


def test_warnings_one_of_two() -> None:
    ref = ext(warnings=texts("the van has no spare tyre", "catering menu", severity="high"))
    pred = ext(warnings=texts("The van has no spare tyre!", severity="low"))
    # Severity is not scored. P = 1/1, R = 1/2, F1 = 2/3.
    s = field_score("warnings", ref, pred)
    assert s.score == pytest.approx(2 / 3)


# --------------------------------------------------------------------------------------------
# 9 evidence message ids — set F1


def test_evidence_message_ids_set_f1() -> None:
    ref = ext(evidence_message_ids=["m-1", "m-2", "m-3", "m-4"])
    pred = ext(evidence_message_ids=["m-2", "m-3", "m-5", "m-2"])  # duplicate counts once
    # {m-2, m-3} shared. P = 2/3, R = 2/4, F1 = 2·2/(3+4) = 4/7.
    s = field_score("evidence_message_ids", ref, pred)
    assert s.components["precision"] == pytest.approx(2 / 3)
    assert s.components["recall"] == 0.5
    assert s.score == pytest.approx(4 / 7)


# --------------------------------------------------------------------------------------------
# 10 confidence — 1 − ECE (10 bins ((m−1)/10, m/10])


def test_ece_bin_edges_by_hand() -> None:
    # 0.3 is in (0.2, 0.3] with 0.21: acc 1/2, mean conf 0.255 -> ECE = |0.5 - 0.255| = 0.245.
    assert expected_calibration_error([(0.3, True), (0.21, False)]) == pytest.approx(0.245)
    # 0.31 is in (0.3, 0.4]: two singleton bins -> 0.5·|1 - 0.3| + 0.5·|0 - 0.31| = 0.505.
    assert expected_calibration_error([(0.3, True), (0.31, False)]) == pytest.approx(0.505)
    # 0.0 falls in the first bin, 1.0 in the last.
    assert expected_calibration_error([(0.0, False), (1.0, True)]) == 0.0
    assert expected_calibration_error([(0.05, True), (0.0, False)]) == pytest.approx(0.475)
    with pytest.raises(ValueError):
        expected_calibration_error([(1.5, True)])


def test_confidence_field_by_hand() -> None:
    ref = ext(
        claims=[claim("the ballad kills the energy"), claim("the studio on fifth is cheap")],
        decisions=[{"text": "book the venue"}],
    )
    pred = ext(
        claims=[
            claim("the ballad kills the energy", confidence=0.3),  # correct
            claim("weather forecast", confidence=0.25),  # wrong
        ],
        decisions=[
            {"text": "book the venue", "confidence": 0.9},  # correct
            {"text": "catering menu", "confidence": 0.95},  # wrong
            {"text": "parking"},  # no confidence: not counted
        ],
    )
    # (0.2, 0.3]: {0.3 ✓, 0.25 ✗}: acc 0.5, conf 0.275 -> 2/4·0.225 = 0.1125
    # (0.8, 0.9]: {0.9 ✓}: 1/4·0.1 = 0.025;  (0.9, 1.0]: {0.95 ✗}: 1/4·0.95 = 0.2375
    # ECE = 0.375 -> score 0.625; accuracy 2/4.
    s = field_score("confidence", ref, pred)
    assert s.components["ece"] == pytest.approx(0.375)
    assert s.components["n_items"] == 4
    assert s.components["accuracy"] == 0.5
    assert s.score == pytest.approx(0.625)


def test_confidence_items_without_any_stated_confidence_score_zero() -> None:
    ref = ext(claims=[claim("the ballad kills the energy")])
    assert field_score("confidence", ref, ref).score == 0.0


def test_confidence_with_empty_reference_scores_calibration_of_wrong_items() -> None:
    # Every challenger item is unmatched (wrong): 1 − ECE = 1 − mean confidence here.
    # conf 0.2 in (0.1, 0.2] -> gap 0.2 -> score 0.8. (One-side-empty is not forced to 0 here:
    # the field measures calibration, and saying 0.2 for an unsupported item is well calibrated.)
    pred = ext(claims=[claim("weather forecast", confidence=0.2)])
    assert field_score("confidence", ExtractionV3(), pred).score == pytest.approx(0.8)


# --------------------------------------------------------------------------------------------
# 11 summary — token-set similarity / 100


def test_summary_token_set_by_hand() -> None:
    # tokens {alpha, beta} vs {alpha, gamma}: intersection "alpha" (5 chars),
    # "alpha beta" (10 chars): Indel distance 5 -> 1 - 5/(5+10) = 2/3; the cross pair
    # "alpha beta"/"alpha gamma" has LCS 7 -> 2·7/21 = 2/3. Score = 2/3.
    s = field_score("summary", ext(summary="Alpha beta."), ext(summary="alpha GAMMA"))
    assert s.score == pytest.approx(2 / 3)
    same = field_score("summary", ext(summary="Jordan prints"), ext(summary="jordan prints!"))
    assert same.score == 1.0


# --------------------------------------------------------------------------------------------
# 12 Q/A pairs — 0.60·question F1 + 0.40·answer agreement


def test_qa_pairs_with_none_answers() -> None:
    ref = ext(
        qa_pairs=[
            {"question": "is rehearsal at seven", "answer": "yes"},
            {"question": "who brings the cables", "answer": None},
            {"question": "catering menu", "answer": "at the studio"},
        ]
    )
    pred = ext(
        qa_pairs=[
            {"question": "Is rehearsal at seven?", "answer": "Yes!"},  # agree
            {"question": "who brings the cables", "answer": "tomorrow"},  # None vs text: 0
            {"question": "weather forecast", "answer": None},
        ]
    )
    # question P = 2/3, R = 2/3, F1 = 2/3; answers 1/2; matched share 2·2/(3+3) = 2/3.
    # score = 0.60·2/3 + 0.40·0.5·2/3 = 0.4 + 0.1333 = 0.5333
    s = field_score("qa_pairs", ref, pred)
    assert s.components["question_f1"] == pytest.approx(2 / 3)
    assert s.components["answer_agreement"] == 0.5
    assert s.score == pytest.approx(0.4 + 0.4 / 3)


def test_qa_pairs_both_answers_none_agree() -> None:
    ref = ext(qa_pairs=[{"question": "who brings the cables", "answer": None}])
    pred = ext(qa_pairs=[{"question": "Who brings the cables?"}])
    assert field_score("qa_pairs", ref, pred).score == 1.0


# --------------------------------------------------------------------------------------------
# 13 emotional tone — set F1 over (speaker, emotion)


def test_emotional_tone_with_speaker_resolution() -> None:
    ref = ext(
        emotional_tone=[
            {"speaker": "Ness Alderton", "emotion": "joy"},
            {"speaker": "Sam Ruiz", "emotion": "anger"},
        ]
    )
    pred = ext(
        emotional_tone=[
            {"speaker": "Ness", "emotion": "joy", "intensity": 0.9},  # -> (ness alderton, joy)
            {"speaker": "Sam Ruiz", "emotion": "fear"},
            {"speaker": "sam", "emotion": "anger"},  # -> (sam ruiz, anger)
        ]
    )
    # 2 shared pairs. P = 2/3, R = 2/2, F1 = 0.8. Intensity is not scored.
    assert field_score("emotional_tone", ref, pred, make_chunk()).score == pytest.approx(0.8)


# --------------------------------------------------------------------------------------------
# 14 emotional arc — opening, closing, trajectory, turning-point F1 (±2 positions), ¼ each


def _arc(opening: str, closing: str, trajectory: str, *points: str) -> ExtractionV3:
    return ext(
        emotional_arc={
            "opening_mood": opening,
            "closing_mood": closing,
            "trajectory": trajectory,
            "turning_points": [{"message_id": p} for p in points],
        }
    )


@pytest.mark.parametrize(("pred_point", "tp_f1"), [("m-5", 1.0), ("m-1", 1.0), ("m-6", 0.0)])
def test_turning_point_window(pred_point: str, tp_f1: float) -> None:
    # ref m-3 (position 2); m-5 and m-1 are 2 positions away (match), m-6 is 3 away (no match).
    ref = _arc("neutral", "trust", "improving", "m-3")
    pred = _arc("neutral", "joy", "improving", pred_point)
    s = field_score("emotional_arc", ref, pred, make_chunk(8))
    assert s.components["turning_points_f1"] == tp_f1
    # opening 1 + closing 0 + trajectory 1 + tp -> (2 + tp)/4
    assert s.score == pytest.approx((2 + tp_f1) / 4)


def test_emotional_arc_partial_turning_points() -> None:
    ref = _arc("neutral", "trust", "improving", "m-2", "m-7")
    pred = _arc("neutral", "trust", "improving", "m-3", "m-4", "m-9")
    # m-2 ~ m-3 (or m-4); m-7 ~ m-9 (2 away). 2 matches: P = 2/3, R = 1, F1 = 0.8.
    # score = (1 + 1 + 1 + 0.8)/4 = 0.95
    s = field_score("emotional_arc", ref, pred, make_chunk(10))
    assert s.components["turning_points_f1"] == pytest.approx(0.8)
    assert s.score == pytest.approx(0.95)


def test_emotional_arc_without_turning_points_agrees_on_them() -> None:
    ref = _arc("anger", "joy", "improving")
    pred = _arc("anger", "joy", "volatile")
    assert field_score("emotional_arc", ref, pred).score == pytest.approx(0.75)


# --------------------------------------------------------------------------------------------
# 15 conversation phases — 0.5·phase F1 + 0.5·mean IoU over matched phases


def _phase(name: str, start: int, end: int) -> dict[str, str]:
    return {"phase": name, "start_message_id": f"m-{start}", "end_message_id": f"m-{end}"}


def test_phases_iou_by_hand() -> None:
    ref = ext(
        conversation_phases=[
            _phase("opening", 1, 2),
            _phase("negotiation", 3, 7),
            _phase("closing", 9, 10),
        ]
    )
    pred = ext(
        conversation_phases=[
            _phase("opening", 1, 3),
            _phase("negotiation", 5, 8),
            _phase("planning", 9, 10),
        ]
    )
    # opening: {1,2} vs {1,2,3}: IoU 2/3. negotiation: {3..7} vs {5..8}: ∩ {5,6,7} = 3,
    # ∪ = 5 + 4 - 3 = 6 -> 1/2. closing vs planning: no match.
    # phase F1 = 2/3 (P = R = 2/3); mean IoU = (2/3 + 1/2)/2 = 7/12; matched share
    # 2·2/(3+3) = 2/3. score = 0.5·2/3 + 0.5·7/12·2/3 = 1/3 + 7/36 = 19/36 = 0.5278
    s = field_score("conversation_phases", ref, pred, make_chunk(10))
    assert s.components["phase_f1"] == pytest.approx(2 / 3)
    assert s.components["mean_iou"] == pytest.approx(7 / 12)
    assert s.score == pytest.approx(19 / 36)


def test_phases_without_chunk_order_messages_naturally() -> None:
    # No chunk: positions come from a natural sort of the ids seen (m-2 before m-10).
    ref = ext(conversation_phases=[_phase("planning", 2, 10)])
    pred = ext(conversation_phases=[_phase("planning", 2, 9)])
    # ids seen: m-2, m-9, m-10 -> positions 0, 1, 2: {0,1,2} vs {0,1}: IoU 2/3.
    # score = 0.5·1 + 0.5·2/3 = 5/6
    assert field_score("conversation_phases", ref, pred).score == pytest.approx(5 / 6)


# --------------------------------------------------------------------------------------------
# 16 implicit assumptions — text F1


def test_implicit_assumptions_one_of_one_with_two_extra() -> None:
    ref = ext(implicit_assumptions=texts("the band plays on saturday"))
    pred = ext(
        implicit_assumptions=texts("The band plays on Saturday", "weather forecast", "parking")
    )
    # P = 1/3, R = 1/1, F1 = 2·1/(3+1) = 0.5
    s = field_score("implicit_assumptions", ref, pred)
    assert s.score == pytest.approx(0.5)


# --------------------------------------------------------------------------------------------
# 17 negotiation patterns — F1 over (pattern, actor)


def test_negotiation_patterns_with_actor_resolution() -> None:
    ref = ext(
        negotiation_patterns=[
            {"pattern": "concession", "actor": "Ness Alderton"},
            {"pattern": "anchoring", "actor": "Sam Ruiz"},
            {"pattern": "ultimatum", "actor": "Sam Ruiz"},
        ]
    )
    pred = ext(
        negotiation_patterns=[
            {"pattern": "concession", "actor": "ness"},  # -> ness alderton ✓
            {"pattern": "anchoring", "actor": "Ness"},  # wrong actor
            {"pattern": "ultimatum", "actor": "Sam"},  # -> sam ruiz ✓
        ]
    )
    # 2 shared pairs. P = R = 2/3, F1 = 2/3.
    resolved = field_score("negotiation_patterns", ref, pred, make_chunk())
    assert resolved.score == pytest.approx(2 / 3)
    # Without the chunk no short name resolves: no pair is shared -> 0.
    assert field_score("negotiation_patterns", ref, pred).score == 0.0


def test_link_with_a_bad_port_is_scored_not_crashed() -> None:
    from chatledger.scoring import normalise_url

    # urlsplit(...).port raises on these; the URL is kept as written (case-folded).
    assert normalise_url("https://A.com:abc/x/") == "https://a.com:abc/x"
    assert normalise_url("https://a.com:99999/x") == "https://a.com:99999/x"
