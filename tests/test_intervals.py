"""Every interval is a bootstrap of exactly the figure shown (DESIGN.md §7): it contains its
headline, it agrees with scipy on a plain mean, it resamples conversations for figures that
span one, and it covers the truth as often as it says on simulated models with known means."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from chatledger.corpus import read_chunks, read_extractions
from chatledger.demo import human_sample, prepare_demo
from chatledger.extractors import get_extractor
from chatledger.record import ConversationRun, read_run_record
from chatledger.runs import execute_run, load_run_config
from chatledger.scoring import micro_parts, statistic_names
from chatledger.simulate import OPERATORS, simulate_records, write_records
from chatledger.stats import bootstrap_sums

MEAN_COLUMNS = 2  # (value, 1): the mean is Σ value / Σ 1


def _mean_statistic(sums: np.ndarray) -> np.ndarray:
    return (sums[:, 0] / sums[:, 1])[None, :]


def test_bca_of_sums_is_scipys_bca_on_a_plain_mean() -> None:
    x = np.random.default_rng(3).beta(2, 5, 50)
    units = np.column_stack([x, np.ones_like(x)])
    (ours,) = bootstrap_sums(units, _mean_statistic, n_resamples=2000, seed=11)
    theirs = scipy_stats.bootstrap(
        (x,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(11)
    ).confidence_interval
    assert ours.method == "BCa"
    assert ours.low == pytest.approx(theirs.low, rel=1e-9)
    assert ours.high == pytest.approx(theirs.high, rel=1e-9)
    assert ours.estimate == pytest.approx(x.mean())


def test_a_constant_series_has_a_zero_width_interval_and_one_unit_cannot_be_resampled() -> None:
    units = np.column_stack([np.full(30, 0.7), np.ones(30)])
    (constant,) = bootstrap_sums(units, _mean_statistic, n_resamples=200)
    assert constant.method == "constant"
    assert constant.low == constant.high == constant.estimate == pytest.approx(0.7)
    (single,) = bootstrap_sums(units[:1], _mean_statistic, n_resamples=200)
    assert single.method == "single" and single.low == single.high == 0.7


def test_an_interval_that_misses_its_estimate_is_widened_to_it_and_says_so() -> None:
    # ECE-like bias: every resample lies above the figure shown (here the figure is given as
    # 0.1 below every value the statistic can take). BCa is undefined (no resample below the
    # estimate), the percentile interval misses it; the interval is widened down to 0.1.
    x = np.random.default_rng(1).uniform(0.5, 1.0, 30)
    units = np.column_stack([x, np.ones_like(x)])
    (interval,) = bootstrap_sums(units, _mean_statistic, n_resamples=300, estimates=[0.1])
    assert interval.method == "percentile, widened to the estimate"
    assert interval.low == 0.1 < 0.5 < interval.high


# ---- the simulated model with a known mean -------------------------------------------------


def _topics_units(matched: np.ndarray, ref: np.ndarray, pred: np.ndarray) -> np.ndarray:
    names = statistic_names("topics")
    columns = {name: np.zeros(len(matched)) for name in names}
    columns.update(
        covered=np.ones(len(matched)),
        usable=np.ones(len(matched)),
        matched=matched,
        n_reference=ref,
        n_predicted=pred,
    )
    return np.column_stack([columns[name] for name in names])


def _micro_f1(sums: np.ndarray) -> np.ndarray:
    names = statistic_names("topics")
    return micro_parts("topics", {n: sums[:, i] for i, n in enumerate(names)})["f1"][None, :]


def test_micro_f1_intervals_cover_the_truth_at_least_90_percent_of_200_trials() -> None:
    # Each chunk: 4 reference items, 3–5 predicted (uniform), matched ~ Binomial(min(4, pred), p).
    # E[matched] = p·(3 + 4 + 4)/3 = 11p/3 and E[ref] + E[pred] = 8, so the pooled F1 the
    # model has in the long run is 2·(11p/3)/8 = 11p/12.
    p, n_chunks, trials = 0.6, 40, 200
    truth = 11 * p / 12
    rng = np.random.default_rng(2026)
    hits = 0
    for trial in range(trials):
        pred = rng.integers(3, 6, n_chunks).astype(np.float64)
        matched = rng.binomial(np.minimum(4, pred).astype(np.int64), p).astype(np.float64)
        units = _topics_units(matched, np.full(n_chunks, 4.0), pred)
        (interval,) = bootstrap_sums(units, _micro_f1, n_resamples=1000, seed=trial)
        assert interval.low <= interval.estimate <= interval.high
        hits += interval.low <= truth <= interval.high
    assert hits / trials >= 0.90, hits


def test_conversation_resampling_covers_correlated_chunks_that_chunk_resampling_does_not() -> None:
    # 20 conversations of 5 chunks; each conversation's chunks share its own mean (strongly
    # correlated), the conversation means ~ U(0, 1): the truth is 0.5. Resampling chunks treats
    # 100 chunks as independent and is far too narrow; resampling conversations is right.
    trials, conversations, size = 200, 20, 5
    rng = np.random.default_rng(7)
    chunk_hits = cluster_hits = 0
    for trial in range(trials):
        means = rng.uniform(0, 1, conversations)
        values = np.repeat(means, size) + rng.normal(0, 0.02, conversations * size)
        chunk_units = np.column_stack([values, np.ones_like(values)])
        cluster_units = chunk_units.reshape(conversations, size, 2).sum(axis=1)
        (by_chunk,) = bootstrap_sums(chunk_units, _mean_statistic, n_resamples=500, seed=trial)
        (by_conv,) = bootstrap_sums(cluster_units, _mean_statistic, n_resamples=500, seed=trial)
        assert by_chunk.estimate == pytest.approx(by_conv.estimate)
        chunk_hits += by_chunk.low <= 0.5 <= by_chunk.high
        cluster_hits += by_conv.low <= 0.5 <= by_conv.high
    assert cluster_hits / trials >= 0.90, cluster_hits
    assert chunk_hits / trials < 0.75, chunk_hits


# ---- runs: every interval in run.json contains the number shown -----------------------------


def _shown(record: ConversationRun) -> dict[tuple[str, str], float]:
    """Each figure the leaderboard and report show, keyed as the intervals are."""
    shown: dict[tuple[str, str], float] = {}
    for model in record.models:
        shown[(model.name, "overall")] = model.overall
        for layer, value in model.layers.items():
            shown[(model.name, layer)] = value
        for field, value in model.fields.items():
            shown[(model.name, f"extraction.{field}")] = value
    return shown


def _assert_intervals_contain_what_is_shown(run_dir: Path) -> ConversationRun:
    record = read_run_record(run_dir)
    assert isinstance(record, ConversationRun) and record.stats is not None
    shown = _shown(record)
    checked = 0
    for model, entries in record.stats.intervals.items():
        for key, interval in entries.items():
            assert interval.estimate == shown[(model, key)], (model, key)
            assert interval.low <= interval.estimate <= interval.high, (model, key, interval)
            checked += 1
    # Every figure shown has its interval, or says why not (too few conversations, few items).
    for model, key in shown:
        if record.stats.interval(model, key) is None:
            assert record.stats.why_no_interval(model, key), (model, key)
    for pair, diff in record.stats.paired_differences.items():
        a, b = pair.split("|")
        assert diff.difference == pytest.approx(shown[(a, "overall")] - shown[(b, "overall")])
        if diff.low is None or diff.high is None:
            assert diff.note is not None and diff.note.startswith("too few conversations")
        else:
            assert diff.low <= diff.difference <= diff.high
    return record


def test_demo_intervals_contain_their_headlines(demo_json: tuple[Path, dict[str, Any]]) -> None:
    demo = demo_json[0]  # the session's demo run: the demo config run by execute_run
    record = _assert_intervals_contain_what_is_shown(demo / "run")
    assert record.stats is not None
    assert record.stats.resampling["overall"] == "conversations"
    assert record.stats.n_conversations == len(
        {c.conversation_id for c in read_chunks(demo / "corpus/chunks.jsonl")}
    )


@pytest.mark.parametrize("corpus", ["ami", "casino"])
def test_partial_gold_intervals_contain_their_headlines(tmp_path: Path, corpus: str) -> None:
    chunks_path, gold_path = human_sample(corpus, tmp_path / "human")
    challenger = tmp_path / "offline.jsonl"
    get_extractor("offline:rules").extract_file(chunks_path, challenger)
    config = tmp_path / "run.json"
    config.write_text(
        json.dumps(
            {
                "name": corpus,
                "chunks": str(chunks_path.relative_to(tmp_path)),
                "reference": {"file": str(gold_path.relative_to(tmp_path)), "name": "human"},
                "challengers": [{"file": "offline.jsonl", "name": "rules"}],
                "layers": ["extraction", "judge", "downstream"],
                "judges": ["grounding"],
                "stats": {"bootstrap_resamples": 500},
            }
        ),
        encoding="utf-8",
    )
    result = execute_run(load_run_config(config), tmp_path / "out")
    record = _assert_intervals_contain_what_is_shown(result.out_dir)
    model = record.models[0]
    assert record.reference_is_human and model.aggregate == "micro"
    # The headline of a covered list field is its pooled score.
    for name, counts in model.field_counts.items():
        assert model.fields[name] == counts.micro["score"], name


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    severities=st.lists(st.sampled_from([0.0, 0.2, 0.5, 0.9]), min_size=2, max_size=3),
    n_chunks=st.integers(min_value=4, max_value=14),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_random_runs_intervals_contain_their_headlines(
    tmp_path_factory: pytest.TempPathFactory, severities: list[float], n_chunks: int, seed: int
) -> None:
    root = tmp_path_factory.mktemp("random-run")
    config_path = prepare_demo(root)
    chunks = read_chunks(root / "corpus/chunks.jsonl")[:n_chunks]
    (root / "corpus/chunks.jsonl").write_text(
        "".join(c.model_dump_json() + "\n" for c in chunks), encoding="utf-8"
    )
    gold = read_extractions(root / "corpus/gold.jsonl").records
    challengers: list[dict[str, Any]] = []
    for i, severity in enumerate(severities):
        ops = [(name, severity) for name in OPERATORS]
        records = simulate_records(gold, chunks, ops, seed=seed + i, label=f"s{i}")
        write_records(records, root / f"s{i}.jsonl")
        challengers.append({"file": f"s{i}.jsonl", "name": f"s{i}"})
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.update(challengers=challengers, stats={"bootstrap_resamples": 200}, seed=seed)
    config_path.write_text(json.dumps(config), encoding="utf-8")
    result = execute_run(load_run_config(config_path), root / "out")
    _assert_intervals_contain_what_is_shown(result.out_dir)
