"""``chatledger decide`` (issue 33): a comparison run a batch of conversations at a time until
every gate rule is decided on an anytime-valid confidence sequence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chatledger.cli._app import main
from chatledger.gating import load_gate_rules
from chatledger.gating._sequential import SequentialResult, run_until_decided
from chatledger.runs._sequential import conversation_figures

CASINO = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "human" / "casino"


def _config(tmp_path: Path, candidate_lines: int | None) -> Path:
    """CaSiNo's 47 dialogues (one chunk each) against their human gold: the baseline is the
    gold itself (1.0 on every dialogue); the candidate the gold's first ``candidate_lines``
    lines (None: all), every other dialogue missing (0 on every field, DESIGN §3)."""
    shutil.copy(CASINO / "chunks.jsonl", tmp_path / "chunks.jsonl")
    gold = (CASINO / "gold.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "gold.jsonl").write_text("".join(gold), encoding="utf-8")
    (tmp_path / "same.jsonl").write_text("".join(gold), encoding="utf-8")
    kept = gold if candidate_lines is None else gold[:candidate_lines]
    (tmp_path / "cand.jsonl").write_text("".join(kept), encoding="utf-8")
    config = {
        "name": "decide-test",
        "chunks": "chunks.jsonl",
        "reference": {"file": "gold.jsonl", "name": "human"},
        "challengers": [
            {"file": "same.jsonl", "name": "base"},
            {"file": "cand.jsonl", "name": "cand"},
        ],
        "layers": ["extraction"],
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


RULES = (
    "{baseline_model: base, candidate_model: cand, rules: {layers.extraction: {max_drop: 0.05}}}"
)


def test_a_clear_drop_is_decided_early_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, candidate_lines=1)
    out = tmp_path / "decide"
    result = run_until_decided(config, load_gate_rules(RULES), out, batch_size=5, seed=3)
    rule = result.rules[0]
    assert rule.decision == "fail"
    assert result.stopped == "decided"
    assert result.conversations_available == 47
    # one dialogue (the candidate's one line) differs by 0, every other by −1
    assert result.conversations_used == rule.decided_after
    assert result.conversations_used <= 15
    first = result.order[0]
    figures = conversation_figures(
        out / "batches" / "batch-001" / "run", "base", "cand", ["layers.extraction"]
    )["layers.extraction"]
    diffs = figures.candidate - figures.baseline
    assert set(figures.baseline.tolist()) == {1.0}
    assert diffs.tolist() == [0.0 if c == "casino-607" else -1.0 for c in figures.conversations]
    assert first in figures.conversations
    assert rule.steps[0].conversations == 5
    assert result.used.chunks == result.conversations_used
    assert result.full_run.chunks == 47 and result.used.calls == 0
    # human gold (covers) → conversations treated as drawn with replacement, said in a note
    assert any("with replacement" in n for n in result.notes)
    assert SequentialResult.read(out) == result
    html = (out / "decision.html").read_text(encoding="utf-8")
    assert "<svg" in html and "layers.extraction max_drop 0.05" in html
    # the command resumes the same folder: the same decision, exit 1 (a rule failed)
    code = main(["decide", str(config), RULES, "--out", str(out), "--batch", "5", "--seed", "3"])
    captured = capsys.readouterr()
    assert code == 1
    assert "fail" in captured.out and f"after {result.conversations_used} of 47" in captured.out
    assert SequentialResult.read(out) == result
    # planning from it: the 10 differences as the pilot, a large drop decided early, none never
    code = main(["decide", str(config), RULES, "--out", str(out), "--plan", "-0.5"])
    planned = capsys.readouterr().out
    assert code == 0 and "at -0.5 about" in planned and "of 47 conversations" in planned
    main(["decide", str(config), RULES, "--out", str(out), "--plan", "-0.05"])
    assert "would not decide it" in capsys.readouterr().out


def test_no_difference_is_never_decided_at_a_zero_allowance(tmp_path: Path) -> None:
    config = _config(tmp_path, candidate_lines=None)
    rules = load_gate_rules(
        "{baseline_model: base, candidate_model: cand, rules: {layers.extraction: {max_drop: 0}}}"
    )
    result = run_until_decided(config, rules, tmp_path / "d", batch_size=20, seed=0)
    rule = result.rules[0]
    assert rule.decision == "undecided"
    assert result.stopped == "exhausted" and result.conversations_used == 47
    assert rule.estimate == 0.0 and rule.lower is not None and rule.lower < 0.0
    # the pilot it leaves: 47 differences of 0, and no number of conversations decides it
    assert rule.values == [0.0] * 47 and rule.expected_if_real is None


def test_models_must_be_named(tmp_path: Path) -> None:
    from chatledger.core import InputError

    config = _config(tmp_path, candidate_lines=1)
    with pytest.raises(InputError, match="baseline_model"):
        run_until_decided(
            config, load_gate_rules("{overall: {max_drop: 0.1}}"), tmp_path / "d", batch_size=5
        )


def test_a_budget_stop_decides_on_the_batches_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run config's own cap stops a batch's model calls (the run raises 'stopped by the
    budget'): decide keeps the batches finished and says so."""
    import chatledger.runs as runs
    from chatledger.core import EnvironmentFault

    real = runs.execute_run
    calls = {"n": 0}

    def capped(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 2:
            raise EnvironmentFault("stopped by the budget: the cap of $0.01 is reached")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runs, "execute_run", capped)
    config = _config(tmp_path, candidate_lines=1)
    result = run_until_decided(config, load_gate_rules(RULES), tmp_path / "d", batch_size=5)
    assert result.stopped == "budget" and result.conversations_used == 5
    assert result.rules[0].decision == "undecided"
    assert any("batch 2 stopped by the budget" in n for n in result.notes)
