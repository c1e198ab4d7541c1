"""A stand-in for llama.cpp's ``llama-server``, run as ``CHATLEDGER_LLAMA_SERVER`` by tests that
serve a ``local:`` model without one (the docs test, the dying-server test).

It takes llama-server's command line (only ``--port`` matters), answers ``/health`` and
``/v1/chat/completions`` on 127.0.0.1 with the fake server of :mod:`fakes.llm_server`:
extractions with the bundled gold of the asked chunk, judge requests with a verdict.
``--exit-after N`` (not llama-server's) ends the process, without answering, at the N+1-th call:
a server that dies in the middle of a run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docs_blocks import bundled_gold, fake_openai
from fakes.llm_server import OPENAI_PATH, FakeLLMServer, Reply


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--exit-after", type=int, default=0)
    args, _ = parser.parse_known_args()
    answer = fake_openai(bundled_gold(Path(tempfile.mkdtemp(prefix="fake-llama-"))))
    calls = 0

    def reply(body: object) -> object:
        nonlocal calls
        calls += 1
        if args.exit_after and calls > args.exit_after:
            os._exit(1)  # the server dies with the call unanswered
        return answer(body)

    server = FakeLLMServer(port=args.port)
    server.always(OPENAI_PATH, Reply(body=reply))
    server._httpd.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
