"""The HTML report: self-contained, escaped, complete, and aligned exactly as layer 1 scored."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from chatledger.cli._app import main
from chatledger.report import REPORT_FILE, build_report
from chatledger.report._align import Row, align, scoring_context
from chatledger.report._charts import pareto_frontier
from chatledger.report._embed import unpack_json
from chatledger.scoring import ScoringConfig
from conftest import ext, make_chunk

INJECTED = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
SECTIONS = (
    "overview",
    "leaderboard",
    "fingerprint",
    "cost",
    "sensitivity",
    "calibration",
    "judges",
    "downstream",
    "drilldown",
    "about",
)


class _Tags(HTMLParser):
    """Start tags with their attributes; script bodies are raw text to the parser, so a string
    inside JavaScript is never mistaken for a tag."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def script_body(html: str, element_id: str) -> str:
    match = re.search(rf'<script[^>]*id="{element_id}"[^>]*>(.*?)</script>', html, re.S)
    assert match is not None, element_id
    return match.group(1)


@pytest.fixture(scope="module")
def demo_report(
    demo_json: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, str]:
    """The report built again on the session's demo run (a copy of the run and its corpus:
    the build writes into the run; the run names its input files by their shared paths)."""
    out = tmp_path_factory.mktemp("report-demo")
    for part in ("run", "corpus"):
        shutil.copytree(demo_json[0] / part, out / part)
    path = build_report(out / "run")
    return out / "run", path.read_text(encoding="utf-8")


def _line(chunk_id: str, model: str, extraction: dict[str, Any], cost: float) -> str:
    usage = {"input_tokens": 100, "output_tokens": 50, "cost_usd": cost, "latency_s": 2.0}
    return json.dumps(
        {"chunk_id": chunk_id, "model": model, "extraction": extraction, "usage": usage}
    )


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Two chunks, extraction layer only, a human gold, priced models and injected markup."""
    base = tmp_path_factory.mktemp("report-small")
    chunks = []
    for n in (1, 2):
        chunk = make_chunk(3, chunk_id=f"c-{n}").model_dump()
        chunk["title"] = f"{INJECTED} chunk {n}"
        chunk["messages"][0]["text"] = f"{INJECTED} the brakes grind"
        chunks.append(json.dumps(chunk))
    (base / "chunks.jsonl").write_text("\n".join(chunks) + "\n", encoding="utf-8")
    reference = {"topics": ["car brake noise", "birthday dinner"], "summary": "Brakes grind."}
    cheap = {"topics": ["car brake noise", "weather"], "summary": "Brakes grind."}
    files = {
        "reference.jsonl": [_line(f"c-{n}", "ref", reference, 0.0) for n in (1, 2)],
        "dear.jsonl": [_line(f"c-{n}", "dear", reference, 0.01) for n in (1, 2)],
        "cheap.jsonl": [_line(f"c-{n}", "cheap", cheap, 0.001) for n in (1, 2)],
    }
    for name, lines in files.items():
        (base / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = {
        "name": "small",
        "chunks": "chunks.jsonl",
        "reference": {"file": "reference.jsonl", "name": "ref"},
        "challengers": [
            {"file": "dear.jsonl", "name": "dear"},
            {"file": "cheap.jsonl", "name": f"cheap {INJECTED}"},
        ],
        "layers": ["extraction"],
        "gold": {"file": "reference.jsonl", "name": "human"},
        "stats": {"bootstrap_resamples": 200, "dirichlet_draws": 200},
        "seed": 1,
    }
    (base / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", str(base / "run.yaml"), "--out", str(base / "run")]) == 0
    path = build_report(base / "run")
    return base / "run", path.read_text(encoding="utf-8")


def test_demo_report_is_one_self_contained_file(demo_report: tuple[Path, str]) -> None:
    run_dir, html = demo_report
    assert (run_dir / REPORT_FILE).is_file()
    # plotly.js opens with its banner exactly once: the bundle is inlined once, not per chart.
    assert html.count("* plotly.js v") == 1
    scripts = [attrs for tag, attrs in tags(html) if tag == "script"]
    assert len(scripts) == 4  # data JSON, packed bulk data, plotly.js, the report's own code
    assert all("src" not in attrs for attrs in scripts)
    for tag, attrs in tags(html):
        for key in ("src", "href"):
            value = attrs.get(key) or ""
            assert not value.startswith(("http://", "https://", "//")), (tag, value)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    size = (run_dir / REPORT_FILE).stat().st_size
    # plotly.js alone is ~4.8 MB; the 36-chunk, 6-model demo adds ~0.5 MB on top.
    assert size < 5.5e6, size


def test_demo_report_has_every_section(demo_report: tuple[Path, str]) -> None:
    _, html = demo_report
    ids = {attrs.get("id") for _, attrs in tags(html)}
    hrefs = {attrs.get("href") for tag, attrs in tags(html) if tag == "a"}
    for section in SECTIONS:
        assert section in ids, section
        assert f"#{section}" in hrefs, section  # listed in the table of contents
    figures = {attrs.get("data-figure") for _, attrs in tags(html)} - {None}
    assert figures == {
        "fingerprint",
        "layer-gap",
        "cost-quality",
        "swaps",
        "simplex",
        "calibration",
        "judge-distribution",
        "judge-labels",
    }
    data = json.loads(script_body(html, "report-data"))
    assert set(data["figures"]) == figures
    assert data["models"] == [
        "simulated:light",
        "simulated:medium",
        "offline:rules",
        "recorded:qwen2.5-coder-1.5b",
        "simulated:heavy",
        "recorded:qwen2.5-coder-0.5b",
        "recorded:smollm2-135m",
    ]
    # 36 chunks → 36 drill-down entries, each a <details> the page fills when opened.
    chunk_ids = [
        a["id"] for t, a in tags(html) if t == "details" and (a.get("id") or "")[:6] == "chunk-"
    ]
    assert chunk_ids == [f"chunk-{i}" for i in range(36)]


def test_demo_report_states_what_is_missing(demo_report: tuple[Path, str]) -> None:
    _, html = demo_report
    # The demo's reference is hand-written (human) gold, and the offline extractor is also
    # scored against the AMI and CaSiNo human annotations.
    assert "No human gold" not in html
    assert "The reference is human annotation" in html
    assert "offline:rules vs ami" in html and "offline:rules vs casino" in html
    assert "No cost data" in html
    assert "One judge only" in html
    assert "Panel agreement needs at least two judges" in html
    # Three simulated challengers: a badge in the leaderboard row of each (+ TOC, tables).
    board = html[html.index('<table class="board">') : html.index("</table>")]
    assert board.count(">simulated</span>") == 3
    # Two recorded local models report real latencies: the cost–quality chart is drawn.
    assert "Only one model reports a latency" not in html
    assert 'data-figure="cost-quality"' in html
    # Three real local models, recorded: a badge in the leaderboard row of each.
    assert board.count(">local model, recorded</span>") == 3


def _expected_matches(field: str, comps: dict[str, float], n_ref: int, n_pred: int) -> float:
    """Matches implied by the scorer's components (DESIGN §3: P = m / n_pred, F1 = 2m / (r+p))."""
    if field == "entities":  # credit = m·(0.5 + 0.5·exact share); P = credit / n_pred
        return comps["precision"] * n_pred / (0.5 + 0.5 * comps["exact_share"])
    if "precision" in comps:
        return comps["precision"] * n_pred
    f1 = comps.get("text_f1", comps.get("question_f1"))
    assert f1 is not None, field
    return f1 * (n_ref + n_pred) / 2


