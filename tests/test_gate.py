"""``chatledger gate``: rules decided on the paired bootstrap of two real runs, worked by hand.

The runs are built by the real pipeline from ten hand-written chunks in five conversations.
The reference gives every chunk the topics ["budget review", "hiring plan"] and nothing else;
a challenger that names one of the two on a chunk scores topics F1 2/3 there (precision 1,
recall 1/2), one that names both scores 1. The topics figure is the macro mean over the ten
chunks, so

The unit is the conversation (two chunks each, five conversations: the fewest an interval is
given for), and an interval is estimate ± t(4)·SE, t(4) = 2.7764, SE the larger of the
leave-one-conversation-out jackknife SE and the cluster bootstrap's.

- *small drop*: one chunk of ten at 2/3 → topics 1 − 1/30 (a drop of 0.0333), all of it in
  conversation 1. Leaving conversation 1 out the difference is 0, leaving any other out it is
  −(1/3)/8; the jackknife SE is exactly 1/30, so the interval is −1/30 ± 2.7764/30 =
  [−0.1259, +0.0592]: the drop is not shown and ``max_drop: 0.02`` passes; ``--strict`` reads
  −0.0333 < −0.02 and fails.
- *clear drop*: five chunks at 2/3, one in each conversation → topics 1 − 5/30 (−0.1667), the
  same −1/6 in every conversation: no resample differs, the interval is the point itself,
  below −0.02, and the rule fails either way. The sign-flip test over the five conversations
  (all negative) gives p = 2/32.

Every other field is empty on both sides (a both-empty chunk scores 1), so the overall — the
extraction composite, the only layer run — moves by topics' weight times the topics change:
0.042 × (−1/30) for the small drop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatledger.cli._app import main
from chatledger.gating import evaluate_gate, load_gate_rules
from chatledger.record import read_run_record
from chatledger.runs import execute_run, load_run_config
from chatledger.stats import t_quantile

TOPICS = ["budget review", "hiring plan"]
N_CHUNKS = 10
TOPICS_WEIGHT = 0.042  # DESIGN.md, schema v3 field weights
JUNIT_XSD = Path(__file__).parent / "data" / "junit" / "junit.xsd"


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _chunk(i: int) -> dict[str, Any]:
    speakers = ["Ana Ruiz", "Ben Okafor"]
    return {
        "chunk_id": f"c{i:02d}",
        "conversation_id": f"conv{i // 2}",
        "participants": speakers,
        "messages": [
            {"id": f"c{i:02d}-m{j}", "speaker": speakers[j % 2], "text": f"line {j} of {i}"}
            for j in range(1, 4)
        ],
    }


def _extractions(model: str, one_topic_on: set[int], cost: float = 0.0) -> list[dict[str, Any]]:
    rows = []
    for i in range(N_CHUNKS):
        topics = TOPICS[:1] if i in one_topic_on else TOPICS
        row: dict[str, Any] = {
            "chunk_id": f"c{i:02d}",
            "model": model,
            "extraction": {"topics": topics},
        }
        if cost:
            row["usage"] = {"cost_usd": cost, "input_tokens": 100, "output_tokens": 20}
        rows.append(row)
    return rows


def _run(folder: Path, name: str, rows: list[dict[str, Any]], chunk_order: list[int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _write_jsonl(folder / "chunks.jsonl", [_chunk(i) for i in chunk_order])
    _write_jsonl(folder / "gold.jsonl", _extractions("gold", set()))
    _write_jsonl(folder / f"{name}.jsonl", rows)
    config = {
        "name": name,
        "chunks": "chunks.jsonl",
        "reference": {"file": "gold.jsonl", "name": "gold"},
        "challengers": [{"file": f"{name}.jsonl", "name": name}],
        "layers": ["extraction"],
    }
    (folder / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    out = folder / "out"
    execute_run(load_run_config(folder / "run.yaml"), out)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gate")
    order = list(range(N_CHUNKS))
    return {
        "baseline": _run(
            root / "baseline", "model-a", _extractions("model-a", set(), 0.004), order
        ),
        "small": _run(root / "small", "model-b", _extractions("model-b", {3}, 0.001), order),
        "clear": _run(
            root / "clear", "model-c", _extractions("model-c", {0, 2, 4, 6, 8}, 0.003), order
        ),
        # The small drop again, its chunks listed in another order.
        "shuffled": _run(root / "shuffled", "model-b", _extractions("model-b", {3}), order[::-1]),
        "fewer": _run(root / "fewer", "model-b", _extractions("model-b", {3}), order[:8]),
    }


def _gate(
    capsys: pytest.CaptureFixture[str], *args: str, output: str = "json"
) -> tuple[int, Any, str]:
    code = main(["gate", *args, "--format", output])
    captured = capsys.readouterr()
    data = json.loads(captured.out) if output == "json" and captured.out.strip() else captured.out
    return code, data, captured.err


def _outcome(data: dict[str, Any], figure: str, kind: str = "max_drop") -> dict[str, Any]:
    return next(
        o for o in data["outcomes"] if o["rule"]["figure"] == figure and o["rule"]["kind"] == kind
    )


def test_the_runs_score_what_the_docstring_works_out(runs: dict[str, Path]) -> None:
    for name, topics in (("baseline", 1.0), ("small", 1 - 1 / 30), ("clear", 1 - 5 / 30)):
        record = read_run_record(runs[name])
        model = record.models[0]  # type: ignore[union-attr]
        assert model.fields["topics"] == pytest.approx(topics, abs=1e-12)
        assert record.field_weights["topics"] == TOPICS_WEIGHT  # type: ignore[union-attr]


def test_a_small_drop_passes_on_its_interval_and_fails_strict(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    rules = "{fields.topics: {max_drop: 0.02}, overall: {max_drop: 0.02}}"
    code, data, _ = _gate(capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules)
    assert code == 0, data
    topics = _outcome(data, "fields.topics")
    assert topics["difference"] == pytest.approx(-1 / 30, abs=1e-12)
    # −1/30 ± t(4)·(1/30): the jackknife SE (1/30, see the module doc) is the larger here
    assert topics["high"] == pytest.approx(-1 / 30 + t_quantile(0.95, 4) / 30, abs=1e-12)
    assert topics["low"] == pytest.approx(-1 / 30 - t_quantile(0.95, 4) / 30, abs=1e-12)
    assert topics["passed"] and topics["decided_on"] == "interval"
    assert topics["units"] == "conversations" and topics["n_units"] == 5
    assert topics["p_value"] == 1.0  # one conversation differs: half the sign patterns reach it
    assert topics["test"] == "exact sign-flip, all 2^5 = 32 patterns"
    overall = _outcome(data, "overall")
    assert overall["difference"] == pytest.approx(-TOPICS_WEIGHT / 30, abs=1e-12)
    assert overall["units"] == "conversations" and overall["n_units"] == 5

    code, data, _ = _gate(
        capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules, "--strict"
    )
    assert code == 1
    topics = _outcome(data, "fields.topics")
    assert not topics["passed"] and topics["decided_on"] == "point estimate"
    assert _outcome(data, "overall")["passed"]  # 0.0014 is within 0.02 even so


def test_a_drop_the_same_in_every_conversation_has_a_point_interval(
    runs: dict[str, Path],
) -> None:
    result = evaluate_gate(
        load_gate_rules("{fields.topics: {max_drop: 0.02}}"), runs["baseline"], runs["clear"]
    )
    outcome = result.outcomes[0]
    assert outcome.difference == pytest.approx(-5 / 30, abs=1e-12)
    assert outcome.low == pytest.approx(-5 / 30, abs=1e-12)
    assert outcome.high == pytest.approx(-5 / 30, abs=1e-12)
    assert outcome.p_value == 2 / 32  # all five conversations one way: exact sign-flip
    assert not outcome.passed  # the whole interval is below −0.02


def test_too_few_conversations_leave_the_rule_undecided(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # "fewer" holds the first eight chunks: four conversations, one short of an interval.
    code, data, err = _gate(
        capsys,
        str(runs["fewer"]),
        str(runs["fewer"]),
        "--rules",
        "{overall: {max_drop: 0.02}}",
    )
    (outcome,) = data["outcomes"]
    assert code == 3 and outcome["undecided"] and not outcome["passed"]
    assert outcome["low"] is None and outcome["high"] is None
    assert "too few conversations to tell (k = 4)" in outcome["reason"]
    assert "gate undecided (1 rule(s))" in err


def test_a_clear_drop_fails_with_and_without_strict(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    for extra in ((), ("--strict",)):
        code, data, _ = _gate(
            capsys,
            str(runs["baseline"]),
            str(runs["clear"]),
            "--rules",
            "{fields.topics: {max_drop: 0.02}}",
            *extra,
        )
        assert code == 1 and not data["outcomes"][0]["passed"]


def test_min_reads_the_candidates_own_interval_which_run_json_shows(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = _gate(
        capsys,
        str(runs["baseline"]),
        str(runs["clear"]),
        "--rules",
        "{layers.extraction: {min: 0.999}, fields.topics: {min: 0.95}}",
    )
    record = read_run_record(runs["clear"])
    shown = record.stats.intervals["model-c"]  # type: ignore[union-attr]
    extraction = _outcome(data, "layers.extraction", "min")
    assert (extraction["low"], extraction["high"]) == (
        pytest.approx(shown["extraction"].low, abs=1e-12),
        pytest.approx(shown["extraction"].high, abs=1e-12),
    )
    # 1 − 0.042/6 = 0.993 with an interval entirely below 0.999: fails.
    assert extraction["candidate"] == pytest.approx(1 - TOPICS_WEIGHT / 6, abs=1e-12)
    assert not extraction["passed"]
    topics = _outcome(data, "fields.topics", "min")
    assert topics["high"] == pytest.approx(shown["extraction.topics"].high, abs=1e-12)
    assert topics["passed"] == (topics["high"] >= 0.95)
    assert code == (0 if extraction["passed"] and topics["passed"] else 1)


def test_a_minimum_inside_the_interval_passes_on_its_upper_end(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # The small drop's overall, 1 − 0.042/30 = 0.9986, with an interval around it; a minimum
    # of 0.999 lies inside it: the figure is not shown to be below 0.999, and the rule passes
    # on the upper end; reading the lower end would fail it. --strict reads 0.9986 < 0.999.
    rules = "{overall: {min: 0.999}}"
    code, data, _ = _gate(capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules)
    (overall,) = data["outcomes"]
    drop = TOPICS_WEIGHT / 30
    assert overall["candidate"] == pytest.approx(1 - drop, abs=1e-12)
    # Leaving conversation 1 out gives 1, any other 1 − 0.042·(1/3)/8: jackknife SE 0.042/30
    # (topics' 1/30 times its weight), so 0.9986 − 2.7764·0.0014 below, and above clipped at 1.
    assert overall["low"] == pytest.approx(1 - drop - t_quantile(0.95, 4) * drop, abs=1e-12)
    assert overall["high"] == 1.0
    assert overall["low"] < 0.999 < overall["high"]
    assert overall["passed"] and overall["decided_on"] == "interval" and code == 0
    assert "the interval reaches the minimum 0.999" in overall["reason"]
    code, data, _ = _gate(
        capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules, "--strict"
    )
    assert not data["outcomes"][0]["passed"] and code == 1


def test_a_minimum_on_a_field_whose_misses_lie_in_one_conversation_is_undecided(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # The small drop's topics misses one item, in conversation 1 only: the figure's spread over
    # conversations rests on that one (stats: "misses in 1 conversation"), so its own figure
    # has no interval and a minimum on it is undecided (exit 3); --strict decides on 0.967.
    rules = "{fields.topics: {min: 0.97}}"
    code, data, _ = _gate(capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules)
    (topics,) = data["outcomes"]
    assert topics["candidate"] == pytest.approx(1 - 1 / 30, abs=1e-12)
    assert topics["undecided"] and not topics["passed"] and code == 3
    assert "misses in 1 conversation: too few to tell" in topics["reason"]
    code, data, _ = _gate(
        capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules, "--strict"
    )
    assert not data["outcomes"][0]["passed"] and code == 1


def test_chunk_order_does_not_change_the_verdict(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    rules = "{fields.topics: {max_drop: 0.02}, overall: {max_drop: 0.001}}"
    _, same, _ = _gate(capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules)
    _, shuffled, _ = _gate(capsys, str(runs["baseline"]), str(runs["shuffled"]), "--rules", rules)
    for a, b in zip(same["outcomes"], shuffled["outcomes"], strict=True):
        assert a["difference"] == pytest.approx(b["difference"], abs=1e-12)
        assert a["passed"] == b["passed"]
    # The reversed order draws other resamples (the bootstrap SE differs); the jackknife's,
    # which the interval never goes below, does not.
    bound = -1 / 30 + t_quantile(0.95, 4) / 30
    assert shuffled["outcomes"][0]["high"] >= bound - 1e-12
    assert same["outcomes"][0]["high"] >= bound - 1e-12


def test_a_run_against_itself_passes_every_drop_rule(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = _gate(
        capsys,
        str(runs["small"]),
        str(runs["small"]),
        "--rules",
        "{fields.*: {max_drop: 0}, overall: {max_drop: 0}, validity: {max_drop: 0}}",
        "--strict",
    )
    assert code == 0
    assert len(data["outcomes"]) == 19  # 17 fields, overall, validity
    code, data, _ = _gate(
        capsys, str(runs["small"]), str(runs["small"]), "--rules", "{layers.*: {min: 0.5}}"
    )
    assert code == 0 and [o["rule"]["figure"] for o in data["outcomes"]] == ["layers.extraction"]
    assert all(o["difference"] == 0.0 for o in data["outcomes"])


def test_a_field_of_fields_star_named_on_its_own_is_evaluated_once_under_its_own_rule(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The small drop is −1/30 on topics alone: strict max_drop 0 on every field fails it,
    but topics named on its own with max_drop 0.05 is that field's one rule (before: both
    rules were evaluated, topics twice, and the gate failed)."""
    rules = "{fields.*: {max_drop: 0}, fields.topics: {max_drop: 0.05}}"
    code, data, _ = _gate(
        capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules, "--strict"
    )
    topics = [o for o in data["outcomes"] if o["rule"]["figure"] == "fields.topics"]
    assert [(o["rule"]["value"], o["passed"]) for o in topics] == [(0.05, True)]
    assert len(data["outcomes"]) == 17 and code == 0


