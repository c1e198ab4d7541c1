"""``chatledger decide`` (issue 33): a comparison run a batch of conversations at a time until
every gate rule is decided on an anytime-valid confidence sequence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
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


def _priced(path: Path, cost_usd: float, latency_s: float) -> None:
    """Every line of the extraction file at ``path`` with this usage (100 + 10 tokens)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["usage"] = {
            "input_tokens": 100,
            "output_tokens": 10,
            "cost_usd": cost_usd,
            "latency_s": latency_s,
        }
        lines.append(json.dumps(record) + "\n")
    path.write_text("".join(lines), encoding="utf-8")


def test_fields_star_is_one_rule_per_field_at_a_bonferroni_share_of_alpha(tmp_path: Path) -> None:
    """CaSiNo's gold covers two fields (claims, negotiation_patterns) on all 47 dialogues, so
    fields.* is two rules at α/2 = 0.025 each. The candidate has only casino-607's line: on
    each field it differs by −1 on every other dialogue, 0 on that one."""
    from chatledger.stats import confidence_sequence

    config = _config(tmp_path, candidate_lines=1)
    # fields.claims named on its own as well: followed once, at the family's share
    rules = load_gate_rules(
        "{baseline_model: base, candidate_model: cand, rules: {fields.claims: {max_drop: 0.05}, "
        "fields.*: {max_drop: 0.05}, cost_per_chunk: {max_ratio: 2}}}"
    )
    result = run_until_decided(config, rules, tmp_path / "d", batch_size=5, seed=3)
    claims, patterns, cost = result.rules
    assert [claims.rule.figure, patterns.rule.figure] == [
        "fields.claims",
        "fields.negotiation_patterns",
    ]
    for rule in (claims, patterns):
        assert rule.alpha == pytest.approx(0.025) and rule.expanded_from == "fields.* max_drop 0.05"
        assert rule.decision == "fail" and rule.decided_on == "sequence"
        assert rule.values == [0.0 if c == "casino-607" else -1.0 for c in result.order]
        # the sequence at α/2 (drawn with replacement: human gold with covers), and the
        # split's price: the same values at the whole α give a narrower sequence
        assert rule.decided_after is not None
        seen = np.array(rule.values[: rule.decided_after])
        half = confidence_sequence(seen, low=-1.0, high=1.0, alpha=0.025).at(seen.size)
        whole = confidence_sequence(seen, low=-1.0, high=1.0, alpha=0.05).at(seen.size)
        assert (rule.steps[-1].lower, rule.steps[-1].upper) == pytest.approx(half[1:])
        assert whole[2] < half[2] and half[2] < -0.05
        # what it had spent when decided: one chunk per dialogue, no model call (files)
        assert rule.spent is not None and rule.spent.chunks == rule.decided_after
    assert result.stopped == "decided"
    assert claims.decided_after == patterns.decided_after == 15  # docs/sequential.md
    assert result.conversations_used == max(claims.decided_after or 0, patterns.decided_after or 0)
    # the files carry no usage: a ratio to the baseline's $0 is undefined, so undecided
    assert cost.decision == "undecided" and cost.decided_on == "point estimate"
    assert "is 0: a ratio to it is undefined" in cost.reason
    assert any("2 fields, each decided at α/2 = 0.025 (Bonferroni)" in n for n in result.notes)


