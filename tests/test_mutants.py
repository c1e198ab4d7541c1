"""Tests that bite: each one fails for a named one-token change (a mutant) of the code it
guards, at a boundary the other tests do not touch. Every test was checked by applying its
mutant to a copy of the source and watching the test fail.

- ``matching/_kernel.py`` ``assign``: ``C = 100·(min(m, n) + 1)`` → ``C = 1000`` (28 × 28).
- ``matching/_kernel.py`` ``_credit_weights``: ``A·u + C′ + t`` → ``A·u + t`` (the count term
  dropped: a credit tie goes to similarity instead of the number of matches).
- ``score/_calibration.py``, the numpy path: bins ``((m−1)/10, m/10]`` → ``[(m−1)/10, m/10)``
  (80 items, also pooled over a run).
- ``score/_context.py`` ``ChunkContext.resolve``: ``best >= threshold`` → ``>`` (fuzzy 70.0).
- ``downstream/_escalation.py`` ``peak_reasons``: ``intensity >= PEAK_INTENSITY`` → ``>`` (0.7).
- ``stats/_resample.py`` ``paired_from``: ``(extreme + 1)/(B + 1)`` → ``extreme/(B + 1)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from chatledger.downstream import run_downstream
from chatledger.downstream._escalation import PEAK_INTENSITY
from chatledger.matching import assign, preprocess, token_set_matrix
from chatledger.scoring import (
    ChunkContext,
    ScoringConfig,
    expected_calibration_error,
    reliability_bins,
    score_records,
)
from chatledger.scoring._calibration import SMALL
from conftest import ext, field_score, make_chunk, records

# --- assignment: one more match always outweighs similarity (C = 100·(k + 1)) ----------------
#
# k = 28 reference and 28 predicted items; eligible pairs (score ≥ cutoff 60) are the diagonal
# (i, i) at exactly 60 and the superdiagonal (i, i + 1) at 100, nothing else. As a graph that
# is one path c0 – r0 – c1 – r1 – … – r26 – c27 – r27, so the diagonal is the only matching of
# all 28 (r27's one eligible partner is c27, then r26 must take c26, …); the best 27-pair
# matching is the superdiagonal, 27 pairs of 100. Weights are C + S:
#
#   C = 100·(28 + 1) = 2,900:  28·(2,900 + 60) = 82,880  >  27·(2,900 + 100) = 81,000  → 28 pairs
#   C = 1,000 (the mutant):    28·(1,000 + 60) = 29,680  <  27·(1,000 + 100) = 29,700  → 27 pairs
#
# In general a fixed C keeps the count only while (k − 1)·(C + 100) ≤ k·(C + 60), i.e.
# k ≤ (C + 100)/40 = 27.5 for C = 1,000: 28 is the first size this trade breaks it.

K = 28


def test_assign_keeps_the_maximum_count_on_28_by_28() -> None:
    scores = np.zeros((K, K))
    scores[np.arange(K), np.arange(K)] = 60.0
    scores[np.arange(K - 1), np.arange(1, K)] = 100.0
    rows, cols = assign(scores, 60.0)
    assert len(rows) == K
    assert rows.tolist() == cols.tolist() == list(range(K))


# --- credit-first assignment: a credit tie goes to the count, then to similarity -------------
#
# Two entities a side, cutoff 25. r0–c0 is an exact name (credit 1, similarity 100); r0–c1
# (60) and r1–c0 (30) are fuzzy-only (credit 0.5 each); r1–c1 is below the cutoff. The two
# maximal matchings tie on credit, 1.0 each: {r0–c0} (one match, similarity 100) and
# {r0–c1, r1–c0} (two matches, similarity 90). DESIGN.md §3 orders credit, then the number of
# matches, then similarity: the two matches win. In credit units u (0.5 each) the weights are
# A·u + C′ + S with k = 2, τ = 101, C′ = τ·(k + 1) = 303, A = (C′ + τ)·k = 808:
#
#   {r0–c0}:        808·2 + 303     + 100 = 2,019
#   {r0–c1, r1–c0}: 808·2 + 303·2   +  90 = 2,312   → two matches
#   without C′:     808·2 + 100 = 1,716  >  808·2 + 90 = 1,706   → one match (the mutant)


def test_a_credit_tie_goes_to_the_matching_with_more_pairs() -> None:
    scores = np.array([[100.0, 60.0], [30.0, 0.0]])
    credit = np.array([[1.0, 0.5], [0.5, 0.0]])
    rows, cols = assign(scores, 25.0, credit=credit)
    assert sorted(zip(rows.tolist(), cols.tolist(), strict=True)) == [(0, 1), (1, 0)]
    # Credit still comes first: make r0–c0 worth 1.5 (3 units) and the one match wins.
    rows, cols = assign(scores, 25.0, credit=np.array([[1.5, 0.5], [0.5, 0.0]]))
    assert list(zip(rows.tolist(), cols.tolist(), strict=True)) == [(0, 0)]


def test_open_questions_f1_keeps_all_28_matches() -> None:
    # Texts whose token-set matrix is exactly the pattern above (checked below):
    #   reference i = "sII aII"; predicted j = "sJJ query" plus, for j ≥ 1, "a(J−1) s(J−1)".
    # Diagonal: intersection "sII" (3 chars), reference's rest "aII" (3): 2·3/(2·3 + 1 + 3)
    #   = 0.6 → 60; the other two token-set terms are 50 at most.
    # Superdiagonal: reference i's tokens all occur in predicted i + 1 → 100.
    # Elsewhere no token is shared; char-level at most 50 (< 60).
    reference = [f"s{i:02d} a{i:02d}" for i in range(K)]
    predicted = [
        " ".join([f"s{j:02d}", "query", *([f"a{j - 1:02d}", f"s{j - 1:02d}"] if j else [])])
        for j in range(K)
    ]
    matrix = token_set_matrix(preprocess(reference), preprocess(predicted))
    assert np.all(np.diag(matrix) == 60.0) and np.all(np.diag(matrix, 1) == 100.0)
    off = np.ones((K, K), dtype=bool)
    off[np.arange(K), np.arange(K)] = False
    off[np.arange(K - 1), np.arange(1, K)] = False
    assert matrix[off].max() < 60.0

    score = field_score(
        "open_questions",
        ext(open_questions=[{"text": t} for t in reference]),
        ext(open_questions=[{"text": t} for t in predicted]),
    )
    # 28 matches of 28 and 28: P = R = F1 = 1 (27 matches would give 27/28 = 0.964 each).
    assert score.components == {"precision": 1.0, "recall": 1.0}
    assert score.score == 1.0


# --- ECE: bins are right-closed on the vectorised path too --------------------------------
#
# 80 items, 40 × (0.3, correct) and 40 × (0.21, wrong); above SMALL = 64, so the numpy path.
#   Right-closed ((m−1)/10, m/10]: 0.3 and 0.21 share (0.2, 0.3]: accuracy 40/80 = 0.5, mean
#     confidence (0.3 + 0.21)/2 = 0.255 → ECE = |0.5 − 0.255| = 0.245.
#   Left-closed [(m−1)/10, m/10) (the mutant): 0.3 → [0.3, 0.4), all correct: |1 − 0.3| = 0.7;
#     0.21 → [0.2, 0.3), all wrong: |0 − 0.21| = 0.21 → ECE = 0.5·0.7 + 0.5·0.21 = 0.455.

PAIRS = [(0.3, True), (0.21, False)] * 40


def test_ece_bins_are_right_closed_above_small() -> None:
    assert len(PAIRS) > SMALL
    assert expected_calibration_error(PAIRS) == pytest.approx(0.245)
    [only] = reliability_bins(PAIRS)
    assert (only["low"], only["high"], only["n"]) == (0.2, 0.3, 80.0)
    assert only["accuracy"] == 0.5 and only["confidence"] == pytest.approx(0.255)
    # The plain-Python path (≤ SMALL items) bins the same way.
    assert expected_calibration_error(PAIRS[:2]) == pytest.approx(0.245)


def test_pooled_run_confidence_bins_are_right_closed() -> None:
    # 40 chunks, each: the reference asks one question; the challenger repeats it (confidence
    # 0.3, matched → correct) and adds one nobody asked (0.21, unmatched → wrong). Each chunk's
    # own ECE sees 2 items (plain-Python path): 0.245 → 0.755. The run pools all 80 items (numpy
    # path): ECE 0.245 → confidence 0.755 (0.545 with left-closed bins).
    chunks = [make_chunk(chunk_id=f"c-{i}") for i in range(40)]
    question = "who books the venue"
    ref = records((c.chunk_id, ext(open_questions=[{"text": question}])) for c in chunks)
    chal = records(
        (
            c.chunk_id,
            ext(
                open_questions=[
                    {"text": question, "confidence": 0.3},
                    {"text": "xylophone quartz jumbo", "confidence": 0.21},
                ]
            ),
        )
        for c in chunks
    )
    report = score_records(ref, chal, chunks)
    assert [c.fields["confidence"].score for c in report.chunks] == pytest.approx([0.755] * 40)
    confidence = report.fields["confidence"]
    assert confidence.components["n_items"] == 80
    assert confidence.components["accuracy"] == 0.5
    assert confidence.components["ece"] == pytest.approx(0.245)
    assert confidence.score == pytest.approx(0.755)


# --- participant names resolve at fuzzy ≥ 70, not > 70 -------------------------------------
#
# "Roberta Smith" against the participant "Roberta Lindqvist" (processed: lower case). Tokens
# {roberta, smith} and {roberta, lindqvist}: intersection "roberta" (7 chars), rests "smith"
# (5) and "lindqvist" (9). token_set_ratio is the largest of
#   "roberta" vs "roberta smith":      2·7/(7 + 13) = 14/20 = 0.70
#   "roberta" vs "roberta lindqvist":  2·7/(7 + 17) = 14/24 = 0.583
#   "roberta smith" vs "roberta lindqvist": common subsequence "roberta " + "st" = 10 chars,
#                                      2·10/(13 + 17) = 0.667
# → exactly 70.0; against "Sam Ruiz" 38.1.

PARTICIPANTS = ("Roberta Lindqvist", "Sam Ruiz")


def test_a_name_at_exactly_70_resolves() -> None:
    similarity = token_set_matrix(preprocess(["Roberta Smith"]), preprocess(PARTICIPANTS))[0]
    assert similarity[0] == 70.0 and similarity[1] < 70.0
    assert 100.0 * ScoringConfig.default().thresholds.participant == 70.0
    chunk = make_chunk(participants=PARTICIPANTS)
    assert ChunkContext.from_chunk(chunk).resolve("Roberta Smith") == "roberta lindqvist"
    # The same task: text F1 1; owners resolve to the same participant: owner accuracy 1 →
    # 0.70·1 + 0.30·1 = 1.0 (unresolved, "roberta smith" ≠ "roberta lindqvist": 0.70).
    task = "send the revised budget"
    score = field_score(
        "action_items",
        ext(action_items=[{"text": task, "owner": "Roberta Lindqvist"}]),
        ext(action_items=[{"text": task, "owner": "Roberta Smith"}]),
        chunk,
    )
    assert score.components == {"text_f1": 1.0, "owner_accuracy": 1.0}
    assert score.score == 1.0


# --- an emotional peak starts at intensity 0.7 ---------------------------------------------
#
# Chunk e1: the reference reads anger at exactly 0.7, the challenger at 0.9; chunk e2: both
# read anger at 0.69 (below the peak). Reference flags {e1 peak}, challenger {e1 peak}:
# F1 = 2·1/(1 + 1) = 1.0. Were 0.7 not a peak, the reference would flag nothing: F1 = 0
# (one side empty).


def test_anger_at_exactly_0_7_is_an_emotional_peak() -> None:
    assert PEAK_INTENSITY == 0.7
    chunks = [make_chunk(chunk_id="e1"), make_chunk(chunk_id="e2")]

    def anger(intensity: float) -> dict[str, object]:
        return {"speaker": "Ness", "emotion": "anger", "intensity": intensity}

    ref = records(
        [("e1", ext(emotional_tone=[anger(0.7)])), ("e2", ext(emotional_tone=[anger(0.69)]))]
    )
    chal = records(
        [("e1", ext(emotional_tone=[anger(0.9)])), ("e2", ext(emotional_tone=[anger(0.69)]))]
    )
    report = run_downstream(chunks, ref, chal)
    flags = report.outputs("reference")["escalation"].events
    assert [(f.chunk_id, f.flag, f.reasons) for f in flags] == [
        ("e1", "emotional_peak", ("Ness: anger 0.70",))
    ]
    result = report.consumers["escalation"].result
    assert result.agreement == 1.0
    assert result.missed == () and result.invented == ()


# --- a paired p-value is never below 1/(B + 1) ---------------------------------------------
#
# Two statistics over B = 4 resamples; estimates 1.0 and 0.0 (observed difference 1.0), the
# resampled differences 0.9, 1.1, 1.0, 0.95. Re-centred on the null they are −0.1, 0.1, 0,
# −0.05: none reaches |1.0|, so no resample is as extreme as what was observed. With the +1 of
# both counts (Davison & Hinkley's (r + 1)/(B + 1)) p = (0 + 1)/(4 + 1) = 0.2, the smallest
# value B resamples can show; the mutant ``extreme/(B + 1)`` says 0.0 — a certainty four
# resamples cannot give. One resample at the observed distance (a difference of 2.0, centred
# 1.0) makes it (1 + 1)/5 = 0.4.


def test_paired_p_value_counts_the_observed_difference_itself() -> None:
    from chatledger.stats import Resamples, paired_from

    def p_value(differences: list[float]) -> float:
        values = np.array([differences, [0.0] * len(differences)])
        resamples = Resamples(np.array([1.0, 0.0]), values, np.zeros((2, 3)))
        return paired_from(resamples, 0, 1)[3]

    assert p_value([0.9, 1.1, 1.0, 0.95]) == pytest.approx(1 / 5)
    assert p_value([0.9, 2.0, 1.0, 0.95]) == pytest.approx(2 / 5)
