"""structbench run directories (run.json, scores.parquet, drilldown.json, report.html), worked
out by hand on a four-document dataset, plus the offline demo on the shipped set.

Dataset (default weights = importance / level, DESIGN §8):
    a1, a2: {"total": number, "email": email}      depth 1, 2 leaves; weights total 2, email 2
    b1, b2: {"customer": {"name"}, "total": number} depth 2, 2 leaves; weights name 1.5/2 = 0.75,
                                                    total 2/1 = 2 (Σ 2.75)
    a1's email text carries a planted <script>.

Row A = model "alpha", strategy one_shot, every answer exact, but a1's answer has a <script>
line before the JSON (surrounding prose: DOC 0, the object still read):
    DOC 3/4 = 0.75; MK = MV = WV = 1; micro F1 = 1 (8 of 8 leaves, nothing extra).
Row B = model "b<script>…", no strategy: a1, a2 exact; b1 has total "7" (a string: wrong type,
DOC 0, MK 1, MV 1/2, WV 0.75/2.75 = 3/11); b2 has no prediction (missing, 0 everywhere):
    DOC 2/4 = 0.5; MK 3/4 = 0.75; MV 2.5/4 = 0.625; WV (2 + 3/11)/4 = 25/44
    micro F1: Σ|T| 8, Σ|P| 6, keys matched 6, values 5 → 0.25·12/14 + 0.75·10/14 = 0.75
Paired WV A − B per document: 0, 0, 8/11, 1 → mean 19/44 (= 1 − 25/44).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import duckdb
import pytest

from chatledger.cli._app import main
from chatledger.report import REPORT_FILE, run_task
from chatledger.runs import RUN_LEVEL

# Would set window.__pwned if the page ever turned data into markup or script.
INJECTED = "<script>window.__pwned = 1</script>"
ESCAPED = "&lt;script&gt;window.__pwned = 1&lt;/script&gt;"
CHROMIUM = Path("/usr/bin/chromium")
B_MODEL = f"b{INJECTED}"
FLAT = {
    "type": "object",
    "properties": {"total": {"type": "number"}, "email": {"type": "string", "format": "email"}},
    "required": ["total", "email"],
    "additionalProperties": False,
}
NESTED = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": False,
        },
        "total": {"type": "number"},
    },
    "required": ["customer", "total"],
    "additionalProperties": False,
}
TRUTH = {
    "a1": {"total": 12.5, "email": "ann@example.org"},
    "a2": {"total": 3, "email": "bo@example.org"},
    "b1": {"customer": {"name": "Ann"}, "total": 7},
    "b2": {"customer": {"name": "Bo"}, "total": 9},
}
ROW_KEYS = ("DOC", "MK", "MV", "WV", "n", "by_depth", "micro_f1", "f1_keys", "f1_values",
            "bad_output_counts", "clean_outputs")  # fmt: skip


def _write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("sb-inputs")
    dataset = [
        {
            "id": doc_id,
            "input": f"Hello,\n{INJECTED} the order is {json.dumps(truth)}\nThanks"
            if doc_id == "a1"
            else f"Hello, the order is {json.dumps(truth)}",
            "schema": FLAT if doc_id.startswith("a") else NESTED,
            "ground_truth": truth,
        }
        for doc_id, truth in TRUTH.items()
    ]
    usage = {"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.002, "latency_s": 1.5}
    alpha = [
        {
            "id": doc_id,
            "output": (f"{INJECTED}\n" if doc_id == "a1" else "") + json.dumps(truth),
            "strategy": "one_shot",
            "model": "alpha",
            "usage": usage,
        }
        for doc_id, truth in TRUTH.items()
    ]
    b1 = {"customer": {"name": "Ann"}, "total": "7"}
    beta = [
        {"id": "a1", "output": json.dumps(TRUTH["a1"]), "model": B_MODEL},
        {"id": "a2", "output": json.dumps(TRUTH["a2"]), "model": B_MODEL},
        {"id": "b1", "output": json.dumps(b1), "model": B_MODEL},
    ]
    return {
        "dataset": _write_lines(base / "emails.jsonl", dataset),
        "alpha": _write_lines(base / "alpha.jsonl", alpha),
        "beta": _write_lines(base / "beta.jsonl", beta),
    }


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def _score(inputs: dict[str, Path], *extra: str) -> list[str]:
    argv = ["structbench", "score", "--dataset", str(inputs["dataset"])]
    return [*argv, "--resamples", "500", *extra]


@pytest.fixture(scope="module")
def run_dir(inputs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sb-run") / "run"
    argv = _score(inputs, "--predictions", str(inputs["alpha"]), "--predictions",
                  str(inputs["beta"]), "--out", str(out), "--format", "json")  # fmt: skip
    assert main(argv) == 0
    return out


def _run_json(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    return data


def test_run_dir_holds_every_file_and_the_hand_worked_rows(run_dir: Path) -> None:
    for name in ("run.json", "scores.parquet", "drilldown.json", REPORT_FILE):
        assert (run_dir / name).is_file(), name
    run = _run_json(run_dir)
    assert run["task"] == "structbench" and run["n"] == 4
    assert run["dataset"]["by_depth"] == {"1": 2, "2": 2}
    assert len(run["dataset"]["sha256"]) == 64
    assert run["leaderboard"] == ["alpha/one_shot", B_MODEL]
    alpha, beta = run["models"]
    assert (alpha["model"], alpha["strategy"]) == ("alpha", "one_shot")
    assert [alpha[m] for m in ("DOC", "MK", "MV", "WV", "micro_f1")] == [0.75, 1.0, 1.0, 1.0, 1.0]
    assert beta["DOC"] == 0.5 and beta["MK"] == 0.75 and beta["MV"] == 0.625
    assert beta["WV"] == pytest.approx(25 / 44)
    assert beta["micro_f1"] == pytest.approx(0.75)
    assert beta["by_depth"]["1"]["WV"] == 1.0
    assert beta["by_depth"]["2"]["WV"] == pytest.approx((3 / 11) / 2)
    assert alpha["bad_output_counts"]["surrounding_prose"] == 1 and alpha["clean_outputs"] == 3
    assert beta["bad_output_counts"]["wrong_type"] == 1
    assert beta["bad_output_counts"]["missing"] == 1 and beta["clean_outputs"] == 2
    # Usage: 4 answers × $0.002 over 4 documents; 1.5 s and 120 tokens each.
    assert alpha["usage"]["cost_per_document_usd"] == pytest.approx(0.002)
    assert alpha["usage"]["latency_per_document_s"] == pytest.approx(1.5)
    assert alpha["usage"]["tokens_per_document"] == pytest.approx(120)
    assert beta["usage"] is None
    for row in (alpha, beta):
        ci = row["intervals"]["micro_f1"]
        assert ci["low"] <= row["micro_f1"] <= ci["high"]
    assert run["by_strategy"] == {
        "one_shot": {
            "alpha": {"DOC": 0.75, "MK": 1.0, "MV": 1.0, "WV": 1.0, "micro_f1": 1.0, "n": 4}
        }
    }


def test_two_files_give_a_paired_difference(run_dir: Path) -> None:
    run = _run_json(run_dir)
    (pair,) = run["paired_differences"]["pairs"]
    assert (pair["a"], pair["b"]) == ("alpha/one_shot", B_MODEL)
    assert pair["difference"] == pytest.approx(19 / 44)
    assert pair["low"] <= pair["difference"] <= pair["high"]
    # Resampled means re-centred on 19/44 reach |19/44| when all four picks are the zeros
    # (1/16) or all come from {8/11, 1} with at most two 8/11s (1/16 · 11/16): p ≈ 0.105.
    assert pair["p_value"] == pytest.approx(0.105, abs=0.03)
    ranks = run["rank_probabilities"]["rows"]
    assert sum(ranks["alpha/one_shot"]) == pytest.approx(1.0)
    # B beats A on no document, so A never ranks below B (ties keep A first).
    assert ranks["alpha/one_shot"][0] == 1.0


def test_scores_parquet_is_tidy_and_byte_identical_on_rerun(
    run_dir: Path, inputs: dict[str, Path]
) -> None:
    table = str(run_dir / "scores.parquet")
    con = duckdb.connect()
    total, distinct = con.execute(
        "SELECT count(*), count(DISTINCT (model, chunk_id, layer, field, component)) "
        f"FROM '{table}'"
    ).fetchone() or (0, 0)
    # Per row: 4 documents × 5 fields + 5 fields × (score, ci_low, ci_high) = 35; two rows.
    assert (total, distinct) == (70, 70)
    wv = con.execute(
        f"SELECT model, avg(value) FROM '{table}' WHERE field = 'WV' AND component = 'score' "
        f"AND chunk_id <> '{RUN_LEVEL}' GROUP BY model ORDER BY model"
    ).fetchall()
    assert wv == [("alpha/one_shot", 1.0), (B_MODEL, pytest.approx(25 / 44))]
    b1 = con.execute(
        f"SELECT field, value FROM '{table}' WHERE model = ? AND chunk_id = 'b1' ORDER BY field",
        [B_MODEL],
    ).fetchall()
    # micro_f1 of one document: 0.25·MK + 0.75·(2·1 / (2 + 2)) = 0.25 + 0.375.
    assert dict(b1) == pytest.approx(
        {"DOC": 0.0, "MK": 1.0, "MV": 0.5, "WV": 3 / 11, "micro_f1": 0.625}
    )
    run_level = con.execute(
        f"SELECT component, value FROM '{table}' WHERE model = ? AND chunk_id = '{RUN_LEVEL}' "
        "AND field = 'micro_f1'",
        [B_MODEL],
    ).fetchall()
    assert sorted(c for c, _ in run_level) == ["ci_high", "ci_low", "score"]
    assert dict(run_level)["score"] == pytest.approx(0.75)  # pooled, not the per-document mean
    files = ("scores.parquet", "drilldown.json")
    before = {n: (run_dir / n).read_bytes() for n in files}
    run_before = _run_json(run_dir)
    argv = _score(inputs, "--predictions", str(inputs["alpha"]), "--predictions",
                  str(inputs["beta"]), "--out", str(run_dir), "--format", "json")  # fmt: skip
    assert main(argv) == 0
    assert {n: (run_dir / n).read_bytes() for n in files} == before
    run_after = _run_json(run_dir)  # the same but for the seconds it took
    assert {**run_after, "timings": None} == {**run_before, "timings": None}


def test_run_json_matches_the_score_json(
    run_dir: Path, inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run_json(run_dir)
    for name, row in zip(("alpha", "beta"), run["models"], strict=True):
        printed = json.loads(_cli(capsys, *_score(inputs, "--predictions", str(inputs[name]),
                                                  "--format", "json")))  # fmt: skip
        assert {k: row[k] for k in ROW_KEYS} == {k: printed[k] for k in ROW_KEYS}
        for metric in ("DOC", "MK", "MV", "WV"):
            assert row["intervals"][metric] == printed["intervals"][metric]
    # With --out and one file, stdout is the same JSON as without.
    alone = _cli(capsys, *_score(inputs, "--predictions", str(inputs["alpha"]), "--format", "json"))
    other = run_dir.parent / "alpha-only"
    with_out = _cli(capsys, *_score(inputs, "--predictions", str(inputs["alpha"]), "--format",
                                    "json", "--out", str(other)))  # fmt: skip
    assert json.loads(with_out) == json.loads(alone)
    # Several files without --out: one summary per file, in the order given.
    both = json.loads(_cli(capsys, *_score(inputs, "--predictions", str(inputs["alpha"]),
                                           "--predictions", str(inputs["beta"]), "--format",
                                           "json")))  # fmt: skip
    assert [b["predictions"] for b in both] == [str(inputs["alpha"]), str(inputs["beta"])]
    assert both[1]["summary"]["WV"] == pytest.approx(25 / 44)


def test_baseline_writes_a_run_dir_too(
    inputs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predictions, run_dir = tmp_path / "base.jsonl", tmp_path / "base-run"
    printed = _cli(capsys, "structbench", "baseline", "--dataset", str(inputs["dataset"]),
                   "--out", str(predictions), "--run-dir", str(run_dir), "--resamples", "0",
                   "--format", "json")  # fmt: skip
    (row,) = _run_json(run_dir)["models"]
    assert row["name"] == "rules:structbench-v1/rule_baseline"
    assert {k: row[k] for k in ROW_KEYS} == {k: json.loads(printed)[k] for k in ROW_KEYS}
    assert set(row["intervals"].values()) == {None}  # --resamples 0: no intervals
    assert (run_dir / REPORT_FILE).is_file()
    # Written by the typed record (version 2), with the inputs it read and their hashes.
    from chatledger.record import SCHEMA_VERSION, StructbenchRun, read_run_record

    record = read_run_record(run_dir)
    assert isinstance(record, StructbenchRun) and record.schema_version == SCHEMA_VERSION
    assert [i.role for i in record.inputs] == ["dataset", "predictions"]
    assert record.inputs[0].sha256 == record.dataset.sha256
    assert record.inputs[1].path == str(predictions.resolve())


class _Tags(HTMLParser):
    """Start tags and their attributes; script bodies are raw text to the parser, so a URL
    inside plotly.js's code is not mistaken for a resource the page loads."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def test_report_is_self_contained_and_escapes_planted_markup(run_dir: Path) -> None:
    html = (run_dir / REPORT_FILE).read_text(encoding="utf-8")
    assert html.count("* plotly.js v") == 1
    tags = _tags(html)
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    # The data JSON, plotly.js, the page's own code; none loaded from anywhere.
    assert scripts == [{"type": "application/json", "id": "report-data"}, {}, {}]
    for _, attrs in tags:
        for key in ("src", "href"):
            assert not (attrs.get(key) or "").startswith(("http:", "https:", "//")), attrs
    assert INJECTED not in html
    # The email (in both rows' drill-downs), the raw output and the model name are text.
    assert re.search(r'<pre class="email">Hello,\n' + re.escape(ESCAPED), html)
    assert re.search(r'<pre class="raw">' + re.escape(ESCAPED), html)
    assert f"b{ESCAPED}" in html
    data = re.search(r'id="report-data">(.*?)</script>', html, re.S)
    assert data is not None and "\\u003cscript" in data.group(1)
    for section in ("leaderboard", "depth", "strategy", "outputs", "cost", "differences",
                    "drilldown", "about"):  # fmt: skip
        assert f'id="{section}"' in html, section
    assert html.count('class="chunk sb-doc"') == 4 + 4  # every document is among the worst 30
    # The pair's interval starts at 0 (a resample of the two zero differences alone has
    # chance 1/16 > 2.5%), so the verdict must not call the rows apart.
    assert "not distinguishable" in html and "clearly apart" not in html


