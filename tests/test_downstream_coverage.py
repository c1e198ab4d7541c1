"""Layer 3 — additive counts and coverage against partial gold (issue 15, DESIGN.md §5, §7).

Every consumer's agreement is a function of counts that add up over conversations; a consumer
runs against partial human gold only when the gold covers every field it reads.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from chatledger.cli._app import main
from chatledger.core import Chunk, ExtractionRecord, ExtractionV3, InputError, RecordStatus
from chatledger.corpus import read_chunks, read_extractions
from chatledger.downstream import (
    CONSUMER_NAMES,
    CONSUMERS,
    build_outputs,
    compare_outputs,
    composite_from_counts,
    merge_outputs,
    reference_coverage,
    run_downstream,
    skipped_consumers,
)
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._stages import PER_CHUNK, STAGE_VERSION, StageOutput, StageStore
from conftest import bundled_partial_gold

DATA = Path(str(resources.files("chatledger") / "data"))
CASINO = DATA / "human" / "casino"
EXAMPLES = DATA / "examples"
PEOPLE = ("Ann Lee", "Bo Chen")
CASINO_COVERS = ("claims", "negotiation_patterns")


# --- a hand-worked corpus of two conversations ------------------------------------------------


def _chunk(chunk_id: str, conversation: str, day: str) -> Chunk:
    messages = [
        {
            "id": f"{chunk_id}-{i}",
            "speaker": PEOPLE[i % 2],
            "timestamp": f"2026-05-0{day}T10:0{i}:00Z",
            "text": "…",
        }
        for i in range(2)
    ]
    return Chunk.model_validate(
        {
            "chunk_id": chunk_id,
            "conversation_id": conversation,
            "participants": list(PEOPLE),
            "messages": messages,
        }
    )


def _records(
    by_chunk: dict[str, dict[str, Any]], covers: tuple[str, ...] | None = None
) -> dict[str, ExtractionRecord]:
    return {
        cid: ExtractionRecord(
            chunk_id=cid,
            model="hand",
            status=RecordStatus.OK,
            extraction=ExtractionV3.model_validate(fields),
            covers=covers,
        )
        for cid, fields in by_chunk.items()
    }


def _claim(polarity: str) -> dict[str, Any]:
    return {"text": f"the budget is {polarity}", "subject": "budget", "polarity": polarity,
            "speaker": "Ann Lee"}  # fmt: skip


def _arc(mood: str, trajectory: str) -> dict[str, Any]:
    return {"opening_mood": "neutral", "closing_mood": mood, "trajectory": trajectory}


QUESTION = {"text": "When is the venue booked?"}

# Conversation A (a1 on 1 May, a2 on 2 May) and B (b1 on 1 May, b2 on 2 May).
CHUNKS = [_chunk("a1", "A", "1"), _chunk("a2", "A", "2"), _chunk("b1", "B", "1"),
          _chunk("b2", "B", "2")]  # fmt: skip
REFERENCE = {
    "a1": {"claims": [_claim("pro")], "emotional_arc": _arc("joy", "improving")},
    # Ann turns pro -> con on the budget (a drift); a high warning flags an argument.
    "a2": {
        "claims": [_claim("con")],
        "warnings": [{"text": "we will walk away", "severity": "high"}],
        "emotional_arc": _arc("anger", "worsening"),
    },
    # The same open question in b1 and b2, never answered: a loop.
    "b1": {"open_questions": [QUESTION]},
    "b2": {"open_questions": [QUESTION]},
}
CHALLENGER = {
    "a1": {"claims": [_claim("pro")], "emotional_arc": _arc("joy", "improving")},
    # The same drift; no warning; sadness is as negative as anger.
    "a2": {"claims": [_claim("con")], "emotional_arc": _arc("sadness", "worsening")},
    # Anger 0.9 is an emotional peak the reference does not have.
    "b1": {
        "open_questions": [QUESTION],
        "emotional_tone": [{"speaker": "Bo Chen", "emotion": "anger", "intensity": 0.9}],
    },
    # The question is not asked again (no loop); an arc where the reference has none.
    "b2": {"emotional_arc": _arc("joy", "improving")},
}

# By hand, per conversation (A, B) and summed:
#   drift       (matched, n_ref, n_chal): A (1, 1, 1), B (0, 0, 0) → (1, 1, 1): F1 = 2·1/2 = 1.0
#   loops       A (0, 0, 0) [both empty: 1.0], B (0, 1, 0) [0.0] → (0, 1, 0): F1 = 0.0
#               (the mean of the conversations' F1s would be 0.5: counts are summed, not F1s)
#   escalation  A (0, 1, 0) [argument at a2 missed], B (0, 0, 1) [peak at b1 invented]
#               → (0, 1, 1): F1 = 0 / 2 = 0.0
#   arcs        (agreeing_chunks, n_chunks): A (2, 2) [joy=joy; anger, sadness both negative],
#               B (1, 2) [b1 no arc on either side agrees, b2 one side only does not]
#               → (3, 4): 0.75
#   daily       (f1_sum, n_days): A: 2 May, reference "drift" + "escalation: argument" lines,
#               challenger the drift line: F1 = 2·1/(2+1) = 2/3, one day → (2/3, 1);
#               B: 1 May challenger "escalation: emotional peak" only (0), 2 May reference
#               "open loop" only (0) → (0, 2); summed (2/3, 3): (2/3) / 3 = 2/9
#   composite (equal weights) = (1 + 0 + 0 + 0.75 + 2/9) / 5 = 0.394444…
EXPECTED_COUNTS = {
    "A": {
        "drift": {"matched": 1, "n_reference": 1, "n_challenger": 1},
        "loops": {"matched": 0, "n_reference": 0, "n_challenger": 0},
        "escalation": {"matched": 0, "n_reference": 1, "n_challenger": 0},
        "arcs": {"agreeing_chunks": 2, "n_chunks": 2},
        "daily_report": {"f1_sum": 2 / 3, "n_days": 1},
    },
    "B": {
        "drift": {"matched": 0, "n_reference": 0, "n_challenger": 0},
        "loops": {"matched": 0, "n_reference": 1, "n_challenger": 0},
        "escalation": {"matched": 0, "n_reference": 0, "n_challenger": 1},
        "arcs": {"agreeing_chunks": 1, "n_chunks": 2},
        "daily_report": {"f1_sum": 0.0, "n_days": 2},
    },
}
EXPECTED_AGREEMENT = {
    "drift": 1.0,
    "loops": 0.0,
    "escalation": 0.0,
    "arcs": 0.75,
    "daily_report": 2 / 9,
}


def _summed(per_conversation: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Counts added up over conversations, in order."""
    total: dict[str, dict[str, float]] = {}
    for counts in per_conversation:
        for consumer, values in counts.items():
            into = total.setdefault(consumer, {})
            for name, value in values.items():
                into[name] = into.get(name, 0.0) + value
    return total


