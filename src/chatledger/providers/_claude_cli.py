"""The ``claude -p`` command line (Claude Code) as a provider.

Each call runs ``claude -p --output-format json --model M [--system-prompt S]`` with the prompt
on stdin, and reads the one JSON object it prints (``result``, ``usage``, ``total_cost_usd``).
The CLI has no schema mechanism, token limit or temperature: structured output goes through the
schema-in-prompt path, and ``max_tokens`` only bounds the budget's worst case. The CLI
authenticates itself; this provider reads no key.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from chatledger.providers._base import ManagedProvider, WireCall
from chatledger.providers._errors import ProviderError, RetryableError
from chatledger.providers._model_id import CLAUDE_CLI
from chatledger.providers._reply import RawReply
from chatledger.providers._types import ChatMessage

# Linux caps one argument at 128 KiB; a longer system prompt travels on stdin instead.
_MAX_SYSTEM_ARG_BYTES = 100_000
_MAX_DETAIL_CHARS = 300


class ClaudeCliProvider(ManagedProvider):
    kind = CLAUDE_CLI
    native_schema = False

    def __init__(
        self, *, executable: str = "claude", extra_args: Sequence[str] = (), **shared: Any
    ) -> None:
        """``executable`` is looked up on PATH; ``extra_args`` are appended to every command
        (e.g. ``["--max-turns", "1"]``); ``shared`` is passed to :class:`ManagedProvider`."""
        super().__init__(**shared)
        self.executable = executable
        self.extra_args = tuple(extra_args)

    async def _send(self, call: WireCall) -> RawReply:
        program = shutil.which(self.executable)
        if program is None:
            raise ProviderError(
                f"{self.executable!r} was not found on PATH: install Claude Code to use "
                "claude-cli: models"
            )
        args = [program, "-p", "--output-format", "json", "--model", call.model.model]
        prompt = render_turns(call.turns)
        if call.system and len(call.system.encode("utf-8")) <= _MAX_SYSTEM_ARG_BYTES:
            args += ["--system-prompt", call.system]
        elif call.system:
            prompt = f"{call.system}\n\n{prompt}"
        args += self.extra_args
        process = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            stdout, stderr = await asyncio.wait_for(
                process.communicate(prompt.encode("utf-8")), timeout=call.timeout_s
            )
        except TimeoutError:
            raise RetryableError(f"claude -p timed out after {call.timeout_s:g} s") from None
        finally:
            if process.returncode is None:
                # Timed out, or cancelled (the attempt's deadline, Ctrl-C): leave no orphan.
                with suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        return _read_result(process.returncode, stdout, stderr)


def render_turns(turns: Sequence[ChatMessage]) -> str:
    """One prompt from a conversation: earlier turns as a transcript, then the last message."""
    if len(turns) == 1:
        return turns[0].content
    transcript = "\n\n".join(f"<{m.role}>\n{m.content}\n</{m.role}>" for m in turns[:-1])
    return (
        f"The conversation so far:\n\n{transcript}\n\n"
        f"Now reply to this message:\n\n{turns[-1].content}"
    )


def _read_result(returncode: int | None, stdout: bytes, stderr: bytes) -> RawReply:
    try:
        data = json.loads(stdout.decode("utf-8", errors="replace"))
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        detail = stderr.decode("utf-8", errors="replace").strip()[-_MAX_DETAIL_CHARS:]
        raise ProviderError(
            f"claude -p exited with status {returncode} without a JSON result"
            + (f": {detail}" if detail else "")
        )
    if data.get("is_error") or returncode != 0:
        detail = str(data.get("result") or data.get("subtype") or "unknown error")
        raise ProviderError(f"claude -p failed: {detail[:_MAX_DETAIL_CHARS]}")
    raw_usage = data.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    input_tokens = sum(
        _count(usage.get(name))
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    cost = data.get("total_cost_usd")
    return RawReply(
        text=str(data.get("result") or ""),
        input_tokens=input_tokens,
        output_tokens=_count(usage.get("output_tokens")),
        finish_reason=data.get("stop_reason") or data.get("subtype"),
        cost_usd=float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