def test_drill_down_pairs_exactly_what_was_scored(demo_report: tuple[Path, str]) -> None:
    run_dir, html = demo_report
    bulk = unpack_json(script_body(html, "report-bulk").strip())
    drill, models = bulk["drill"], json.loads(script_body(html, "report-data"))["models"]
    chunk_ids = [
        json.loads(line)["chunk_id"] for line in (run_dir.parent / "corpus" / "chunks.jsonl").open()
    ]
    assert len(drill["chunks"]) == 36
    comps: dict[tuple[str, str, str], dict[str, float]] = {}
    for row in pq.read_table(run_dir / "scores.parquet").to_pylist():
        if row["layer"] == "extraction":
            comps.setdefault((row["model"], row["chunk_id"], row["field"]), {})[
                row["component"]
            ] = row["value"]
    text_fields = (
        "topics",
        "entities",
        "decisions",
        "action_items",
        "open_questions",
        "claims",
        "warnings",
        "qa_pairs",
        "implicit_assumptions",
    )
    checked = 0
    for chunk_id, chunk in zip(chunk_ids, drill["chunks"], strict=True):
        for m, model in enumerate(models):
            view = chunk["v"][m]
            if view["st"] != "ok":  # an invalid line (a recorded model's cut reply): no items
                assert view["st"] == "invalid" and view["pr"], (model, chunk_id)
                continue
            for field in text_fields:
                k = drill["fields"].index(field)
                n_ref, n_pred = len(chunk["r"][k]), len(view["p"][k])
                if not n_ref or not n_pred:
                    continue
                rows = view["a"][k]
                matched = sum(1 for i in range(0, len(rows), 4) if rows[i + 2] == 0)
                expected = _expected_matches(field, comps[model, chunk_id, field], n_ref, n_pred)
                assert matched == pytest.approx(expected), (model, chunk_id, field)
                checked += 1
    assert checked > 500


