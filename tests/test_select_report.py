"""The schema selection's report page: every phase shown from the record, data escaped, no
network; and the same page in headless Chromium (charts drawn, nothing injected runs)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from chatledger.demo._bundled import write_bundled_corpus
from chatledger.report import build_selection_report, render_selection_report
from chatledger.select import SelectionRecord, load_select_config, run_selection

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists() and os.environ.get("CI"):
    raise RuntimeError("CI must install Debian's chromium (make browser) for the browser test")
PAYLOAD = "<script>window.__pwned = 1</script>"


@pytest.fixture(scope="module")
def selection(tmp_path_factory: pytest.TempPathFactory) -> tuple[SelectionRecord, Path]:
    folder = tmp_path_factory.mktemp("select-report")
    chunks, gold = write_bundled_corpus(folder)
    config = folder / "select.json"
    config.write_text(
        json.dumps({"chunks": chunks.name, "reference": gold.name, "extractor": "simulated"})
    )
    out = folder / "select"
    return run_selection(load_select_config(config), out), out


def _text(html: str) -> str:
    """The page's visible text, roughly: tags dropped, whitespace collapsed."""
    body = html.split('<script type="application/json"', 1)[0]
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def test_the_page_shows_every_phase(selection: tuple[SelectionRecord, Path]) -> None:
    record, out = selection
    page = build_selection_report(out)
    html = page.read_text(encoding="utf-8")
    text = _text(html)
    assert "Simulated extractor — not a real model" in text
    # One screening row per field, with its verdict.
    rows = re.findall(r'<tr class="(pass|fail)"><td class="left">([a-z_]+)</td>', html)
    assert {name: kind == "pass" for kind, name in rows} == {
        r.name: r.passed for r in record.screening
    }
    assert "fail: redundant" in text  # topic shifts
    tour = record.tournament
    assert tour is not None
    share = f"{100 * tour.pruned_share:.0f}%"
    assert f"{share} of the trials other than the winner pruned early" in text
    assert f"Winner {tour.winner}" in text
    found = record.validation
    assert found is not None and found.difference_low is not None
    verdict = "is better than" if found.difference_low > 0 else "is not distinguishable from"
    assert f"The winner {verdict} the runner-up on 36 chunks" in text
    variant = record.variants[0]
    assert f"{variant.field}: {variant.before:.2f} → {variant.after:.2f} ({variant.best})" in text
    # Self-contained: plotly inlined, nothing fetched.
    assert "<script src=" not in html
    assert "https://" not in html.split("<script>", 1)[0]
    assert html.count('data-figure="') == 2


def test_data_from_the_record_is_escaped(selection: tuple[SelectionRecord, Path]) -> None:
    record, _ = selection
    assert record.tournament is not None
    rows = list(record.tournament.rows)
    rows[0] = rows[0].model_copy(update={"schema_name": PAYLOAD, "chunk_ids": [PAYLOAD]})
    hostile = record.model_copy(
        update={
            "notes": [PAYLOAD],
            "extractor": PAYLOAD,
            "tournament": record.tournament.model_copy(update={"rows": rows}),
        }
    )
    html = render_selection_report(hostile)
    assert PAYLOAD not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html


def test_a_selection_stopped_after_the_screen_renders(
    selection: tuple[SelectionRecord, Path],
) -> None:
    record, _ = selection
    early = record.model_copy(
        update={"phases": ["screen"], "variants": [], "tournament": None, "validation": None,
                "weights": None}
    )  # fmt: skip
    text = _text(render_selection_report(early))
    for phase in ("Phase 1.5", "The tournament", "Validation", "The weights step"):
        assert f"{phase} has not run" in text
    assert "Phase 1: screening" in text


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium (make browser)")
def test_the_page_in_chromium(selection: tuple[SelectionRecord, Path], tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    record, _ = selection
    hostile = record.model_copy(update={"notes": [PAYLOAD]})
    page_file = tmp_path / "report.html"
    page_file.write_text(render_selection_report(hostile), encoding="utf-8")
    errors: list[str] = []
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on(
            "request",
            lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None,
        )
        page.goto(page_file.as_uri())
        page.wait_for_selector(".js-plotly-plot")
        assert page.locator(".js-plotly-plot").count() == 2
        assert page.evaluate("window.__pwned") is None
        assert "window.__pwned" in page.inner_text("#notes")
        page.screenshot(path=str(tmp_path / "select-report.png"), full_page=True)
        browser.close()
    assert errors == [] and outside == []
