"""Layer 3 — downstream consumers (DESIGN.md §5), numbers worked out by hand."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from chatledger.cli._app import main
from chatledger.core import (
    Chunk,
    ExtractionRecord,
    ExtractionV3,
    InputError,
    Message,
    RecordStatus,
)
from chatledger.corpus import parse_extraction_line, read_chunks, read_extractions
from chatledger.downstream import (
    CONSUMER_NAMES,
    CONSUMERS,
    ArcPoint,
    ConsumerOutput,
    DriftConsumer,
    DriftEvent,
    LoopItem,
    LoopsConsumer,
    build_conversations,
    cohen_kappa,
    get_consumer,
    render_pipeline_markdown,
    resolve_weights,
    run_downstream,
)

PEOPLE = ["Ness Alderton", "Sam Ruiz"]
EXAMPLES = Path(str(resources.files("chatledger") / "data" / "examples"))
CORPUS = Path(str(resources.files("chatledger") / "data" / "corpus"))


# --- builders ------------------------------------------------------------------------------


def chunk(cid: str, conversation: str, when: str | None, n_messages: int = 3) -> Chunk:
    """A chunk whose messages are one minute apart from ``when`` (or undated)."""
    messages = []
    for i in range(n_messages):
        stamp = f"{when}:{i:02d}Z" if when else None
        speaker = PEOPLE[i % 2]
        messages.append({"id": f"{cid}-m{i}", "speaker": speaker, "timestamp": stamp, "text": "hi"})
    return Chunk.model_validate(
        {
            "chunk_id": cid,
            "conversation_id": conversation,
            "participants": PEOPLE,
            "messages": messages,
        }
    )


def record(cid: str, **fields: Any) -> ExtractionRecord:
    return ExtractionRecord(
        chunk_id=cid,
        model="test",
        status=RecordStatus.OK,
        extraction=ExtractionV3.model_validate(fields),
    )


def records(**by_chunk: dict[str, Any]) -> dict[str, ExtractionRecord]:
    return {cid: record(cid, **fields) for cid, fields in by_chunk.items()}


def claim(speaker: str, subject: str, polarity: str, text: str = "") -> dict[str, Any]:
    return {
        "text": text or f"{speaker} on {subject}",
        "subject": subject,
        "polarity": polarity,
        "speaker": speaker,
    }


def agreements(chunks: list[Chunk], ref: dict[str, ExtractionRecord], chal: dict[str, Any]) -> Any:
    report = run_downstream(chunks, ref, chal)
    return {name: c.agreement for name, c in report.consumers.items()}


# --- conversations -------------------------------------------------------------------------


def test_conversations_follow_timestamps_then_file_order() -> None:
    # File order c3, c1, c2, cx; times put c1 (10:00) before c2 (11:00) before c3 (12:00);
    # cx has no timestamp and stays right after its file predecessor c2.
    chunks = [
        chunk("c3", "a", "2026-03-01T12:00"),
        chunk("c1", "a", "2026-03-01T10:00"),
        chunk("c2", "a", "2026-03-01T11:00"),
        chunk("cx", "a", None),
        chunk("d1", "b", "2026-03-05T09:00"),
    ]
    conversations = build_conversations(chunks, {})
    assert [c.conversation_id for c in conversations] == ["a", "b"]
    assert [v.chunk_id for v in conversations[0].chunks] == ["c1", "c2", "cx", "c3"]
    assert [v.ref.day for v in conversations[0].chunks] == [
        "2026-03-01",
        "2026-03-01",
        "undated",
        "2026-03-01",
    ]
    assert conversations[0].chunks[0].extraction == ExtractionV3()  # absent → empty


def test_bad_timestamp_is_an_input_error() -> None:
    data = {
        "chunk_id": "c1",
        "messages": [{"id": "m1", "speaker": "A", "timestamp": "yesterday", "text": "x"}],
    }
    # Refused where a chunk is read (its file and line named: tests/test_stranger_inputs.py)…
    with pytest.raises(ValidationError, match="'yesterday' is not an ISO 8601"):
        Chunk.model_validate(data)
    # …and by the consumers for a chunk built without validation.
    bad = Chunk.model_construct(
        chunk_id="c1",
        messages=[Message.model_construct(id="m1", speaker="A", timestamp="yesterday", text="x")],
    )
    with pytest.raises(InputError, match="not an ISO 8601"):
        build_conversations([bad], {})


def test_registry_rebuilds_the_five_consumers_by_name() -> None:
    assert set(CONSUMERS.names()) == set(CONSUMER_NAMES)
    assert set(CONSUMER_NAMES) == {"drift", "loops", "escalation", "arcs", "daily_report"}
    assert isinstance(get_consumer("drift"), DriftConsumer)
    with pytest.raises(InputError, match=r"^unknown downstream consumer 'sentiment' \(known: "):
        get_consumer("sentiment")


# --- drift ---------------------------------------------------------------------------------


def drift_run() -> tuple[list[Chunk], dict[str, ExtractionRecord]]:
    # "Ness" resolves to "Ness Alderton" (fuzzy ≥ 0.70); subjects "the budget" and "budget"
    # cluster (token set of one contains the other → 100 ≥ 60).
    chunks = [chunk("b2", "plan", "2026-03-02T10:00"), chunk("b1", "plan", "2026-03-01T10:00")]
    ref = records(
        b1={"claims": [claim("Ness", "the budget", "con"), claim("Sam Ruiz", "venue", "pro")]},
        b2={"claims": [claim("Ness Alderton", "budget", "pro"), claim("Sam", "venue", "pro")]},
    )
    return chunks, ref


def test_drift_con_to_pro_across_two_chunks() -> None:
    chunks, ref = drift_run()
    output = DriftConsumer().build(build_conversations(chunks, ref))
    # b1 comes first by time although it is second in the file; Sam stays pro → no event.
    assert output.events == (
        DriftEvent("plan", "b2", 1, "Ness Alderton", "the budget", "con", "pro"),
    )
    report = render_pipeline_markdown(chunks, ref)
    assert "- drift: Ness Alderton on the budget: con -> pro" in report
    assert "#### 2026-03-02" in report


def test_drift_agreement_by_hand() -> None:
    def ev(speaker: str, subject: str, a: str, b: str, pos: int) -> DriftEvent:
        return DriftEvent("plan", f"c{pos}", pos, speaker, subject, a, b)

    ref = ConsumerOutput(
        "drift", (ev("Ness", "budget", "con", "pro", 1), ev("Sam", "venue", "pro", "con", 3)), ()
    )
    chal = ConsumerOutput(
        "drift",
        (
            ev("Ness", "the budget", "con", "pro", 2),  # ±1 chunk, subject 100 → match
            ev("Sam", "venue", "con", "pro", 3),  # wrong direction → no match
            ev("Ness", "budget", "con", "pro", 4),  # 3 chunks from the reference → no match
        ),
        (),
    )
    result = DriftConsumer().agreement(ref, chal)
    # matched 1, |ref| 2, |chal| 3 → F1 = 2·1 / (2 + 3) = 0.4
    assert result.agreement == pytest.approx(0.4)
    assert result.details["matched"] == 1
    assert [e.position for e in result.missed] == [3]
    assert [e.position for e in result.invented] == [3, 4]


# --- loops ---------------------------------------------------------------------------------


CABLES = "Who is bringing the spare cables?"


def loop_chunks(n: int) -> list[Chunk]:
    return [chunk(f"l{i}", "gig", f"2026-04-0{i}T18:00") for i in range(1, n + 1)]


def test_loop_across_three_chunks() -> None:
    chunks = loop_chunks(3)
    ref = records(
        l1={"open_questions": [{"text": CABLES}]},
        l2={"open_questions": [{"text": "who brings the spare cables"}]},
        l3={"open_questions": [{"text": "Spare cables - who is bringing them?"}]},
    )
    loops = LoopsConsumer().build(build_conversations(chunks, ref)).events
    assert loops == (LoopItem("gig", CABLES, ("l1", "l2", "l3"), (0, 1, 2)),)


def test_a_loop_answered_later_is_no_loop() -> None:
    chunks = loop_chunks(4)
    asked = {
        "l1": {"open_questions": [{"text": CABLES}]},
        "l2": {"open_questions": [{"text": CABLES}]},
        "l3": {"open_questions": [{"text": CABLES}]},
    }
    answered = records(**asked, l4={"qa_pairs": [{"question": CABLES, "answer": "Theo"}]})
    assert LoopsConsumer().build(build_conversations(chunks, answered)).events == ()
    # an empty answer answers nothing
    empty = records(**asked, l4={"qa_pairs": [{"question": CABLES, "answer": " "}]})
    assert len(LoopsConsumer().build(build_conversations(chunks, empty)).events) == 1
    # answered in l2 but asked again in l3: open again
    reopened = records(
        l1=asked["l1"],
        l2={"qa_pairs": [{"question": CABLES, "answer": "Theo"}]},
        l3=asked["l3"],
    )
    assert len(LoopsConsumer().build(build_conversations(chunks, reopened)).events) == 1
    # an open action item closed by a later done item, or by a decision
    task = {"text": "Book the rehearsal studio", "status": "open"}
    done = records(
        l1={"action_items": [task]},
        l2={"action_items": [task]},
        l3={"action_items": [{**task, "status": "done"}]},
    )
    assert LoopsConsumer().build(build_conversations(chunks, done)).events == ()
    decided = records(
        l1={"action_items": [task]},
        l2={"action_items": [task], "decisions": [{"text": "book the rehearsal studio"}]},
    )
    assert LoopsConsumer().build(build_conversations(chunks, decided)).events == ()


def test_loop_agreement_by_hand() -> None:
    ref = ConsumerOutput(
        "loops",
        (
            LoopItem("gig", CABLES, ("l1", "l2"), (0, 1)),
            LoopItem("gig", "Book the studio", ("l1", "l3"), (0, 2)),
        ),
        (),
    )
    chal = ConsumerOutput(
        "loops", (LoopItem("gig", "who brings the spare cables", ("l2", "l3"), (1, 2)),), ()
    )
    # 1 match of 2 reference and 1 challenger loops → F1 = 2·1 / 3
    assert LoopsConsumer().agreement(ref, chal).agreement == pytest.approx(2 / 3)


# --- escalation ----------------------------------------------------------------------------


def test_escalation_f1_and_kappa_by_hand() -> None:
    chunks = [chunk(f"e{i}", "deal", f"2026-05-01T1{i}:00") for i in range(1, 5)]
    ref = records(
        e1={"negotiation_patterns": [{"pattern": "ultimatum", "actor": "Sam"}]},
        e2={"emotional_tone": [{"speaker": "Ness", "emotion": "anger", "intensity": 0.8}]},
        e3={},
        e4={
            "conversation_phases": [
                {"phase": "conflict", "start_message_id": "e4-m0", "end_message_id": "e4-m2"}
            ],
            "emotional_tone": [{"speaker": "Sam", "emotion": "sadness", "intensity": 0.9}],
        },
    )
    chal = records(
        e1={"negotiation_patterns": [{"pattern": "ultimatum", "actor": "Sam"}]},
        e2={"emotional_tone": [{"speaker": "Ness", "emotion": "anger", "intensity": 0.6}]},
        e3={"warnings": [{"text": "walk away", "severity": "high"}]},
        e4={
            "conversation_phases": [
                {"phase": "conflict", "start_message_id": "e4-m0", "end_message_id": "e4-m1"}
            ]
        },
    )
    result = run_downstream(chunks, ref, chal).consumers["escalation"].result
    # ref {e1 arg, e2 peak, e4 arg, e4 peak}; chal {e1 arg, e3 arg, e4 arg}; common 2
    # F1 = 2·2 / (4 + 3) = 4/7
    assert result.agreement == pytest.approx(4 / 7)
    # κ over 8 (chunk, flag) units: argument R=1001 C=1011, peak R=0101 C=0000.
    # p_o = 5/8, p_R = 4/8, p_C = 3/8, p_e = .5·.375 + .5·.625 = .5 → κ = (.625-.5)/.5 = .25
    assert result.details["kappa"] == pytest.approx(0.25)
    # argument: p_o = 3/4, p_R = .5, p_C = .75, p_e = .5 → κ = .5; peak: p_o = .5, p_e = .5 → 0
    assert result.details["kappa_argument"] == pytest.approx(0.5)
    assert result.details["kappa_emotional_peak"] == pytest.approx(0.0)
    assert [(f.chunk_id, f.flag) for f in result.missed] == [
        ("e2", "emotional_peak"),
        ("e4", "emotional_peak"),
    ]
    assert [(f.chunk_id, f.flag) for f in result.invented] == [("e3", "argument")]


def test_kappa_of_constant_raters() -> None:
    assert cohen_kappa([False, False], [False, False]) == 1.0  # p_e = 1: identical → 1.0
    assert cohen_kappa([True, True], [False, False]) == 0.0  # p_o = p_e = 0 → 0.0
    # one rater constant: p_o = 2/3, p_e = 1·2/3 → κ = 0
    assert cohen_kappa([False] * 3, [True, False, False]) == pytest.approx(0.0)
    assert cohen_kappa([], []) == 1.0


# --- arcs ----------------------------------------------------------------------------------


def arc(closing: str, trajectory: str) -> dict[str, Any]:
    mood = {"opening_mood": "neutral", "closing_mood": closing, "trajectory": trajectory}
    return {"emotional_arc": mood}


def test_arcs_fraction_by_hand() -> None:
    chunks = [chunk(f"a{i}", "mood", f"2026-06-01T1{i}:00") for i in range(1, 6)]
    ref = records(
        a1=arc("joy", "improving"),
        a2=arc("anger", "worsening"),
        a3=arc("neutral", "stable"),
        a5=arc("sadness", "worsening"),
    )
    chal = records(
        a1=arc("trust", "improving"),  # positive = positive, same trajectory → agree
        a2=arc("fear", "worsening"),  # negative = negative → agree
        a3=arc("surprise", "volatile"),  # neutral = neutral, trajectory differs → disagree
        # a4: no arc on either side → agree; a5: arc on one side only → disagree
    )
    result = run_downstream(chunks, ref, chal).consumers["arcs"].result
    assert result.agreement == pytest.approx(3 / 5)  # a1, a2, a4 of 5 chunks
    assert result.details["valence_agreement"] == pytest.approx(4 / 5)  # a1 a2 a3 a4
    assert result.details["trajectory_agreement"] == pytest.approx(3 / 5)  # a1 a2 a4
    assert [p.chunk_id for p in result.missed] == ["a3", "a5"]
    assert result.invented == (ArcPoint("mood", "a3", 2, "neutral", "volatile"),)


# --- daily report --------------------------------------------------------------------------


def test_daily_report_of_two_days_by_hand() -> None:
    chunks = [chunk(f"t{i}", "trip", f"2026-05-0{i}T09:00") for i in range(1, 4)]
    deposit = {"text": "Send the deposit", "owner": "Sam", "status": "open"}
    ref = records(
        t1={"decisions": [{"text": "Book the cabin by the lake"}], "action_items": [deposit]},
        t2={
            "decisions": [{"text": "Rent a car for the trip"}],
            "action_items": [{**deposit, "status": "done"}],
        },
    )
    outputs = run_downstream(chunks, ref, ref).outputs("reference")
    lines = [h.line for h in outputs["daily_report"].events]
    # the deposit (done on day 2) matches day 1's item: not new, so it is reported once
    assert lines == [
        "decision: Book the cabin by the lake",
        "action: Sam Ruiz: Send the deposit",
        "decision: Rent a car for the trip",
    ]
    chal = records(
        t1={"decisions": [{"text": "Book the lake cabin"}]},
        t2={"decisions": [{"text": "Rent a car"}]},
        t3={"decisions": [{"text": "Buy snacks"}]},
    )
    result = run_downstream(chunks, ref, chal).consumers["daily_report"].result
    # day 1: ref 2 lines, chal 1, the decisions match (token set: subset → 100) → 2·1/3 = 2/3
    # day 2: ref 1, chal 1, "rent a car" ⊂ "rent a car for the trip" → 100 → F1 1.0
    # day 3: challenger only → 0.  Mean over the union of 3 days = (2/3 + 1 + 0) / 3 = 5/9
    assert [d["f1"] for d in result.details["days"]] == pytest.approx([2 / 3, 1.0, 0.0])
    assert result.agreement == pytest.approx(5 / 9)
    assert [h.line for h in result.missed] == ["action: Sam Ruiz: Send the deposit"]
    assert [h.line for h in result.invented] == ["decision: Buy snacks"]
    # Two-day-only comparison (drop day 3): (2/3 + 1) / 2 = 5/6
    del chal["t3"]
    assert agreements(chunks, ref, chal)["daily_report"] == pytest.approx(5 / 6)


def test_daily_report_lines_keep_direction_and_flag_apart() -> None:
    # token_set would score "pro -> con" vs "con -> pro" 100; the guard keeps them apart.
    chunks = [chunk("x1", "c", "2026-07-01T09:00"), chunk("x2", "c", "2026-07-01T10:00")]
    ref = records(
        x1={"claims": [claim("Sam", "price", "pro")]},
        x2={
            "claims": [claim("Sam", "price", "con")],
            "negotiation_patterns": [{"pattern": "ultimatum"}],
        },
    )
    chal = records(
        x1={"claims": [claim("Sam", "price", "con")]},
        x2={
            "claims": [claim("Sam", "price", "pro")],
            "emotional_tone": [{"speaker": "Sam", "emotion": "anger", "intensity": 0.9}],
        },
    )
    result = run_downstream(chunks, ref, chal)
    # ref lines: drift pro->con, escalation argument; chal: drift con->pro, emotional peak
    assert result.consumers["daily_report"].agreement == 0.0
    assert result.consumers["drift"].agreement == 0.0


# --- self-comparison and empty outputs -----------------------------------------------------


def synthetic_corpus() -> tuple[list[Chunk], dict[str, ExtractionRecord]]:
    """Two conversations over three days with drifts, loops, escalations, arcs and actions."""
    chunks = [chunk(f"s{i}", "alpha", f"2026-08-0{1 + i // 2}T1{i}:00") for i in range(6)]
    chunks += [chunk("u1", "beta", None), chunk("u2", "beta", None)]
    question = {"open_questions": [{"text": "When do we pay the venue?"}]}
    ref = records(
        s0={
            "claims": [claim("Ness", "venue", "pro"), claim("Sam", "catering", "con")],
            "action_items": [{"text": "Call the venue", "owner": "Ness"}],
            **question,
            **arc("joy", "improving"),
        },
        s1={
            "claims": [claim("Ness", "the venue", "con")],
            "negotiation_patterns": [{"pattern": "ultimatum", "actor": "Sam"}],
            **question,
            **arc("anger", "worsening"),
        },
        s2={
            "claims": [claim("Sam", "catering", "pro"), claim("Ness", "venue", "neutral")],
            "decisions": [{"text": "Use the cheaper caterer"}],
            "emotional_tone": [{"speaker": "Sam", "emotion": "fear", "intensity": 0.75}],
            **question,
        },
        s3={"action_items": [{"text": "Call the venue", "owner": "Ness", "status": "done"}]},
        s4={"warnings": [{"text": "deposit lost", "severity": "high"}], **arc("trust", "stable")},
        s5={"claims": [claim("Ness", "venue", "pro")], "decisions": [{"text": "Pay on Friday"}]},
        u1={"open_questions": [{"text": "Who drives?"}], **arc("neutral", "volatile")},
        u2={"open_questions": [{"text": "who drives"}], "decisions": [{"text": "Sam drives"}]},
    )
    return chunks, ref


def corpus_inputs() -> list[tuple[str, list[Chunk], dict[str, ExtractionRecord]]]:
    return [
        (
            "bundled example",
            read_chunks(EXAMPLES / "chunks.jsonl"),
            read_extractions(EXAMPLES / "reference.jsonl").records,
        ),
        ("synthetic", *synthetic_corpus()),
    ]


def assert_self_agreement(chunks: list[Chunk], ref: dict[str, ExtractionRecord]) -> None:
    report = run_downstream(chunks, ref, dict(ref))
    for name, result in report.consumers.items():
        assert result.agreement == 1.0, name
        assert result.result.missed == () and result.result.invented == (), name
    assert report.downstream_composite == 1.0
    for name in CONSUMER_NAMES:
        ref_events = report.consumers[name].reference.events
        assert ref_events == report.consumers[name].challenger.events


@pytest.mark.parametrize("case", corpus_inputs(), ids=lambda c: c[0])
def test_self_comparison_is_exactly_one(case: tuple[str, list[Chunk], Any]) -> None:
    _, chunks, ref = case
    assert_self_agreement(chunks, ref)


def test_self_comparison_on_the_bundled_corpus() -> None:
    # The package ships the corpus (two parts of chunks and gold): never a skip.
    assert len(list((CORPUS / "parts").glob("*.jsonl"))) == 4
    chunks: list[Chunk] = []
    extractions: dict[str, ExtractionRecord] = {}
    for path in sorted(CORPUS.rglob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            data = json.loads(line)
            if isinstance(data.get("chunk"), dict):
                chunks.append(Chunk.model_validate(data["chunk"]))
            elif "messages" in data:
                chunks.append(Chunk.model_validate(data))
            if "extraction" in data:
                rec, _ = parse_extraction_line(line, path=str(path), line=number)
                if rec is not None:
                    extractions.setdefault(rec.chunk_id, rec)
    assert chunks, "no chunk lines found in the bundled corpus"
    assert_self_agreement(chunks, extractions)


def test_synthetic_corpus_exercises_every_consumer() -> None:
    chunks, ref = synthetic_corpus()
    outputs = run_downstream(chunks, ref, ref).outputs("reference")
    drift = [
        (e.speaker, e.from_polarity, e.to_polarity, e.chunk_id) for e in outputs["drift"].events
    ]
    # Ness on venue: pro (s0) → con (s1) → neutral (s2) → pro (s5); Sam on catering: con → pro
    assert drift == [
        ("Ness Alderton", "pro", "con", "s1"),
        ("Sam Ruiz", "con", "pro", "s2"),
        ("Ness Alderton", "con", "neutral", "s2"),
        ("Ness Alderton", "neutral", "pro", "s5"),
    ]
    # the venue question recurs in s0-s2 and no decision matches it ("Pay on Friday" scores
    # 37.8 < 60); "who drives" is decided in u2 at its last mention ("Sam drives": 75) → no loop.
    # (As one cluster with "Call the venue" (78), it would have been closed by s3's done item.)
    assert [loop.text for loop in outputs["loops"].events] == ["When do we pay the venue?"]
    flags = [(f.chunk_id, f.flag) for f in outputs["escalation"].events]
    assert flags == [("s1", "argument"), ("s2", "emotional_peak"), ("s4", "argument")]
    assert len(outputs["arcs"].events) == 4
    days = {h.day for h in outputs["daily_report"].events}
    assert days == {"2026-08-01", "2026-08-02", "2026-08-03", "undated"}


def test_two_empty_outputs_agree() -> None:
    chunks, ref = synthetic_corpus()
    invalid = {
        cid: ExtractionRecord(chunk_id=cid, model="x", status=RecordStatus.INVALID) for cid in ref
    }
    for left, right in (({}, {}), (invalid, {})):
        report = run_downstream(chunks, left, right)
        assert all(r.agreement == 1.0 for r in report.consumers.values())
        # No event on either side gives no evidence (DESIGN.md §5): every consumer is left
        # out, the layer has no composite, and the output says why.
        assert report.downstream_composite is None
        assert report.left_out == dict.fromkeys(CONSUMER_NAMES, "no events")
        assert report.renormalisation is not None
        assert report.renormalisation.endswith("nothing left: no downstream")
    # one side empty: only arcs keeps credit for the 4 of 8 chunks without an arc → 0.5
    empty = agreements(chunks, ref, {})
    assert empty == {
        "drift": 0.0,
        "loops": 0.0,
        "escalation": 0.0,
        "arcs": 0.5,
        "daily_report": 0.0,
    }


def test_report_dict_and_weights() -> None:
    chunks, ref = synthetic_corpus()
    report = run_downstream(chunks, ref, {}, weights={"arcs": 0.4, "drift": 0})
    data = report.to_dict()
    assert set(data) == {"consumers", "downstream_composite"}
    assert list(data["consumers"]) == list(CONSUMER_NAMES)
    assert data["consumers"]["arcs"]["agreement"] == 0.5
    # weights merged into the defaults: drift 0, loops 0.2, escalation 0.2, arcs 0.4,
    # daily 0.2 (sum 1); only arcs agrees (0.5) → 0.4·0.5 = 0.2
    assert data["downstream_composite"] == pytest.approx(0.2)
    assert data["consumers"]["arcs"]["weight"] == pytest.approx(0.4)
    json.dumps(data)  # JSON-ready
    with pytest.raises(InputError, match="unknown downstream consumer"):
        run_downstream(chunks, ref, ref, weights={"mood": 1})
    with pytest.raises(InputError, match=r"sum to 0\.000 after merging"):
        run_downstream(chunks, ref, ref, weights=dict.fromkeys(CONSUMER_NAMES, 0))


def test_consumer_weights_follow_the_one_weight_rule() -> None:
    # Defaults are equal (0.2 each): the composite is the plain mean, as with weights of 1.
    assert resolve_weights() == dict.fromkeys(CONSUMER_NAMES, 0.2)
    assert resolve_weights({"drift": 0.3, "daily_report": "0.1"}) == {
        "drift": 0.3,
        "loops": 0.2,
        "escalation": 0.2,
        "arcs": 0.2,
        "daily_report": 0.1,
    }
    with pytest.raises(InputError) as info:
        resolve_weights({"drift": 0.5, "loops": 0.5})  # unnamed consumers keep 0.2
    assert str(info.value) == (
        "consumer weights sum to 1.600 after merging with the defaults (drift 0.5, loops 0.5, "
        "escalation 0.2, arcs 0.2, daily_report 0.2): make them sum to 1 "
        "(set a weight to 0 to leave it out)"
    )
    for bad in (float("nan"), float("inf"), -0.1, "lots", True, None):
        with pytest.raises(InputError, match="weight of 'drift' must be a") as info:
            resolve_weights({"drift": bad})
        assert info.value.field == "drift"


# --- properties ----------------------------------------------------------------------------

POLARITIES = ("pro", "con", "neutral")
SPEAKERS = ("Ness", "Sam")
SUBJECTS = ("budget", "venue", "catering")
CHUNKS4 = [chunk(f"p{i}", "prop", f"2026-09-01T1{i}:00") for i in range(4)]
FLIP = {"pro": "con", "con": "pro", "neutral": "neutral"}

claim_lists = st.lists(
    st.tuples(st.sampled_from(SPEAKERS), st.sampled_from(SUBJECTS), st.sampled_from(POLARITIES)),
    max_size=4,
)


def drift_agreement(ref: dict[str, Any], chal: dict[str, Any]) -> float:
    consumer = DriftConsumer()
    ref_out = consumer.build(build_conversations(CHUNKS4, ref))
    chal_out = consumer.build(build_conversations(CHUNKS4, chal))
    return consumer.agreement(ref_out, chal_out).agreement


@settings(max_examples=60, deadline=None)
@given(per_chunk=st.lists(claim_lists, min_size=4, max_size=4), data=st.data())
def test_flipping_polarities_never_raises(per_chunk: list[Any], data: st.DataObject) -> None:
    ref = records(
        **{f"p{i}": {"claims": [claim(*c) for c in cs]} for i, cs in enumerate(per_chunk)}
    )
    flips = [
        data.draw(st.lists(st.booleans(), min_size=len(cs), max_size=len(cs))) for cs in per_chunk
    ]
    chal = records(
        **{
            f"p{i}": {
                "claims": [
                    claim(s, subj, FLIP[p] if flip else p)
                    for (s, subj, p), flip in zip(cs, fl, strict=True)
                ]
            }
            for i, (cs, fl) in enumerate(zip(per_chunk, flips, strict=True))
        }
    )
    value = drift_agreement(ref, chal)
    assert 0.0 <= value <= 1.0
    n_ref = len(DriftConsumer().build(build_conversations(CHUNKS4, ref)).events)
    if not any(any(fl) for fl in flips):
        assert value == 1.0
    elif all(all(fl) for fl in flips):
        # Flipping every claim is a relabelling (pro↔con, neutral fixed): the challenger's drift
        # events are exactly the reference's with both polarities relabelled. (Agreement itself
        # can stay 1.0: pro→con→pro flipped is con→pro→con, the same two directions.)
        def key(e: Any) -> tuple[str, ...]:
            return (e.chunk_id, e.speaker, e.subject, e.from_polarity, e.to_polarity)

        ref_events = DriftConsumer().build(build_conversations(CHUNKS4, ref)).events
        chal_events = DriftConsumer().build(build_conversations(CHUNKS4, chal)).events
        relabelled = sorted(
            (e.chunk_id, e.speaker, e.subject, FLIP[e.from_polarity], FLIP[e.to_polarity])
            for e in ref_events
        )
        assert sorted(key(e) for e in chal_events) == relabelled
        assert len(ref_events) == n_ref


def test_flipping_a_constructed_case_lowers_drift() -> None:
    chunks, ref = drift_run()
    flipped = {
        cid: record(
            cid,
            claims=[
                {**c.model_dump(), "polarity": FLIP[c.polarity]}
                for c in (r.extraction or ExtractionV3()).claims
            ],
        )
        for cid, r in ref.items()
    }
    consumer = DriftConsumer()
    before = consumer.agreement(
        consumer.build(build_conversations(chunks, ref)),
        consumer.build(build_conversations(chunks, ref)),
    )
    after = consumer.agreement(
        consumer.build(build_conversations(chunks, ref)),
        consumer.build(build_conversations(chunks, flipped)),
    )
    assert before.agreement == 1.0
    assert after.agreement < before.agreement  # con→pro became pro→con: F1 0
    assert after.agreement == 0.0


LOOP_TEXTS = (
    "Who is bringing the spare cables?",
    "When do we pay the venue deposit?",
    "Which hotel should the band book?",
    "Is the drummer available on Sunday?",
)


@settings(max_examples=30, deadline=None)
@given(dropped=st.sets(st.sampled_from(range(len(LOOP_TEXTS))), min_size=1))
def test_dropping_open_questions_lowers_loop_agreement(dropped: set[int]) -> None:
    chunks = CHUNKS4[:3]
    questions = [{"text": t} for t in LOOP_TEXTS]
    kept = [q for i, q in enumerate(questions) if i not in dropped]
    ref = records(**{c.chunk_id: {"open_questions": questions} for c in chunks})
    chal = records(**{c.chunk_id: {"open_questions": kept} for c in chunks})
    consumer = LoopsConsumer()
    value = consumer.agreement(
        consumer.build(build_conversations(chunks, ref)),
        consumer.build(build_conversations(chunks, chal)),
    ).agreement
    n, k = len(LOOP_TEXTS), len(dropped)
    # n reference loops, n - k challenger loops, all of them matched: F1 = 2(n-k) / (2n-k) < 1
    assert value == pytest.approx(2 * (n - k) / (2 * n - k))
    assert value < 1.0


# --- CLI -----------------------------------------------------------------------------------


def example_args(*extra: str) -> list[str]:
    return [
        "downstream",
        "--reference",
        str(EXAMPLES / "reference.jsonl"),
        "--challenger",
        str(EXAMPLES / "challenger.jsonl"),
        "--chunks",
        str(EXAMPLES / "chunks.jsonl"),
        *extra,
    ]


def test_cli_downstream_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(example_args("--format", "json")) == 0
    data = json.loads(capsys.readouterr().out)  # stdout is only JSON
    assert set(data) == {"consumers", "downstream_composite", "left_out", "renormalisation"}
    got = {name: c["agreement"] for name, c in data["consumers"].items()}
    # The example challenger changes the trajectory (improving → stable: arcs 0 of 1 chunk) and
    # the action owner (day's action line missed and invented: F1 = 2·1/(2+2) = 0.5); nothing
    # else the consumers read differs.
    assert got == {"drift": 1.0, "loops": 1.0, "escalation": 1.0, "arcs": 0.0, "daily_report": 0.5}
    # Drift, loops and escalation have no event on either side: no evidence, left out (their
    # 1.0 is not agreement), arcs and daily share the weight: (0 + 0.5) / 2.
    assert data["left_out"] == dict.fromkeys(("drift", "loops", "escalation"), "no events")
    assert data["downstream_composite"] == pytest.approx(0.25)
    assert data["renormalisation"] == (
        "left out of downstream: drift (no events); loops (no events); escalation (no events); "
        "weights renormalised to arcs 0.500, daily_report 0.500"
    )
    assert data["consumers"]["arcs"]["missed"][0]["chunk_id"] == "ex-1"


def test_cli_downstream_weights_and_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(example_args("--weights", "arcs=0,drift=0.4", "--format", "json")) == 0
    # drift 0.4, loops 0.2, escalation 0.2, arcs 0, daily 0.2: drift, loops and escalation have
    # no events (left out), arcs weighs 0, so daily's 0.5 is the composite
    assert json.loads(capsys.readouterr().out)["downstream_composite"] == pytest.approx(0.5)
    weights = tmp_path / "w.yaml"
    weights.write_text(
        "downstream:\n  daily_report: 0\n  arcs: 0\n  drift: 0.6\n", encoding="utf-8"
    )
    assert main(example_args("--weights", str(weights), "--format", "json")) == 0
    # only consumers without events weigh: no composite ("no events"), not a 1.0
    assert json.loads(capsys.readouterr().out)["downstream_composite"] is None
    assert main(example_args()) == 0
    out = capsys.readouterr().out
    assert "downstream composite" in out and "0.250" in out
    assert "left out of downstream: drift (no events)" in out
    assert "arcs missed: [ex-1] positive (trust), improving" in out


def test_cli_downstream_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(example_args("--weights", "mood=1")) == 2
    err = capsys.readouterr().err
    assert "unknown downstream consumer 'mood'" in err
    # The README's old example: unnamed consumers keep 0.2, so 2 + 1 + 0.6 = 3.6.
    assert main(example_args("--weights", "drift=2,loops=1")) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: consumer weights sum to 3.600 after merging with the defaults")
    assert main(example_args("--weights", "drift=nan")) == 2
    assert "weight of 'drift' must be a finite number ≥ 0, got 'nan'" in capsys.readouterr().err
    weights = tmp_path / "w.yaml"
    weights.write_text("downstream:\n  drift: -1\n", encoding="utf-8")
    assert main(example_args("--weights", str(weights))) == 2
    # line 2 of the file: where `drift: -1` is written
    assert f"{weights}:2 [downstream.drift]: weight of 'drift'" in capsys.readouterr().err
    weights.write_text("a: &x 0.2\ndrift: *x\n", encoding="utf-8")
    assert main(example_args("--weights", str(weights))) == 2
    err = capsys.readouterr().err
    assert f"{weights}:1:4: YAML aliases (&anchor/*alias) are not allowed" in err
    assert main(example_args("--weights", str(tmp_path / "nope.yaml"))) == 2
    assert "weights file not found" in capsys.readouterr().err
    args = example_args()
    args[args.index("--chunks") + 1] = str(tmp_path / "missing.jsonl")
    assert main(args) == 2
    assert "file not found" in capsys.readouterr().err


def test_cli_pipeline_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "pipeline",
        "--extractions",
        str(EXAMPLES / "reference.jsonl"),
        "--chunks",
        str(EXAMPLES / "chunks.jsonl"),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Downstream pipeline\n")
    assert "## Conversation band-rehearsal" in out
    assert "| `ex-1` | trust | positive | improving |" in out
    assert "#### 2026-04-10" in out
    assert "- decision: Drop the ballad from Saturday's set and try it as an encore" in out
    assert "- action: Jordan Pike: Print the new setlist" in out


def test_per_conversation_outputs_merge_to_the_whole_run(tmp_path: Path) -> None:
    """Consumers read each conversation on its own: building per conversation and merging
    gives exactly what building over the whole run gives (the run reuses this)."""
    from chatledger.demo import write_bundled_corpus
    from chatledger.downstream import build_outputs, compare_outputs, merge_outputs
    from chatledger.simulate import simulate_records

    chunks_path, gold_path = write_bundled_corpus(tmp_path)
    chunks = read_chunks(chunks_path)
    gold = read_extractions(gold_path).records
    challenger = simulate_records(gold, chunks, [("drop", 0.3), ("flip_polarity", 0.3)], seed=4)
    whole = run_downstream(chunks, gold, challenger)
    merged = compare_outputs(
        merge_outputs(build_outputs(chunks, gold)), merge_outputs(build_outputs(chunks, challenger))
    )
    assert merged.to_dict() == whole.to_dict()
    assert 0.0 < whole.downstream_composite < 1.0


def test_report_day_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chatledger.cli._app import main
    from chatledger.demo import write_bundled_corpus

    chunks_path, gold_path = write_bundled_corpus(tmp_path)
    argv = ["report-day", "--extractions", str(gold_path), "--chunks", str(chunks_path)]
    assert main([*argv, "--day", "2026-03-10", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["day"] == "2026-03-10" and "2026-03-10" in data["days"]
    assert data["highlights"] and all(h["day"] == "2026-03-10" for h in data["highlights"])
    assert main(argv) == 0  # default: the latest day, as Markdown
    shown = capsys.readouterr().out
    assert shown.startswith(f"# Daily report — {data['days'][-1]}")
    assert main([*argv, "--day", "1999-01-01"]) == 2
    assert "nothing to report on 1999-01-01" in capsys.readouterr().err
