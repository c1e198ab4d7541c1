"""Counts, micro (pooled) and macro figures per field, and which one the composite uses
(DESIGN.md §3 "Beside it, always report the pooled …"), worked out by hand."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from chatledger.cli._app import main
from chatledger.core import ExtractionRecord, ExtractionV3, RecordStatus
from chatledger.corpus import read_chunks, read_extractions
from chatledger.demo import human_agreement
from chatledger.scoring import ScoringConfig, score_files, score_records
from conftest import ext, ok_record, texts, write_jsonl

# Texts: "agenda" ⊂ "agenda review" (token set 100); "budget" vs "catering menu" and "x" vs
# "catering menu" are far below the 60 cutoff.
CHUNKS = [
    ("c1", ext(topics=["agenda review", "budget"]), ext(topics=["agenda"])),
    ("c2", ext(), ext()),  # both empty: 1.0 by agreement
    ("c3", ext(topics=["catering menu"]), ext(topics=["x"])),
]


def _report(aggregate: str | None = None, covers: tuple[str, ...] | None = None):  # type: ignore[no-untyped-def]
    reference = {cid: dataclasses.replace(ok_record(cid, r), covers=covers) for cid, r, _ in CHUNKS}
    challenger = {cid: ok_record(cid, c) for cid, _, c in CHUNKS}
    config = ScoringConfig.default().model_copy(update={"aggregate": aggregate})
    return score_records(reference, challenger, config=config)


def test_topics_counts_micro_and_macro_by_hand() -> None:
    topics = _report().fields["topics"]
    # Per chunk: c1 P = 1/1, R = 1/2 → F1 2/3; c2 both empty → 1; c3 no match → 0.
    assert topics.macro == pytest.approx((2 / 3 + 1 + 0) / 3)  # 0.5556
    # Pooled: matched 1, reference 3, predicted 2 → P 0.5, R 1/3, F1 0.4.
    assert (topics.n_matched, topics.n_reference, topics.n_predicted) == (1, 3, 2)
    assert topics.both_empty == 1 and topics.chunks == 3
    assert topics.micro["precision"] == 0.5
    assert topics.micro["recall"] == pytest.approx(1 / 3)
    assert topics.micro["f1"] == pytest.approx(0.4)
    assert topics.micro["score"] == pytest.approx(0.4)


def test_model_reference_headline_is_macro_and_covers_make_it_micro() -> None:
    macro = _report()
    assert macro.aggregate == "macro"
    assert macro.fields["topics"].score == macro.fields["topics"].macro
    gold = _report(covers=("topics",))
    assert gold.aggregate == "micro"
    assert list(gold.fields) == ["topics"]
    assert gold.fields["topics"].score == pytest.approx(0.4)
    # Only the covered field is present: the composite renormalises to it.
    assert gold.extraction_composite == pytest.approx(0.4)
    forced = _report(aggregate="macro", covers=("topics",))
    assert forced.aggregate == "macro"
    assert forced.extraction_composite == pytest.approx(5 / 9)
    assert _report(aggregate="micro").aggregate == "micro"


def test_a_field_with_no_match_scores_zero_under_micro_even_when_both_empty_chunks_dominate() -> (
    None
):
    # Nine both-empty chunks and one where the reference decision is missed: macro 0.9,
    # micro 0 (0 of 1 matched).
    rows = [(f"e{i}", ext(), ext()) for i in range(9)]
    rows.append(("d", ext(decisions=texts("ship on friday")), ext()))
    reference = {
        cid: dataclasses.replace(ok_record(cid, r), covers=("decisions",)) for cid, r, _ in rows
    }
    challenger = {cid: ok_record(cid, c) for cid, _, c in rows}
    decisions = score_records(reference, challenger).fields["decisions"]
    assert decisions.macro == pytest.approx(0.9)
    assert decisions.score == 0.0 and decisions.micro["f1"] == 0.0
    assert (decisions.n_matched, decisions.n_reference, decisions.n_predicted) == (0, 1, 0)
    assert decisions.both_empty == 9


def test_pair_components_pool_over_all_matched_pairs() -> None:
    # Action items: chunk a has 1 matched pair with the right owner, chunk b 3 matched pairs
    # with a wrong owner each. Macro owner accuracy = (1 + 0) / 2 = 0.5; pooled = 1/4.
    def item(text: str, owner: str) -> dict[str, str]:
        return {"text": text, "owner": owner}

    a_ref = ext(action_items=[item("book the hall", "Ness")])
    b_ref = ext(action_items=[item(t, "Ness") for t in ("print menus", "call the band", "pay dj")])
    b_pred = ext(action_items=[item(t, "Sam") for t in ("print menus", "call the band", "pay dj")])
    reference = {"a": ok_record("a", a_ref), "b": ok_record("b", b_ref)}
    challenger = {"a": ok_record("a", a_ref), "b": ok_record("b", b_pred)}
    report = score_records(reference, challenger)
    items = report.fields["action_items"]
    assert items.components["owner_accuracy"] == 0.5
    assert items.micro["owner_accuracy"] == 0.25
    # Micro: text F1 1.0 (4 of 4), owner 0.25 → 0.70·1 + 0.30·0.25 = 0.775.
    assert items.micro["score"] == pytest.approx(0.775)
    # Macro: chunk a 1.0, chunk b 0.70 → 0.85.
    assert items.macro == pytest.approx(0.85)


def test_micro_pair_terms_count_by_the_pooled_matched_share_and_components_follow() -> None:
    # Chunk a: 1 action item on each side, matched, right owner. Chunk b: 4 reference items and
    # 4 unrelated predictions, nothing matched.
    def item(text: str) -> dict[str, str]:
        return {"text": text, "owner": "Ness"}

    a = ext(action_items=[item("book the hall")])
    b_ref = ext(action_items=[item(t) for t in ("print menus", "call the band", "pay dj", "mop")])
    b_pred = ext(action_items=[item(t) for t in ("weather", "holiday", "pizza", "football")])
    challenger = {"a": ok_record("a", a), "b": ok_record("b", b_pred)}
    covered = {
        cid: dataclasses.replace(ok_record(cid, r), covers=("action_items",))
        for cid, r in (("a", a), ("b", b_ref))
    }
    micro = score_records(covered, challenger).fields["action_items"]
    # Pooled: M = 1, R = 5, P = 5 → P = R = F1 = 0.2; owner 1/1; matched share 2·1/10 = 0.2.
    # micro score = 0.70·0.2 + 0.30·1·0.2 = 0.2 (one match out of five cannot add the whole 0.30)
    assert micro.score == pytest.approx(0.2)
    # The components shown are the micro ones the score was built from.
    assert micro.components == {"text_f1": pytest.approx(0.2), "owner_accuracy": 1.0}
    # Macro: chunk a 1.0, chunk b 0.0 → 0.5; its components are per-chunk means.
    reference = {"a": ok_record("a", a), "b": ok_record("b", b_ref)}
    macro = score_records(reference, challenger).fields["action_items"]
    assert macro.score == pytest.approx(0.5)
    assert macro.components == {"text_f1": 0.5, "owner_accuracy": 0.5}


def test_micro_components_of_the_emotional_arc_average_chunks_that_have_one() -> None:
    # Chunk a: both arcs, same opening, other closing; chunk b: neither side has an arc.
    arc = {"opening_mood": "joy", "closing_mood": "joy", "trajectory": "stable"}
    other = {"opening_mood": "joy", "closing_mood": "anger", "trajectory": "stable"}
    reference = {
        cid: dataclasses.replace(ok_record(cid, r), covers=("emotional_arc",))
        for cid, r in (("a", ext(emotional_arc=arc)), ("b", ext()))
    }
    challenger = {"a": ok_record("a", ext(emotional_arc=other)), "b": ok_record("b", ext())}
    field = score_records(reference, challenger).fields["emotional_arc"]
    # Chunk a: opening 1, closing 0, trajectory 1, turning points (none either side) 1 → 0.75;
    # micro is the mean over the one chunk with an arc, and so are its components.
    assert field.score == 0.75
    assert field.components == {
        "opening": 1.0,
        "closing": 0.0,
        "trajectory": 1.0,
        "turning_points_f1": 1.0,
    }


def test_an_invalid_chunk_counts_its_reference_items_as_missed() -> None:
    reference = {
        "a": ok_record("a", ext(topics=["agenda"])),
        "b": ok_record("b", ext(topics=["budget", "venue"])),
    }
    challenger = {
        "a": ok_record("a", ext(topics=["agenda"])),
        "b": ExtractionRecord(chunk_id="b", model="m", status=RecordStatus.INVALID),
    }
    topics = score_records(reference, challenger).fields["topics"]
    # Pooled: 1 matched of 3 reference items, 1 predicted → P 1, R 1/3, F1 0.5.
    assert (topics.n_matched, topics.n_reference, topics.n_predicted) == (1, 3, 1)
    assert topics.micro["f1"] == pytest.approx(0.5)
    assert topics.both_empty == 0  # an unusable chunk is never "both empty"
    assert topics.macro == 0.5


def test_no_items_anywhere_scores_the_usable_share() -> None:
    reference = {"a": ok_record("a", ext()), "b": ok_record("b", ext())}
    challenger = {
        "a": ok_record("a", ext()),
        "b": ExtractionRecord(chunk_id="b", model="m", status=RecordStatus.MISSING),
    }
    warnings = score_records(reference, challenger).fields["warnings"]
    assert warnings.micro["score"] == 0.5 and warnings.macro == 0.5


def test_entities_pool_their_credit() -> None:
    ref = ext(entities=[{"name": "Ness Alderton", "type": "person"}])
    fuzzy = ext(entities=[{"name": "Ness Alderto", "type": "person"}])  # fuzzy-only: 0.5
    reference = {"a": ok_record("a", ref), "b": ok_record("b", ref)}
    challenger = {"a": ok_record("a", ref), "b": ok_record("b", fuzzy)}
    entities = score_records(reference, challenger).fields["entities"]
    assert entities.n_matched == 1.5
    assert entities.micro["f1"] == pytest.approx(0.75)  # 1.5 / 2 both ways
    assert entities.micro["exact_share"] == 0.5


def test_set_fields_name_what_they_count_and_keep_the_items_listed() -> None:
    # Chunk a: the reference lists 3 moves, two of them (anchoring, Ness): 2 distinct pairs;
    # the challenger lists (anchoring, Ness) once. Chunk b is invalid: its 1 reference move
    # counts as missed. Pairs: matched 1, reference 2 + 1 = 3, predicted 1; moves 3 + 1 = 4.
    def move(pattern: str, actor: str) -> dict[str, str]:
        return {"pattern": pattern, "actor": actor, "text": "x"}

    reference = {
        "a": ok_record(
            "a",
            ext(
                negotiation_patterns=[
                    move("anchoring", "Ness"),
                    move("anchoring", "Ness"),
                    move("concession", "Sam"),
                ]
            ),
        ),
        "b": ok_record("b", ext(negotiation_patterns=[move("concession", "Sam")])),
    }
    challenger = {
        "a": ok_record("a", ext(negotiation_patterns=[move("anchoring", "Ness")])),
        "b": ExtractionRecord(chunk_id="b", model="m", status=RecordStatus.INVALID),
    }
    report = score_records(reference, challenger)
    field = report.fields["negotiation_patterns"]
    assert (field.n_matched, field.n_reference, field.n_predicted) == (1, 3, 1)
    assert (field.n_reference_items, field.n_predicted_items) == (4, 1)
    assert field.counted_as == "distinct (pattern, actor) pairs"
    # The summary matches no items: it has no matched count (never "matched 0").
    summary = report.to_dict()["fields"]["summary"]
    assert summary["n_matched"] is None and "counted_as" not in summary


def test_streamed_and_in_memory_scoring_agree_on_counts(tmp_path: Path) -> None:
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [
            {"chunk_id": cid, "conversation_id": "k", "participants": ["A"], "messages": []}
            for cid, _, _ in CHUNKS
        ],
    )
    ref = write_jsonl(
        tmp_path / "ref.jsonl",
        [
            {"chunk_id": cid, "model": "r", "covers": ["topics"], "extraction": r.model_dump()}
            for cid, r, _ in CHUNKS
        ],
    )
    chal = write_jsonl(
        tmp_path / "chal.jsonl",
        [{"chunk_id": cid, "model": "c", "extraction": c.model_dump()} for cid, _, c in CHUNKS],
    )
    streamed = score_files(ref, chal, chunks)
    whole = score_records(
        read_extractions(ref).records, read_extractions(chal).records, read_chunks(chunks)
    )
    assert streamed.aggregate == whole.aggregate == "micro"
    assert streamed.to_dict()["fields"] == whole.to_dict()["fields"]


def test_score_cli_json_and_table_say_which_aggregate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"chunk_id": cid, "model": "r", "extraction": r.model_dump()} for cid, r, _ in CHUNKS]
    ref = write_jsonl(tmp_path / "ref.jsonl", rows)
    chal = write_jsonl(
        tmp_path / "chal.jsonl",
        [{"chunk_id": cid, "model": "c", "extraction": c.model_dump()} for cid, _, c in CHUNKS],
    )
    assert (
        main(["score", "--reference", str(ref), "--challenger", str(chal), "--format", "json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["aggregate"] == "macro"
    topics = data["fields"]["topics"]
    assert topics["score"] == topics["macro"] == pytest.approx(5 / 9)
    assert topics["micro"]["f1"] == pytest.approx(0.4)
    assert (topics["n_matched"], topics["n_reference"], topics["n_predicted"]) == (1, 3, 2)
    args = ["score", "--reference", str(ref), "--challenger", str(chal), "--aggregate", "micro"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "score = micro" in out and "1/3/2" in out and "0.400" in out


def test_demo_human_gold_lists_counts_and_no_zero_match_field_scores_above_zero(
    tmp_path: Path,
) -> None:
    results = human_agreement(tmp_path)
    assert {r.corpus for r in results} == {"ami", "casino"}
    for result in results:
        assert result.aggregate == "micro"
        for name, counts in result.field_counts.items():
            assert {"n_matched", "n_reference", "n_predicted", "micro"} <= set(counts)
            listed = "f1" in counts["micro"]  # a list field (summary has no item matching)
            if (
                listed
                and counts["n_matched"] == 0
                and counts["n_reference"] + counts["n_predicted"]
            ):
                assert result.fields[name] == 0.0, (result.corpus, name)
    ami = next(r for r in results if r.corpus == "ami")
    # The bundled AMI sample: the rule extractor finds none of the human decisions.
    assert ami.field_counts["decisions"]["n_matched"] == 0
    assert ami.fields["decisions"] == 0.0


@pytest.mark.parametrize("value", ["both", "MICRO"])
def test_a_bad_aggregate_in_a_weights_file_is_one_line(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    weights = tmp_path / "w.yaml"
    weights.write_text(f"aggregate: {value}\n", encoding="utf-8")
    ref = write_jsonl(
        tmp_path / "r.jsonl",
        [{"chunk_id": "a", "model": "r", "extraction": ExtractionV3().model_dump()}],
    )
    code = main(
        ["score", "--reference", str(ref), "--challenger", str(ref), "--weights", str(weights)]
    )
    err = capsys.readouterr().err
    assert code != 0 and "aggregate" in err and str(weights) in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1
