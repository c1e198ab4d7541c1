"""Issue 15: credit-first entity assignment and subjects on their content words.

Every number below is worked out by hand in the comments (DESIGN.md §3 "Matching rules").
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from chatledger.cli._app import main
from chatledger.core import Chunk, Entity, ExtractionRecord, ExtractionV3, RecordStatus
from chatledger.downstream import DriftConsumer, build_conversations
from chatledger.matching import (
    STOP_WORDS,
    FloatMatrix,
    assign,
    content_words,
    get_matcher,
    subject_consistency,
    subject_similarity,
)
from chatledger.runs._audit import audit_cases
from chatledger.scoring import ChunkContext, ScoringConfig, ScoringContext, f1, pair_entities
from conftest import claim, ext, field_score

EXAMPLES = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "examples"

# --------------------------------------------------------------------------------------------
# Credit-first assignment in the kernel

# Reference r1 "Ness Alderton", r2 "Ness", r3 "Alderton"; challenger p1 "Ness Alderton",
# p2 "Ness", p3 "Ness Ruiz" (token set; a name inside another scores 100):
#            p1     p2     p3
#   r1      100*   100    61.5
#   r2      100    100*   100
#   r3      100    16.7   23.5          (* = the same normalised name, credit 1; others 0.5)
# With the entity cutoff 70, r3 can only take p1, so the only three-match assignment is
# r3–p1, r1–p2, r2–p3: three fuzzy-only pairs, credit 1.5.
REF_NAMES = ("Ness Alderton", "Ness", "Alderton")
PRED_NAMES = ("Ness Alderton", "Ness", "Ness Ruiz")
GADGET = np.array([[100.0, 100.0, 61.5], [100.0, 100.0, 100.0], [100.0, 16.7, 23.5]])
GADGET_CREDIT = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 0.5]])


def pairs(rows: np.ndarray, cols: np.ndarray) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in zip(rows, cols, strict=True)}


def test_count_first_trades_two_exact_matches_for_three_partial_ones() -> None:
    assert pairs(*assign(GADGET, 70.0)) == {(0, 1), (1, 2), (2, 0)}
    assert pairs(*assign(GADGET, 70.0, credit=GADGET_CREDIT)) == {(0, 0), (1, 1)}


def test_credit_first_holds_for_many_gadgets() -> None:
    # 67 copies of the gadget on the diagonal (201 × 201, k = 201; pairs across copies score 0):
    # credit-first takes the two exact pairs of every copy (credit 2·67 = 134, 134 matches),
    # count-first the three partial ones (credit 1.5·67 = 100.5, 201 matches).
    copies = 67
    scores = np.kron(np.eye(copies), GADGET)
    credit = np.tile(GADGET_CREDIT, (copies, copies))
    rows, cols = assign(scores, 70.0, credit=credit)
    assert len(rows) == 2 * copies
    assert float(credit[rows, cols].sum()) == 2.0 * copies
    rows, cols = assign(scores, 70.0)
    assert len(rows) == 3 * copies
    assert float(credit[rows, cols].sum()) == 1.5 * copies


def best_by_enumeration(
    scores: FloatMatrix, credit: FloatMatrix, cutoff: float
) -> tuple[float, int, float]:
    """The lexicographic maximum (credit, count, similarity) over every partial matching."""
    m, n = scores.shape
    best = (0.0, 0, 0.0)
    for size in range(1, min(m, n) + 1):
        for rows in itertools.combinations(range(m), size):
            for cols in itertools.permutations(range(n), size):
                if all(scores[i, j] >= cutoff for i, j in zip(rows, cols, strict=True)):
                    value = (
                        sum(float(credit[i, j]) for i, j in zip(rows, cols, strict=True)),
                        size,
                        sum(float(scores[i, j]) for i, j in zip(rows, cols, strict=True)),
                    )
                    best = max(best, value)
    return best


def test_credit_first_is_the_lexicographic_optimum() -> None:
    rng = np.random.default_rng(15)
    for _ in range(300):
        m, n = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        scores = np.where(rng.random((m, n)) < 0.6, rng.uniform(60, 100, (m, n)), 0.0)
        credit = rng.choice([0.5, 1.0, 1.5], size=(m, n))
        rows, cols = assign(scores, 60.0, credit=credit)
        got = (float(credit[rows, cols].sum()), len(rows), float(scores[rows, cols].sum()))
        want = best_by_enumeration(scores, credit, 60.0)
        assert got[:2] == want[:2]
        assert got[2] == pytest.approx(want[2], abs=1e-9)


def test_equal_credits_give_the_count_first_matching() -> None:
    # With one credit for every pair, total credit is proportional to the count: the order is
    # count, then similarity, as without credit.
    rng = np.random.default_rng(3)
    for _ in range(50):
        scores = np.where(rng.random((6, 5)) < 0.5, rng.uniform(60, 100, (6, 5)), 0.0)
        rows_c, cols_c = assign(scores, 60.0, credit=np.ones_like(scores))
        rows, cols = assign(scores, 60.0)
        assert len(rows_c) == len(rows)
        assert scores[rows_c, cols_c].sum() == pytest.approx(scores[rows, cols].sum())


def test_credit_must_be_whole_units() -> None:
    scores = np.array([[90.0]])
    with pytest.raises(ValueError, match="whole multiples"):
        assign(scores, 60.0, credit=np.array([[0.3]]))
    with pytest.raises(ValueError, match="shape"):
        assign(scores, 60.0, credit=np.ones((1, 2)))
    rows, _ = assign(scores, 60.0, credit=np.array([[0.3]]), credit_unit=0.1)
    assert rows.tolist() == [0]


# --------------------------------------------------------------------------------------------
# Entities: credit-first F1 vs count-first F1


def entity_extraction(names: tuple[str, ...]) -> ExtractionV3:
    return ExtractionV3(entities=[Entity(name=n, type="person") for n in names])


def test_entities_credit_first_f1_beats_count_first() -> None:
    ref, pred = entity_extraction(REF_NAMES), entity_extraction(PRED_NAMES)
    config = ScoringConfig.default("v3")
    ctx = ScoringContext(ChunkContext.from_ids([]), config, get_matcher(config.matcher))
    # Count-first (before): r1–p2, r2–p3, r3–p1, all fuzzy-only -> credit 3·0.5 = 1.5;
    # P = 1.5/3 = 0.5, R = 1.5/3 = 0.5, F1 = 0.5.
    before = pair_entities(ref.entities, pred.entities, ctx, credit_first=False)
    assert (sorted(zip(before.rows, before.cols, strict=True)), before.exact) == (
        [(0, 1), (1, 2), (2, 0)],
        [False, False, False],
    )
    assert f1(1.5, 3, 3)[2] == pytest.approx(0.5)
    # Credit-first (now): r1–p1, r2–p2 exact -> credit 2; r3 and p3 unmatched;
    # P = 2/3, R = 2/3, F1 = 2/3 ≈ 0.667.
    after = pair_entities(ref.entities, pred.entities, ctx)
    assert (after.rows, after.cols, after.exact) == ([0, 1], [0, 1], [True, True])
    s = field_score("entities", ref, pred)
    assert s.score == pytest.approx(2 / 3)
    assert s.components == pytest.approx({"precision": 2 / 3, "recall": 2 / 3, "exact_share": 1})


# --------------------------------------------------------------------------------------------
# Subjects on content words


def test_content_words() -> None:
    assert content_words(["the car", "the Fig Tree", "Ness's car", "it", "that", ""]) == [
        "car",
        "fig tree",
        "ness car",  # "ness s car": the possessive's "s" is a stop word
        "it",  # nothing but stop words: the preprocessed text is kept
        "that",
        "",
    ]
    assert {"the", "a", "of", "and", "is", "it", "their"} <= STOP_WORDS
    assert not {"car", "tree", "plan", "may", "past"} & STOP_WORDS


def test_the_car_and_the_fig_tree_differ_but_the_car_is_car() -> None:
    subjects = ["the car", "the Fig Tree", "car"]
    # Plain token set on "the car" / "the fig tree": intersection "the"; ratio("the",
    # "the car") = 2·3/(3+7) = 60 is the maximum -> exactly 60, the same subject at 0.60.
    plain = subject_similarity(subjects, subjects, drop_stop_words=False)
    assert plain[0, 1] == pytest.approx(60.0)
    # Content words "car" / "fig tree": no shared token; ratio = 2·1/(3+8) ("r" in common)
    # = 18.18 -> different subjects. "the car" / "car": both "car" -> 100.
    content = subject_similarity(subjects, subjects)
    assert content[0, 1] == pytest.approx(200 / 11)
    assert content[0, 2] == 100.0
    # "it" / "that" stay on their words: ratio("it", "that") = 2·1/6 = 33.3, not 100 (two
    # empty strings would be equal).
    assert subject_similarity(["it"], ["that"])[0, 0] == pytest.approx(100 / 3)


def test_claims_subject_consistency_on_content_words() -> None:
    texts = ("the car is finally fixed", "the Fig Tree was far too loud")
    ref = ext(claims=[claim(texts[0], "the car", "pro"), claim(texts[1], "the Fig Tree", "con")])
    pred = ext(claims=[claim(texts[0], "car", "pro"), claim(texts[1], "Fig Tree", "con")])
    # Both claims match (text F1 1), polarities agree (1). One pair of matched claims:
    # before, the reference's subjects are the same (60 ≥ 60) but the challenger's are not
    # (18.2): they disagree -> consistency 0, score 0.60 + 0.25 + 0 = 0.85.
    before = subject_consistency(
        ["the car", "the Fig Tree"], ["car", "Fig Tree"], 60.0, drop_stop_words=False
    )
    assert before == 0.0
    # Now both sides have two subjects (18.2 < 60): consistency 1, score 0.60 + 0.25 + 0.15 = 1.
    s = field_score("claims", ref, pred)
    assert s.components["subject_consistency"] == 1.0
    assert s.score == pytest.approx(1.0)


def drift_chunks() -> list[Chunk]:
    return [
        Chunk.model_validate(
            {
                "chunk_id": cid,
                "conversation_id": "trip",
                "participants": ["Ness Alderton", "Sam Ruiz"],
                "messages": [
                    {
                        "id": f"{cid}-m1",
                        "speaker": "Ness Alderton",
                        "timestamp": f"2026-03-0{day}T10:00:00Z",
                        "text": "hi",
                    }
                ],
            }
        )
        for cid, day in (("d1", 1), ("d2", 2))
    ]


def drift_records(car: str, fig_tree: str) -> dict[str, ExtractionRecord]:
    def one(cid: str, text: str, subject: str, polarity: str) -> ExtractionRecord:
        extraction = ExtractionV3.model_validate(
            {
                "claims": [
                    {"text": text, "subject": subject, "polarity": polarity, "speaker": "Ness"}
                ]
            }
        )
        return ExtractionRecord(
            chunk_id=cid, model="m", status=RecordStatus.OK, extraction=extraction
        )

    return {
        "d1": one("d1", "the car is finally fixed", car, "pro"),
        "d2": one("d2", "the Fig Tree was far too loud", fig_tree, "con"),
    }


def test_drift_no_longer_merges_the_car_with_the_fig_tree() -> None:
    chunks = drift_chunks()
    ref = build_conversations(chunks, drift_records("the car", "the Fig Tree"))
    chal = build_conversations(chunks, drift_records("car", "Fig Tree"))
    # Before: "the Fig Tree" joins the cluster led by "the car" (60 ≥ 60), so Ness's pro (d1)
    # then con (d2) is one drift event in the reference; the challenger's "car" / "Fig Tree"
    # (18.2) are two clusters, no event. Agreement: one side empty -> 0.
    plain = DriftConsumer(drop_stop_words=False)
    ref_before, chal_before = plain.build(ref), plain.build(chal)
    assert [e.describe() for e in ref_before.events] == ["Ness Alderton on the car: pro -> con"]
    assert chal_before.events == ()
    assert plain.agreement(ref_before, chal_before).agreement == 0.0
    # Now: "car" / "fig tree" (18.2) are two clusters on both sides, no event anywhere; two
    # empty sets agree -> 1.
    consumer = DriftConsumer()
    ref_after, chal_after = consumer.build(ref), consumer.build(chal)
    assert ref_after.events == chal_after.events == ()
    assert consumer.agreement(ref_after, chal_after).agreement == 1.0


# --------------------------------------------------------------------------------------------
# The audit shows both cases, before and after, computed


def test_audit_cases_before_and_after() -> None:
    cases = {c.name: {m: (b, a) for m, b, a in c.measures} for c in audit_cases()}
    subjects = cases["subject_clustering"]
    assert subjects["similarity 'the car' ~ 'the Fig Tree'"] == pytest.approx((60.0, 200 / 11))
    assert subjects["same subject in the reference"] == (True, False)
    assert subjects["claims subject_consistency"] == (0.0, 1.0)
    assert subjects["claims score"] == pytest.approx((0.85, 1.0))
    assert subjects["reference drift events"] == (1, 0)
    assert subjects["drift agreement"] == (0.0, 1.0)
    entities = cases["entity_credit"]
    assert entities["matches"] == (3, 2)
    assert entities["exact matches"] == (0, 2)
    assert entities["credit"] == (1.5, 2.0)
    assert entities["entities F1"] == pytest.approx((0.5, 2 / 3))


def run_cli(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    return out.getvalue()


def test_audit_command_prints_the_cases_in_table_and_json() -> None:
    args = ["audit", "--reference", str(EXAMPLES / "reference.jsonl")]
    args += ["--chunks", str(EXAMPLES / "chunks.jsonl")]
    data = json.loads(run_cli([*args, "--format", "json"]))
    by_name = {c["case"]: c for c in data["cases"]}
    entity_f1 = by_name["entity_credit"]["measures"]["entities F1"]
    assert entity_f1 == pytest.approx({"before": 0.5, "after": 2 / 3})
    assert by_name["subject_clustering"]["measures"]["reference drift events"] == {
        "before": 1,
        "after": 0,
    }
    table = run_cli(args)
    assert "subject_clustering" in table and "entity_credit" in table
    assert "count-first" in table and "credit-first" in table