def test_alignment_of_a_hand_worked_chunk() -> None:
    chunk = make_chunk(4)
    ref = ext(
        claims=[
            {"text": "The car makes a grinding noise"},
            {"text": "Luigi's garlic bread is elite"},
        ]
    )
    pred = ext(
        claims=[{"text": "car grinding noise when braking"}, {"text": "the weather is nice"}]
    )
    rows = align(ref, pred, scoring_context(chunk, ScoringConfig.default()))["claims"]
    # token_set_ratio("the car makes a grinding noise", "car grinding noise when braking"):
    # common tokens "car grinding noise" (18 chars); "car grinding noise a makes the" (30) vs
    # "car grinding noise braking when" (31) share a longest subsequence of 18 + 1 + 5 ("ak he")
    # = 24 → 2·24 / 61 = 78.69 ≥ 60: a match. The second pair shares only "is" → 41.67 < 60.
    assert rows[0].ref == 0 and rows[0].pred == 0 and rows[0].status == "match"
    assert rows[0].similarity == pytest.approx(2 * 24 / 61 * 100)
    assert rows[1:] == [Row(1, -1, "missed"), Row(-1, 1, "invented")]


def test_pareto_frontier_by_hand() -> None:
    points = [("a", 0.01, 0.80), ("b", 0.02, 0.70), ("c", 0.03, 0.90), ("d", 0.03, 0.85)]
    # b costs more than a and scores less; d costs as much as c and scores less: both dominated.
    assert pareto_frontier(points) == ["a", "c"]
    # A free model is on the frontier when nothing is as cheap and better.
    assert pareto_frontier([("free", 0.0, 0.5), ("paid", 0.1, 0.9)]) == ["free", "paid"]


def test_injected_markup_is_escaped(small_run: tuple[Path, str]) -> None:
    _, html = small_run
    assert INJECTED not in html
    assert ESCAPED in html  # chunk titles and the model name, rendered by the template
    assert len([t for t, _ in tags(html) if t == "script"]) == 4
    data_text = script_body(html, "report-data")
    assert "</" not in data_text and "<!--" not in data_text
    assert "\\u003cscript" in data_text  # the model name inside chart labels, as JSON escapes
    bulk = unpack_json(script_body(html, "report-bulk").strip())
    # The message reaches the page as data only; the page writes it with textContent.
    assert f"{INJECTED} the brakes grind" in bulk["s"]


def test_small_run_numbers_and_missing_layers(small_run: tuple[Path, str]) -> None:
    _, html = small_run
    # cheap: topics F1 = 2·1/(2+2) = 0.5 on both chunks; every other field agrees (1.0), so
    # extraction = 1 − 0.042·(1 − 0.5) = 0.979; extraction is the only layer, so overall too.
    assert html.count('<span class="val">0.979</span>') >= 2
    assert "No judge layer in this run." in html
    assert "No downstream layer in this run." in html
    assert "renormalised to extraction 1.000" in html
    assert "Only one layer ran (extraction)" in html
    # Human gold = the reference: the reference scores 1.000 against it, cheap 0.979.
    assert "The reference against human gold (human)" in html
    assert 'composite <span class="val">1.000</span> on 2 chunks' in html
    # Priced models: the cost chart is drawn; the cheap model and the dear one both sit on the
    # frontier (cheaper-and-worse vs dearer-and-better): $0.001 and $0.01 per chunk.
    data = json.loads(script_body(html, "report-data"))
    assert "cost-quality" in data["figures"]
    assert "$0.0010" in html and "$0.0100" in html
    assert "No cost data" not in html and "No human gold" not in html