def _assert_counts_add_up(
    chunks: list[Chunk],
    reference: dict[str, ExtractionRecord],
    challenger: dict[str, ExtractionRecord],
    covered: tuple[str, ...] | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """Per-conversation counts summed give exactly what the merged outputs give."""
    ref_parts = build_outputs(chunks, reference, covered)
    chal_parts = build_outputs(chunks, challenger, covered)
    per_conversation = {
        conv: compare_outputs(ref_parts[conv], chal_parts[conv], covered=covered).counts
        for conv in ref_parts
    }
    whole = compare_outputs(merge_outputs(ref_parts), merge_outputs(chal_parts), covered=covered)
    summed = _summed(list(per_conversation.values()))
    assert summed == whole.counts
    for name, result in whole.consumers.items():
        from_sums = float(CONSUMERS.get(name).agreement_from_counts(summed[name]))
        assert from_sums == result.agreement, name  # exactly, not approximately
    arrays = {name: {k: np.array([v]) for k, v in c.items()} for name, c in summed.items()}
    if whole.downstream_composite is not None:
        assert composite_from_counts(arrays)[0] == whole.downstream_composite
    return per_conversation


def test_counts_of_two_conversations_add_up_by_hand() -> None:
    reference, challenger = _records(REFERENCE), _records(CHALLENGER)
    per_conversation = _assert_counts_add_up(CHUNKS, reference, challenger)
    assert per_conversation == EXPECTED_COUNTS
    report = run_downstream(CHUNKS, reference, challenger)
    got = {name: c.agreement for name, c in report.consumers.items()}
    assert got == pytest.approx(EXPECTED_AGREEMENT, abs=1e-15)
    assert report.downstream_composite == pytest.approx((1.75 + 2 / 9) / 5)  # 0.394444…
    assert report.skipped == {}
    data = report.to_dict()
    assert "skipped" not in data  # present only when a consumer was skipped
    assert data["consumers"]["daily_report"]["counts"] == {"f1_sum": 2 / 3, "n_days": 3.0}
    # The same report as the merged per-conversation outputs (what a run assembles).
    merged = compare_outputs(
        merge_outputs(build_outputs(CHUNKS, reference)),
        merge_outputs(build_outputs(CHUNKS, challenger)),
    )
    assert merged.to_dict() == data


def test_counts_add_up_on_the_bundled_corpus(tmp_path: Path) -> None:
    from chatledger.demo import write_bundled_corpus
    from chatledger.simulate import simulate_records

    chunks_path, gold_path = write_bundled_corpus(tmp_path)
    chunks = read_chunks(chunks_path)
    gold = read_extractions(gold_path).records
    assert len({c.conversation_id for c in chunks}) > 2
    for seed, operations in enumerate(
        [
            [("drop", 0.3), ("flip_polarity", 0.3)],
            [("shift_phases", 0.5), ("invent_item", 0.3)],
            [("paraphrase", 0.6), ("swap_speaker", 0.4), ("drop", 0.5)],
        ]
    ):
        challenger = simulate_records(gold, chunks, operations, seed=seed)
        per_conversation = _assert_counts_add_up(chunks, gold, challenger)
        assert len(per_conversation) > 2
        # And under partial coverage: only the consumers that ran have counts.
        per_conversation = _assert_counts_add_up(chunks, gold, challenger, CASINO_COVERS)
        assert all(set(c) == {"drift"} for c in per_conversation.values())


def test_agreement_from_counts_is_vectorised_with_the_edge_rules() -> None:
    f1 = CONSUMERS.get("drift").agreement_from_counts(
        {
            "matched": np.array([0, 0, 0, 2, 1]),
            "n_reference": np.array([0, 3, 0, 2, 2]),
            "n_challenger": np.array([0, 0, 4, 2, 3]),
        }
    )
    # both empty 1.0; one side empty 0.0 (twice); 2·2/4 = 1.0; 2·1/5 = 0.4
    assert f1.tolist() == [1.0, 0.0, 0.0, 1.0, 0.4]
    arcs = CONSUMERS.get("arcs").agreement_from_counts(
        {"agreeing_chunks": np.array([0, 3]), "n_chunks": np.array([0, 4])}
    )
    assert arcs.tolist() == [1.0, 0.75]  # no chunks → 1.0
    daily = CONSUMERS.get("daily_report").agreement_from_counts(
        {"f1_sum": np.array([0.0, 1.5]), "n_days": np.array([0, 2])}
    )
    assert daily.tolist() == [1.0, 0.75]  # no days → 1.0


def test_composite_from_counts_over_resampled_conversations() -> None:
    """A bootstrap sums the counts of the resampled conversations: each resample's composite
    is the composite of the merged outputs of those conversations."""
    reference, challenger = _records(REFERENCE), _records(CHALLENGER)
    ref_parts, chal_parts = build_outputs(CHUNKS, reference), build_outputs(CHUNKS, challenger)
    per = {c: compare_outputs(ref_parts[c], chal_parts[c]).counts for c in ref_parts}
    resamples = [["A"], ["B"], ["A", "B"]]
    counts = {
        name: {
            k: np.array([sum(per[c][name][k] for c in pick) for pick in resamples])
            for k in per["A"][name]
        }
        for name in CONSUMER_NAMES
    }
    weights = {"drift": 0.4, "loops": 0.1, "escalation": 0.1, "arcs": 0.3, "daily_report": 0.1}
    got = composite_from_counts(counts, weights)
    for i, pick in enumerate(resamples):
        whole = compare_outputs(
            merge_outputs({c: ref_parts[c] for c in pick}),
            merge_outputs({c: chal_parts[c] for c in pick}),
            weights,
        )
        assert got[i] == whole.downstream_composite
    # A: drift 1, loops both empty (no evidence: left out, DESIGN.md §5), escalation 0,
    # arcs 1, daily 2/3: (0.4 + 0 + 0.3 + 0.1·2/3) / 0.9 = 0.85185…
    assert got[0] == pytest.approx((0.7 + 0.1 * 2 / 3) / 0.9)
    # Only drift and arcs ran: (0.4·1 + 0.3·0.75) / 0.7 = 0.625 / 0.7 = 0.892857…
    ran = composite_from_counts(counts, weights, ran={"drift", "arcs"})
    assert ran[2] == pytest.approx(0.625 / 0.7)
    with pytest.raises(ValueError, match="no consumer with a weight above 0"):
        composite_from_counts(counts, ran=set())
    with pytest.raises(ValueError, match="no counts"):
        composite_from_counts({"drift": counts["drift"]}, ran={"drift", "arcs"})


# --- coverage -------------------------------------------------------------------------------


def test_every_consumer_declares_what_it_reads() -> None:
    reads = {name: CONSUMERS.get(name).reads for name in CONSUMER_NAMES}
    assert reads == {
        "drift": ("claims",),
        "loops": ("decisions", "action_items", "open_questions", "qa_pairs"),
        "escalation": (
            "warnings",
            "emotional_tone",
            "conversation_phases",
            "negotiation_patterns",
        ),
        "arcs": ("emotional_arc",),
        # its own lines (decisions, new action items) and drift, escalation and loops
        "daily_report": (
            "decisions",
            "action_items",
            "open_questions",
            "claims",
            "warnings",
            "qa_pairs",
            "emotional_tone",
            "conversation_phases",
            "negotiation_patterns",
        ),
    }
    assert skipped_consumers(None) == {}


def test_a_field_outside_reads_changes_no_consumer() -> None:
    """What a consumer does not declare it does not read: wiping every other field of both
    sides leaves its events unchanged."""
    from chatledger.core import FIELDS_V3

    reference = _records(REFERENCE)
    noisy = {
        cid: ExtractionV3.model_validate(
            {
                **fields,
                "topics": ["noise"],
                "summary": "noise",
                "entities": [{"name": "Noise Ltd", "type": "organization"}],
            }
        )
        for cid, fields in REFERENCE.items()
    }
    for name in CONSUMER_NAMES:
        consumer = CONSUMERS.get(name)
        kept = {
            cid: ExtractionRecord(
                cid,
                "hand",
                RecordStatus.OK,
                ExtractionV3.model_validate(
                    {f: getattr(e, f) for f in FIELDS_V3 if f in consumer.reads}
                ),
            )
            for cid, e in noisy.items()
        }
        plain = build_outputs(CHUNKS, reference)
        only_reads = build_outputs(CHUNKS, kept)
        for conv in plain:
            assert plain[conv][name].events == only_reads[conv][name].events, name


def test_reference_coverage_is_the_intersection_over_usable_records() -> None:
    full = _records(REFERENCE)
    assert reference_coverage(full) is None  # a model's reference: every field
    partial = _records(REFERENCE, covers=("negotiation_patterns", "claims", "topics"))
    partial["a2"] = ExtractionRecord(
        "a2", "hand", RecordStatus.OK, ExtractionV3(), covers=("claims", "negotiation_patterns")
    )
    # An unusable line says nothing about coverage.
    partial["b2"] = ExtractionRecord("b2", "hand", RecordStatus.INVALID, covers=("summary",))
    assert reference_coverage(partial, CHUNKS) == ("claims", "negotiation_patterns")  # v3 order
    assert reference_coverage(partial, CHUNKS[:1]) == ("topics", "claims", "negotiation_patterns")


def test_casino_like_gold_skips_what_it_does_not_cover() -> None:
    reference = _records(REFERENCE, covers=CASINO_COVERS)
    challenger = _records(CHALLENGER)
    covered = reference_coverage(reference, CHUNKS)
    assert covered == CASINO_COVERS
    report = run_downstream(CHUNKS, reference, challenger, covered=covered)
    assert list(report.consumers) == ["drift"]
    assert report.skipped == {
        "loops": ["decisions", "action_items", "open_questions", "qa_pairs"],
        "escalation": ["warnings", "emotional_tone", "conversation_phases"],
        "arcs": ["emotional_arc"],
        "daily_report": [
            "decisions",
            "action_items",
            "open_questions",
            "warnings",
            "qa_pairs",
            "emotional_tone",
            "conversation_phases",
        ],
    }
    # The composite is the mean of the consumers that ran: drift alone, weight renormalised.
    assert report.downstream_composite == 1.0
    assert report.consumers["drift"].weight == 1.0
    data = report.to_dict()
    assert data["skipped"]["escalation"] == ["warnings", "emotional_tone", "conversation_phases"]
    json.dumps(data)
    # Gold that also covers the arc: drift and arcs run, (1.0 + 0.75) / 2 = 0.875.
    with_arc = (*CASINO_COVERS, "emotional_arc")
    report = run_downstream(CHUNKS, reference, challenger, covered=with_arc)
    assert list(report.consumers) == ["drift", "arcs"]
    assert report.downstream_composite == 0.875
    # Weights renormalised over the two: (0.4·1 + 0.1·0.75) / 0.5 = 0.95.
    weights = {"drift": 0.4, "arcs": 0.1, "loops": 0.2, "escalation": 0.2, "daily_report": 0.1}
    report = run_downstream(CHUNKS, reference, challenger, weights, covered=with_arc)
    assert report.downstream_composite == pytest.approx(0.95)
    assert report.consumers["drift"].weight == pytest.approx(0.8)


def test_nothing_covered_means_no_composite() -> None:
    reference = _records(REFERENCE, covers=("topics",))
    report = run_downstream(CHUNKS, reference, _records(CHALLENGER), covered=("topics",))
    assert report.consumers == {}
    assert set(report.skipped) == set(CONSUMER_NAMES)
    assert report.downstream_composite is None
    assert report.to_dict()["downstream_composite"] is None
    # Consumers that ran but all weigh 0 leave no composite either.
    zero_drift = {"drift": 0, "loops": 0.25, "escalation": 0.25, "arcs": 0.25, "daily_report": 0.25}
    report = run_downstream(CHUNKS, reference, _records(CHALLENGER), zero_drift, CASINO_COVERS)
    assert list(report.consumers) == ["drift"] and report.downstream_composite is None


# --- the CLI ----------------------------------------------------------------------------------


def _casino_challenger(tmp_path: Path) -> Path:
    out = tmp_path / "rules.jsonl"
    argv = ["extract", "--model", "offline:rules", "--chunks", str(CASINO / "chunks.jsonl")]
    assert main([*argv, "--out", str(out), "--format", "json"]) == 0
    return out


def test_cli_downstream_on_casino_gold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    challenger = _casino_challenger(tmp_path)
    capsys.readouterr()
    argv = ["downstream", "--reference", str(CASINO / "gold.jsonl"), "--challenger",
            str(challenger), "--chunks", str(CASINO / "chunks.jsonl")]  # fmt: skip
    assert main([*argv, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["consumers"]) == ["drift"]
    assert set(data["skipped"]) == {"loops", "escalation", "arcs", "daily_report"}
    assert data["skipped"]["arcs"] == ["emotional_arc"]
    assert data["downstream_composite"] == data["consumers"]["drift"]["agreement"]
    assert main(argv) == 0
    shown = " ".join(capsys.readouterr().out.split())  # the table wraps long cells
    assert "skipped 4 consumer(s)" in shown
    assert "escalation skipped: missing warnings, emotional_tone, conversation_phases" in shown
    assert "arcs skipped: missing emotional_arc" in shown


# --- runs -------------------------------------------------------------------------------------


def _write_config(folder: Path, **fields: Any) -> Path:
    path = folder / "run.yaml"
    path.write_text(json.dumps({"name": "coverage", **fields}), encoding="utf-8")
    return path


def test_run_over_casino_gold_names_the_skipped_consumers(tmp_path: Path) -> None:
    challenger = _casino_challenger(tmp_path)
    config = _write_config(
        tmp_path,
        chunks=str(CASINO / "chunks.jsonl"),
        reference={"file": str(CASINO / "gold.jsonl"), "name": "casino-gold"},
        challengers=[{"file": str(challenger), "name": "rules"}],
        layers=["extraction", "downstream"],
    )
    out = tmp_path / "run"
    result = execute_run(load_run_config(config), out)
    (model,) = result.models
    downstream = json.loads((out / "downstream.json").read_text(encoding="utf-8"))
    entry = downstream["models"]["rules"]
    assert list(entry["consumers"]) == ["drift"]
    assert entry["skipped"]["escalation"] == ["warnings", "emotional_tone", "conversation_phases"]
    assert set(entry["skipped"]) == {"loops", "escalation", "arcs", "daily_report"}
    drift = entry["consumers"]["drift"]["agreement"]
    assert entry["downstream_composite"] == drift
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    (listed,) = run["models"]
    assert listed["consumers"] == {"drift": drift}
    assert listed["layers"]["downstream"] == drift
    assert model.layers["downstream"] == drift
    # The stage keeps each conversation's counts (every CaSiNo dialogue is one conversation).
    stored = json.loads((out / "stages" / "rules" / "downstream.json").read_text())
    assert stored["version"] == STAGE_VERSION == 7
    conversations = list(
        dict.fromkeys(c.conversation_id for c in read_chunks(CASINO / "chunks.jsonl"))
    )
    assert list(stored["conversation_counts"]) == conversations
    summed = _summed(list(stored["conversation_counts"].values()))
    assert set(summed) == {"drift"}
    assert float(CONSUMERS.get("drift").agreement_from_counts(summed["drift"])) == drift


def _all_skipped_corpus(folder: Path) -> Path:
    """The bundled corpus (several conversations) with gold that covers only topics and
    entities (no consumer reads either), and a challenger that drops some of them."""
    chunks_path, gold, challenger = bundled_partial_gold(folder, ["topics", "entities"])
    return _write_config(
        folder,
        chunks=str(chunks_path),
        reference={"file": str(gold), "name": "gold"},
        challengers=[{"file": str(challenger), "name": "chal"}],
        layers=["extraction", "downstream"],
    )


def test_all_skipped_leaves_the_downstream_layer_out(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = execute_run(load_run_config(_all_skipped_corpus(tmp_path)), out)
    (model,) = result.models
    assert "downstream" not in model.layers
    assert model.overall == model.layers["extraction"]  # extraction's weight renormalised to 1
    assert model.consumers == {}
    assert result.layers_run == ["extraction"]
    assert result.layer_weights_used == {"extraction": 1.0}
    # Decided once, from the reference's coverage, before any stage ran: the run's note says
    # why, naming what each consumer would need.
    note = result.renormalisation_note
    assert note is not None and note.startswith("downstream has no score")
    assert "drift needs claims" in note and "layer(s) not run: judge, downstream" in note
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["layers_run"] == ["extraction"]
    assert run["layer_weights_used"] == {"extraction": 1.0}
    assert "downstream" not in run["models"][0]["layers"]
    assert "downstream" in run["renormalisation"]
    downstream = json.loads((out / "downstream.json").read_text(encoding="utf-8"))
    entry = downstream["models"]["chal"]
    assert entry["downstream_composite"] is None
    assert entry["consumers"] == {}
    assert set(entry["skipped"]) == set(CONSUMER_NAMES)
    assert entry["skipped"]["drift"] == ["claims"]
    # The statistics use the same renormalised weights: extraction alone, weight 1, so the
    # overall's estimate is the extraction's (with the configured 0.8 it would be 0.8 of it).
    assert result.stats is not None
    intervals = result.stats.intervals["chal"]
    assert "downstream" not in intervals
    assert intervals["overall"].estimate == intervals["extraction"].estimate
    assert intervals["overall"].low < intervals["overall"].high  # several conversations
    # A rerun reuses both stored stages and says the same.
    again = execute_run(load_run_config(_all_skipped_corpus(tmp_path)), out)
    assert again.models[0].overall == model.overall
    assert again.layers_run == ["extraction"]
    assert again.record is not None
    assert {s.stage for s in again.record.stages if s.model == "chal" and s.reused} == {
        "score",
        "downstream",
    }


def test_all_skipped_with_no_other_layer_is_an_input_error(tmp_path: Path) -> None:
    config = _all_skipped_corpus(tmp_path)
    data = json.loads(config.read_text(encoding="utf-8"))
    data["layers"] = ["downstream"]
    config.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="no other layer with a weight"):
        execute_run(load_run_config(config), tmp_path / "run")


def test_a_stage_of_version_1_is_recomputed(tmp_path: Path) -> None:
    store = StageStore(tmp_path)
    for version in (1, STAGE_VERSION):
        output = StageOutput(version=version, stage="downstream", model="m", key="k")
        with store.writing("m", "downstream") as files:
            files.finish(output, pa.table({PER_CHUNK: pa.array([], pa.float64())}))
        found = store.load("m", "downstream", "k")
        assert (found is not None) == (version == STAGE_VERSION)


def test_run_downstream_reads_the_references_covers_by_default(tmp_path: Path) -> None:
    from chatledger.demo import human_sample

    chunks_path, gold_path = human_sample("casino", tmp_path)
    chunks = read_chunks(chunks_path)
    gold = read_extractions(gold_path).records
    report = run_downstream(chunks, gold, gold)  # no `covered`: the gold's own covers
    assert set(report.skipped) == {"loops", "escalation", "arcs", "daily_report"}
    # The CaSiNo sample has no drift event on either side: drift gives no evidence, so the
    # layer has no composite (not a 1.0 from two empty sides).
    assert list(report.consumers) == ["drift"] and report.downstream_composite is None
    assert report.left_out == {"drift": "no events"}
    full = run_downstream(chunks, gold, gold, covered=None)  # None: every field covered
    assert full.skipped == {} and len(full.consumers) == 5