def test_cost_rules_are_read_on_the_usage_so_far_and_decided_when_the_run_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Baseline $0.001 and 1 s per dialogue, candidate (the same extractions) $0.003 and 2 s:
    cost ratio 3 (above max_ratio 2: fail), $0.003 per chunk (within max 0.005: pass),
    latency ratio 2 (above 1.5: fail). The candidate's extraction agreement is 1.0 on every
    dialogue, so `min: 0.5` passes early and the cost rules are read there."""
    config = _config(tmp_path, candidate_lines=None)
    _priced(tmp_path / "same.jsonl", 0.001, 1.0)
    _priced(tmp_path / "cand.jsonl", 0.003, 2.0)
    text = (
        "{baseline_model: base, candidate_model: cand, rules: {layers.extraction: {min: 0.5}, "
        "cost_per_chunk: {max_ratio: 2, max: 0.005}, latency_per_chunk: {max_ratio: 1.5}}}"
    )
    out = tmp_path / "d"
    result = run_until_decided(config, load_gate_rules(text), out, batch_size=5, seed=1)
    score, most, ratio, latency = result.rules  # a figure's thresholds: max before max_ratio
    assert score.decision == "pass" and result.stopped == "decided"
    used = result.conversations_used
    assert used == score.decided_after == 10  # docs/sequential.md
    assert (ratio.measured, ratio.decision, ratio.decided_after) == ("ratio", "fail", used)
    assert ratio.estimate == pytest.approx(3.0)
    assert (most.measured, most.decision, most.estimate) == ("cost", "pass", pytest.approx(0.003))
    assert latency.decision == "fail" and latency.estimate == pytest.approx(2.0)
    assert "0.003 vs 0.001 $ per chunk" in ratio.reason and "(point estimate)" in ratio.reason
    assert ratio.alpha is None and ratio.expanded_from is None
    # spend: both models' lines of the dialogues run only (not the files' other lines)
    assert result.used.cost_usd == pytest.approx(0.004 * used)
    assert result.used.input_tokens + result.used.output_tokens == pytest.approx(220 * used)
    assert result.full_run.cost_usd == pytest.approx(0.004 * 47)
    assert result.full_run.input_tokens + result.full_run.output_tokens == pytest.approx(220 * 47)
    assert all(r.spent is not None and r.spent.chunks == used for r in result.rules)
    assert any("point estimate when the run stops" in n for n in result.notes)
    assert "a cost, read on the usage measured" in (out / "decision.html").read_text("utf-8")
    # the command: exit 1 (a cost rule failed); --plan leaves costs out
    code = main(["decide", str(config), text, "--out", str(out), "--seed", "1"])
    assert code == 1 and "(point estimate)" in capsys.readouterr().out
    main(["decide", str(config), text, "--out", str(out), "--plan", "-0.5"])
    planned = capsys.readouterr().out
    assert "layers.extraction min 0.5" in planned and "cost_per_chunk" not in planned


def test_only_costs_or_other_wildcards_are_refused(tmp_path: Path) -> None:
    from chatledger.core import InputError

    config = _config(tmp_path, candidate_lines=1)
    head = "{baseline_model: base, candidate_model: cand, rules: "
    with pytest.raises(InputError, match="only cost rules: nothing to sample"):
        run_until_decided(
            config, load_gate_rules(head + "{cost_per_chunk: {max: 1}}}"), tmp_path / "d"
        )
    with pytest.raises(InputError, match=r"only fields\.\* is expanded"):
        run_until_decided(
            config, load_gate_rules(head + "{layers.*: {max_drop: 0.1}}}"), tmp_path / "d"
        )


def test_latency_is_over_the_lines_really_called(tmp_path: Path) -> None:
    """A line replayed from the call cache took no model time: the candidate's cached lines
    (every other dialogue, marked 100 s) do not count, so its latency per chunk is still 2 s
    over the lines really called and the ratio to the baseline's 1 s is exactly 2."""
    config = _config(tmp_path, candidate_lines=None)
    _priced(tmp_path / "same.jsonl", 0.001, 1.0)
    _priced(tmp_path / "cand.jsonl", 0.003, 2.0)
    lines = (tmp_path / "cand.jsonl").read_text(encoding="utf-8").splitlines()
    marked = []
    for i, line in enumerate(lines):
        record = json.loads(line)
        if i % 2:
            record["usage"].update(cached=True, latency_s=100.0)
        marked.append(json.dumps(record) + "\n")
    (tmp_path / "cand.jsonl").write_text("".join(marked), encoding="utf-8")
    text = (
        "{baseline_model: base, candidate_model: cand, rules: {layers.extraction: {min: 0.5}, "
        "latency_per_chunk: {max_ratio: 2, max: 1.5}}}"
    )
    result = run_until_decided(config, load_gate_rules(text), tmp_path / "d", seed=1)
    most, ratio = result.rules[1:]
    assert ratio.estimate == pytest.approx(2.0) and ratio.decision == "pass"  # not above 2
    assert most.estimate == pytest.approx(2.0) and most.decision == "fail"  # above 1.5 s
