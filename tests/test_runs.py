"""The run: config validation, composites and renormalisation, the run directory."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import duckdb
import pytest

from chatledger.cli._app import main
from chatledger.core import InputError
from chatledger.runs import (
    RUN_LEVEL,
    execute_run,
    layer_weights_used,
    load_run_config,
    overall_composite,
)

EXAMPLES = Path(__file__).parents[1] / "src" / "chatledger" / "data" / "examples"


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _three_chunk_corpus(folder: Path) -> None:
    """Three chunks of one conversation made from the bundled example, one day apart."""
    chunk = json.loads((EXAMPLES / "chunks.jsonl").read_text())
    ref = json.loads((EXAMPLES / "reference.jsonl").read_text())
    chal = json.loads((EXAMPLES / "challenger.jsonl").read_text())
    chunks, refs, chals = [], [], []
    for day in range(3):
        suffix = f"-d{day}"
        c = copy.deepcopy(chunk)
        c["chunk_id"] += suffix
        for m in c["messages"]:
            m["id"] += suffix
            m["timestamp"] = m["timestamp"].replace("2026-04-10", f"2026-04-1{day}")
        chunks.append(c)
        for src, out in ((ref, refs), (chal, chals)):
            text = json.dumps(src).replace("ex1-m", "ex1-m").replace('"ex-1"', f'"ex-1{suffix}"')
            for n in range(1, 6):
                text = text.replace(f'"ex1-m{n}"', f'"ex1-m{n}{suffix}"')
            out.append(json.loads(text))
    _write_jsonl(folder / "chunks.jsonl", chunks)
    _write_jsonl(folder / "gold.jsonl", refs)
    _write_jsonl(folder / "cheap.jsonl", chals)
    _write_jsonl(folder / "self.jsonl", [dict(r, model="self") for r in refs])


def _config(folder: Path, **overrides: object) -> Path:
    text = {
        "name": "t",
        "chunks": "chunks.jsonl",
        "reference": {"file": "gold.jsonl", "name": "gold"},
        "challengers": [{"file": "cheap.jsonl", "name": "cheap"}, {"file": "self.jsonl"}],
        "layers": ["extraction", "downstream"],
    }
    text.update(overrides)
    path = folder / "run.yaml"
    path.write_text(json.dumps(text), encoding="utf-8")  # JSON is valid YAML
    return path


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    _three_chunk_corpus(tmp_path)
    return tmp_path


def test_renormalisation_by_hand() -> None:
    configured = {"extraction": 0.60, "judge": 0.25, "downstream": 0.15}
    used, note = layer_weights_used(configured, ["extraction", "downstream"])
    # 0.60 / 0.75 = 0.8 and 0.15 / 0.75 = 0.2
    assert used == pytest.approx({"extraction": 0.8, "downstream": 0.2})
    assert note is not None and "judge" in note
    # extraction 0.9, downstream 0.5 -> 0.8*0.9 + 0.2*0.5 = 0.82
    assert overall_composite({"extraction": 0.9, "downstream": 0.5}, used) == pytest.approx(0.82)
    used_all, note_all = layer_weights_used(configured, ["extraction", "judge", "downstream"])
    assert used_all == pytest.approx(configured) and note_all is None
    used_one, _ = layer_weights_used(configured, ["downstream"])
    assert used_one == {"downstream": 1.0}


def test_run_writes_directory_and_self_scores_one(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = execute_run(load_run_config(_config(corpus)), out)
    assert {p.name for p in out.iterdir()} >= {"run.json", "scores.parquet", "downstream.json"}
    by_name = {m.name: m for m in result.models}
    self_model = by_name["self"]
    # Every layer-1 field is exactly 1 on self-comparison except confidence (1 - ECE).
    assert all(v == 1.0 for k, v in self_model.fields.items() if k != "confidence")
    assert self_model.layers["downstream"] == 1.0
    assert by_name["cheap"].overall < self_model.overall
    expected = (
        0.8 * by_name["cheap"].layers["extraction"] + 0.2 * by_name["cheap"].layers["downstream"]
    )
    assert by_name["cheap"].overall == pytest.approx(expected)
    run = json.loads((out / "run.json").read_text())
    assert run["leaderboard"] == ["self", "cheap"]
    assert "judge" in run["renormalisation"]
    assert run["layer_weights_used"] == pytest.approx({"extraction": 0.8, "downstream": 0.2})


def test_scores_parquet_is_tidy_and_queryable(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    execute_run(load_run_config(_config(corpus)), out)
    table = str(out / "scores.parquet")
    con = duckdb.connect()
    dupes = con.execute(
        f"SELECT model, chunk_id, layer, field, component, count(*) c FROM '{table}' "
        "GROUP BY ALL HAVING c > 1"
    ).fetchall()
    assert dupes == []
    claims = con.execute(
        f"SELECT model, avg(value) FROM '{table}' WHERE layer='extraction' AND field='claims' "
        f"AND component='score' AND chunk_id <> '{RUN_LEVEL}' GROUP BY model ORDER BY model"
    ).fetchall()
    # The challenger's claims: text F1 1, polarity 1/2, subject consistency 1
    # -> 0.6 + 0.25*0.5 + 0.15 = 0.875 in each of the three chunks.
    assert claims == [("cheap", pytest.approx(0.875)), ("self", pytest.approx(1.0))]
    chunks = con.execute(
        f"SELECT count(DISTINCT chunk_id) FROM '{table}' WHERE chunk_id <> '{RUN_LEVEL}'"
    ).fetchone()
    assert chunks == (3,)
    overall = con.execute(
        f"SELECT model, value FROM '{table}' WHERE layer='overall' AND field='composite' "
        "AND component='score' ORDER BY model"
    ).fetchall()
    assert [m for m, _ in overall] == ["cheap", "self"]


def test_same_config_gives_byte_identical_parquet(corpus: Path, tmp_path: Path) -> None:
    config = load_run_config(_config(corpus, seed=7))
    execute_run(config, tmp_path / "a")
    execute_run(config, tmp_path / "b")
    a = (tmp_path / "a" / "scores.parquet").read_bytes()
    b = (tmp_path / "b" / "scores.parquet").read_bytes()
    assert a == b


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"colour": "red"}, "colour"),
        (
            {"weights": {"layers": {"extraction": 0.5, "downstream": 0.15}}},
            "layer weights sum to 0.900 after merging with the defaults",
        ),
        ({"weights": {"layers": {"extraction": 0.85, "vibes": 0.15}}}, "unknown layer"),
        ({"chunks": "../outside.jsonl"}, "leaves the config's folder"),
        ({"reference": "nope.jsonl"}, "file not found"),
        ({"layers": ["extraction", "extraction"]}, "listed twice"),
    ],
)
def test_config_errors_are_clear(corpus: Path, overrides: dict, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        load_run_config(_config(corpus, **overrides))
    assert "run.yaml" in str(info.value)


def test_field_weights_must_sum_to_one_at_load_time(corpus: Path) -> None:
    path = _config(corpus, weights={"fields": {"claims": 0.5}})
    with pytest.raises(InputError) as info:
        load_run_config(path)
    # claims 0.15 → 0.5: the 17 defaults sum to 1, so 1 + 0.35 = 1.35.
    assert str(info.value).startswith(
        f"{path} [weights.fields]: field weights sum to 1.350 after merging with the defaults "
        "(topics 0.042, entities 0.048, decisions 0.06, action_items 0.09, open_questions 0.09, "
        "claims 0.5, links 0.024, "
    )
    assert str(info.value).endswith(
        "negotiation_patterns 0.04): make them sum to 1 (set a weight to 0 to leave it out)"
    )


def test_absolute_path_outside_is_allowed(corpus: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "c.jsonl").write_text((corpus / "chunks.jsonl").read_text())
    loaded = load_run_config(_config(corpus, chunks=str(other / "c.jsonl")))
    assert loaded.chunks == other / "c.jsonl"


def test_cli_run_and_compare(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(corpus)
    assert main(["run", str(config), "--out", str(tmp_path / "r1"), "--format", "json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in first["leaderboard"]] == ["self", "cheap"]
    assert main(["run", str(config), "--out", str(tmp_path / "r2")]) == 0
    shown = capsys.readouterr().out
    assert "Leaderboard" in shown and "cheap" in shown
    code = main(["compare", str(tmp_path / "r1"), str(tmp_path / "r2"), "--format", "json"])
    assert code == 0
    diff = json.loads(capsys.readouterr().out)
    assert diff["models"]["cheap"]["overall"]["delta"] == 0.0
    assert main(["compare", str(tmp_path / "r1"), str(tmp_path / "nowhere")]) == 2
    assert "no run.json" in capsys.readouterr().err


def test_cli_run_bad_config_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("chunks: [unclosed\n")
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    # The flow sequence opened at 1:9 meets the end of the file at line 2, column 1.
    assert err == (
        f"error: {bad}:2:1: expected ',' or ']', but got '<stream end>' "
        "(while parsing a flow sequence at 1:9)\n"
    )


# --------------------------------------------------------------------------------------------
# Loading a config: YAML without aliases, paths no file system holds, ~ (issue 11, row 9)

_BASE = "chunks: chunks.jsonl\nreference: gold.jsonl\nchallengers: [cheap.jsonl]\n"


def _yaml_config(folder: Path, text: str) -> Path:
    path = folder / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_alias_bomb_is_refused_while_loading(corpus: Path) -> None:
    # Nine levels of nine aliases: 9**9 = 387,420,489 strings once expanded.
    lines = ["      a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"      a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    text = _BASE + "layers: [extraction, judge]\njudges:\n  - name: grounding\n    options:\n"
    path = _yaml_config(corpus, text + "\n".join(lines) + "\n")
    started = time.perf_counter()
    with pytest.raises(InputError) as info:
        load_run_config(path)
    assert time.perf_counter() - started < 1.0
    # The first anchor: line 8 (after 3 base lines, layers, judges, name, options), column 11.
    assert str(info.value) == f"{path}:8:11: YAML aliases (&anchor/*alias) are not allowed"


def test_one_anchor_without_alias_is_refused_too(corpus: Path) -> None:
    path = _yaml_config(corpus, _BASE + "seed: &s 3\n")
    with pytest.raises(InputError, match=r"run\.yaml:4:7: YAML aliases"):
        load_run_config(path)


@pytest.mark.parametrize(
    ("chunks", "message"),
    [
        ('"chunks\\0.jsonl"', "path contains a NUL byte"),
        ('"chunks\\ud800.jsonl"', "not valid text (a lone surrogate escape such as \\ud800)"),
        ('"' + "a" * 300 + '.jsonl"', "cannot use path: File name too long"),
        (
            '"~nosuchuser-chatledger/c.jsonl"',
            "cannot expand '~nosuchuser-chatledger': no such user or home folder",
        ),
    ],
)
def test_paths_no_file_system_holds_are_one_line(corpus: Path, chunks: str, message: str) -> None:
    path = _yaml_config(
        corpus, f"chunks: {chunks}\nreference: gold.jsonl\nchallengers: [cheap.jsonl]\n"
    )
    with pytest.raises(InputError) as info:
        load_run_config(path)
    assert str(info.value) == f"{path} [chunks]: {message}"


def test_a_tilde_path_is_the_home_folder_never_the_config_folder(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "c.jsonl").write_text((corpus / "chunks.jsonl").read_text())
    (corpus / "~").mkdir()  # a folder named "~" beside the config must not be used
    (corpus / "~" / "c.jsonl").write_text("not chunks")
    monkeypatch.setenv("HOME", str(home))
    loaded = load_run_config(_config(corpus, chunks="~/c.jsonl"))
    assert loaded.chunks == home / "c.jsonl"


def test_non_finite_weights_name_the_field(corpus: Path) -> None:
    path = _yaml_config(corpus, _BASE + "weights:\n  consumers: {drift: .inf}\n")
    with pytest.raises(InputError) as info:
        load_run_config(path)
    assert str(info.value) == (
        f"{path} [weights.consumers.drift]: not a finite number (NaN and infinity are not allowed)"
    )


def test_a_config_with_a_bom_and_crlf_loads(corpus: Path) -> None:
    path = corpus / "run.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + _BASE.replace("\n", "\r\n").encode())
    assert load_run_config(path).chunks == corpus / "chunks.jsonl"


def test_statistics_land_in_the_score_table(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = execute_run(load_run_config(_config(corpus)), out)
    table = str(out / "scores.parquet")
    con = duckdb.connect()
    diff = con.execute(
        f"SELECT component, value FROM '{table}' WHERE field = 'paired_difference' "
        "ORDER BY component"
    ).fetchall()
    assert result.stats is not None
    expected = result.stats.paired_differences["cheap|self"].model_dump()
    # too few conversations for an interval: the table has the difference and p-value only
    assert dict(diff) == pytest.approx(
        {
            k: expected[k]
            for k in ("difference", "high", "low", "p_value")
            if expected[k] is not None
        }
    )
    weights = con.execute(
        f"SELECT field, component FROM '{table}' WHERE layer = 'weights' AND model = '*'"
    ).fetchall()
    assert ("fields", "kendall_tau_mean") in weights and ("layers", "p_same_ranking") in weights
    bounds = con.execute(
        f"SELECT count(*) FROM '{table}' WHERE component IN ('ci_low', 'ci_high')"
    ).fetchone()
    # two bounds per interval run.json holds (none for too few conversations or few items)
    n_intervals = sum(len(v) for v in result.stats.intervals.values())
    assert bounds is not None and bounds[0] == 2 * n_intervals


# --------------------------------------------------------------------------------------------
# One weight rule for fields, consumers and layers (issue 11, row 12)


def test_layer_and_consumer_weights_merge_into_the_defaults(corpus: Path, tmp_path: Path) -> None:
    weights = {
        "layers": {"extraction": 0.5, "judge": 0.35},  # + downstream 0.15 = 1
        "consumers": {"drift": 0.3, "daily_report": 0.1},  # + 3 × 0.2 = 1
    }
    loaded = load_run_config(_config(corpus, weights=weights))
    assert loaded.config.weights.layers == {"extraction": 0.5, "judge": 0.35, "downstream": 0.15}
    assert loaded.config.weights.consumers == {
        "drift": 0.3,
        "loops": 0.2,
        "escalation": 0.2,
        "arcs": 0.2,
        "daily_report": 0.1,
    }
    result = execute_run(loaded, tmp_path / "out")
    # judge is not run: dropped, and the rest rescaled, 0.5/0.65 and 0.15/0.65; the run says so.
    assert result.layer_weights_used == pytest.approx(
        {"extraction": 0.5 / 0.65, "downstream": 0.15 / 0.65}
    )
    assert result.renormalisation_note is not None and "judge" in result.renormalisation_note
    for model in result.models:
        a = model.consumers
        w = {"drift": 0.3, "loops": 0.2, "escalation": 0.2, "arcs": 0.2, "daily_report": 0.1}
        # consumers with no event on either side give no evidence: left out, renormalised
        kept = {k: v for k, v in w.items() if k not in model.consumers_left_out}
        expected = sum(kept[k] * a[k] for k in kept) / sum(kept.values())
        assert model.layers["downstream"] == pytest.approx(expected)
        assert model.overall == pytest.approx(
            (0.5 * model.layers["extraction"] + 0.15 * model.layers["downstream"]) / 0.65
        )
    by_name = {m.name: m for m in result.models}
    assert by_name["self"].layers["downstream"] == 1.0


def test_default_consumer_weights_are_the_plain_mean(corpus: Path, tmp_path: Path) -> None:
    result = execute_run(load_run_config(_config(corpus)), tmp_path / "out")
    for model in result.models:
        assert len(model.consumers) == 5
        # the plain mean of the consumers with evidence (no events: left out)
        agreements = [a for k, a in model.consumers.items() if k not in model.consumers_left_out]
        assert model.layers["downstream"] == pytest.approx(sum(agreements) / len(agreements))


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (
            {"consumers": {"drift": 1, "loops": 1}},  # the README's old example
            "consumer weights sum to 2.600 after merging with the defaults (drift 1, loops 1, "
            "escalation 0.2, arcs 0.2, daily_report 0.2): make them sum to 1 "
            "(set a weight to 0 to leave it out)",
        ),
        (
            {"consumers": {"drift": 0.5, "loops": 0.5}},  # once accepted, unnamed left at 1
            "consumer weights sum to 1.600 after merging with the defaults (drift 0.5, "
            "loops 0.5, escalation 0.2, arcs 0.2, daily_report 0.2)",
        ),
        (
            {"layers": {"extraction": 0.8, "downstream": 0.2}},  # judge keeps its 0.25
            "layer weights sum to 1.250 after merging with the defaults (extraction 0.8, "
            "judge 0.25, downstream 0.2)",
        ),
        ({"consumers": {"drift": -0.2}}, "weight of 'drift' must be a finite number ≥ 0"),
        ({"consumers": {"mood": 0.2}}, "unknown downstream consumer 'mood'"),
    ],
)
def test_weight_groups_that_break_the_rule(
    corpus: Path, weights: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError) as info:
        load_run_config(_config(corpus, weights=weights))
    assert message in str(info.value)
    assert str(info.value).startswith(f"{corpus / 'run.yaml'} [weights.")
