"""``human_gold: {file, ppi: true}`` in a run config (issue 33): ppi.json beside run.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from chatledger.core import InputError
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._ppi import PPIRecord, human_figures
from chatledger.runs._sequential import conversation_figures
from chatledger.stats import ppi_mean

CASINO = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "human" / "casino"


def _write(tmp_path: Path, extra: dict[str, object]) -> Path:
    from chatledger.extractors import get_extractor

    shutil.copy(CASINO / "chunks.jsonl", tmp_path / "chunks.jsonl")
    gold = (CASINO / "gold.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    # The run's reference plays the model every conversation has: here the gold itself, so
    # the model-referenced figure equals the human one where both exist.
    (tmp_path / "reference.jsonl").write_text("".join(gold), encoding="utf-8")
    (tmp_path / "humans.jsonl").write_text("".join(gold[:12]), encoding="utf-8")
    get_extractor("offline:rules").extract_file(tmp_path / "chunks.jsonl", tmp_path / "rules.jsonl")
    config = {
        "chunks": "chunks.jsonl",
        "reference": {"file": "reference.jsonl", "name": "model"},
        "challengers": [{"file": "rules.jsonl", "name": "offline:rules"}],
        "layers": ["extraction"],
        "stats": {"bootstrap_resamples": 100, "dirichlet_draws": 100},
        **extra,
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_ppi_beside_the_human_only_interval(tmp_path: Path) -> None:
    config = _write(
        tmp_path, {"human_gold": {"file": "humans.jsonl", "ppi": True, "plan_width": 0.05}}
    )
    loaded = load_run_config(config)
    assert loaded.gold == tmp_path / "humans.jsonl"  # human_gold is scored as gold
    execute_run(loaded, tmp_path / "run")
    record = PPIRecord.read(tmp_path / "run")
    assert record is not None and record.interval == "student-t"
    # f is scored on the fields CaSiNo's humans annotated, as y is (the gold's `covers`)
    assert record.predictor_fields == ("claims", "negotiation_patterns")
    (model,) = record.models
    assert (model.annotated, model.others) == (12, 35)
    # the same arrays by hand: y scored per annotated dialogue; f (the run's extraction layer
    # against its reference, the gold itself) equals y on the gold's fields
    y = human_figures(
        tmp_path / "humans.jsonl", tmp_path / "rules.jsonl", tmp_path / "chunks.jsonl"
    )
    per = conversation_figures(
        tmp_path / "run", "offline:rules", "offline:rules", ["layers.extraction"]
    )["layers.extraction"]
    f = dict(zip(per.conversations, per.candidate.tolist(), strict=True))
    annotated = [c for c in per.conversations if c in y]
    assert annotated == record.annotated_conversations
    assert [y[c] for c in annotated] == pytest.approx([f[c] for c in annotated])
    others = [c for c in per.conversations if c not in y]
    expected = ppi_mean(
        np.array([y[c] for c in annotated]),
        np.array([f[c] for c in annotated]),
        np.array([f[c] for c in others]),
        student=True,
    )
    assert model.estimate == pytest.approx(expected.estimate)
    assert (model.low, model.high) == pytest.approx((expected.low, expected.high))
    # a model-referenced figure equal to the human one on the annotated dialogues: the
    # interval is narrower than the twelve humans' alone, worth more than twelve labels
    assert model.high - model.low < model.human_high - model.human_low
    assert model.labels_worth > 12
    # planning for a 0.05-wide interval from this run as the pilot, by the stats function
    from chatledger.stats import ppi_labels_needed

    needed = ppi_labels_needed(
        0.05,
        np.array([y[c] for c in annotated]),
        np.array([f[c] for c in annotated]),
        np.array([f[c] for c in others]),
    )
    assert (model.needed_ppi, model.needed_humans_only) == needed
    assert needed[1] is not None and (needed[0] is None or needed[0] < needed[1])
    # the report shows it beside the human-only interval
    from chatledger.report import build_report

    page = build_report(tmp_path / "run").read_text(encoding="utf-8")
    assert 'id="ppi"' in page and "12 of 47 conversations annotated" in page
    assert "on the fields the humans annotated (claims, negotiation_patterns)" in page
    assert f"[{model.low:.3f}, {model.high:.3f}]" in page
    assert f"[{model.human_low:.3f}, {model.human_high:.3f}]" in page


def test_gold_and_human_gold_are_one_gold(tmp_path: Path) -> None:
    config = _write(tmp_path, {"human_gold": "humans.jsonl", "gold": "humans.jsonl"})
    with pytest.raises(InputError, match="gold or human_gold"):
        load_run_config(config)
    config = _write(
        tmp_path, {"human_gold": {"file": "humans.jsonl", "ppi": True, "predictor": "judge"}}
    )
    with pytest.raises(InputError, match="judge layer"):
        load_run_config(config)
