"""A stand-in for the ``claude`` command line, driven by files in ``$FAKE_CLAUDE_DIR``.

``replies.json`` is a list of scripted runs, used in order: ``{"result": {...}}`` is printed as
the JSON result, ``{"raw": "..."}`` is printed as is, and ``"exit"`` / ``"sleep"`` set the exit
status and a delay. Every run appends its argv and stdin to ``calls.jsonl``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    folder = Path(os.environ["FAKE_CLAUDE_DIR"])
    calls = folder / "calls.jsonl"
    prompt = sys.stdin.read()
    with calls.open("a", encoding="utf-8") as log:
        log.write(json.dumps({"argv": sys.argv[1:], "stdin": prompt}) + "\n")
    index = sum(1 for _ in calls.open(encoding="utf-8")) - 1
    replies = json.loads((folder / "replies.json").read_text(encoding="utf-8"))
    reply = replies[min(index, len(replies) - 1)]
    time.sleep(reply.get("sleep", 0))
    if "raw" in reply:
        sys.stdout.write(reply["raw"])
    else:
        sys.stdout.write(json.dumps(reply["result"]))
    if reply.get("stderr"):
        sys.stderr.write(reply["stderr"])
    return int(reply.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
