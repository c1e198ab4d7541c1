"""`chatledger demo`: the whole offline benchmark on the bundled corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatledger.demo import recorded_dir, recorded_manifest
from chatledger.extraction import gold_list_bounds
from chatledger.providers import CATALOGUE

# The real local models whose recorded extractions ship (data/recorded, docs/local-models.md).
RECORDED = (
    "recorded:qwen2.5-coder-1.5b",
    "recorded:qwen2.5-coder-0.5b",
    "recorded:smollm2-135m",
)


@pytest.fixture(scope="module")
def demo(demo_json: tuple[Path, dict]) -> tuple[Path, dict]:
    """`chatledger demo --out DIR --format json`: DIR and its JSON (conftest.demo_json, made
    once a session and checked to print nothing but JSON)."""
    return demo_json


def test_simulated_models_follow_severity(demo: tuple[Path, dict]) -> None:
    _, data = demo
    by_name = {m["name"]: m for m in data["leaderboard"]}
    assert set(by_name) == {
        "offline:rules",
        "simulated:light",
        "simulated:medium",
        "simulated:heavy",
        *RECORDED,
    }
    for key in ("overall",):
        values = [by_name[f"simulated:{s}"][key] for s in ("light", "medium", "heavy")]
        assert values[0] > values[1] > values[2], values
    for layer in ("extraction", "judge", "downstream"):
        values = [by_name[f"simulated:{s}"]["layers"][layer] for s in ("light", "medium", "heavy")]
        assert values[0] > values[1] > values[2], (layer, values)


def test_demo_writes_a_full_run(demo: tuple[Path, dict]) -> None:
    out, data = demo
    run = out / "run"
    for name in ("run.json", "scores.parquet", "downstream.json", "judgements.jsonl"):
        assert (run / name).is_file(), name
    run_json = json.loads((run / "run.json").read_text())
    assert run_json["layers_run"] == ["extraction", "judge", "downstream"]
    assert run_json["chunks"] == 36
    assert data["renormalisation"] is None


def test_human_gold_uses_covered_fields_only(demo: tuple[Path, dict]) -> None:
    _, data = demo
    by_corpus = {h["corpus"]: h for h in data["human_gold"]}
    assert set(by_corpus) == {"ami", "casino"}
    assert set(by_corpus["casino"]["fields"]) == {"claims", "negotiation_patterns"}
    assert "emotional_arc" not in by_corpus["ami"]["fields"]
    for entry in by_corpus.values():
        assert 0.0 < entry["composite"] < 1.0


def test_demo_includes_the_structbench_baseline(demo: tuple[Path, dict]) -> None:
    _, data = demo
    summary = data["structbench"]
    assert summary["n"] == 1000
    row = summary["leaderboard"][0]
    # An honest floor: neither trivial nor perfect (figures in docs/structbench.md).
    assert 0.5 < row["DOC"] < 0.9 and 0.6 < row["WV"] < 0.95
    assert Path(summary["report"]).is_file()


def _recorded_lines(name: str) -> list[dict]:
    path = recorded_dir() / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_recorded_models_are_real_and_their_manifest_says_how(demo: tuple[Path, dict]) -> None:
    manifest = recorded_manifest()
    assert manifest is not None
    assert [f"recorded:{m.name}" for m in manifest.models] == list(RECORDED)
    for model in manifest.models:
        # The file that answered is the catalogue's, by its full SHA-256.
        assert model.sha256 == CATALOGUE[model.name].sha256
        assert model.corpus is not None
        lines = _recorded_lines(model.name)
        assert len(lines) == model.corpus.items == 36
        assert {line["model"] for line in lines} == {f"local:{model.name}"}
        assert model.corpus.invalid == sum(1 for line in lines if line["extraction"] is None)
        assert model.corpus.output_tokens == sum(line["usage"]["output_tokens"] for line in lines)
        assert model.corpus.parameters["strict_schema"] is True
        # Bounded lists and the chunk's own ids, as the lines' fingerprints say.
        constraints = model.corpus.schema_constraints
        assert constraints is not None and constraints.chunk_ids
        assert constraints.list_bounds == gold_list_bounds()
        assert all(
            line["fingerprint"]["schema_constraints"]["evidence_ids"] == "chunk" for line in lines
        )
        # Real calls: every line took model time and none was replayed from a cache.
        assert all(line["usage"]["latency_s"] > 0 for line in lines)
        assert not any(line["usage"]["cached"] for line in lines)


def test_degenerate_outputs_of_the_recorded_models_are_counted(demo: tuple[Path, dict]) -> None:
    out, _ = demo
    run_json = json.loads((out / "run" / "run.json").read_text(encoding="utf-8"))
    by_name = {m["name"]: m for m in run_json["models"]}
    for name in RECORDED:
        lines = _recorded_lines(name.removeprefix("recorded:"))
        counts = by_name[name]["degenerate"]
        # Counted independently here: the replies that ran into max_tokens.
        cut = [line for line in lines if line["usage"]["finish_reason"] == "length"]
        assert counts["cut_by_max_tokens"] == len(cut)
        assert counts["cut_and_invalid"] == sum(1 for line in cut if line["extraction"] is None)
        assert counts["valid"] == sum(1 for line in lines if line["extraction"] is not None)
        assert counts["chunks"] == 36
        assert by_name[name]["usage"]["latency_per_chunk_s"] > 1.0  # the real model time
    # The gold's simulated copies are not cut, and the rule extractor never calls a model.
    assert by_name["offline:rules"]["degenerate"]["cut_by_max_tokens"] == 0
    html = (out / "run" / "report.html").read_text(encoding="utf-8")
    assert "Degenerate outputs" in html
    assert html.count(">local model, recorded</span>") >= len(RECORDED)


def test_structbench_on_the_recorded_local_models(demo: tuple[Path, dict]) -> None:
    _, data = demo
    local = data["structbench_local"]
    assert local is not None and local["n"] == 24
    names = {row["name"] for row in local["leaderboard"]}
    assert len(names) == 1 + 2 * 5  # the rule baseline on the same sample, 2 models × 5
    effects = local["strategy_vs_model"]
    assert effects["models"] == ["local:qwen2.5-coder-0.5b", "local:qwen2.5-coder-1.5b"]
    assert len(effects["strategies"]) == 5 and effects["documents"] == 24
    assert [e["metric"] for e in effects["metrics"]] == ["DOC", "MK", "MV", "WV"]
    for e in effects["metrics"]:
        assert e["verdict"] in {"strategy", "model", "unclear"}
        d = e["difference"]
        assert d["low"] <= d["high"]
        assert d["estimate"] == pytest.approx(e["strategy"]["estimate"] - e["model"]["estimate"])
    # Every strategy pair within each model (2 × 10) and the size under each strategy (5).
    grid = local["grid_pairs"]
    assert grid["documents"] == 24 and len(grid["pairs"]) == 25
    kinds = [p["kind"] for p in grid["pairs"]]
    assert kinds.count("strategy") == 20 and kinds.count("model") == 5
    for pair in grid["pairs"]:
        assert pair["decided"] == (pair["low"] > 0 or pair["high"] < 0)
    html = Path(local["report"]).read_text(encoding="utf-8")
    assert "Strategy or model: which moves the scores more?" in html
    assert "Which differences are decided? Strategy pairs and model size" in html


def test_demo_runs_schema_selection_simulated_and_on_the_recorded_model(
    demo: tuple[Path, dict],
) -> None:
    out, data = demo
    simulated, recorded = data["selection"]
    assert simulated["simulated"] and simulated["extractor"] == "simulated:screen"
    assert simulated["screened"] == 19
    assert simulated["failed"]["topic_shifts"].startswith("redundant")
    before, after, best = simulated["variants"]["conversation_phases"]
    assert before < 0.5 < after and best == "explicit"
    assert simulated["winner"].startswith("scored / ")
    assert (out / "select" / "report.html").is_file()
    # The recorded Qwen2.5-Coder-0.5B answers: 3 seeded samples of 8 chunks, v3 fields only.
    assert not recorded["simulated"]
    assert recorded["extractor"] == "recorded:qwen2.5-coder-0.5b.jsonl"
    assert recorded["screened"] == 10  # the 11 unproven v3 fields but `confidence`
    assert any("not screened" in n for n in recorded["notes"])
    assert any("Phase 1.5 skipped" in n for n in recorded["notes"])
    rows = {
        r["name"]: r
        for r in json.loads((out / "select-qwen2.5-coder-0.5b" / "selection.json").read_text())[
            "screening"
        ]
    }
    # Implicit assumptions low (as in the seed); Q/A pairs not near the top: the 0.5B model
    # asks a different question in each sample (docs/schema-selection.md has the numbers).
    assert rows["implicit_assumptions"]["consistency"] < 0.2
    assert rows["qa_pairs"]["consistency"] < 0.2
    assert all(r["runs"] == 21 and r["invalid"] == 3 for r in rows.values())


def _recording_table() -> str:
    """The docs' before/after table of the recordings: the first recordings' figures (kept in
    docs/data, computed by recording_figures from their files) and today's recorded files."""
    from chatledger.corpus import read_chunks
    from chatledger.demo import RecordingFigures, recording_figures, write_bundled_corpus

    root = Path(__file__).resolve().parents[1]
    before = json.loads((root / "docs/data/recordings-2026-12-01.json").read_text("utf-8"))
    manifest = recorded_manifest()
    assert manifest is not None
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        chunks = read_chunks(write_bundled_corpus(Path(tmp))[0])
    rows = [
        "| model | recording | valid | cut by max_tokens | foreign evidence ids "
        "| output tokens | model time | per chunk | output tokens/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def row(name: str, when: str, f: RecordingFigures) -> str:
        return (
            f"| {name} | {when} | {f.valid} / {f.chunks} | {f.cut_by_max_tokens} "
            f"| {f.foreign_message_ids} of {f.cited_message_ids} ({f.foreign_share:.0%}) "
            f"| {f.output_tokens:,} | {f.model_s:,.0f} s | {f.model_s / f.chunks:.0f} s "
            f"| {f.output_tokens_per_s:.1f} |"
        )

    for model in manifest.models:
        if model.name in before["models"]:
            old = RecordingFigures.model_validate(before["models"][model.name])
            rows.append(row(model.name, "first (baseline build, 2 threads)", old))
        new = recording_figures(recorded_dir() / f"{model.name}.jsonl", chunks)
        rows.append(row(model.name, "bounded, chunk ids (AVX2, 1 thread)", new))
    return "\n".join(rows)


def test_the_docs_recording_table_is_generated_from_the_files() -> None:
    from generated_docs import check_block

    check_block("docs/local-models.md", "recordings", _recording_table())


def test_bounded_lists_made_the_recordings_valid() -> None:
    """Issue 29's bar: the 1.5B has ≥ 30 of 36 valid replies, none cut, ≥ 90 % of its cited ids
    real; the 0.5B re-recorded with bounded lists has fewer cut replies than the first 18."""
    import tempfile

    from chatledger.corpus import read_chunks
    from chatledger.demo import recording_figures, write_bundled_corpus

    with tempfile.TemporaryDirectory() as tmp:
        chunks = read_chunks(write_bundled_corpus(Path(tmp))[0])
    big = recording_figures(recorded_dir() / "qwen2.5-coder-1.5b.jsonl", chunks)
    assert big.valid >= 30 and big.cut_by_max_tokens == 0
    assert big.foreign_message_ids <= 0.10 * big.cited_message_ids
    small = recording_figures(recorded_dir() / "qwen2.5-coder-0.5b.jsonl", chunks)
    assert small.cut_by_max_tokens < 18


def test_demo_stops_a_comparison_early_and_shows_a_ppi_interval(demo: tuple[Path, dict]) -> None:
    """Issue 33 on CaSiNo's 47 dialogues: light vs heavy corruption of the human gold is
    decided (a drop beyond 0.05) before every dialogue is run; offline:rules' agreement with
    humans from 10 annotated dialogues and a reference on all 47, beside humans alone."""
    spend = demo[1]["spend_less"]
    decision = spend["decision"]
    (rule,) = decision["rules"]
    assert rule["decision"] == "fail" and decision["stopped"] == "decided"
    assert decision["conversations_used"] == rule["decided_after"] < 47
    assert rule["upper"] < -0.05
    (model,) = spend["ppi"]["models"]
    assert (model["annotated"], model["others"]) == (10, 37)
    assert model["low"] <= model["estimate"] <= model["high"]
    assert model["human_low"] < model["human_estimate"] < model["human_high"]
