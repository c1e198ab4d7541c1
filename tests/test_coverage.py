"""``chatledger coverage`` on a small population (fixed seed): the CaSiNo sample's human gold as
the reference, two simulated challengers (the gold through every corruption operator at 0.1
and 0.6), subsets of 10 of its 47 dialogues. The intervals of the overall and of every layer
must contain the population's figure in at least 85 % of the subsets (nominal 95 %)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatledger.demo import human_sample
from chatledger.demo._population import prepare_population
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._coverage import run_coverage
from chatledger.stats import wilson_interval
from generated_docs import ROOT, check_block


@pytest.fixture(scope="module")
def population(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("coverage")
    chunks, gold = human_sample("casino", root)
    config = prepare_population(chunks, gold, root / "population", offline=False)
    out = root / "population" / "run"
    execute_run(load_run_config(config), out)
    return out


def test_layer_coverage_of_whole_conversation_subsets(population: Path) -> None:
    result = run_coverage(population, subsets=40, size=10, resamples=300, seed=7)
    assert result.unit == "conversation" and result.n_conversations == 47
    layers = [f for f in result.figures if "." not in f.figure]
    assert {f.figure for f in layers} >= {"overall", "extraction", "judge"}
    for figure in layers:
        assert figure.with_interval >= 30, (figure.model, figure.figure, figure.without)
        assert figure.coverage is not None and figure.coverage >= 0.85, (
            figure.model,
            figure.figure,
            figure.covered,
            figure.with_interval,
        )


def test_wilson_interval_by_hand() -> None:
    # 38 of 40: p = 0.95, z = 1.96: centre (0.95 + 0.048)/(1.096) = 0.9106, half 0.0767
    low, high = wilson_interval(38, 40)
    assert low == pytest.approx(0.8350, abs=1e-3)
    assert high == pytest.approx(0.9862, abs=1e-3)


def coverage_markdown(data: dict[str, Any]) -> str:
    """docs/statistics.md's table of one coverage file: per challenger the overall, each layer
    and each field (a field as "· name"), with how many subsets gave no interval and why."""
    rows = [
        f"{data['subsets']} subsets of {data['size']} of {data['n_conversations']} "
        f"conversations (unit: {data['unit']}, {data['resamples']} resamples each, seed "
        f"{data['seed']}); nominal {data['nominal']:.0%}.",
        "",
        "| model | figure | population | coverage [Wilson 95 %] | with an interval | "
        "without (why) | mean width |",
        "|---|---|---:|---|---:|---|---:|",
    ]
    for row in data["figures"]:
        figure = row["figure"]
        if figure.startswith("extraction."):
            figure = f"· {figure.partition('.')[2]}"
        without = ", ".join(f"{n} {why}" for why, n in row["without_interval"].items()) or "—"
        if row["coverage"] is None:
            coverage, width = "—", "—"
        else:
            coverage = (
                f"{row['coverage']:.3f} [{row['coverage_low']:.3f}, {row['coverage_high']:.3f}]"
            )
            if row["coverage_high"] < 0.93:
                coverage = f"**{coverage}**"
            width = f"{row['mean_width']:.3f}"
        rows.append(
            f"| {row['model']} | {figure} | {row['truth']:.3f} | {coverage} | "
            f"{row['with_interval']}/{data['subsets']} | {without} | {width} |"
        )
    return "\n".join(rows)


@pytest.mark.parametrize("name", ["ami-pool", "casino"])
def test_docs_coverage_tables_are_the_measured_ones(name: str) -> None:
    data = json.loads((ROOT / "docs" / "data" / f"coverage-{name}.json").read_text("utf-8"))
    check_block("docs/statistics.md", f"coverage-{name}", coverage_markdown(data))


def test_plan_from_the_pilot_s_per_conversation_spread(population: Path) -> None:
    from chatledger.report._context import power_sentence
    from chatledger.report._load import load_run_files
    from chatledger.runs._plan import plan_run
    from chatledger.stats import units_needed

    plan = plan_run(population, detect=0.02)
    assert plan["k"] == 47 and plan["power"] == 0.8
    overall = {r["model"]: r for r in plan["figures"] if r["figure"] == "overall"}
    assert set(overall) == {"simulated:light", "simulated:heavy"}
    for row in overall.values():
        assert row["sd"] > 0
        assert row["needed"] == units_needed(row["sd"], 0.02)
    sentence = power_sentence(load_run_files(population))
    worst = max(overall.values(), key=lambda r: r["needed"])
    assert sentence is not None
    assert f"≈ {worst['needed']:,} conversations" in sentence and "you have 47" in sentence


def test_ppi_hidings_from_the_command(population: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``coverage --ppi-keep``: per dialogue the challenger's extraction agreement with the human
    gold and its judge layer, hidings of all but 10 dialogues' gold; the same numbers as
    ``ppi_coverage`` on those per-dialogue figures, and never wider than humans alone."""
    from chatledger.cli._app import main
    from chatledger.runs._coverage import ppi_coverage
    from chatledger.runs._paired import read_conversation_run
    from chatledger.runs._sequential import conversation_figures

    name = read_conversation_run(population, "population").models[0].name
    args = ["coverage", str(population), "--ppi-keep", "10", "--subsets", "40", "--seed", "3"]
    assert main([*args, "--model", name, "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    per = conversation_figures(population, name, name, ["layers.extraction", "layers.judge"])
    y, f = per["layers.extraction"].candidate, per["layers.judge"].candidate
    same = ppi_coverage(y, f, keep=10, hidings=40, seed=3).to_dict()
    assert shown["conversations"] == 47 and shown["predictor"] == "layers.judge"
    for key in ("full_gold_figure", "correlation", "median_width_ratio", "narrower_share"):
        assert shown[key] == pytest.approx(same[key])
    assert shown["ppi"]["covered"] == same["ppi"]["covered"]
    assert shown["wider_share"] == 0.0 and shown["ppi"]["with_interval"] == 40
    assert main(args) == 2  # one model, named
    assert "--model" in capsys.readouterr().err
