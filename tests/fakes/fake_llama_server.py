"""A stand-in for llama.cpp's ``llama-server``, run as ``CHATLEDGER_LLAMA_SERVER`` by tests that
serve a ``local:`` model without one (the docs test, the stopped-server tests).

It takes llama-server's command line (only ``--port`` matters), answers ``/health`` and
``/v1/chat/completions`` on 127.0.0.1 with the fake server of :mod:`fakes.llm_server`:
extractions with the bundled gold of the asked chunk, judge requests with a verdict.

For the tests that stop it in the middle of a run: with ``FAKE_LLAMA_CALLS=FILE`` it appends a
line to FILE per call it answered (after ``FAKE_LLAMA_DELAY`` seconds, default 0) and writes
its pid to ``FILE.pid``; on SIGUSR1 it closes its port (connections are refused from then on)
and the connections open to it, and lives on, as a server whose listener died.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docs_blocks import bundled_gold, fake_openai
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args()
    answer = fake_openai(bundled_gold(Path(tempfile.mkdtemp(prefix="fake-llama-"))))
    log = os.environ.get("FAKE_LLAMA_CALLS")
    delay = float(os.environ.get("FAKE_LLAMA_DELAY", "0"))
    lock = threading.Lock()
    stopped = threading.Event()

    def reply(body: object) -> object:
        if stopped.wait(delay) or stopped.is_set():
            # A kept-alive connection outlives the closed port: drop it without an answer.
            raise ConnectionAbortedError("the server stopped")
        result = answer(body)
        if log:
            with lock, open(log, "a", encoding="utf-8") as out:
                out.write("answered\n")
        return result

    server = FakeLLMServer(port=args.port)
    server.always(OPENAI_PATH, Reply(body=reply))
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    server.start()
    if log:
        Path(log + ".pid").write_text(str(os.getpid()), encoding="utf-8")
    signal.sigwait({signal.SIGUSR1})
    stopped.set()
    server.stop()  # the port is closed; the process lives on
    threading.Event().wait()


if __name__ == "__main__":
    main()