def test_costs_are_decided_on_the_recorded_figures(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # $0.004 → $0.001 per chunk: ratio 0.25.
    code, data, _ = _gate(
        capsys,
        str(runs["baseline"]),
        str(runs["small"]),
        "--rules",
        "{cost_per_chunk: {max_ratio: 0.5, max: 0.002}}",
    )
    assert code == 0
    ratio = _outcome(data, "cost_per_chunk", "max_ratio")
    assert ratio["difference"] == pytest.approx(0.25) and ratio["decided_on"] == "point estimate"
    # $0.003 is 0.75 of $0.004: above 0.5.
    code, data, _ = _gate(
        capsys,
        str(runs["baseline"]),
        str(runs["clear"]),
        "--rules",
        "{cost_per_chunk: {max_ratio: 0.5}}",
    )
    assert code == 1
    assert _outcome(data, "cost_per_chunk", "max_ratio")["difference"] == pytest.approx(0.75)
    # A baseline that cost nothing has no ratio: a usage error, not a verdict.
    code, _, err = _gate(
        capsys,
        str(runs["shuffled"]),
        str(runs["small"]),
        "--rules",
        "{cost_per_chunk: {max_ratio: 0.5}}",
    )
    assert code == 2 and "ratio to it is undefined" in err and len(err.strip().splitlines()) == 1


def test_runs_on_other_chunks_are_refused_in_one_line(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _gate(
        capsys, str(runs["baseline"]), str(runs["fewer"]), "--rules", "{overall: {max_drop: 0.1}}"
    )
    assert code == 2 and out == ""
    assert "do not share their chunks (10 in the baseline, 8 in the candidate" in err
    assert "2 only in the baseline (first: c08)" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("{overal: {max_drop: 0.1}}", "[overal]: unknown figure 'overal'"),
        ("{layers.judges: {min: 0.5}}", "unknown layer 'judges'"),
        ("{overall: {max_dorp: 0.1}}", "[overall.max_dorp]: unknown key"),
        ("{overall: {max_drop: -0.1}}", "[overall.max_drop]"),
        ("{overall: {}}", "name a threshold"),
        ("{overall: 0.02}", "expected thresholds"),
        ("{cost_per_chunk: {max_drop: 0.1}}", "max_drop does not apply to a cost"),
        ("{validity: {max_ratio: 2}}", "max_ratio does not apply to a score"),
        ("{validity: {min: 99}}", "a score's min is between 0 and 1"),
        ("{fields.claimz: {max_drop: 0.1}}", "has no fields.claimz (it has: topics"),
        (
            "{fields.topics: {max_drop: 0.1}, fields: {topics: {max_drop: 0.2}}}",
            "[fields.topics.max_drop]: fields.topics max_drop is given twice ('fields.topics' "
            "and 'fields: {topics}'): keep one",
        ),
        ("{strict: maybe, overall: {max_drop: 0.1}}", "[strict]"),
        ("no-such-rules.yaml", "rules file not found"),
    ],
)
def test_a_rules_mistake_is_one_line_naming_the_key(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], rules: str, message: str
) -> None:
    code, _, err = _gate(capsys, str(runs["baseline"]), str(runs["small"]), "--rules", rules)
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_rules_file_names_the_runs_relative_to_itself(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "ci" / "gate.yaml"
    rules.parent.mkdir()
    base = os.path.relpath(runs["baseline"], rules.parent)
    cand = os.path.relpath(runs["clear"], rules.parent)
    rules.write_text(
        f"baseline: {base}\ncandidate: {cand}\nrules:\n  fields:\n    topics: {{max_drop: 0.02}}\n"
        "  validity: {min: 0.99}\n",
        encoding="utf-8",
    )
    code, data, _ = _gate(capsys, "--rules", str(rules))
    assert code == 1
    assert [o["rule"]["figure"] for o in data["outcomes"]] == ["fields.topics", "validity"]
    assert data["outcomes"][1]["passed"] and data["outcomes"][1]["candidate"] == 1.0


def test_a_record_without_its_chunk_list_is_refused(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    old = tmp_path / "old"
    shutil.copytree(runs["baseline"], old)
    data = json.loads((old / "run.json").read_text())
    for key in ("chunk_ids", "chunk_conversations", "field_weights", "scored_fields"):
        data.pop(key)
    data["schema_version"] = 3
    (old / "run.json").write_text(json.dumps(data))
    code, _, err = _gate(capsys, str(old), str(runs["small"]), "--rules", "{overall: {min: 0}}")
    assert code == 2 and "does not list its chunks" in err


def test_the_table_fits_80_columns(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _gate(
        capsys,
        str(runs["baseline"]),
        str(runs["clear"]),
        "--rules",
        "{fields.evidence_message_ids: {max_drop: 0.02}, fields.topics: {max_drop: 0.02}, "
        "cost_per_chunk: {max_ratio: 0.5}}",
        output="table",
    )
    assert code == 1
    table = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert len(table) == 10 and max(len(line) for line in table) <= 80
    assert "-0.167" in out and "FAIL" in out and "gate failed: 2 of 3 rules" in out


def test_junit_output_validates_and_reads_back(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import junitparser
    import xmlschema

    report = tmp_path / "gate.xml"
    code, out, _ = _gate(
        capsys,
        str(runs["baseline"]),
        str(runs["clear"]),
        "--rules",
        "{fields.topics: {max_drop: 0.02}, validity: {min: 0.99}, overall: {max_drop: 0.5}}",
        "--out",
        str(report),
        output="junit",
    )
    assert code == 1 and report.read_text(encoding="utf-8") == out
    xmlschema.XMLSchema(JUNIT_XSD).validate(report)
    xml = junitparser.JUnitXml.fromfile(str(report))
    suites = list(xml)
    assert len(suites) == 1 and suites[0].tests == 3 and suites[0].failures == 1
    cases = {case.name: case for case in suites[0]}
    assert set(cases) == {
        "fields.topics max_drop 0.02",
        "validity min 0.99",
        "overall max_drop 0.5",
    }
    failed = cases["fields.topics max_drop 0.02"]
    assert not failed.is_passed and "whole interval is below -0.0200" in failed.result[0].message
    assert cases["validity min 0.99"].is_passed


def test_github_annotations_and_the_step_summary(
    runs: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = _gate(
        capsys,
        str(runs["baseline"]),
        str(runs["clear"]),
        "--rules",
        "{fields.topics: {max_drop: 0.02}, validity: {min: 0.99}}",
        output="github",
    )
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(
        "::error title=chatledger gate%3A fields.topics max_drop 0.02 FAILED::"
    )
    assert lines[1].startswith("::notice title=chatledger gate%3A validity min 0.99 passed::")
    assert all("\n" not in line and "\r" not in line for line in lines)
    text = summary.read_text(encoding="utf-8")
    assert "### chatledger gate: failed (1 of 2 rules)" in text
    assert "| fields.topics max_drop 0.02 | 1 | 0.8333 | -0.1667 |" in text


def _pytest(folder: Path, *args: str, autoload: bool = True) -> subprocess.CompletedProcess[str]:
    """pytest in ``folder``; ``autoload=False``: with no installed plugin but ours (loaded by
    name), for the checks of the plugin's options once its entry point has been seen to load
    it — every plugin of the test environment costs ~1.7 CPU-s a start."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    plugins: tuple[str, ...] = ()
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        plugins = ("-p", "chatledger.pytest_plugin")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *plugins, "-q", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_pytest_plugin_makes_each_rule_a_test(runs: dict[str, Path], tmp_path: Path) -> None:
    rules = tmp_path / "gate.yaml"
    rules.write_text(
        f"baseline: {runs['baseline']}\ncandidate: {runs['small']}\n"
        "fields.topics: {max_drop: 0.02}\noverall: {max_drop: 0.02}\n",
        encoding="utf-8",
    )
    report = tmp_path / "junit.xml"
    passed = _pytest(tmp_path, "--chatledger-gate", str(rules), f"--junitxml={report}")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "2 passed" in passed.stdout
    assert 'name="fields.topics max_drop 0.02"' in report.read_text(encoding="utf-8")

    strict = _pytest(
        tmp_path, "--chatledger-gate", str(rules), "--chatledger-strict", autoload=False
    )
    assert strict.returncode == 1
    assert "1 failed, 1 passed" in strict.stdout
    assert "chatledger gate: fields.topics max_drop 0.02 failed" in strict.stdout

    other = _pytest(
        tmp_path,
        "--chatledger-gate",
        str(rules),
        "--chatledger-candidate",
        str(runs["clear"]),
        "-k",
        "topics",
        autoload=False,
    )
    assert other.returncode == 1 and "1 failed, 1 deselected" in other.stdout

    wrong = _pytest(
        tmp_path,
        "--chatledger-gate",
        str(rules),
        "--chatledger-candidate",
        str(runs["fewer"]),
        autoload=False,
    )
    assert wrong.returncode == 4  # pytest's usage error
    assert "do not share their chunks" in wrong.stderr


def test_without_the_option_the_plugin_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    result = _pytest(tmp_path)
    assert result.returncode == 0 and "1 passed" in result.stdout
    listed = _pytest(tmp_path, "--help")
    assert "--chatledger-gate=RULES" in listed.stdout
