"""Layer 2: the grounding judge, panel aggregation and agreement, the judge layer in a run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from chatledger.core import Chunk, ExtractionV3, Message
from chatledger.judge import (
    GroundingJudge,
    ItemVerdict,
    Judge,
    Verdict,
    aggregate_chunk,
    cohens_kappa,
    majority_label,
    panel_agreement,
)
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._judging import judge_challenger

CHUNK = Chunk(
    chunk_id="k1",
    participants=["Ness Alderton", "Sam Ruiz"],
    messages=[
        Message(id="m1", speaker="Ness Alderton", text="The new boiler is far too expensive"),
        Message(id="m2", speaker="Sam Ruiz", text="Can you call the plumber tomorrow morning?"),
        Message(id="m3", speaker="Ness Alderton", text="Sure, I will call the plumber"),
        Message(id="m4", speaker="Sam Ruiz", text="ok"),
    ],
)


def _verdict(acc: float, comp: float, hall: float, labels: dict[str, str]) -> Verdict:
    items = [ItemVerdict(item_id=k, label=v, reason="r") for k, v in labels.items()]  # type: ignore[arg-type]
    return Verdict(content_accuracy=acc, completeness=comp, hallucination=hall, items=items)


def test_verdict_composite() -> None:
    # (90 + 60 + 100) / 300
    assert _verdict(90, 60, 100, {}).composite == pytest.approx(250 / 300)


def test_grounding_judge_labels_by_hand() -> None:
    extraction = ExtractionV3.model_validate(
        {
            "claims": [
                {
                    "text": "the boiler is too expensive",
                    "subject": "boiler",
                    "polarity": "con",
                    "speaker": "Ness",
                    "evidence": ["m1"],
                },
                {
                    "text": "the boiler is too expensive",
                    "subject": "boiler",
                    "polarity": "con",
                    "speaker": "Sam Ruiz",
                    "evidence": ["m1"],
                },
            ],
            "action_items": [
                {"text": "call the plumber", "owner": "Ness", "evidence": ["m4"]},
                {
                    "text": "renew the parking permit at the office",
                    "owner": "Sam",
                    "evidence": ["m1"],
                },
            ],
        }
    )
    verdict = GroundingJudge().judge(CHUNK, extraction)
    labels = {item.item_id: item.label for item in verdict.items}
    assert labels == {
        "action_items#0": "weak_support",  # cites "ok" (m4); m3 supports it
        "action_items#1": "fabricated",  # shares no word with any message
        "claims#0": "none",  # "Ness" resolves to Ness Alderton, who said m1
        "claims#1": "misattributed",  # m1 was said by Ness, not Sam
    }
    # accuracy: credits 0.5, 0, 1, 0.5 -> mean 0.5 -> 50; hallucination: 3 of 4 not fabricated
    assert verdict.content_accuracy == pytest.approx(50.0)
    assert verdict.hallucination == pytest.approx(75.0)
    # content messages (>= 4 words, >= 2 content words): m1, m2, m3. Stated (not fabricated,
    # not a copy): both claims and action_items#0. m1 shares boiler + expensive with the
    # claims, m2 and m3 share call + plumber with action_items#0 -> 3 of 3 (a citation alone
    # covers nothing: m4 is cited but says "ok").
    assert verdict.completeness == pytest.approx(100.0)


def test_grounding_judge_copies_stances_and_owners_by_hand() -> None:
    extraction = ExtractionV3.model_validate(
        {
            "claims": [
                # m1 word for word: repeats, states nothing of its own -> no credit.
                {
                    "text": "The new boiler is far too expensive",
                    "polarity": "con",
                    "speaker": "Ness Alderton",
                    "evidence": ["m1"],
                },
                # "too expensive" reads against: labelled pro, it is flagged.
                {
                    "text": "the boiler is too expensive",
                    "polarity": "pro",
                    "speaker": "Ness Alderton",
                    "evidence": ["m1"],
                },
            ],
            "action_items": [
                # Sam asks ("can you"), Ness commits ("I will"): the owner is Ness…
                {"text": "call the plumber", "owner": "Ness", "evidence": ["m2", "m3"]},
                # …not the one who asked.
                {"text": "call the plumber", "owner": "Sam Ruiz", "evidence": ["m2", "m3"]},
            ],
            "qa_pairs": [{"question": "plumber?", "asked_by": "Sam Ruiz", "evidence": ["m2"]}],
        }
    )
    verdict = GroundingJudge().judge(CHUNK, extraction)
    labels = {item.item_id: item.label for item in verdict.items}
    assert labels == {
        "claims#0": "partially_supported",  # repeats m1 whole
        "claims#1": "partially_supported",  # labelled pro, its words read against
        "action_items#0": "none",
        "action_items#1": "misattributed",  # Sam asked; Ness took it on
        "qa_pairs#0": "partially_supported",  # one word states nothing
    }
    # credits 0 (copy), 0.5, 1, 0.5, 0 (one word) -> 2/5 -> 40
    assert verdict.content_accuracy == pytest.approx(40.0)
    assert verdict.hallucination == pytest.approx(100.0)
    # stated: claims#1 (m1: boiler, expensive), action items (m2, m3: call, plumber) -> 3 of 3
    assert verdict.completeness == pytest.approx(100.0)


def test_empty_extraction_states_nothing() -> None:
    # Nothing stated: completeness 0, and accuracy with it (no item is right); nothing made up.
    verdict = GroundingJudge().judge(CHUNK, ExtractionV3())
    assert (verdict.content_accuracy, verdict.completeness, verdict.hallucination) == (
        0.0,
        0.0,
        100.0,
    )


def test_cohens_kappa_by_hand() -> None:
    # observed 3/4; expected (2*1 + 2*3)/16 = 1/2; kappa = (0.75 - 0.5) / 0.5 = 0.5
    assert cohens_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.5)
    assert cohens_kappa(["a", "a"], ["a", "a"]) == 1.0
    assert cohens_kappa([], []) is None


def test_majority_and_aggregation() -> None:
    assert majority_label(["none", "none", "fabricated"]) == "none"
    assert majority_label(["none", "fabricated"]) == "fabricated"  # tie -> more severe
    a = _verdict(80, 60, 100, {"claims#0": "none"})
    b = _verdict(60, 40, 100, {"claims#0": "weak_support"})
    agg = aggregate_chunk("k1", [a, b, None])
    assert agg.scores == {"content_accuracy": 70.0, "completeness": 50.0, "hallucination": 100.0}
    assert agg.composite == pytest.approx(220 / 300)
    assert agg.labels == {"claims#0": "weak_support"}
    assert agg.n_judges_scored == 2
    assert aggregate_chunk("k2", [None, None]).composite is None


def test_panel_agreement_identical_judges() -> None:
    v1 = _verdict(80, 60, 100, {"claims#0": "none", "claims#1": "fabricated"})
    v2 = _verdict(40, 90, 50, {"claims#0": "weak_support", "claims#1": "none"})
    verdicts = {"j1": {"a": v1, "b": v2}, "j2": {"a": v1, "b": v2}}
    out = panel_agreement(verdicts, ["a", "b"])
    assert out["alpha"]["content_accuracy"] == pytest.approx(1.0)
    assert out["alpha"]["labels"] == pytest.approx(1.0)
    assert out["kappa"]["j1|j2"] == pytest.approx(1.0)


class FlakyJudge(Judge):
    """Returns no verdict for chunk k2: that chunk must be unscored, not 0."""

    name = "flaky"
    family = "test"

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        return [None if chunk.chunk_id == "k2" else _verdict(90, 90, 90, {}) for chunk, _ in pairs]


def test_unscored_chunks_are_excluded_and_counted() -> None:
    from chatledger.core import ExtractionRecord, RecordStatus

    chunks = [CHUNK.model_copy(update={"chunk_id": c}) for c in ("k1", "k2", "k3")]
    records = {c: ExtractionRecord(c, "m", RecordStatus.OK, ExtractionV3()) for c in ("k1", "k2")}
    result = judge_challenger("m", [FlakyJudge()], chunks, records)
    # k1 scores 0.9, k2 is unscored (left out), k3 has no extraction (0) -> (0.9 + 0) / 2
    assert result.composite == pytest.approx(0.45)
    assert result.unscored == {"flaky": 1}
    assert result.unusable_chunks == 1


def test_run_with_grounding_judge(tmp_path: Path) -> None:
    examples = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "examples"
    config = {
        "chunks": str(examples / "chunks.jsonl"),
        "reference": str(examples / "reference.jsonl"),
        "challengers": [str(examples / "challenger.jsonl")],
        "layers": ["extraction", "judge", "downstream"],
        "judges": ["grounding"],
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config))
    result = execute_run(load_run_config(path), tmp_path / "out")
    model = result.models[0]
    assert set(model.layers) == {"extraction", "judge", "downstream"}
    expected = (
        0.6 * model.layers["extraction"]
        + 0.25 * model.layers["judge"]
        + 0.15 * (model.layers["downstream"])
    )
    assert model.overall == pytest.approx(expected)
    assert result.renormalisation_note is None
    lines = (tmp_path / "out" / "judgements.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["judge"] == "grounding"
    # The judge never sees the model's name: it is not in what the judge is given.
    assert "example:cheaper-model" not in json.dumps(json.loads(lines[0])["verdict"])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"layers": ["extraction", "judge"]}, "needs judges"),
        ({"judges": ["grounding"]}, "not in layers"),
        ({"layers": ["judge"], "judges": ["oracle"]}, "unknown judge"),
    ],
)
def test_judge_config_errors(tmp_path: Path, overrides: dict, message: str) -> None:
    from chatledger.core import InputError

    examples = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "examples"
    config = {
        "chunks": str(examples / "chunks.jsonl"),
        "reference": str(examples / "reference.jsonl"),
        "challengers": [str(examples / "challenger.jsonl")],
        **overrides,
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config))
    with pytest.raises(InputError, match=message):
        execute_run(load_run_config(path), tmp_path / "out")
