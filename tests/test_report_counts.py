"""The report against human gold: the counts behind every field score, the aggregate the
composite used, the reference recognised as human annotation, skipped downstream consumers,
and what each interval resamples (the page and ``chatledger stats``)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import chatledger
from chatledger.cli._app import main
from chatledger.record import ConversationRun, read_run_record
from chatledger.report import build_report
from chatledger.runs import execute_run, load_run_config
from conftest import bundled_partial_gold

AMI = Path(chatledger.__file__).parent / "data" / "human" / "ami"
# A challenger name with markup: every new table must show it as text.
NAME = "offline <i>rules</i>"
ESCAPED_NAME = "offline &lt;i&gt;rules&lt;/i&gt;"


class _Rows(HTMLParser):
    """Per ``<tr data-field>`` inside the element with ``id=scope``: its cells' text and
    attributes (``scope`` None: every such row in the page, in order)."""

    def __init__(self, scope: str | None) -> None:
        super().__init__()
        self.scope = scope
        self.depth = 0 if scope is not None else 1  # > 0 while inside the scope
        self.rows: list[tuple[str, list[tuple[dict[str, str | None], str]]]] = []
        self._cell: list[str] | None = None
        self._attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if self.scope is not None:
            if self.depth:
                self.depth += 1
            elif found.get("id") == self.scope:
                self.depth = 1
        if not self.depth:
            return
        if tag == "tr" and found.get("data-field"):
            self.rows.append((str(found["data-field"]), []))
        elif tag == "td" and self.rows:
            self._cell, self._attrs = [], found

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self.rows:
            self.rows[-1][1].append((self._attrs, "".join(self._cell).strip()))
            self._cell = None
        if self.scope is not None and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def field_rows(html: str, scope: str | None) -> dict[str, list[tuple[dict[str, str | None], str]]]:
    """Field → its cells, the first table's row where several tables list a field."""
    parser = _Rows(scope)
    parser.feed(html)
    out: dict[str, list[tuple[dict[str, str | None], str]]] = {}
    for name, cells in parser.rows:
        out.setdefault(name, cells)
    return out


@pytest.fixture
def wide_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's console 200 columns wide, so no table cell is wrapped mid-phrase."""
    from chatledger.cli._app import stdout

    monkeypatch.setattr(stdout, "_width", 200)


def _quiet(argv: list[str]) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0, argv