def test_report_command_and_missing_inputs(
    small_run: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, _ = small_run
    copy = tmp_path / "moved" / "run"
    shutil.copytree(run_dir, copy)
    (copy / REPORT_FILE).unlink()
    run_json = json.loads((copy / "run.json").read_text())
    run_json["chunks_file"] = str(tmp_path / "gone.jsonl")  # the chunks file has disappeared
    run_json["config"]["chunks"] = "gone.jsonl"
    (copy / "run.json").write_text(json.dumps(run_json))
    assert main(["report", str(copy)]) == 0
    assert capsys.readouterr().out.strip() == str(copy / REPORT_FILE)
    html = (copy / REPORT_FILE).read_text(encoding="utf-8")
    assert "chunks file cannot be found" in html
    assert "The drill-down is not available" in html
    assert main(["report", str(tmp_path / "nowhere")]) == 2


def test_select_chunks_by_hand() -> None:
    from chatledger.report._select import select_chunks

    ids = [f"c{i}" for i in range(10)]
    # a scores lowest on c9, b on c0 (then c5, tied with nothing): cap 4 → at most 2 lowest
    # (half the page), one a rank: c9 for a, c0 for b. The other 8 (c1…c8) give an evenly
    # spaced sample of 2: positions int(0.5·8/2) = 2 and int(1.5·8/2) = 6 → c3 and c7.
    a = {c: 1 - i / 10 for i, c in enumerate(ids)}
    b = {c: 0.1 if c == "c0" else 0.2 if c == "c5" else 0.9 for c in ids}
    chosen = select_chunks(ids, {"a": a, "b": b}, cap=4, per_model=5)
    assert chosen.chunk_ids == ["c0", "c3", "c7", "c9"]
    assert chosen.lowest_for == {"c9": ["a"], "c0": ["b"]}
    assert (chosen.total, chosen.sampled, chosen.n_sample) == (10, True, 2)
    # Room for every chunk: all of them, in file order, nothing marked.
    every = select_chunks(ids, {"a": a, "b": b}, cap=10)
    assert every.chunk_ids == ids and not every.sampled and every.lowest_for == {}
    # A cap below the number of models still holds.
    assert len(select_chunks(ids, {"a": a, "b": b, "c": a}, cap=1).chunk_ids) == 1
    # Three models on a page of 4: half the page (2) would leave out d's lowest chunk; the
    # budget is one per model (3): c9 for a, c0 for b, c4 for d (its only low chunk); the one
    # place left samples the other 7 (c1…c3, c5…c8) at int(0.5·7/1) = 3 → c5.
    d = {c: 0.0 if c == "c4" else 1.0 for c in ids}
    three = select_chunks(ids, {"a": a, "b": b, "d": d}, cap=4, per_model=5)
    assert three.lowest_for == {"c9": ["a"], "c0": ["b"], "c4": ["d"]}
    assert three.chunk_ids == ["c0", "c4", "c5", "c9"]


def test_drill_down_is_bounded_and_says_so(
    demo_report: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The demo's 36 chunks with the page capped at 10 (at most 1 lowest-scoring chunk per
    # model) and 5 downstream events per list: what a 10,000-chunk run looks like, small.
    run_dir, _ = demo_report
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    monkeypatch.setattr("chatledger.report._select.DRILL_CAP", 10)
    monkeypatch.setattr("chatledger.report._select.WORST_PER_MODEL", 1)
    monkeypatch.setattr("chatledger.report._select.EVENT_CAP", 5)
    html = build_report(copy).read_text(encoding="utf-8")
    details = [a for t, a in tags(html) if t == "details" and "chunk" in (a.get("class") or "")]
    bulk = unpack_json(script_body(html, "report-bulk"))
    assert len(details) == len(bulk["drill"]["chunks"]) == 10
    assert [a["id"] for a in details] == [f"chunk-{i}" for i in range(10)]
    assert "Showing 10 of the run's 36 chunks" in html
    assert "scores.parquet" in html and "judgements.jsonl" in html
    # Each model's lowest extraction composite (ties in file order) is on the page, marked.
    table = pq.read_table(copy / "scores.parquet").to_pylist()
    corpus = run_dir.parent / "corpus" / "chunks.jsonl"
    order = [json.loads(x)["chunk_id"] for x in corpus.read_text(encoding="utf-8").splitlines()]
    shown = re.findall(r'<span class="cid">([^<]*)</span>', html)
    assert len(shown) == 10
    for model in json.loads(script_body(html, "report-data"))["models"]:
        composites = {
            r["chunk_id"]: r["value"]
            for r in table
            if r["model"] == model and r["layer"] == "extraction"
            and r["field"] == "composite" and r["component"] == "score"
            and r["chunk_id"] in order
        }  # fmt: skip
        lowest = min(composites, key=lambda c: (composites[c], order.index(c)))
        assert lowest in shown, model
    assert html.count('class="cmeta why">lowest for ') >= 1
    assert 'class="cmeta why">sample<' in html
    # The judge chart: a box per model over all 36 chunks, and only the shown chunks as dots.
    figure = json.loads(script_body(html, "report-data"))["figures"]["judge-distribution"]
    boxes = [t for t in figure["data"] if "q1" in t]
    dots = [t for t in figure["data"] if "q1" not in t]
    assert len(boxes) == len(dots) == 7  # one per challenger
    assert all(len(t["y"]) <= 10 for t in dots)
    assert all(0 <= index < 10 for t in dots for index, _model in t["customdata"])
    assert "Each box summarises all 36 judged chunks" in html
    # Downstream events: the first 5 of each list, and the counts of all of them.
    events = bulk["events"]
    assert all(len(v[k]) <= 5 for model in events for v in model.values() for k in v)
    assert "The first 5 of" in html and "downstream.json in the run directory" in html
