"""Screenshots of the annotation page for docs/annotate.md (run by hand, not by the tests).

    .venv/bin/python tools/annotate_screenshots.py docs/

Starts ``chatledger annotate`` on two chunks of the bundled corpus prefilled by the offline
extractor, picks evidence for a new open question in Chromium, and saves two PNGs.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from chatledger.demo import write_bundled_corpus

URL = re.compile(r"annotation page: (\S+)")


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        chunks, _gold = write_bundled_corpus(folder)
        prefill = folder / "rules.jsonl"
        cli = [sys.executable, "-m", "chatledger"]
        subprocess.run(
            [*cli, "extract", "--model", "offline:rules", "--chunks", str(chunks), "--out",
             str(prefill)],
            check=True, capture_output=True,
        )  # fmt: skip
        server = subprocess.Popen(
            [*cli, "annotate", str(chunks), "--out", str(folder / "ness.jsonl"), "--prefill",
             str(prefill), "--fields", "claims,action_items,open_questions,decisions,topics",
             "--sample", "6", "--seed", "3", "--no-browser", "--annotator", "ness"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert server.stdout is not None
        url = ""
        while not url:
            found = URL.search(server.stdout.readline())
            url = found.group(1) if found else ""
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path="/usr/bin/chromium",
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                page.goto(url)
                page.wait_for_selector("body[data-ready='1']")
                page.locator(".item [data-action=accept]").first.click()
                page.screenshot(path=str(out / "annotate.png"))
                page.click('[data-action=add][data-field="open_questions"]')
                page.locator(
                    'section[data-field="open_questions"] .item'
                ).last.scroll_into_view_if_needed()
                page.locator('section[data-field="open_questions"] .item textarea').last.fill(
                    "Who picks Tilly up on Thursday?"
                )
                page.locator(
                    'section[data-field="open_questions"] .item .prop[data-prop="evidence"] '
                    "[data-action=pick]"
                ).last.click()
                messages = page.locator("#messages .msg")
                messages.nth(2).click()
                messages.nth(3).click()
                page.screenshot(path=str(out / "annotate-evidence.png"))
                browser.close()
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs"))
