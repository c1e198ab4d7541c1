"""Agreement between annotators, and between a run's judge and a person (issue 18).

Every number is worked out by hand in the comments beside it.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatledger.annotate._agreement import (
    alpha_from_coincidences,
    alpha_nominal,
    annotator_agreement,
    coincidences,
    records_agreement,
)
from chatledger.annotate._gold import Annotation, GoldLine, ItemDecision
from chatledger.annotate._judge_agreement import judge_agreement, kappa_of_table
from chatledger.cli._app import main
from chatledger.core import ExtractionRecord, ExtractionV3, InputError, RecordStatus
from chatledger.downstream import cohen_kappa

HOTEL = "Booking the lake hotel now costs far too much money"
TRAIN = "The early train is the best way to get there"
GRANDMA = "Grandma would love a visit in the spring"
MUSEUM = "The museum pass is a waste of money"


def _line(chunk_id: str, who: str, covers: list[str] | None, **fields: Any) -> dict[str, Any]:
    line: dict[str, Any] = {"chunk_id": chunk_id, "model": f"human:{who}", "extraction": fields}
    if covers is not None:
        line["covers"] = covers
    return line


def _claim(text: str, subject: str, polarity: str) -> dict[str, Any]:
    return {"text": text, "subject": subject, "polarity": polarity}


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def two_annotators(tmp_path: Path) -> tuple[Path, Path]:
    """Hand-written gold (covers, no annotation blocks), as the AMI/CaSiNo importers write.

    c1: both write the hotel and train claims; they agree on the hotel (con/con) and differ on
        the train (pro/neutral).
    c2: each writes one claim the other does not have (grandma vs museum: no match).
    c3: A covers claims and action items, B only action items: claims are not compared on c3
        (A's camping claim is left out); the action item matches, owners differ.
    """
    a = _write(
        tmp_path / "a.jsonl",
        [
            _line(
                "c1",
                "ann",
                ["claims"],
                claims=[_claim(HOTEL, "hotel", "con"), _claim(TRAIN, "train", "pro")],
            ),
            _line("c2", "ann", ["claims"], claims=[_claim(GRANDMA, "grandma", "pro")]),
            _line(
                "c3",
                "ann",
                ["claims", "action_items"],
                claims=[_claim("Camping is fun", "camping", "pro")],
                action_items=[{"text": "Sam books the train tickets", "owner": "Sam"}],
            ),
        ],
    )
    b = _write(
        tmp_path / "b.jsonl",
        [
            _line(
                "c1",
                "bob",
                ["claims"],
                claims=[_claim(HOTEL, "hotel", "con"), _claim(TRAIN, "train", "neutral")],
            ),
            _line("c2", "bob", ["claims"], claims=[_claim(MUSEUM, "museum", "con")]),
            _line(
                "c3",
                "bob",
                ["action_items"],
                action_items=[{"text": "Sam books the train tickets", "owner": "Ness"}],
            ),
        ],
    )
    return a, b


def test_hand_computed_field_agreement_and_alpha(two_annotators: tuple[Path, Path]) -> None:
    a, b = two_annotators
    report = annotator_agreement(a, b, n_resamples=400)
    assert report.version == 1
    assert report.chunks == 3
    assert report.aggregate == "micro"  # human gold: micro by default, as in runs
    assert set(report.fields) == {"claims", "action_items"}

    claims = report.fields["claims"]
    # Covers intersection: claims only on c1 and c2, so A's c3 claim is not counted.
    assert (claims.chunks, claims.items_a, claims.items_b, claims.matched) == (2, 3, 3, 2.0)
    # Polarity and subject are over matched pairs: under ties the direction could matter.
    assert not claims.symmetric
    assert claims.a_vs_b == pytest.approx(claims.b_vs_a)  # no ties here
    # Pooled: 2 matched of 3 on each side: precision = recall = F1 = 2/3. Polarity over the 2
    # matched pairs: 1/2. Subject consistency: the one pair of matched claims (c1) has
    # different subjects in A (hotel, train) and in B (hotel, train): agrees, 1/1.
    # Matched share 2·2/(3+3) = 2/3 (DESIGN §3: pair terms count by it).
    # micro = 0.60·2/3 + (0.25·1/2 + 0.15·1)·2/3 = 0.4 + 0.1833 = 0.5833.
    parts = claims.micro_parts
    assert parts["precision"] == pytest.approx(2 / 3)
    assert parts["recall"] == pytest.approx(2 / 3)
    assert parts["f1"] == pytest.approx(2 / 3)
    assert parts["polarity_accuracy"] == pytest.approx(0.5)
    assert parts["subject_consistency"] == pytest.approx(1.0)
    assert claims.micro == pytest.approx(0.4 + 0.275 * 2 / 3)
    assert claims.agreement == pytest.approx(0.4 + 0.275 * 2 / 3)
    # Macro: c1 = 0.60·1 + 0.25·0.5 + 0.15·1 = 0.875; c2 = 0 (one item each, no match);
    # mean 0.4375.
    assert claims.macro == pytest.approx(0.4375)
    for iv in claims.intervals.values():
        assert iv.low <= iv.estimate <= iv.high

    actions = report.fields["action_items"]
    # c3 only: text F1 1 (same text), owner accuracy 0 (Sam vs Ness): 0.70·1 + 0.30·0 = 0.7.
    assert (actions.chunks, actions.items_a, actions.items_b) == (1, 1, 1)
    assert actions.agreement == pytest.approx(0.7)
    assert actions.intervals["micro"].method == "single"  # one chunk: nothing to resample

    polarity = report.alpha["claims.polarity"]
    # Units: c1's two matched claims (con, con) and (pro, neutral); c2's unmatched claims are
    # units with one rater missing (pro, ·) and (·, con).
    assert (polarity.units, polarity.agreeing, polarity.only_a, polarity.only_b) == (2, 1, 1, 1)
    # Coincidence matrix (each pairable unit adds (x, y) and (y, x)):
    #   o[con,con] = 2, o[pro,neutral] = o[neutral,pro] = 1
    #   n_con = 2, n_pro = 1, n_neutral = 1, n = 4
    # α = 1 − (n − 1)·Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k = 1 − 3·2 / (16 − (4 + 1 + 1)) = 0.4
    assert polarity.alpha == pytest.approx(0.4)
    # Resamples of the two chunks: {c1, c2} → 0.4; {c1, c1}: o doubles, n = 8,
    # α = 1 − 7·4 / (64 − (16 + 4 + 4)) = 0.3; {c2, c2}: no pairable unit, undefined.
    assert polarity.interval is not None
    assert polarity.interval.low == pytest.approx(0.3)
    assert polarity.interval.high == pytest.approx(0.4)
    assert 0 < polarity.undefined_resamples < 400  # about a quarter: {c2, c2}


def test_line_without_covers_covers_every_field(
    two_annotators: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = two_annotators
    # B's lines have no covers: they cover every field, so the intersection is A's covers.
    b = _write(
        tmp_path / "b_all.jsonl",
        [
            _line(
                "c1",
                "bob",
                None,
                claims=[_claim(HOTEL, "hotel", "con"), _claim(TRAIN, "train", "neutral")],
                topics=["travel"],
            ),
            _line("c2", "bob", None, claims=[_claim(MUSEUM, "museum", "con")]),
            _line("c3", "bob", None, claims=[_claim("Camping is fun", "camping", "pro")]),
        ],
    )
    report = annotator_agreement(a, b, n_resamples=50)
    assert set(report.fields) == {"claims", "action_items"}  # never topics: A does not cover it
    claims = report.fields["claims"]
    # c3's camping claims now match as well: 3 matched of 4 and 4.
    assert (claims.chunks, claims.items_a, claims.items_b, claims.matched) == (3, 4, 4, 3.0)
    # A has an action item on c3, B none: one side empty.
    assert report.fields["action_items"].agreement == 0.0


def test_annotation_blocks_are_read_like_plain_gold(
    two_annotators: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = two_annotators
    rows = []
    for text in a.read_text().splitlines():
        data = json.loads(text)
        line = GoldLine.model_validate(
            {
                **data,
                "annotation": Annotation(annotator="ann", updated_at="2026-01-01T00:00:00Z"),
            }
        )
        rows.append(line.model_dump(mode="json"))
    annotated = _write(tmp_path / "a_annotated.jsonl", rows)
    plain = annotator_agreement(a, b, n_resamples=50)
    with_blocks = annotator_agreement(annotated, b, n_resamples=50)
    assert with_blocks.fields == plain.fields
    assert with_blocks.alpha == plain.alpha


def test_alpha_by_hand_from_the_coincidence_matrix() -> None:
    units: list[tuple[str | None, str | None]] = [("a", "a"), ("a", "b"), ("b", "b"), ("c", None)]
    # o[a,a] = 2, o[a,b] = o[b,a] = 1, o[b,b] = 2; n_a = n_b = 3, n = 6 ("c" is unpairable).
    # Σ_{c≠k} o_ck = 2; Σ_{c≠k} n_c·n_k = 2·3·3 = 18; α = 1 − 5·2/18 = 4/9.
    labels = ["a", "b", "c"]
    assert alpha_nominal(units, labels) == pytest.approx(4 / 9)
    sums = np.array([coincidences(units, {x: i for i, x in enumerate(labels)})])
    assert alpha_from_coincidences(sums, 3)[0] == pytest.approx(4 / 9)
    # One label only among pairable units: undefined.
    assert alpha_nominal([("a", "a"), ("b", None)], labels) is None
    assert math.isnan(alpha_from_coincidences(np.array([[2.0, 0, 0, 0]]), 2)[0])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from("xyzw"), st.sampled_from("xyzw")), max_size=6),
        min_size=1,
        max_size=4,
    )
)
def test_alpha_of_summed_coincidences_is_the_packages(chunks: list[list[tuple[str, str]]]) -> None:
    labels = ["x", "y", "z", "w"]
    flat: list[tuple[str | None, str | None]] = [u for c in chunks for u in c]
    expected = alpha_nominal(flat, labels)
    index = {x: i for i, x in enumerate(labels)}
    sums = np.array([coincidences(c, index) for c in chunks]).sum(axis=0, keepdims=True)
    got = alpha_from_coincidences(sums, len(labels))[0]
    if expected is None:
        assert math.isnan(got) or len({v for u in flat for v in u}) < 2
    else:
        pairs = [u for c in chunks for u in c]
        data = np.array([[index[x] for x, _ in pairs], [index[y] for _, y in pairs]], dtype=float)
        assert got == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        )
        assert got == pytest.approx(expected)


def test_phases_and_patterns_pair_without_their_label(tmp_path: Path) -> None:
    a = _write(
        tmp_path / "a.jsonl",
        [
            _line(
                "c1",
                "ann",
                ["conversation_phases", "negotiation_patterns"],
                evidence_message_ids=["m1", "m2", "m3", "m4", "m5"],
                conversation_phases=[
                    {"phase": "opening", "start_message_id": "m1", "end_message_id": "m2"},
                    {"phase": "negotiation", "start_message_id": "m3", "end_message_id": "m5"},
                ],
                negotiation_patterns=[
                    {"pattern": "self_need", "actor": "Ann", "text": "I need the firewood"},
                    {"pattern": "small_talk", "actor": "Ann", "text": "hello there friend"},
                ],
            )
        ],
    )
    b = _write(
        tmp_path / "b.jsonl",
        [
            _line(
                "c1",
                "bob",
                ["conversation_phases", "negotiation_patterns"],
                conversation_phases=[
                    {"phase": "opening", "start_message_id": "m1", "end_message_id": "m2"},
                    {"phase": "conflict", "start_message_id": "m3", "end_message_id": "m5"},
                ],
                negotiation_patterns=[
                    {"pattern": "other_need", "actor": "Ann", "text": "I need the firewood"},
                    {"pattern": "small_talk", "actor": "Ann"},
                ],
            )
        ],
    )
    report = annotator_agreement(a, b, n_resamples=20)
    phases = report.alpha["conversation_phases.phase"]
    # Paired by range: (opening, opening), (negotiation, conflict). As for claims above,
    # α = 1 − 3·2 / (16 − 6) = 0.4.
    assert (phases.units, phases.agreeing, phases.only_a, phases.only_b) == (2, 1, 0, 0)
    assert phases.alpha == pytest.approx(0.4)
    patterns = report.alpha["negotiation_patterns.pattern"]
    # The firewood moves pair by text: (self_need, other_need). B's small talk has no text,
    # so both small-talk moves stay unpaired. One unit, two labels: o[s,o] = o[o,s] = 1,
    # n = 2, α = 1 − 1·2 / (4 − 2) = 0.
    assert (patterns.units, patterns.agreeing, patterns.only_a, patterns.only_b) == (1, 0, 1, 1)
    assert patterns.alpha == pytest.approx(0.0)


# ---- symmetry (hypothesis) ---------------------------------------------------------------

_TEXTS = [HOTEL, TRAIN, GRANDMA, MUSEUM, "Sam books the train tickets", "Pay the deposit today"]
_PEOPLE = ["Ann", "Bob", "Sam"]
_IDS = [f"m{i}" for i in range(1, 7)]


@st.composite
def _extractions(draw: st.DrawFn) -> ExtractionV3:
    conf = st.none() | st.sampled_from([0.1, 0.5, 0.9, 1.0])
    claims: list[dict[str, Any]] = draw(
        st.lists(
            st.builds(
                dict,
                text=st.sampled_from(_TEXTS),
                subject=st.sampled_from(["hotel", "train", "money"]),
                polarity=st.sampled_from(["pro", "con", "neutral"]),
                confidence=conf,
            ),
            max_size=4,
        )
    )
    actions: list[dict[str, Any]] = draw(
        st.lists(
            st.builds(
                dict,
                text=st.sampled_from(_TEXTS),
                owner=st.sampled_from(_PEOPLE),
                confidence=conf,
            ),
            max_size=3,
        )
    )
    phases: list[dict[str, Any]] = draw(
        st.lists(
            st.builds(
                dict,
                phase=st.sampled_from(["opening", "planning", "closing"]),
                start_message_id=st.sampled_from(_IDS),
                end_message_id=st.sampled_from(_IDS),
            ),
            max_size=3,
        )
    )
    moves: list[dict[str, Any]] = draw(
        st.lists(
            st.builds(
                dict,
                pattern=st.sampled_from(["self_need", "other_need", "concession"]),
                actor=st.sampled_from(_PEOPLE),
                text=st.sampled_from(["", *_TEXTS[:3]]),
            ),
            max_size=3,
        )
    )
    arc: dict[str, Any] | None = draw(
        st.none()
        | st.builds(
            dict,
            opening_mood=st.sampled_from(["joy", "anger"]),
            closing_mood=st.sampled_from(["joy", "anger", "trust"]),
            trajectory=st.sampled_from(["improving", "stable"]),
        )
    )
    return ExtractionV3.model_validate(
        {
            "topics": draw(st.lists(st.sampled_from(["travel", "money", "food"]), max_size=3)),
            "summary": draw(st.sampled_from(["", *_TEXTS[:3]])),
            "entities": draw(
                st.lists(
                    st.builds(
                        dict,
                        name=st.sampled_from(["Sam", "Sam Ruiz", "Lake Hotel", "Ruiz"]),
                        type=st.sampled_from(["person", "location"]),
                    ),
                    max_size=3,
                )
            ),
            "claims": claims,
            "action_items": actions,
            "conversation_phases": phases,
            "negotiation_patterns": moves,
            "emotional_arc": arc,
            "evidence_message_ids": draw(st.lists(st.sampled_from(_IDS), max_size=3)),
        }
    )


def _records(extractions: list[ExtractionV3], who: str) -> dict[str, ExtractionRecord]:
    return {
        f"c{i}": ExtractionRecord(f"c{i}", f"human:{who}", RecordStatus.OK, e)
        for i, e in enumerate(extractions)
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_extractions(), _extractions()), min_size=1, max_size=3))
def test_agreement_is_symmetric(pairs: list[tuple[ExtractionV3, ExtractionV3]]) -> None:
    a = _records([p[0] for p in pairs], "ann")
    b = _records([p[1] for p in pairs], "bob")
    ab = records_agreement(a, b, n_resamples=10)
    ba = records_agreement(b, a, n_resamples=10)
    assert set(ab.fields) == set(ba.fields)
    for name, f in ab.fields.items():
        g = ba.fields[name]
        # The report's figure is a property of the pair, whichever file comes first.
        assert f.agreement == pytest.approx(g.agreement, abs=1e-12)
        assert f.macro == pytest.approx(g.macro, abs=1e-12)
        assert (f.items_a, f.items_b) == (g.items_b, g.items_a)
        # The symmetry claim: a symmetric scorer gives the same value both ways.
        if f.symmetric:
            assert f.a_vs_b == pytest.approx(f.b_vs_a, abs=1e-9), name
    assert set(ab.alpha) == set(ba.alpha)
    for part, x in ab.alpha.items():
        y = ba.alpha[part]
        swapped = (y.units, y.agreeing, y.only_b, y.only_a)
        assert (x.units, x.agreeing, x.only_a, x.only_b) == swapped
        if x.alpha is None:
            assert y.alpha is None
        else:
            assert y.alpha is not None and x.alpha == pytest.approx(y.alpha, abs=1e-12)


def test_confidence_is_not_symmetric_and_says_so(tmp_path: Path) -> None:
    # A's claim is stated at 0.9, B's at 0.5; both match. A→B grades B's 0.5 on a correct
    # item: ECE = |1 − 0.5| = 0.5 → 0.5. B→A grades A's 0.9: ECE 0.1 → 0.9. Mean 0.7.
    a = {
        "c1": ExtractionRecord(
            "c1",
            "human:a",
            RecordStatus.OK,
            ExtractionV3.model_validate({"claims": [{"text": HOTEL, "confidence": 0.9}]}),
        )
    }
    b = {
        "c1": ExtractionRecord(
            "c1",
            "human:b",
            RecordStatus.OK,
            ExtractionV3.model_validate({"claims": [{"text": HOTEL, "confidence": 0.5}]}),
        )
    }
    conf = records_agreement(a, b, n_resamples=10).fields["confidence"]
    assert not conf.symmetric and conf.note
    assert conf.a_vs_b == pytest.approx(0.5)
    assert conf.b_vs_a == pytest.approx(0.9)
    assert conf.agreement == pytest.approx(0.7)


def test_user_mistakes_are_input_errors(two_annotators: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = two_annotators
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(_line("c1", "x", ["claims"], claims=[{"text": "t", "polarity": "maybe"}])) + "\n"
    )
    with pytest.raises(InputError, match=r"bad\.jsonl:1 \[extraction\.claims\.0\.polarity\]"):
        annotator_agreement(a, bad)
    other = _write(tmp_path / "other.jsonl", [_line("z9", "x", ["claims"])])
    with pytest.raises(InputError, match="no chunk in common"):
        annotator_agreement(a, other)
    disjoint = _write(tmp_path / "disjoint.jsonl", [_line("c1", "x", ["topics"])])
    with pytest.raises(InputError, match="cover no field in common"):
        annotator_agreement(a, disjoint)


# ---- judge vs human ----------------------------------------------------------------------

MODEL = "simulated:light"


def _decisions(*kinds: str) -> list[ItemDecision]:
    out, kept = [], 0
    for p, kind in enumerate(kinds):
        if kind == "deleted":
            out.append(ItemDecision(prefill_index=p, decision="deleted"))
        else:
            out.append(ItemDecision(prefill_index=p, decision=kind, item_index=kept))
            kept += 1
    return out


def _gold_line(chunk_id: str, decisions: dict[str, list[ItemDecision]]) -> dict[str, Any]:
    line = GoldLine(
        chunk_id=chunk_id,
        model="human:ann",
        covers=list(decisions),
        extraction=ExtractionV3(),
        annotation=Annotation(
            annotator="ann",
            prefill=MODEL,
            updated_at="2026-01-01T00:00:00Z",
            decisions=decisions,
        ),
    )
    return line.model_dump(mode="json")


def _judgement(chunk_id: str, labels: dict[str, str], judge: str = "grounding") -> dict[str, Any]:
    return {
        "model": MODEL,
        "chunk_id": chunk_id,
        "judge": judge,
        "scored": True,
        "verdict": {
            "content_accuracy": 80,
            "completeness": 70,
            "hallucination": 90,
            "items": [{"item_id": k, "label": v, "reason": "r"} for k, v in labels.items()],
        },
    }


@pytest.fixture
def judged_run(tmp_path: Path) -> tuple[Path, Path]:
    gold = _write(
        tmp_path / "gold.jsonl",
        [
            _gold_line(
                "c1",
                {
                    "claims": _decisions("accepted", "deleted", "edited", "deleted"),
                    "action_items": _decisions("accepted", "accepted"),
                    "topics": _decisions("accepted"),  # judges do not label topics
                },
            ),
            _gold_line("c2", {"claims": _decisions("deleted", "accepted")}),
            # The run's extraction of c3 has more claims than the prefill had: left out.
            _gold_line("c3", {"claims": _decisions("accepted")}),
        ],
    )
    run = tmp_path / "run"
    run.mkdir()
    _write(
        run / "judgements.jsonl",
        [
            _judgement(
                "c1",
                {
                    "claims#0": "none",
                    "claims#1": "fabricated",
                    "claims#2": "misattributed",
                    "claims#3": "none",
                    "action_items#0": "none",
                    "action_items#1": "weak_support",
                },
            ),
            _judgement("c2", {"claims#0": "fabricated", "claims#1": "none"}),
            _judgement("c3", {"claims#0": "none", "claims#4": "fabricated"}),
        ],
    )
    return gold, run


def test_judge_kappa_by_hand(judged_run: tuple[Path, Path]) -> None:
    gold, run = judged_run
    result = judge_agreement(gold, run, n_resamples=300)
    assert (result.model, result.judge, result.annotator) == (MODEL, "grounding", "ann")
    # Items (judge label / decision):
    #   c1 claims#0 none/accepted   c1 claims#1 fabricated/deleted   c1 claims#2 misattr./edited
    #   c1 claims#3 none/deleted    c1 actions#0 none/accepted       c1 actions#1 weak/accepted
    #   c2 claims#0 fabricated/deleted                               c2 claims#1 none/accepted
    assert (result.items, result.chunks) == (8, 2)
    assert result.by_field == {"claims": 6, "action_items": 2}
    assert result.decisions == {"accepted": 4, "edited": 1, "deleted": 3}
    assert result.not_judged == 1  # c1's topic
    assert result.mismatched == ["c3 claims"]
    # "deleted": flagged & deleted 2 (c1#1, c2#0), flagged & kept 2 (c1#2, actions#1),
    # none & deleted 1 (c1#3), none & kept 3.  p_o = 5/8; P(flag) = 4/8, P(deleted) = 3/8;
    # p_e = .5·.375 + .5·.625 = .5; κ = (.625 − .5)/(1 − .5) = 0.25.
    t = result.deleted.table
    assert (t.flagged_changed, t.flagged_kept, t.clean_changed, t.clean_kept) == (2, 2, 1, 3)
    assert result.deleted.kappa == pytest.approx(0.25)
    # "deleted or edited": the misattributed claim that was edited moves to flagged & changed:
    # (3, 1, 1, 3); p_o = 6/8, p_e = .5·.5 + .5·.5 = .5, κ = (.75 − .5)/.5 = 0.5.
    t = result.deleted_or_edited.table
    assert (t.flagged_changed, t.flagged_kept, t.clean_changed, t.clean_kept) == (3, 1, 1, 3)
    assert result.deleted_or_edited.kappa == pytest.approx(0.5)
    for reading in (result.deleted, result.deleted_or_edited):
        assert reading.interval.low <= reading.kappa <= reading.interval.high


def test_kappa_of_table_is_the_existing_kappa() -> None:
    assert kappa_of_table([2, 2, 1, 3]) == pytest.approx(0.25)
    # Both raters constant and equal: cohen_kappa's rule, κ = 1.
    assert kappa_of_table([0, 0, 0, 5]) == cohen_kappa([False] * 5, [False] * 5) == 1.0
    # The judge flags nothing, the person deletes some: κ = 0 from the formula.
    assert kappa_of_table([0, 0, 2, 3]) == pytest.approx(0.0)


def test_judge_mistakes(judged_run: tuple[Path, Path], tmp_path: Path) -> None:
    gold, run = judged_run
    with pytest.raises(InputError, match="no scored judgement of model 'other'"):
        judge_agreement(gold, run, model="other")
    with (run / "judgements.jsonl").open("a") as f:
        f.write(json.dumps(_judgement("c1", {"claims#0": "none"}, judge="llm")) + "\n")
    with pytest.raises(InputError, match="choose one"):
        judge_agreement(gold, run)
    assert judge_agreement(gold, run, judge="grounding", n_resamples=20).items == 8
    plain = _write(tmp_path / "plain.jsonl", [_line("c1", "x", ["claims"])])
    with pytest.raises(InputError, match="no line has an annotation block"):
        judge_agreement(plain, run)
    with pytest.raises(InputError, match=r"judgements\.jsonl: the run has no judgements"):
        judge_agreement(gold, tmp_path)


# ---- the command -------------------------------------------------------------------------


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_cli_json_and_table(
    two_annotators: tuple[Path, Path], judged_run: tuple[Path, Path]
) -> None:
    a, b = two_annotators
    code, out, err = _run(
        ["annotate", "agreement", str(a), str(b), "--resamples", "50", "--format", "json"]
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["version"] == 1
    assert data["fields"]["claims"]["micro"] == pytest.approx(0.4 + 0.275 * 2 / 3)
    assert data["alpha"]["claims.polarity"]["alpha"] == pytest.approx(0.4)
    assert data["judges"] == []

    code, out, err = _run(["annotate", "agreement", str(a), str(b), "--resamples", "50"])
    assert code == 0, err
    assert "claims.polarity" in out and "0.583" in out
    assert max(len(line) for line in out.splitlines()) <= 80

    gold, run = judged_run
    code, out, err = _run(
        [
            "annotate",
            "agreement",
            str(gold),
            "--run",
            str(run),
            "--resamples",
            "50",
            "--format",
            "json",
        ]
    )
    assert code == 0, err
    assert json.loads(out)["deleted"]["kappa"] == pytest.approx(0.25)
    code, out, err = _run(
        ["annotate", "agreement", str(gold), "--run", str(run), "--resamples", "50"]
    )
    assert code == 0, err
    assert "0.250" in out and max(len(line) for line in out.splitlines()) <= 80

    # Two files, one with decisions: the judge against that one (a note for the other).
    code, out, err = _run(
        [
            "annotate",
            "agreement",
            str(a),
            str(gold),
            "--run",
            str(run),
            "--resamples",
            "20",
            "--format",
            "json",
        ]
    )
    assert code == 0, err
    judges = json.loads(out)["judges"]
    assert [j["gold"] for j in judges] == [str(gold)]
    assert judges[0]["deleted"]["kappa"] == pytest.approx(0.25)


def test_cli_exit_codes(two_annotators: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two_annotators
    code, _, err = _run(["annotate", "agreement", str(a)])
    assert code == 2 and "--run" in err
    code, _, err = _run(["annotate", "agreement", str(a), str(tmp_path / "missing.jsonl")])
    assert code == 2 and "missing.jsonl" in err
    code, _, err = _run(["annotate", "agreement", str(a), str(b), "--judge", "x"])
    assert code == 2 and "--run" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"chunk_id": "c1", "extraction": {"claims": [{"text": ""}]}}\n')
    code, _, err = _run(["annotate", "agreement", str(a), str(bad)])
    assert code == 2
    assert err.startswith("error: ") and "bad.jsonl:1 [extraction.claims.0.text]" in err
    assert len(err.strip().splitlines()) == 1


def test_chunks_file_resolves_names_and_bounds_the_chunks(
    two_annotators: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = two_annotators
    b = _write(
        tmp_path / "b_short.jsonl",
        [
            _line("c1", "bob", ["claims"], claims=[_claim(HOTEL, "hotel", "con")]),
            _line(
                "c3",
                "bob",
                ["action_items"],
                action_items=[{"text": "Sam books the train tickets", "owner": "sam ruiz"}],
            ),
        ],
    )

    def chunk(cid: str) -> dict[str, Any]:
        return {
            "chunk_id": cid,
            "participants": ["Sam Ruiz", "Ness Alderton"],
            "messages": [{"id": "m1", "speaker": "Sam Ruiz", "text": "hi"}],
        }

    chunks = _write(tmp_path / "chunks.jsonl", [chunk("c1"), chunk("c3")])
    report = annotator_agreement(a, b, chunks=chunks, n_resamples=20)
    assert report.chunks_file == str(chunks)
    assert report.chunks == 2  # c1 and c3
    assert report.unknown_chunks == ["c2"]  # A's c2 is not in the chunks file
    assert report.only_a == [] and report.only_b == []
    # "Sam" and "sam ruiz" both resolve to the participant Sam Ruiz: the owner agrees, 1.0.
    assert report.fields["action_items"].agreement == pytest.approx(1.0)
    # c1: A's hotel and train claims against B's hotel claim: P = 1, R = 1/2, F1 = 2/3;
    # polarity 1 (con/con); one matched claim, same subject: 1; matched share 2·1/(2+1) = 2/3.
    # 0.60·2/3 + (0.25 + 0.15)·2/3 = 0.4 + 0.2667 = 0.6667.
    assert report.fields["claims"].agreement == pytest.approx(0.4 + 0.4 * 2 / 3)
