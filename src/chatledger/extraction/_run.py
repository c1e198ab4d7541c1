"""Extract chunks with a model: concurrent, resumable, accounted, stopped cleanly by a budget.

Every (chunk, sample) is one request. Requests run concurrently, at most as many at once as the
model's endpoint allows (the provider's concurrency limit); each finished one is appended to the
output file and flushed at once. A re-run with the same arguments skips every (chunk, sample)
the file already holds a current line for (its fingerprint matches: see ``_lines``), and the
provider's on-disk cache answers any call that finished but whose line was never written — so
an interrupted run resumes without repeating a paid call. A line whose chunk changed is
superseded and extracted again; a file written for another request is refused. One process at
a time writes a file (``_lock``).

An offline extractor (``offline:rules``) is a model too: its chunks are extracted one at a time
in a worker thread (the event loop stays free for the model calls of a run), with the same
lines, resuming and locking, and no provider at all.

A completion whose output never validates is written as an invalid line (never dropped). A call
that fails outright (retries exhausted) writes nothing, so a re-run tries it again; the summary
counts it. A :class:`BudgetExceeded` stops new calls: calls in flight finish and are written.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import JsonValue

from chatledger._version import __version__
from chatledger.core import (
    ChatLedgerError,
    Chunk,
    EnvironmentFault,
    ExtractionV3,
    InputError,
    Vocabulary,
)
from chatledger.extraction._constraints import SchemaConstraints, gold_list_bounds
from chatledger.extraction._lines import (
    Fingerprint,
    ResumeState,
    chunk_hash,
    drop_lines,
    extraction_line,
    offline_line,
    probe_chunk,
    resume_state,
)
from chatledger.extraction._lock import output_lock
from chatledger.extraction._offline import (
    OFFLINE_PROMPT_STYLE,
    is_offline_model,
    offline_extractor,
    offline_parameter_message,
    validate_model_id,
)
from chatledger.extraction._prompts import PromptStyle, get_prompt_style
from chatledger.extractors import Extractor
from chatledger.providers import (
    RUN_STOPPING_ERRORS,
    BudgetExceeded,
    CompletionCache,
    PriceTable,
    Provider,
    ProviderError,
    ProviderHub,
    run_sync,
)

log = logging.getLogger("chatledger.extraction")

DEFAULT_MAX_TOKENS = 4096
# Calls in flight when the provider is not a hub (whose endpoints say it themselves).
DEFAULT_CONCURRENCY = 4


@dataclass
class ExtractionProgress:
    """Counts so far; ``on_progress`` gets a copy after every finished line."""

    model: str
    planned: int  # (chunk, sample) pairs asked for
    already_done: int  # found in the output file, skipped
    superseded: int = 0  # lines dropped from the file because their chunk changed since
    written: int = 0
    invalid: int = 0
    failed: int = 0
    live_calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    billed_usd: float = 0.0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    @property
    def to_do(self) -> int:
        return self.planned - self.already_done

    @property
    def finished(self) -> int:
        return self.written + self.failed


@dataclass
class ExtractionSummary:
    """What an extraction did. ``stopped`` is the budget error that ended it early, if any."""

    out_path: Path
    prompt_style: str
    samples: int
    progress: ExtractionProgress
    failures: list[dict[str, Any]] = field(default_factory=list)
    stopped: BudgetExceeded | None = None

    @property
    def complete(self) -> bool:
        return self.stopped is None and not self.failures

    def to_dict(self) -> dict[str, Any]:
        counts = asdict(self.progress)
        return {
            **counts,
            "prompt_style": self.prompt_style,
            "samples": self.samples,
            "out": str(self.out_path),
            "complete": self.complete,
            "stopped_by_budget": str(self.stopped) if self.stopped is not None else None,
            "failures": self.failures,
        }

    def raise_if_incomplete(self) -> None:
        """The budget error that stopped the run, or one error naming the failed calls."""
        if self.stopped is not None:
            raise self.stopped
        if self.failures:
            first = self.failures[0]
            # The server kept failing (retries ran out): the environment, not the user.
            raise EnvironmentFault(
                f"{len(self.failures)} call(s) to {self.progress.model} failed (first: chunk "
                f"{first['chunk_id']} sample {first['sample']}: {first['error']}); their lines "
                "were not written",
                hint="run the same command again to retry them; finished lines are kept",
            )


ProgressCallback = Callable[[ExtractionProgress], None]


def load_prices(spec: str | Path | Mapping[str, Any] | None = None) -> PriceTable:
    """The built-in price table, with the entries of a price file (a path) or of an inline
    mapping of the same shape added or replacing built-in ones."""
    table = PriceTable.default()
    if spec is None:
        return table
    if isinstance(spec, Mapping):
        extra = PriceTable.from_json(dict(spec), source="prices")
    else:
        extra = PriceTable.from_file(spec)
    return table.with_overrides(extra.entries(), extra.batch_multipliers())


def endpoint_concurrency(provider: Provider, model: str) -> int:
    """How many calls the model's endpoint takes at once (in batch mode: how many requests
    may wait for one batch, so that the callers' own limit does not cap the batch's size)."""
    if isinstance(provider, ProviderHub):
        return provider.provider_for(model).requests_at_once()
    return DEFAULT_CONCURRENCY


async def aextract_chunks(
    model_id: str,
    chunks: Sequence[Chunk],
    out_path: str | Path,
    *,
    prompt_style: str = "plain",
    samples: int = 1,
    hub: Provider | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    temperature: float | None = None,
    options: dict[str, JsonValue] | None = None,
    vocabulary: Vocabulary | None = None,
    strict_schema: bool | None = None,
    constraints: SchemaConstraints | None = None,
    slots: asyncio.Semaphore | None = None,
    on_progress: ProgressCallback | None = None,
    lock: bool = True,
) -> ExtractionSummary:
    """Extract every chunk ``samples`` times into ``out_path`` (appending; see module doc).

    ``hub`` answers the requests (default: a :class:`ProviderHub` with the default cache; an
    offline extractor needs none); ``slots`` bounds the calls in flight (default: the
    endpoint's concurrency) and may be shared by several extractions against one endpoint.
    ``constraints`` shapes the output schema (default: :func:`schema_constraints_for` the
    model and ``strict_schema``: strict, bounded lists and the chunk's own message ids for
    ``local:`` models). ``lock=False`` when the caller already holds :func:`output_lock` on
    ``out_path``. Never
    raises for a model's bad output or a failed call: read :attr:`ExtractionSummary.complete`
    or call ``raise_if_incomplete``.
    """
    if samples < 1:
        raise ValueError("samples must be >= 1")
    validate_model_id(model_id)
    path = Path(out_path)
    offline = is_offline_model(model_id)
    style: PromptStyle | None = None
    if offline:
        _check_offline_request(model_id, prompt_style, max_tokens, temperature, options)
        fingerprint = Fingerprint.for_offline(model_id, __version__)
        recorded_style = OFFLINE_PROMPT_STYLE
    else:
        shape = constraints or schema_constraints_for(model_id, strict_schema)
        try:
            style = get_prompt_style(prompt_style, vocabulary, constraints=shape)
        except InputError as exc:
            raise InputError(exc.detail, field="prompt_style") from None
        probe = style.request(
            probe_chunk(), model_id, max_tokens=max_tokens, temperature=temperature
        )
        fingerprint = Fingerprint.for_model(
            probe.messages,
            probe.output_schema,
            max_tokens=max_tokens,
            temperature=temperature,
            options=options,
            constraints=shape.fingerprint(),
        )
        recorded_style = prompt_style
    with output_lock(path) if lock else contextlib.nullcontext():
        hashes = {chunk.chunk_id: chunk_hash(chunk) for chunk in chunks}
        state = resume_state(
            path,
            model=model_id,
            prompt_style=recorded_style,
            fingerprint=fingerprint,
            chunk_hashes=hashes,
        )
        planned = [(chunk, s) for chunk in chunks for s in range(samples)]
        todo = [(chunk, s) for chunk, s in planned if (chunk.chunk_id, s) not in state.done]
        progress = ExtractionProgress(
            model=model_id,
            planned=len(planned),
            already_done=len(planned) - len(todo),
            superseded=len(state.stale),
        )
        summary = ExtractionSummary(path, recorded_style, samples, progress)
        _supersede(path, state)
        if not todo:
            return summary
        path.parent.mkdir(parents=True, exist_ok=True)
        # Opened on the first line: a run stopped before any (no key, nothing listening)
        # leaves no empty file behind.
        with _LazyAppend(path) as handle:
            if offline:
                await _extract_offline(
                    offline_extractor(model_id),
                    todo,
                    handle,
                    summary,
                    lambda chunk_id: fingerprint.line(hashes[chunk_id]),
                    on_progress,
                )
            else:
                assert style is not None
                await _extract_with_model(
                    style,
                    todo,
                    handle,
                    summary,
                    lambda chunk_id: fingerprint.line(hashes[chunk_id]),
                    hub=hub,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    options=options,
                    slots=slots,
                    on_progress=on_progress,
                )
    return summary


def _check_offline_request(
    model_id: str,
    prompt_style: str,
    max_tokens: int,
    temperature: float | None,
    options: Mapping[str, JsonValue] | None,
) -> None:
    """An offline extractor takes no prompt and no request parameters: refuse any given."""
    given = [
        (key, given)
        for key, given in (
            ("prompt_style", prompt_style != "plain"),
            ("max_tokens", max_tokens != DEFAULT_MAX_TOKENS),
            ("temperature", temperature is not None),
            ("options", bool(options)),
        )
        if given
    ]
    if given:
        key = given[0][0]
        raise InputError(offline_parameter_message(model_id, key), field=key)


def _supersede(path: Path, state: ResumeState) -> None:
    """Drop the superseded lines so that the lines written next are the ones read."""
    if not state.superseded:
        return
    drop_lines(path, state.superseded)
    changed = sorted({chunk_id for chunk_id, _ in state.stale})
    shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    parts = []
    if changed:
        parts.append(
            f"{len(changed)} chunk(s) changed since they were extracted ({shown}): their old "
            "lines are dropped and they are extracted again"
        )
    if state.unreadable:
        parts.append(f"{state.unreadable} line(s) that are not JSON are dropped")
    log.warning("%s: %s", path, "; ".join(parts))


LineFingerprint = Callable[[str], dict[str, JsonValue]]


def _named(exc: OSError, path: Path) -> OSError:
    """``exc`` naming ``path`` (a failed write, e.g. a full disk, names no file)."""
    if exc.filename is None:
        exc.filename = str(path)
    return exc


class _LazyAppend:
    """A text file opened for appending on its first write (never, if nothing is written)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def write(self, text: str) -> int:
        try:
            if self._handle is None:
                self._handle = self.path.open("a", encoding="utf-8")
            return self._handle.write(text)
        except OSError as exc:
            raise _named(exc, self.path) from None

    def flush(self) -> None:
        if self._handle is not None:
            try:
                self._handle.flush()
            except OSError as exc:
                raise _named(exc, self.path) from None

    def __enter__(self) -> _LazyAppend:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            try:
                self._handle.close()
            except OSError as error:
                raise _named(error, self.path) from None


def _write(handle: IO[str] | _LazyAppend, line: dict[str, Any]) -> None:
    # One write and a flush per line: a killed run leaves whole lines (or a partial last one,
    # which the next run cuts off); the event loop runs one writer at a time.
    handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    handle.flush()


async def _extract_offline(
    extractor: Extractor,
    todo: Sequence[tuple[Chunk, int]],
    handle: IO[str] | _LazyAppend,
    summary: ExtractionSummary,
    fingerprint: LineFingerprint,
    on_progress: ProgressCallback | None,
) -> None:
    progress = summary.progress

    def timed(chunk: Chunk) -> tuple[ExtractionV3 | None, str | None, float]:
        started = time.perf_counter()
        try:
            extraction: ExtractionV3 | None = extractor.extract(chunk)
            error = None
        except Exception as exc:  # a rule that breaks on one chunk is that chunk's invalid line
            log.exception("%s failed on chunk %s", extractor.name, chunk.chunk_id)
            extraction, error = None, f"{extractor.name} failed: {type(exc).__name__}: {exc}"
        return extraction, error, time.perf_counter() - started

    for chunk, sample in todo:
        extraction, error, latency = await asyncio.to_thread(timed, chunk)
        line = offline_line(
            chunk_id=chunk.chunk_id,
            model=extractor.name,
            sample=sample,
            prompt_style=summary.prompt_style,
            extraction=extraction,
            error=error,
            latency_s=latency,
            fingerprint=fingerprint(chunk.chunk_id),
        )
        _write(handle, line)
        _account(progress, completion_usage=line["usage"], calls=0)
        progress.written += 1
        progress.invalid += 0 if extraction is not None else 1
        _notify(on_progress, progress)


async def _extract_with_model(
    style: PromptStyle,
    todo: Sequence[tuple[Chunk, int]],
    handle: IO[str] | _LazyAppend,
    summary: ExtractionSummary,
    fingerprint: LineFingerprint,
    *,
    hub: Provider | None,
    max_tokens: int,
    temperature: float | None,
    options: dict[str, JsonValue] | None,
    slots: asyncio.Semaphore | None,
    on_progress: ProgressCallback | None,
) -> None:
    progress = summary.progress
    model_id = progress.model
    own_hub = hub is None
    provider: Provider = hub if hub is not None else ProviderHub(cache=CompletionCache())
    prices = provider.prices if isinstance(provider, ProviderHub) else PriceTable.default()
    limit = slots or asyncio.Semaphore(endpoint_concurrency(provider, model_id))

    # Errors every other call would hit too (no key, no price under a cap): stop, then raise.
    fatal: list[ChatLedgerError] = []

    async def one(chunk: Chunk, sample: int) -> None:
        async with limit:
            if summary.stopped is not None or fatal:
                return
            request = style.request(
                chunk,
                model_id,
                max_tokens=max_tokens,
                temperature=temperature,
                sample_index=sample,
                options=options,
            )
            try:
                completion = await provider.complete(request)
            except BudgetExceeded as exc:
                if summary.stopped is None:
                    summary.stopped = exc
                return
            except RUN_STOPPING_ERRORS as exc:
                fatal.append(exc)
                return
            except ProviderError as exc:
                log.warning(
                    "%s: chunk %s sample %d failed: %s", model_id, chunk.chunk_id, sample, exc
                )
                summary.failures.append(
                    {"chunk_id": chunk.chunk_id, "sample": sample, "error": str(exc)}
                )
                progress.failed += 1
                _notify(on_progress, progress)
                return
            if completion.budget_stop is not None and summary.stopped is None:
                # The budget refused a re-ask: this paid reply is written (as invalid) below,
                # and no new call starts.
                summary.stopped = completion.budget_stop.exception()
        line, valid = extraction_line(
            chunk_id=chunk.chunk_id,
            model=model_id,
            sample=sample,
            prompt_style=summary.prompt_style,
            completion=completion,
            prices=prices,
            fingerprint=fingerprint(chunk.chunk_id),
        )
        _write(handle, line)
        _account(progress, completion_usage=line["usage"], calls=completion.calls)
        progress.written += 1
        progress.invalid += 0 if valid else 1
        _notify(on_progress, progress)

    # Twice as many workers as calls may be in flight, each taking the next (chunk, sample) in
    # order: tasks in proportion to the calls in flight, not to the chunks (a task per chunk of
    # a 10,000-chunk run is 10,000 tasks queued on the semaphore, and as many objects for the
    # collector). The second half waits on the semaphore, so a slot freed while its worker
    # writes a line is taken at once. A semaphore shared with other extractions of a provider
    # that is not a hub says nothing of its size: then every call gets its task, as before.
    queue = iter(todo)

    async def worker() -> None:
        for chunk, sample in queue:
            await one(chunk, sample)

    if slots is None or isinstance(provider, ProviderHub):
        workers = min(len(todo), 2 * endpoint_concurrency(provider, model_id))
        runs = [worker() for _ in range(max(workers, 1))]
    else:
        runs = [one(chunk, s) for chunk, s in todo]
    try:
        with _heap_frozen():
            await asyncio.gather(*runs)
    finally:
        if own_hub:
            await provider.aclose()
            if isinstance(provider, ProviderHub) and provider.cache is not None:
                provider.cache.close()
    if fatal:
        raise fatal[0]


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """The objects alive when the calls start (modules, the chunks, the hub) left out of the
    garbage collector's full passes while they run (``gc.freeze``), then given back.

    Nothing is freed later for it (reference counting frees as before; a cycle that was garbage
    already waits for the end), but a full pass no longer walks the whole heap in the middle of
    the calls: with 2,000 chunks loaded it stopped the event loop for 150–300 ms at a time —
    every call in flight waited, 5 % of the throughput at 32 calls in flight."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def uses_strict_schema(model_id: str, asked: bool | None) -> bool:
    """Whether requests ask with the strict schema variant: as asked, else for local models
    (whose grammar engines need it, and whose small models otherwise skip most fields)."""
    if asked is not None:
        return asked
    return model_id.startswith("local:")


def schema_constraints_for(
    model_id: str,
    strict: bool | None = None,
    *,
    bounded: bool | None = None,
    chunk_ids: bool | None = None,
) -> SchemaConstraints:
    """How requests to ``model_id`` shape their schema: each as asked, else on for ``local:``
    models (a grammar enforces them: lists bounded by the bundled gold so a looping model ends
    its reply, message ids restricted to the chunk's) and off for the others."""
    local = model_id.startswith("local:")
    return SchemaConstraints(
        strict=uses_strict_schema(model_id, strict),
        list_bounds=gold_list_bounds() if (local if bounded is None else bounded) else None,
        chunk_ids=local if chunk_ids is None else chunk_ids,
    )


def extract_chunks(
    model_id: str,
    chunks: Sequence[Chunk],
    out_path: str | Path,
    **kwargs: Any,
) -> ExtractionSummary:
    """:func:`aextract_chunks` on a fresh event loop (for scripts and the CLI)."""
    return run_sync(aextract_chunks(model_id, chunks, out_path, **kwargs))


def _account(progress: ExtractionProgress, *, completion_usage: dict[str, Any], calls: int) -> None:
    progress.input_tokens += int(completion_usage["input_tokens"])
    progress.output_tokens += int(completion_usage["output_tokens"])
    progress.billed_usd += float(completion_usage["billed_usd"])
    progress.cost_usd += float(completion_usage["cost_usd"])
    progress.latency_s += float(completion_usage["latency_s"])
    if completion_usage["cached"]:
        progress.cached_calls += calls
    else:
        progress.live_calls += calls


def _notify(callback: ProgressCallback | None, progress: ExtractionProgress) -> None:
    if callback is not None:
        callback(dataclasses.replace(progress))  # a copy (every field is a number or a str)
