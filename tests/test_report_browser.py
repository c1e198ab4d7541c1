"""The demo report in a real headless Chromium: charts draw, the drill-down opens, nothing
injected runs, and the page asks for nothing outside its own file.

Uses Debian's Chromium (``apt-get install chromium``) through Playwright; no browser download.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Page, Request, sync_playwright

from chatledger.demo import run_demo
from chatledger.report import build_report

CHROMIUM = Path("/usr/bin/chromium")
# `make test` installs Chromium; in CI its absence is a failure, never a silent skip.
if not CHROMIUM.exists() and os.environ.get("CI"):
    raise RuntimeError("CI must install Debian's chromium (make browser) for the browser test")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium (make browser)"
)
# Each would set window.__pwned if the page ever turned data into markup or script.
PAYLOADS = (
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
)
LOCAL = ("file://", "data:", "blob:", "about:")


def _rewrite_jsonl(path: Path, change: Any) -> None:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    change(lines)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo run, with hostile text planted in a message, a chunk title and a model's claim
    (after scoring: the report reads these files when it is built)."""
    out = tmp_path_factory.mktemp("browser-demo")
    run_demo(out, selection=False)  # the run is what these tests read

    def plant_chunk(chunks: list[dict[str, Any]]) -> None:
        chunks[0]["title"] = PAYLOADS[1]
        chunks[0]["messages"][0]["text"] = " ".join(PAYLOADS)

    def plant_claim(records: list[dict[str, Any]]) -> None:
        records[0]["extraction"]["claims"].append({"text": PAYLOADS[0], "evidence": []})

    _rewrite_jsonl(out / "corpus" / "chunks.jsonl", plant_chunk)
    _rewrite_jsonl(out / "challengers" / "offline-rules.jsonl", plant_claim)
    return build_report(out / "run")


def test_report_in_chromium(report: Path) -> None:
    problems: list[str] = []
    outside: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(message.text)

    def on_request(request: Request) -> None:
        if not request.url.startswith(LOCAL):
            outside.append(request.url)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", on_console)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("request", on_request)
            page.goto(report.as_uri())
            page.wait_for_selector("body[data-drill-ready]", timeout=20_000)
            _charts_rendered(page)
            _drill_down_opens(page)
            _event_link_opens_its_chunk(page)
            assert page.evaluate("typeof window.__pwned") == "undefined"
        finally:
            browser.close()
    assert problems == []
    assert outside == []


def _charts_rendered(page: Page) -> None:
    containers = page.locator("[data-figure]")
    assert containers.count() == 8  # cost–quality too: the recorded local models have latency
    for i in range(containers.count()):
        container = containers.nth(i)
        name = container.get_attribute("data-figure")
        assert container.locator(".main-svg").count() >= 1, name
        assert container.bounding_box() is not None, name


def _drill_down_opens(page: Page) -> None:
    chunk = page.locator("#chunk-0")
    assert not chunk.locator(".msg-text").first.is_visible()
    # The planted title is plain text in the summary, not an element.
    assert PAYLOADS[1] in chunk.locator("summary .ctitle").inner_text()
    page.select_option("#drill-model", label="offline:rules")
    chunk.locator("summary").click()
    first = chunk.locator(".msg-text").first
    first.wait_for(state="visible")
    assert first.inner_text() == " ".join(PAYLOADS)  # shown as text, run as nothing
    assert chunk.locator(".msg img, .msg script").count() == 0
    assert chunk.locator(".field-block").count() > 5
    assert PAYLOADS[0] in chunk.locator(".alignment").inner_text()


def _event_link_opens_its_chunk(page: Page) -> None:
    tab = page.locator("#downstream .tab", has_text="simulated:heavy")
    tab.click()
    panel_id = tab.get_attribute("data-tab")
    assert panel_id is not None and panel_id.startswith("ds-")
    panel = page.locator(f"#{panel_id}")
    link = panel.locator("a.chunk-link").first
    link.wait_for(state="visible")
    target = link.get_attribute("data-chunk")
    link.click()
    opened = page.locator(f"#chunk-{target}")
    opened.locator(".msg-text").first.wait_for(state="visible")
    assert opened.get_attribute("open") is not None
    # The drill-down shows the heavy model: its tab's index.
    assert page.locator("#drill-model").input_value() == panel_id.removeprefix("ds-")