def _config(folder: Path, **fields: Any) -> Path:
    path = folder / "run.yaml"
    path.write_text(json.dumps({"name": folder.name, **fields}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def challenger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``chatledger extract --model offline:rules`` on the AMI sample, with ``decisions``
    emptied on every chunk: it then matches no decision, while the gold has none on some
    chunks (both empty), so the per-chunk mean of decisions is above 0 and the pooled score 0."""
    base = tmp_path_factory.mktemp("ami-extract")
    raw = base / "offline.jsonl"
    _quiet(["extract", "--model", "offline:rules", "--chunks", str(AMI / "chunks.jsonl"),
            "--out", str(raw)])  # fmt: skip
    lines = []
    for line in raw.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        data["extraction"]["decisions"] = []
        lines.append(json.dumps(data) + "\n")
    out = base / "challenger.jsonl"
    out.write_text("".join(lines), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def human_run(
    tmp_path_factory: pytest.TempPathFactory, challenger: Path
) -> tuple[Path, ConversationRun, str]:
    """The AMI human gold (records with ``covers``) as the reference."""
    base = tmp_path_factory.mktemp("ami-human-reference")
    config = _config(
        base,
        chunks=str(AMI / "chunks.jsonl"),
        reference={"file": str(AMI / "gold.jsonl"), "name": "human:ami"},
        challengers=[{"file": str(challenger), "name": NAME}],
        layers=["extraction", "downstream"],
        # Two conversations are too few for an interval of their own: chunk resampling, as a
        # config may ask for it, gives the layer-1 figures theirs (labelled so).
        stats={"bootstrap_resamples": 300, "dirichlet_draws": 100, "unit": "chunk"},
    )
    out = base / "run"
    execute_run(load_run_config(config), out)
    record = read_run_record(out)
    assert isinstance(record, ConversationRun)
    html = build_report(out).read_text(encoding="utf-8")
    return out, record, html


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _count(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def test_counts_table_holds_the_numbers_of_run_json(
    human_run: tuple[Path, ConversationRun, str],
) -> None:
    _, run, html = human_run
    (model,) = run.models
    assert model.aggregate == "micro"  # the default against a reference with covers
    rows = field_rows(html, "fc-0")
    assert list(rows) == list(model.field_counts)  # the schema's order, covered fields only
    assert run.stats is not None
    for name, counts in model.field_counts.items():
        cells = rows[name]
        texts = [text for _, text in cells]
        attrs, headline = cells[1]
        # The headline is the figure the composite used (micro here), with its interval.
        assert attrs.get("data-value") == repr(model.fields[name]), name
        assert model.fields[name] == counts.micro["score"], name
        ci = run.stats.interval(model.name, f"extraction.{name}")
        if ci is None:  # fewer than 20 reference items: marked, no interval
            why = run.stats.why_no_interval(model.name, f"extraction.{name}")
            assert why == f"few items (n = {counts.n_reference})", name
            assert headline == f"{model.fields[name]:.3f}{why}", name
        else:
            assert ci.estimate == model.fields[name]
            assert headline == f"{model.fields[name]:.3f}[{ci.low:.3f}, {ci.high:.3f}]", name
        micro = counts.micro
        assert texts[2:7] == [
            _num(counts.macro),
            _num(micro["score"]),
            _num(micro.get("precision")),
            _num(micro.get("recall")),
            _num(micro.get("f1")),
        ], name
        matched = counts.n_matched if "f1" in micro else None
        assert texts[7:12] == [
            _count(matched),
            _count(counts.n_reference),
            _count(counts.n_predicted),
            _count(counts.both_empty),
            _count(counts.chunks),
        ], name
    # The entities' matched count is their credit (0.5 for a fuzzy-only match).
    assert rows["entities"][7][1] == _count(model.field_counts["entities"].n_matched)


def test_a_field_with_no_match_shows_0_as_its_headline(
    human_run: tuple[Path, ConversationRun, str],
) -> None:
    _, run, html = human_run
    counts = run.models[0].field_counts["decisions"]
    assert counts.n_matched == 0 and counts.n_predicted == 0 and counts.n_reference > 0
    # Both-empty chunks score 1.0 each in the per-chunk mean: macro = both empty / chunks.
    assert counts.both_empty > 0
    assert counts.macro == pytest.approx(counts.both_empty / counts.chunks)
    cells = field_rows(html, "fc-0")["decisions"]
    attrs, headline = cells[1]
    assert headline.startswith("0.000") and attrs.get("data-value") == "0.0"
    assert cells[2][1] == f"{counts.macro:.3f}" != "0.000"  # macro shown beside, not as headline
    assert cells[7][1] == "0"


def test_the_aggregate_is_named_and_explained(
    human_run: tuple[Path, ConversationRun, str],
) -> None:
    _, _, html = human_run
    panel = html[html.index('id="fc-0"') : html.index("<h3>Layer gap</h3>")]
    assert 'data-aggregate="micro"' in panel
    assert '<span class="agg-tag agg-micro">micro</span>' in panel
    assert "The extraction composite used micro figures" in panel
    assert "the default against human gold with covers" in panel
    assert "both-empty" in panel
    # The column the composite used is the shaded one.
    assert '<th class="is-used">micro</th>' in panel and '<th class="">macro</th>' in panel
    # The field where the two aggregates differ most, in words (decisions: 0 vs both empty).
    assert "They differ most on decisions" in panel


def test_the_reference_is_recognised_as_human_annotation(
    human_run: tuple[Path, ConversationRun, str],
) -> None:
    _, run, html = human_run
    assert run.reference_is_human  # set by the run: the reference lines carry covers
    assert "No human gold" not in html
    gold = html[html.index('id="human-gold"') :]
    gold = gold[: gold.index("</div>")]
    assert "The reference is human annotation" in gold and "human:ami" in gold
    covered = list(run.models[0].field_counts)
    assert f"{len(covered)} of the schema's 17 fields are scored" in gold
    for name in covered:
        assert name in gold
    summary = run.models[0].field_counts["summary"]
    assert summary.chunks < run.chunks  # the gold has summaries for some meetings only
    assert f"summary ({summary.chunks} of {run.chunks} chunks)" in gold
    assert "human annotation, " in html  # in the run's facts at the top too


def test_skipped_consumers_and_their_missing_fields(
    human_run: tuple[Path, ConversationRun, str],
) -> None:
    run_dir, run, html = human_run
    downstream = json.loads((run_dir / "downstream.json").read_text(encoding="utf-8"))
    skipped = downstream["models"][NAME]["skipped"]
    assert skipped and "arcs" in skipped
    section = html[html.index('<section id="downstream"') : html.index('<section id="drilldown"')]
    assert "Skipped consumers" in section
    for consumer, missing in skipped.items():
        label = consumer.replace("_", " ")
        assert f"<li><strong>{label}</strong> — missing {', '.join(missing)}</li>" in section
    assert section.count(">skipped</td>") == len(skipped)
    # The composite of the consumers that ran, as the leaderboard has it.
    value = run.models[0].layers["downstream"]
    assert downstream["models"][NAME]["downstream_composite"] == value
    assert f'style="--v: {value}">{value:.2f}</td></tr>' in section


def test_what_each_interval_resamples(human_run: tuple[Path, ConversationRun, str]) -> None:
    _, run, html = human_run
    assert run.stats is not None and run.stats.n_conversations == 2
    trust = html[html.index('id="intervals"') : html.index("<h3>Weight sensitivity</h3>")]
    for figure, unit, n in (
        ("overall composite", "conversations", 2),
        ("extraction composite", "chunks", 20),
        ("downstream composite", "conversations", 2),
        ("each field&#39;s score", "chunks (those that score the field)", 20),
    ):
        assert f'<td class="left">{figure}</td><td class="left">{unit}</td><td>{n}</td>' in trust
    assert "This run has 2 conversations" in trust
    assert "Too few conversations to tell (k = 2)" in trust
    assert "stats: {unit: chunk}" in trust  # the run asked for chunks, and the page says so
    assert "No interval needed widening" in trust
    board = html[html.index('id="leaderboard"') : html.index('<table class="board">')]
    assert "overall and downstream resample the 2 conversations" in board
    assert "†" not in html[html.index('<table class="board">') : html.index("</table>")]


def test_markup_in_a_model_name_stays_text(human_run: tuple[Path, ConversationRun, str]) -> None:
    _, _, html = human_run
    assert NAME not in html
    assert f'data-model="{ESCAPED_NAME}"' in html  # the counts panel
    assert f">{ESCAPED_NAME}</button>" in html  # its tab


def test_widened_intervals_are_flagged_in_the_page_and_by_stats(
    human_run: tuple[Path, ConversationRun, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    wide_stdout: None,
) -> None:
    run_dir, run, _ = human_run
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    data = json.loads((copy / "run.json").read_text(encoding="utf-8"))
    intervals = data["stats"]["intervals"][NAME]
    intervals["extraction"]["method"] = "BCa, widened to the estimate"
    claims = next(k for k in intervals if k.startswith("extraction."))
    intervals[claims]["method"] = "percentile, widened to the estimate"
    claims = claims.partition(".")[2]
    (copy / "run.json").write_text(json.dumps(data), encoding="utf-8")
    html = build_report(copy).read_text(encoding="utf-8")
    board = html[html.index('<table class="board">') : html.index("</table>")]
    assert board.count("†") == 1 and 'title="BCa, widened to the estimate"' in board
    assert field_rows(html, "fc-0")[claims][1][1].endswith("] †")
    block = html[html.index('id="widened"') :]
    block = block[: block.index("</div>")]
    assert "2 intervals widened to the estimate" in block
    assert f"field {claims}" in block and "percentile, widened to the estimate" in block
    capsys.readouterr()
    assert main(["stats", str(copy)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "resampled units — overall: 2 conversations; extraction: 20 chunks;" in shown
    assert "downstream: 2 conversations; each field: 20 chunks" in shown
    assert "Intervals widened to their estimate" in shown
    assert f"field {claims}" in shown and "BCa, widened to the estimate" in shown
    # The estimate stats shows is the leaderboard's overall.
    assert f"{NAME} │ {run.models[0].overall:.3f} │" in shown


def test_stats_without_widened_intervals(
    human_run: tuple[Path, ConversationRun, str],
    capsys: pytest.CaptureFixture[str],
    wide_stdout: None,
) -> None:
    run_dir, run, _ = human_run
    capsys.readouterr()
    assert main(["stats", str(run_dir)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "in 2 conversations" in shown and "no interval was widened" in shown
    assert "†" not in shown
    assert f"{NAME} │ {run.models[0].overall:.3f} │" in shown


def test_human_gold_of_the_config_with_its_counts(tmp_path: Path, challenger: Path) -> None:
    """``gold:`` in the config: the reference (a model) and each challenger against the AMI
    human gold, each with its per-field counts and the aggregate used."""
    config = _config(
        tmp_path,
        chunks=str(AMI / "chunks.jsonl"),
        reference={"file": str(challenger), "name": "rules-ref"},
        challengers=[{"file": str(challenger), "name": "rules-self"}],
        layers=["extraction"],
        gold={"file": str(AMI / "gold.jsonl"), "name": "ami-humans"},
        stats={"bootstrap_resamples": 100, "dirichlet_draws": 100},
    )
    execute_run(load_run_config(config), tmp_path / "run")
    run = read_run_record(tmp_path / "run")
    assert isinstance(run, ConversationRun) and run.human_gold is not None
    assert not run.reference_is_human
    html = build_report(tmp_path / "run").read_text(encoding="utf-8")
    assert "No human gold" not in html
    assert "The reference against human gold (ami-humans)" in html
    gold = run.human_gold.reference
    assert gold.aggregate == "micro" and gold.field_counts
    assert (
        f"<strong>reference rules-ref vs ami-humans</strong> — composite "
        f'<span class="val">{gold.composite:.3f}</span> on {gold.chunks} chunks · headline '
        "micro — items pooled over all chunks"
    ) in html
    assert "<strong>rules-self vs ami-humans</strong>" in html
    # The first counts table of the page is the reference's against the gold.
    rows = field_rows(html[html.index('id="human-gold"') :], None)
    for name, counts in gold.field_counts.items():
        texts = [text for _, text in rows[name]]
        assert texts[1] == f"{gold.fields[name]:.3f}"
        assert texts[3] == f"{counts.micro['score']:.3f}"
        assert texts[6] == _num(counts.micro.get("f1"))
        matched = counts.n_matched if "f1" in counts.micro else None
        assert texts[7:10] == [
            _count(matched),
            _count(counts.n_reference),
            _count(counts.n_predicted),
        ]
    # The challenger is the reference's own file: macro against the model reference.
    board = html[html.index('<table class="board">') : html.index("</table>")]
    assert f"<td>{run.human_gold.models['rules-self'].composite:.3f}</td>" in board


def test_every_consumer_skipped_shows_not_run(tmp_path: Path) -> None:
    """Gold covering topics and entities only: no consumer can run, the downstream layer is
    left out, and the page says "not run" where a composite would be — never 0."""
    chunks_path, gold, chal = bundled_partial_gold(tmp_path, ["topics", "entities"], label="c")
    config = _config(
        tmp_path,
        chunks=str(chunks_path),
        reference={"file": str(gold), "name": "gold"},
        challengers=[{"file": str(chal), "name": "chal"}],
        layers=["extraction", "downstream"],
        stats={"bootstrap_resamples": 100, "dirichlet_draws": 100},
    )
    execute_run(load_run_config(config), tmp_path / "run")
    downstream = json.loads((tmp_path / "run" / "downstream.json").read_text(encoding="utf-8"))
    assert downstream["models"]["chal"]["downstream_composite"] is None
    html = build_report(tmp_path / "run").read_text(encoding="utf-8")
    section = html[html.index('<section id="downstream"') : html.index('<section id="drilldown"')]
    assert "Downstream not run: every consumer was skipped" in section
    assert "not run (every consumer skipped" in section
    assert "0.00" not in section
    assert "<li><strong>drift</strong> — missing claims</li>" in section
    assert "No downstream layer in this run" not in html
    lacks = html[html.index('id="lacks"') : html.index("</header>")]
    assert "Downstream not run" in lacks
    # The human reference covers 2 of the 17 fields.
    assert "2 of the schema's 17 fields are scored — topics, entities." in html
