"""``chatledger coverage`` on a small population (fixed seed): the CaSiNo sample's human gold as
the reference, two simulated challengers (the gold through every corruption operator at 0.1
and 0.6), subsets of 10 of its 47 dialogues. The intervals of the overall and of every layer
must contain the population's figure in at least 85 % of the subsets (nominal 95 %)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chatledger.core import InputError
from chatledger.demo import human_sample
from chatledger.demo._population import prepare_population
from chatledger.runs import execute_run, load_run_config
from chatledger.runs._coverage import draw_subsets, run_coverage
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
    if data.get("draw", "conversation") == "chunk":
        drawn = (
            f"{data['n_chunks']} chunks drawn at random ({data['n_conversations']} conversations)"
        )
    else:
        drawn = f"{data['n_conversations']} conversations"
    rows = [
        f"{data['subsets']} subsets of {data['size']} of {drawn} (unit: {data['unit']}, "
        f"{data['resamples']} resamples each, seed {data['seed']}); nominal "
        f"{data['nominal']:.0%}.",
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


@pytest.mark.parametrize("name", ["ami-pool", "casino", "ami-pool-chunks"])
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


def test_ppi_hidings_with_a_reference_model_beside_the_gold(
    population: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run scored against a reference model (here simulated:light standing in for one) with
    the human gold beside it (``human_gold:``): ``coverage --ppi-keep`` takes ``y`` = the
    challenger's agreement with the humans per dialogue, scored as ``ppi.json`` scores it
    (``human_figures``), and ``f`` = its extraction agreement with the reference model — the
    predictor such a run leans on. Gold on only some dialogues cannot be hidden: one line."""
    from chatledger.cli._app import main
    from chatledger.runs._coverage import ppi_coverage
    from chatledger.runs._paired import read_conversation_run
    from chatledger.runs._ppi import human_figures

    record = read_conversation_run(population, "population")
    paths = {i.role: Path(i.path) for i in record.inputs}
    chunks, gold = paths["chunks"], paths["reference"]
    reference, challenger = paths["challenger:simulated:light"], paths["challenger:simulated:heavy"]

    def run(human_gold: Path, out: str) -> Path:
        config = {
            "chunks": str(chunks),
            "reference": {"file": str(reference), "name": "model:reference"},
            "challengers": [{"file": str(challenger), "name": "simulated:heavy"}],
            "layers": ["extraction"],
            "human_gold": {"file": str(human_gold), "name": "human:casino"},
        }
        (tmp_path / f"{out}.yaml").write_text(json.dumps(config), encoding="utf-8")
        execute_run(load_run_config(tmp_path / f"{out}.yaml"), tmp_path / out)
        return tmp_path / out

    model_run = run(gold, "with-model")
    args = ["coverage", str(model_run), "--ppi-keep", "10", "--subsets", "40", "--seed", "3"]
    assert main([*args, "--model", "simulated:heavy", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    order = list(dict.fromkeys(read_conversation_run(model_run, "run").chunk_conversations))
    humans = human_figures(gold, challenger, chunks)
    # f: the challenger against the reference model on the fields the humans annotated — the
    # reference's lines with the gold's `covers` written in, scored as gold is scored.
    covers = {json.loads(line)["chunk_id"]: json.loads(line)["covers"] for line in gold.open()}
    assert set(map(tuple, covers.values())) == {("claims", "negotiation_patterns")}
    with (tmp_path / "reference-on-gold-fields.jsonl").open("w", encoding="utf-8") as out:
        for line in reference.open(encoding="utf-8"):
            row = json.loads(line)
            out.write(json.dumps({**row, "covers": covers[row["chunk_id"]]}) + "\n")
    model = human_figures(tmp_path / "reference-on-gold-fields.jsonl", challenger, chunks)
    y = np.array([humans[c] for c in order])
    f = np.array([model[c] for c in order])
    same = ppi_coverage(y, f, keep=10, hidings=40, seed=3).to_dict()
    assert shown["predictor"] == "layers.extraction" and shown["conversations"] == 47
    assert shown["full_gold_figure"] == pytest.approx(float(y.mean()))
    for key in ("correlation", "median_width_ratio", "narrower_share"):
        assert shown[key] == pytest.approx(same[key])
    assert shown["ppi"]["covered"] == same["ppi"]["covered"]
    # A model that is the gold lightly corrupted predicts the human figure well: PPI narrows.
    assert shown["correlation"] > 0.5 and shown["median_width_ratio"] < 0.95, shown

    lines = gold.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "some.jsonl").write_text("".join(lines[:20]), encoding="utf-8")
    partial = run(tmp_path / "some.jsonl", "with-some-gold")
    assert main([*args[:1], str(partial), *args[2:], "--model", "simulated:heavy"]) == 2
    err = capsys.readouterr().err
    assert "27 of 47 have none" in err and "some.jsonl" in err


def test_chunk_subsets_are_random_chunks_and_conversation_subsets_whole_ones() -> None:
    """Three conversations of 2, 3 and 1 chunks. Conversation draws take whole conversations
    (every mask a union of them, always whole); chunk draws take ``size`` distinct chunks at
    random and say when they split a conversation; the same seed draws the same subsets."""
    convs = ["a", "a", "b", "b", "b", "c"]
    blocks = {"a": [0, 1], "b": [2, 3, 4], "c": [5]}
    for mask, whole in draw_subsets(convs, "conversation", 2, 30, seed=3):
        held = {convs[i] for i in np.flatnonzero(mask)}
        assert len(held) == 2 and whole
        assert sorted(np.flatnonzero(mask)) == sorted(i for c in held for i in blocks[c])
    by_chunk = draw_subsets(convs, "chunk", 3, 200, seed=3)
    assert all(int(mask.sum()) == 3 for mask, _ in by_chunk)
    for mask, whole in by_chunk:
        picked = set(np.flatnonzero(mask).tolist())
        assert whole == all(set(blocks[c]) <= picked for c in {convs[i] for i in picked})
    # Whole only when the 3 chunks are conversation b, or a and c: 2 of C(6, 3) = 20 subsets
    # (10 %; 200 draws give 0.02-0.2 with room to spare).
    share = sum(whole for _, whole in by_chunk) / len(by_chunk)
    assert 0.02 <= share <= 0.2
    # Every chunk is in half the subsets (3 of 6): about 100 of 200.
    counts = np.sum([mask for mask, _ in by_chunk], axis=0)
    assert counts.min() > 60 and counts.max() < 140
    again = draw_subsets(convs, "chunk", 3, 200, seed=3)
    assert all((m1 == m2).all() for (m1, _), (m2, _) in zip(by_chunk, again, strict=True))


def test_chunk_unit_draws_chunks(population: Path) -> None:
    result = run_coverage(population, subsets=10, size=12, resamples=100, seed=1, unit="chunk")
    assert (result.unit, result.draw, result.n_chunks) == ("chunk", "chunk", 47)
    assert result.to_dict()["draw"] == "chunk"
    overall = next(f for f in result.figures if f.figure == "overall")
    assert overall.with_interval + sum(overall.without.values()) == 10
    with pytest.raises(InputError, match="a subset of 47 chunks from a run of 47"):
        run_coverage(population, subsets=10, size=47, unit="chunk")


def test_the_default_size_fits_the_readme_s_six_conversations(docs_demo: Path) -> None:
    """The bundled corpus (the README's examples, the demo's run) has 6 conversations: the
    default of 8 did not fit, and the error named ``[size]``. Unset, the size is one fewer than
    the run has; a size given that does not fit names --size, the run's count and one that
    does; and the 6 different subsets of 5 that 20 draws repeat are said to be repeated."""
    run = docs_demo / "run"
    result = run_coverage(run, subsets=20, resamples=100, models=["offline:rules"])
    assert (result.size, result.n_conversations, result.distinct_subsets) == (5, 6, 6)
    overall = next(f for f in result.figures if f.figure == "overall")
    assert overall.with_interval == 20  # 5 conversations: an interval on every subset
    assert (
        result.repeats_note is not None and "only 6 different subsets of 5" in result.repeats_note
    )
    assert result.to_dict()["distinct_subsets"] == 6
    with pytest.raises(InputError) as refused:
        run_coverage(run, subsets=20, size=8)
    assert str(refused.value) == (
        "[--size]: a subset of 8 conversations from a run of 6: choose --size from 2 to 5 "
        "(e.g. --size 5)"
    )


def test_a_subset_that_splits_conversations_has_no_downstream(population: Path) -> None:
    """Consumers read whole conversations and the run stores their counts per conversation:
    a subset of chunks that splits one has no downstream figure (counted apart)."""
    from chatledger.runs._coverage import _subset_series
    from chatledger.runs._paired import load_run_side, read_conversation_run

    record = read_conversation_run(population, "population")
    model = next(m for m in record.models if "downstream" in m.layers)
    series = load_run_side(population, record, model).series
    mask = np.zeros(len(record.chunk_conversations), dtype=bool)
    mask[:20] = True
    order = list(range(20))  # one chunk a dialogue: the first 20 conversations
    whole = _subset_series(series, mask, order, record, model.left_out)
    split = _subset_series(series, mask, order, record, model.left_out, whole=False)
    assert whole is not None and split is not None
    assert "downstream" in whole.layer_scores and split.downstream is None
    assert "downstream" not in split.layer_scores
    assert split.field_scores == whole.field_scores