def test_report_command_builds_the_structbench_page(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_task(run_dir) == "structbench"
    (run_dir / REPORT_FILE).unlink()
    printed = _cli(capsys, "report", str(run_dir))
    assert printed.strip() == str(run_dir / REPORT_FILE)
    assert "Email → JSON" in (run_dir / REPORT_FILE).read_text(encoding="utf-8")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium (make browser)")
def test_report_in_chromium(run_dir: Path) -> None:
    """Charts draw, the drill-down opens on each row's tab, the planted script stays text and
    the page asks for nothing outside its own file."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    outside: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on(
                "request",
                lambda r: None if r.url.startswith(("file:", "data:", "blob:", "about:"))
                else outside.append(r.url),
            )  # fmt: skip
            page.goto((run_dir / REPORT_FILE).as_uri())
            # metrics, depth, kinds and pairs draw; by-strategy (one strategy, one model) and
            # cost–quality (only alpha reports usage) are notes.
            page.wait_for_selector("#fig-pairs .main-svg", timeout=20_000)
            figures = page.locator("[data-figure]")
            assert figures.count() == 4
            assert page.locator("[data-figure] .main-svg").count() >= 4
            first = page.locator("#dd-0 details.sb-doc").first
            first.locator("> summary").click()
            assert INJECTED in first.locator("pre.raw").inner_text()
            page.locator("#drilldown .tab").nth(1).click()
            assert page.locator("#dd-1").is_visible() and not page.locator("#dd-0").is_visible()
            page.locator("#dd-1 details.sb-doc > summary").first.click()
            assert page.locator("#dd-1 pre.email").first.is_visible()
            assert page.evaluate("typeof window.__pwned") == "undefined"
        finally:
            browser.close()
    assert problems == []
    assert outside == []


def test_offline_demo_on_the_shipped_set(demo_json: tuple[Path, dict[str, Any]]) -> None:
    # structbench_demo as `chatledger demo` runs it (conftest.demo_json, once a session)
    summary = demo_json[1]["structbench"]
    # docs/structbench.md: the rule baseline on the 1,000 shipped emails has DOC 0.610
    # (610 clean outputs, 390 bad_format), WV 0.802.
    assert summary["n"] == 1000
    (row,) = summary["leaderboard"]
    assert row["name"] == "rules:structbench-v1/rule_baseline"
    assert row["DOC"] == 0.61 and round(row["WV"], 3) == 0.802
    assert Path(summary["report"]).is_file() and Path(summary["predictions"]).is_file()
    assert summary["seconds"] > 0  # its speed is benchmarks/' business, not a test's


def test_compare_two_structbench_runs(
    inputs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two real run directories of row B: as in the module docstring (b2 missing), then with a
    # b2 answer that keeps the schema but gets the total wrong (DOC 1, MK 1, MV 1/2, WV 3/11):
    #   DOC 2/4 → 3/4 (+0.25), MK 3/4 → 1 (+0.25), MV 5/8 → 6/8 (+0.125),
    #   WV 25/44 → (1 + 1 + 3/11 + 3/11)/4 = 28/44 (+3/44); overall is WV.
    from chatledger.runs import compare_runs

    lines = [json.loads(x) for x in inputs["beta"].read_text(encoding="utf-8").splitlines()]
    b2 = {"customer": {"name": "Bo"}, "total": 8}
    more = [*lines, {"id": "b2", "output": json.dumps(b2), "model": B_MODEL}]
    beta_more = _write_lines(tmp_path / "beta-more.jsonl", more)
    before, after = tmp_path / "a", tmp_path / "b"
    for folder, predictions in ((before, inputs["beta"]), (after, beta_more)):
        _cli(capsys, *_score(inputs, "--predictions", str(predictions), "--out", str(folder)))
    compared = compare_runs(before, after)
    (name,) = compared.models
    diff = compared.models[name]
    assert diff.overall.before == pytest.approx(25 / 44)
    assert diff.overall.delta == pytest.approx(3 / 44)
    assert diff.metrics["DOC"].delta == pytest.approx(0.25)
    assert diff.metrics["MK"].delta == pytest.approx(0.25)
    assert diff.metrics["MV"].delta == pytest.approx(0.125)
    assert diff.metrics["WV"] == diff.overall
    assert diff.layers == {} and diff.fields == {}
