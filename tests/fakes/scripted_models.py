"""Recorded v3 extractions and judge verdicts for the fake LLM server, adjusted per chunk.

The corpus is the bundled example chunk copied ``n`` times, one day apart, each copy with its
own chunk id and message ids (``ex-1-d0`` with ``ex1-m1-d0`` …). A responder reads which chunk a
request is about from the prompt (``Chunk id: …`` in the last user turn that has one) and
answers with the bundled reference or challenger extraction rewritten to that chunk's ids.
"""

from __future__ import annotations

import copy
import datetime
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fakes.llm_server import anthropic_body, openai_body

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "chatledger" / "data" / "examples"
_CHUNK_ID = re.compile(r"Chunk id: (\S+)")
# A judge's prompt shows the messages, not the chunk id: "[ex1-m3-d1] Jordan Pike: …".
_MESSAGE_ID = re.compile(r"\[ex1-m[0-9]+(-d[0-9]+)?\]")


def _example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return data


def suffix_of(chunk_id: str) -> str:
    return chunk_id.removeprefix("ex-1")


def _retarget(value: Any, suffix: str) -> Any:
    """``value`` with every example message id and chunk id given ``suffix``."""
    text = json.dumps(value)
    text = re.sub(r'"(ex1-m[0-9]+)"', lambda m: f'"{m.group(1)}{suffix}"', text)
    text = text.replace('"ex-1"', f'"ex-1{suffix}"')
    return json.loads(text)


def chunks(n: int) -> list[dict[str, Any]]:
    """``n`` copies of the example chunk, ids ``ex-1-d0`` …, one day apart."""
    chunk = _example("chunks.jsonl")
    out = []
    for day in range(n):
        c = _retarget(copy.deepcopy(chunk), f"-d{day}")
        for m in c["messages"]:
            date = (datetime.date(2026, 4, 10) + datetime.timedelta(days=day)).isoformat()
            m["timestamp"] = m["timestamp"].replace("2026-04-10", date)
        out.append(c)
    return out


def write_chunks(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in chunks(n)), encoding="utf-8")
    return path


def extraction_for(chunk_id: str, which: str = "reference") -> dict[str, Any]:
    """The bundled ``which`` ("reference" / "challenger") extraction, for ``chunk_id``."""
    extraction = _example(f"{which}.jsonl")["extraction"]
    return dict(_retarget(extraction, suffix_of(chunk_id)))


def asked_chunk(body: dict[str, Any]) -> str:
    """The chunk id a request (OpenAI or Anthropic body) is about."""
    turns = list(body.get("messages") or [])
    for turn in reversed(turns):
        content = turn.get("content")
        if not isinstance(content, str):
            continue
        if found := _CHUNK_ID.findall(content):
            return str(found[-1])
        if ids := _MESSAGE_ID.findall(content):
            return f"ex-1{ids[-1]}"
    raise AssertionError("the request names no chunk")


Responder = Callable[[dict[str, Any]], Any]


def openai_extractor(
    which: str | Callable[[dict[str, Any]], str] = "reference",
    *,
    prompt_tokens: int = 1000,
    completion_tokens: int = 400,
    fenced: bool = False,
) -> Responder:
    """Answers chat-completions requests with the extraction of the asked chunk.

    ``which`` may depend on the request (e.g. on ``body["model"]``).
    """

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        kind = which(body) if callable(which) else which
        text = json.dumps(extraction_for(asked_chunk(body), kind))
        if fenced:
            text = f"Here is the extraction:\n```json\n{text}\n```"
        return openai_body(
            text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            model=body["model"],
        )

    return reply


def openai_text(content: str, **usage: int) -> Responder:
    return lambda body: openai_body(content, model=body["model"], **usage)


def openai_verdict(verdict: Callable[[str], dict[str, Any]], **usage: int) -> Responder:
    """A judge on the chat-completions API: ``verdict(chunk_id)`` as its JSON reply."""
    return lambda body: openai_body(
        json.dumps(verdict(asked_chunk(body))), model=body["model"], **usage
    )


def anthropic_verdict(verdict: Callable[[str], dict[str, Any]], **usage: int) -> Responder:
    """A judge on the Messages API: the verdict as a forced tool call's input."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        name = body["tools"][0]["name"]
        return anthropic_body(tool=(name, verdict(asked_chunk(body))), model=body["model"], **usage)

    return reply
