"""``chatledger annotate``: the real server (a subprocess on 127.0.0.1) driven in Chromium.

The page is clicked as a person would: accept a claim, change an action item's owner, delete a
claim, add an open question whose evidence is picked by clicking two messages, reload. The gold
file is then read as runs read it and scored against the prefill, with the figures worked out
by hand from DESIGN.md's rules:

- claims: the gold keeps one of the prefill's two claims, unchanged → precision 1/2, recall 1,
  text F1 2/3; the matched pair agrees on polarity and subject, and the pair terms count by the
  matched share 2M/(R+P) = 2/3 → 0.60·2/3 + 0.25·2/3 + 0.15·2/3 = 2/3;
- action items: the one item, its owner changed → text F1 1, owner accuracy 0 → 0.70;
- open questions: the gold's one question against none → 0.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from annotate_fixture import PAYLOADS, write_fixture
from chatledger.annotate import GoldLine
from chatledger.corpus import read_extractions

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists() and os.environ.get("CI"):
    raise RuntimeError("CI must install Debian's chromium (make browser) for the browser test")
browser_only = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium (make browser)"
)
FIELDS = "claims,action_items,open_questions,topics"
URL = re.compile(r"annotation page: (http://127\.0\.0\.1:(\d+)/\?token=(\S+))")


class Server:
    """``chatledger annotate`` in a subprocess, until stopped (or killed)."""

    def __init__(self, folder: Path, *extra: str) -> None:
        chunks, prefill = folder / "chunks.jsonl", folder / "prefill.jsonl"
        self.gold = folder / "gold.jsonl"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "chatledger",
                "annotate",
                str(chunks),
                "--out",
                str(self.gold),
                "--prefill",
                str(prefill),
                "--fields",
                FIELDS,
                "--annotator",
                "tester",
                "--no-browser",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"the server stopped: {self.process.stderr.read()}")  # type: ignore[union-attr]
            self.lines.append(line)
            found = URL.search(line)
            if found:
                self.url, self.port, self.token = (
                    found.group(1),
                    int(found.group(2)),
                    found.group(3),
                )
                return
        raise AssertionError("no address printed within 60 s")

    def api(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def headers(self) -> dict[str, str]:
        return {"X-ChatLedger-Token": self.token}

    def stop(self, sig: int = signal.SIGINT) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_fixture(tmp_path)
    return tmp_path


@pytest.fixture
def server(folder: Path) -> Iterator[Server]:
    running = Server(folder)
    yield running
    running.stop()


def test_the_server_listens_on_loopback_and_wants_its_token(server: Server) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    assert len(server.token) >= 24
    assert httpx.get(server.api("/")).status_code == 403
    assert httpx.get(server.api("/api/session")).status_code == 403
    # One character off (the token is random: its last character may already be "x").
    last = "y" if server.token.endswith("x") else "x"
    wrong = {"X-ChatLedger-Token": server.token[:-1] + last}
    assert httpx.get(server.api("/api/session"), headers=wrong).status_code == 403
    # A DNS name pointed at 127.0.0.1 (rebinding) is refused even with the token.
    spoofed = {**server.headers, "Host": f"attacker.example:{server.port}"}
    assert httpx.get(server.api("/api/session"), headers=spoofed).status_code == 421
    page = httpx.get(server.url)
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'nonce-" in policy
    session = httpx.get(server.api("/api/session"), headers=server.headers).json()
    assert session["total"] == 2 and [f["name"] for f in session["fields"]] == FIELDS.split(",")


def test_a_bad_change_is_refused_and_nothing_is_written(server: Server) -> None:
    view = httpx.get(server.api("/api/chunks/0"), headers=server.headers).json()
    state = view["state"]
    state["fields"]["claims"]["items"][0]["value"]["evidence"] = ["no-such-message"]
    response = httpx.put(server.api("/api/chunks/0"), headers=server.headers, json=state)
    assert response.status_code == 422
    assert "'no-such-message' is not in chunk trip-1" in response.json()["error"]
    state = httpx.get(server.api("/api/chunks/0"), headers=server.headers).json()["state"]
    state["fields"]["topics"]["items"][0]["prefill"] = 7
    response = httpx.put(server.api("/api/chunks/0"), headers=server.headers, json=state)
    assert response.status_code == 422 and "prefill indices" in response.json()["error"]
    assert server.gold.read_text(encoding="utf-8") == ""


def test_a_killed_server_loses_nothing(folder: Path) -> None:
    first = Server(folder)
    view = httpx.get(first.api("/api/chunks/1"), headers=first.headers).json()
    state = view["state"]
    state["fields"]["claims"]["reviewed"] = True
    state["fields"]["claims"]["items"][0]["value"]["polarity"] = "pro"
    saved = httpx.put(first.api("/api/chunks/1"), headers=first.headers, json=state).json()
    assert saved["covers"] == ["claims"]
    first.stop(signal.SIGKILL)
    line = GoldLine.model_validate_json(first.gold.read_text(encoding="utf-8"))
    assert line.annotation.decisions["claims"][0].decision == "edited"
    second = Server(folder)
    try:
        again = httpx.get(second.api("/api/chunks/1"), headers=second.headers).json()
        assert again["state"]["fields"]["claims"] == state["fields"]["claims"]
        assert again["covers"] == ["claims"]
    finally:
        second.stop()


def test_a_resumed_session_must_be_the_same_sample(folder: Path) -> None:
    Server(folder).stop()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "chatledger",
            "annotate",
            str(folder / "chunks.jsonl"),
            "--out",
            str(folder / "gold.jsonl"),
            "--sample",
            "1",
            "--no-browser",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "belongs to a session on 2 other chunks" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@browser_only
def test_annotating_in_chromium(server: Server) -> None:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        own = (f"http://127.0.0.1:{server.port}/", "data:")
        page.on("request", lambda r: None if r.url.startswith(own) else outside.append(r.url))
        page.goto(server.url)
        page.wait_for_selector("body[data-ready='1']")

        def saved() -> None:
            page.wait_for_function(
                "() => document.getElementById('status').textContent.startsWith('saved')"
            )

        claim = '.item[data-field="claims"][data-index="{}"]'
        page.click(claim.format(0) + " [data-action=accept]")
        saved()
        page.select_option(
            '.item[data-field="action_items"][data-index="0"] .prop[data-prop="owner"] select',
            "Cleo Park",
        )
        saved()
        page.click(claim.format(1) + " [data-action=delete]")
        saved()
        page.click('[data-action=add][data-field="open_questions"]')
        question = '.item[data-field="open_questions"][data-index="0"]'
        page.fill(question + ' textarea[aria-label="text"]', "Where do we stay on Saturday night?")
        page.select_option(question + ' .prop[data-prop="asked_by"] select', "Ben Okafor")
        page.click(question + ' .prop[data-prop="evidence"] [data-action=pick]')
        page.click('.msg[data-id="t1-m5"]')
        page.click('.msg[data-id="t1-m6"]')
        page.keyboard.press("Escape")
        saved()
        chips = page.locator(question + " .chip[data-id]")
        assert [chips.nth(k).get_attribute("data-id") for k in range(chips.count())] == [
            "t1-m5",
            "t1-m6",
        ]
        # Injected markup in a message is shown as text and never runs.
        assert page.evaluate("() => window.__pwned") is None
        assert PAYLOADS[0] in page.inner_text('.msg[data-id="t1-m3"] .text')

        page.reload()
        page.wait_for_selector("body[data-ready='1']")
        assert page.get_attribute(claim.format(0), "data-status") == "accepted"
        assert page.locator('.item[data-field="claims"]').count() == 1
        assert page.locator('section[data-field="claims"] .deleted').count() == 1
        owner = page.locator(
            '.item[data-field="action_items"][data-index="0"] .prop[data-prop="owner"] select'
        )
        assert owner.input_value() == "Cleo Park"
        assert (
            page.get_attribute('.item[data-field="action_items"][data-index="0"]', "data-status")
            == "edited"
        )
        assert page.locator(question + " .chip[data-id]").count() == 2
        assert page.is_checked('section[data-field="topics"] [data-action=reviewed]') is False
        assert page.locator('section[data-field="claims"] .badge.gold').count() == 1

        # Keys: j focuses the first item, n marks the chunk done and opens the next one.
        page.keyboard.press("j")
        page.keyboard.press("n")
        page.wait_for_function("() => document.body.dataset.chunk === 'trip-2'")
        assert page.inner_text("#progress-text") == "1 / 2 chunks done"
        page.keyboard.press("j")
        page.keyboard.press("a")
        saved()
        assert page.get_attribute(claim.format(0), "data-status") == "accepted"
        browser.close()
    assert errors == [] and outside == []

    lines = [
        GoldLine.model_validate_json(text)
        for text in server.gold.read_text(encoding="utf-8").splitlines()
    ]
    assert [line.chunk_id for line in lines] == ["trip-1", "trip-2"]
    first = lines[0]
    assert first.model == "human:tester" and first.annotation.prefill == "cheap-model"
    assert first.covers == ["action_items", "open_questions", "claims"]
    assert [d.decision for d in first.annotation.decisions["claims"]] == ["accepted", "deleted"]
    assert [d.decision for d in first.annotation.decisions["action_items"]] == ["edited"]
    assert first.annotation.added == {"open_questions": [0]}
    asked = first.extraction.open_questions[0]
    assert (asked.asked_by, asked.evidence) == ("Ben Okafor", ["t1-m5", "t1-m6"])
    assert first.extraction.action_items[0].owner == "Cleo Park"
    assert lines[1].covers == ["claims"]
    # The file is gold as runs read it: every line valid, covers as annotated.
    read = read_extractions(server.gold)
    assert read.problems == [] and read.records["trip-1"].covers == tuple(first.covers)

    import chatledger as cl

    folder = server.gold.parent
    report = cl.score(server.gold, folder / "prefill.jsonl", folder / "chunks.jsonl")
    trip1 = next(c for c in report.chunks if c.chunk_id == "trip-1")
    assert trip1.fields["claims"].score == pytest.approx(2 / 3)
    assert trip1.fields["action_items"].score == pytest.approx(0.70)
    assert trip1.fields["open_questions"].score == 0.0
    assert set(trip1.fields) >= {"claims", "action_items", "open_questions"}
    assert "topics" not in trip1.fields
    assert json.loads(server.gold.read_text(encoding="utf-8").splitlines()[1])["covers"] == [
        "claims"
    ]


# --- concurrency and hostile input (issue 31) --------------------------------------------------


def put(server: Server, state: Any, index: int = 0) -> httpx.Response:
    return httpx.put(server.api(f"/api/chunks/{index}"), headers=server.headers, json=state)


def test_a_save_from_an_older_revision_is_refused_with_the_saved_state(server: Server) -> None:
    view = httpx.get(server.api("/api/chunks/0"), headers=server.headers).json()
    first, second = view["state"], json.loads(json.dumps(view["state"]))  # two tabs, one load
    assert first["revision"] == 0
    first["fields"]["claims"]["reviewed"] = True
    saved = put(server, first)
    assert saved.status_code == 200 and saved.json()["revision"] == 1
    second["fields"]["topics"]["reviewed"] = True
    stale = put(server, second)
    assert stale.status_code == 409
    body = stale.json()
    assert "chunk 1 was saved elsewhere (another tab or window)" in body["error"]
    assert body["current"]["revision"] == 1 and body["current"]["fields"]["claims"]["reviewed"]
    # Nothing of the stale save was written; saved again from the current revision, it lands.
    assert json.loads(server.gold.read_text(encoding="utf-8"))["covers"] == ["claims"]
    second["revision"] = 1
    assert put(server, second).json()["revision"] == 2


def test_hostile_saves_are_refused_in_one_line_and_the_server_goes_on(server: Server) -> None:
    # 100 MB announced: refused before it is read (413), streamed without a length: refused
    # once past the limit. Neither is read into memory whole.
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        raw.sendall(
            (
                f"PUT /api/chunks/0 HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                f"X-ChatLedger-Token: {server.token}\r\ncontent-type: application/json\r\n"
                f"content-length: {100_000_000}\r\n\r\n"
            ).encode()
            + b"{" * 65536
        )
        assert raw.recv(65536).startswith(b"HTTP/1.1 413 ")

    def hundred_megabytes() -> Iterator[bytes]:
        for _ in range(100):
            yield b" " * 1_000_000

    try:
        streamed = httpx.put(
            server.api("/api/chunks/0"), headers=server.headers, content=hundred_megabytes()
        )
        assert streamed.status_code == 413
        assert streamed.json()["error"] == "the save is over 1,000,000 bytes"
    except httpx.WriteError:
        pass  # the server answered 413 and closed before the client had sent it all
    # 200,000 brackets deep: 400, no traceback.
    deep = httpx.put(server.api("/api/chunks/0"), headers=server.headers, content=b"[" * 200_000)
    assert deep.status_code == 400 and "nests deeper than 32" in deep.json()["error"]
    deep = httpx.put(
        server.api("/api/chunks/0"),
        headers=server.headers,
        content=b"[" * 200 + b"]" * 200,
    )
    assert deep.status_code == 400
    # Prefill indices: a negative or a repeated deleted index is refused.
    state = httpx.get(server.api("/api/chunks/0"), headers=server.headers).json()["state"]
    for deleted in ([-1], [1, 1]):
        state["fields"]["claims"]["deleted"] = deleted
        state["fields"]["claims"]["items"] = state["fields"]["claims"]["items"][:1]
        refused = put(server, state)
        assert refused.status_code == 422, deleted
    assert server.gold.read_text(encoding="utf-8") == ""
    # The server is still there, and the one line on its stderr is none.
    assert httpx.get(server.api("/api/session"), headers=server.headers).status_code == 200
    server.stop()
    assert "Traceback" not in server.process.stderr.read()  # type: ignore[union-attr]


def test_ctrl_c_exits_130_and_stale_part_files_are_removed(folder: Path) -> None:
    left = [folder / ".gold.jsonl.k2j3.part", folder / ".gold.jsonl.journal.x9.part"]
    for part in left:
        part.write_text('{"torn', encoding="utf-8")
    kept = folder / ".other.jsonl.a1.part"  # not the session's: left alone
    kept.write_text("x", encoding="utf-8")
    running = Server(folder)
    assert not any(part.exists() for part in left) and kept.exists()
    running.stop(signal.SIGINT)
    assert running.process.returncode == 130
    err = running.process.stderr.read()  # type: ignore[union-attr]
    assert "annotation stopped: 0 of 2 chunks done" in err and "Traceback" not in err


@browser_only
def test_two_tabs_the_stale_save_is_refused_shown_and_merged(server: Server) -> None:
    from playwright.sync_api import Page, sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        tabs: list[Page] = []
        for _ in range(2):
            tab = context.new_page()
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.goto(server.url)
            tab.wait_for_selector("body[data-ready='1']")
            tabs.append(tab)
        first, second = tabs

        def status(tab: Page, start: str) -> None:
            tab.wait_for_function(
                "(start) => document.getElementById('status').textContent.startsWith(start)",
                arg=start,
            )

        # The first tab changes an action item's owner and saves.
        first.select_option(
            '.item[data-field="action_items"][data-index="0"] .prop[data-prop="owner"] select',
            "Cleo Park",
        )
        status(first, "saved")
        # The second tab, loaded before that save, deletes a claim: refused, and shown.
        claim = '.item[data-field="claims"][data-index="{}"]'
        second.click(claim.format(1) + " [data-action=delete]")
        status(second, "not saved: changed in another tab")
        conflict = second.locator("#conflict")
        assert conflict.is_visible()
        text = conflict.inner_text()
        assert "saved in another tab or window" in text
        assert "There: action items changed. Here: claims changed." in text
        # The claim left alone in the reviewed field reads as what the gold records.
        assert second.get_attribute(claim.format(0), "data-status") == "accepted"
        # Merge: the other tab's owner and this tab's deletion, both kept.
        second.click("#conflict [data-action=merge]")
        status(second, "saved")
        assert not conflict.is_visible()
        owner = second.locator(
            '.item[data-field="action_items"][data-index="0"] .prop[data-prop="owner"] select'
        )
        assert owner.input_value() == "Cleo Park"
        browser.close()
    assert errors == []
    line = GoldLine.model_validate_json(server.gold.read_text(encoding="utf-8"))
    assert line.covers == ["action_items", "claims"]
    assert [d.decision for d in line.annotation.decisions["claims"]] == ["accepted", "deleted"]
    assert line.extraction.action_items[0].owner == "Cleo Park"
