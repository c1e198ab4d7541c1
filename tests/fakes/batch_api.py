"""The batch endpoints of the fake LLM server: OpenAI's Batch API (files, batches, file
content) and Anthropic's Message Batches, with their state held here so a test can script
them.

Every batch takes the next queued :class:`BatchPlan` (or the default one): how many polls it
answers as running before it ends, and how it ends — completed, expired with the first
``done`` requests answered, failed as a whole, cancelled — and which requests error. Each
request that is answered is answered as the server would answer it per call: by the reply
scripted (or standing) for the per-call path, applied to the request's body, without counting
as a per-call request.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

OPENAI_CHAT = "/v1/chat/completions"
ANTHROPIC_MESSAGES = "/v1/messages"

# Answers a per-call request: (path, body) -> (status, payload).
Answer = Callable[[str, Any], tuple[int, Any]]


@dataclass
class BatchPlan:
    """How one batch behaves."""

    # Polls answered "in_progress" before the batch ends (OpenAI says "validating" first for
    # validating_polls of them).
    running_polls: int = 1
    validating_polls: int = 0
    # completed | expired | failed | cancelled (Anthropic has no "failed": its batch ends with
    # every request errored instead).
    outcome: str = "completed"
    # For expired and cancelled: how many requests (in input order) were answered before.
    done: int = 0
    # Indices (input order) of requests that error, or a test of (index, custom_id).
    errored: frozenset[int] | Callable[[int, str], bool] = frozenset()

    def errs(self, index: int, custom_id: str) -> bool:
        if callable(self.errored):
            return self.errored(index, custom_id)
        return index in self.errored


@dataclass
class FakeBatch:
    id: str
    kind: str  # "openai" | "anthropic"
    requests: list[tuple[str, Any]]  # (custom_id, body or params)
    plan: BatchPlan
    created_at: float = field(default_factory=time.time)
    polls: int = 0
    ended: bool = False
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def finish_now(self) -> None:
        """End at the next poll (a test stopped a batch that was running for ever)."""
        self.plan.running_polls = min(self.plan.running_polls, self.polls)


class FakeBatchAPI:
    def __init__(self, answer: Answer, base_url: Callable[[], str]) -> None:
        self._answer = answer
        self._base_url = base_url
        self._lock = threading.Lock()
        self.plans: list[BatchPlan] = []
        self.default_plan = BatchPlan()
        self.batches: dict[str, FakeBatch] = {}
        self.files: dict[str, bytes] = {}
        self._ids = 0

    def plan(self, *plans: BatchPlan) -> None:
        with self._lock:
            self.plans.extend(plans)

    def _new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}{self._ids:04d}"

    def _next_plan(self) -> BatchPlan:
        if self.plans:
            return self.plans.pop(0)
        d = self.default_plan
        return BatchPlan(d.running_polls, d.validating_polls, d.outcome, d.done, d.errored)

    # ---- routing -----------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, str] | None:
        """(status, payload, content type) for a batch endpoint, None for any other path."""
        path = path.split("?")[0]
        with self._lock:
            if method == "POST" and path == "/v1/files":
                return self._upload(headers, raw)
            if method == "POST" and path == "/v1/batches":
                return self._create_openai(json.loads(raw))
            m = re.fullmatch(r"/v1/batches/([\w-]+)", path)
            if method == "GET" and m:
                return self._poll_openai(m.group(1))
            m = re.fullmatch(r"/v1/files/([\w-]+)/content", path)
            if method == "GET" and m:
                data = self.files.get(m.group(1))
                if data is None:
                    return 404, _error("no such file"), "application/json"
                return 200, data, "application/octet-stream"
            if method == "POST" and path == "/v1/messages/batches":
                return self._create_anthropic(json.loads(raw))
            m = re.fullmatch(r"/v1/messages/batches/([\w-]+)", path)
            if method == "GET" and m:
                return self._poll_anthropic(m.group(1))
            m = re.fullmatch(r"/v1/messages/batches/([\w-]+)/results", path)
            if method == "GET" and m:
                batch = self.batches.get(m.group(1))
                if batch is None or not batch.ended:
                    return 404, _error("no results yet"), "application/json"
                lines = "".join(json.dumps(r) + "\n" for r in batch.results)
                return 200, lines.encode("utf-8"), "application/binary"
        return None

    # ---- OpenAI ------------------------------------------------------------------------------

    def _upload(self, headers: dict[str, str], raw: bytes) -> tuple[int, Any, str]:
        ctype = headers.get("content-type", "")
        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + raw
        )
        fields: dict[str, bytes] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = payload
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return 400, _error("expected purpose=batch and a file"), "application/json"
        file_id = self._new_id("file-")
        self.files[file_id] = fields["file"]
        body = {
            "id": file_id,
            "object": "file",
            "bytes": len(fields["file"]),
            "created_at": int(time.time()),
            "filename": "batch.jsonl",
            "purpose": "batch",
            "status": "processed",
        }
        return 200, body, "application/json"

    def _create_openai(self, body: dict[str, Any]) -> tuple[int, Any, str]:
        data = self.files.get(body.get("input_file_id", ""))
        if data is None or body.get("completion_window") != "24h":
            return 400, _error("bad input_file_id or completion_window"), "application/json"
        requests = []
        for line in data.decode("utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("method") != "POST" or entry.get("url") != body.get("endpoint"):
                return 400, _error("a line's method or url does not match"), "application/json"
            requests.append((entry["custom_id"], entry["body"]))
        batch = FakeBatch(self._new_id("batch_"), "openai", requests, self._next_plan())
        batch.counts = {"total": len(requests), "completed": 0, "failed": 0}
        self.batches[batch.id] = batch
        return 200, self._openai_object(batch, body.get("input_file_id", "")), "application/json"

    def _openai_object(self, batch: FakeBatch, input_file_id: str = "file-in") -> dict[str, Any]:
        errors = None
        if batch.status == "failed":
            errors = {
                "object": "list",
                "data": [{"code": "invalid_request", "message": "scripted failure", "line": 1}],
            }
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": OPENAI_CHAT,
            "input_file_id": input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "created_at": int(batch.created_at),
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "errors": errors,
            "request_counts": batch.counts,
        }

    def _poll_openai(self, batch_id: str) -> tuple[int, Any, str]:
        batch = self.batches.get(batch_id)
        if batch is None or batch.kind != "openai":
            return 404, _error(f"no batch {batch_id}"), "application/json"
        batch.polls += 1
        plan = batch.plan
        if not batch.ended:
            if batch.polls <= plan.validating_polls:
                batch.status = "validating"
            elif batch.polls <= plan.running_polls:
                batch.status = "in_progress"
            else:
                self._end_openai(batch)
        return 200, self._openai_object(batch), "application/json"

    def _end_openai(self, batch: FakeBatch) -> None:
        plan = batch.plan
        batch.ended = True
        batch.status = plan.outcome
        if plan.outcome == "failed":
            batch.counts = {"total": len(batch.requests), "completed": 0, "failed": 0}
            return
        output: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        cut = plan.done if plan.outcome in ("expired", "cancelled") else len(batch.requests)
        for index, (custom_id, body) in enumerate(batch.requests):
            line_id = f"batch_req_{batch.id}_{index}"
            if index >= cut:
                code = "batch_expired" if plan.outcome == "expired" else "batch_cancelled"
                errors.append(
                    {
                        "id": line_id,
                        "custom_id": custom_id,
                        "response": None,
                        "error": {"code": code, "message": "not run before the batch ended"},
                    }
                )
                continue
            if plan.errs(index, custom_id):
                status, payload = 500, _error("scripted failure", "server_error")
            else:
                status, payload = self._answer(OPENAI_CHAT, body)
            entry = {
                "id": line_id,
                "custom_id": custom_id,
                "response": {"status_code": status, "request_id": f"req_{index}", "body": payload},
                "error": None,
            }
            (output if status == 200 else errors).append(entry)
        batch.counts = {
            "total": len(batch.requests),
            "completed": len(output),
            "failed": len(errors),
        }
        if output:
            batch.output_file_id = self._new_id("file-")
            self.files[batch.output_file_id] = _jsonl(output)
        if errors:
            batch.error_file_id = self._new_id("file-")
            self.files[batch.error_file_id] = _jsonl(errors)

    # ---- Anthropic ---------------------------------------------------------------------------

    def _create_anthropic(self, body: dict[str, Any]) -> tuple[int, Any, str]:
        requests = [(r["custom_id"], r["params"]) for r in body.get("requests", [])]
        if not requests or any(not re.fullmatch(r"[\w-]{1,64}", c) for c, _ in requests):
            return 400, _error("requests need custom ids of 1-64 [a-zA-Z0-9_-]"), "application/json"
        batch = FakeBatch(self._new_id("msgbatch_"), "anthropic", requests, self._next_plan())
        batch.status = "in_progress"
        self.batches[batch.id] = batch
        return 200, self._anthropic_object(batch), "application/json"

    def _anthropic_object(self, batch: FakeBatch) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if batch.ended:
            for result in batch.results:
                counts[result["result"]["type"]] += 1
        else:
            counts["processing"] = len(batch.requests)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if batch.ended else "in_progress",
            "request_counts": counts,
            "created_at": "2026-11-20T10:00:00Z",
            "expires_at": "2026-11-21T10:00:00Z",
            "ended_at": "2026-11-20T11:00:00Z" if batch.ended else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": (
                f"{self._base_url()}/v1/messages/batches/{batch.id}/results"
                if batch.ended
                else None
            ),
        }

    def _poll_anthropic(self, batch_id: str) -> tuple[int, Any, str]:
        batch = self.batches.get(batch_id)
        if batch is None or batch.kind != "anthropic":
            return 404, _error(f"no batch {batch_id}"), "application/json"
        batch.polls += 1
        if not batch.ended and batch.polls > batch.plan.running_polls:
            self._end_anthropic(batch)
        return 200, self._anthropic_object(batch), "application/json"

    def _end_anthropic(self, batch: FakeBatch) -> None:
        plan = batch.plan
        batch.ended = True
        batch.status = "ended"
        cut = plan.done if plan.outcome in ("expired", "cancelled") else len(batch.requests)
        for index, (custom_id, params) in enumerate(batch.requests):
            result: dict[str, Any]
            if index >= cut:
                result = {"type": "expired" if plan.outcome == "expired" else "canceled"}
            elif plan.outcome == "failed" or plan.errs(index, custom_id):
                result = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": "api_error", "message": "scripted failure"},
                    },
                }
            else:
                status, payload = self._answer(ANTHROPIC_MESSAGES, params)
                if status == 200:
                    result = {"type": "succeeded", "message": payload}
                else:
                    error = payload.get("error", {}) if isinstance(payload, dict) else {}
                    result = {"type": "errored", "error": {"type": "error", "error": error}}
            batch.results.append({"custom_id": custom_id, "result": result})


def _error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _jsonl(entries: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in entries).encode("utf-8")
