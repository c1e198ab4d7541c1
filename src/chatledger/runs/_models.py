"""Runs that name models: extraction before scoring, one provider hub per run, repeat variance.

A ``{model: ID}`` source is extracted into ``<run dir>/extractions/<name>.jsonl`` before any
scoring. All sources extract at once, each endpoint within its own concurrency limit; every call
goes through one :class:`ProviderHub` with the run's cache and budget, which the model judges
share. The extraction files are resumable and the calls cached, so re-running an interrupted or
budget-stopped run picks up where it stopped without repeating a paid call. Every extraction
file is locked for the whole extraction (all of them before the first is started), so a second
run into the same directory stops at once instead of duplicating lines.

An offline extractor (``{model: offline:rules}``) is a model source like the others, extracted
without a provider: a run whose only models are offline builds no hub and no call cache.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from chatledger.core import ChatLedgerError, Chunk, EnvironmentFault, InputError
from chatledger.extraction import (
    ExtractionProgress,
    ExtractionSummary,
    aextract_chunks,
    endpoint_concurrency,
    is_offline_model,
    load_prices,
    offline_parameter_message,
    output_lock,
)
from chatledger.providers import (
    BatchSettings,
    Budget,
    CallSettings,
    CompletionCache,
    ProviderHub,
    parse_model_id,
    run_sync,
)
from chatledger.record import ModelCallsInfo
from chatledger.runs._config import LoadedRunConfig, ModelSource, RunConfig
from chatledger.runs._stages import safe_file_name

EXTRACTIONS_DIR = "extractions"


def needs_model_calls(config: RunConfig) -> bool:
    """Whether the run calls a language model (a model source that is not an offline extractor,
    or a model judge), so that it needs a provider hub, a call cache and a budget."""
    sources = [config.reference, *config.challengers]
    return any(s.model is not None and not is_offline_model(s.model) for s in sources) or any(
        j.model is not None for j in config.judges
    )


@dataclass
class ModelCalls:
    """The run's provider hub, and what it was given (cache, budget)."""

    hub: ProviderHub
    owns_hub: bool

    @classmethod
    def for_run(cls, loaded: LoadedRunConfig, hub: ProviderHub | None = None) -> ModelCalls:
        if hub is not None:
            return cls(hub, owns_hub=False)
        config = loaded.config
        settings = CallSettings()
        if config.concurrency:
            settings = replace(settings, concurrency=config.concurrency)
        if config.timeout_s is not None:
            settings = replace(settings, timeout_s=config.timeout_s)
        if config.max_attempts is not None:
            settings = replace(settings, max_attempts=config.max_attempts)
        prices = loaded.prices_file if loaded.prices_file is not None else config.prices
        try:
            table = load_prices(prices)
        except ChatLedgerError as exc:
            raise InputError(str(exc), path=loaded.path, field="prices") from None
        built = ProviderHub(
            settings=settings,
            cache=CompletionCache(loaded.cache_dir),
            budget=_budget(loaded),
            prices=table,
            batch=_batch(config),
        )
        return cls(built, owns_hub=True)

    def close(self) -> None:
        if not self.owns_hub:
            return
        run_sync(self.hub.aclose())
        if self.hub.cache is not None:
            self.hub.cache.close()

    def info(self) -> ModelCallsInfo:
        """What the run's model calls cost and where they were cached (run.json)."""
        budget = self.hub.budget
        cache = self.hub.cache
        return ModelCallsInfo(
            budget_usd=budget.cap_usd if budget is not None else None,
            spent_usd=budget.spent_usd if budget is not None else None,
            live_calls=budget.live_calls if budget is not None else None,
            cached_calls=budget.cached_calls if budget is not None else None,
            cache=str(cache.path) if cache is not None else None,
        )


def _batch(config: RunConfig) -> BatchSettings | None:
    if not config.batch:
        return None
    poll = config.batch_poll_s
    if poll is None:
        return BatchSettings()
    return BatchSettings(poll_initial_s=poll, poll_max_s=max(poll, 60.0))


def _budget(loaded: LoadedRunConfig) -> Budget:
    config = loaded.config
    try:
        return Budget(cap_usd=config.budget_usd, name=config.budget_name)
    except InputError as exc:
        raise InputError(exc.detail, path=loaded.path, field="budget_name") from None


def extraction_path(out_dir: Path, name: str) -> Path:
    return out_dir / EXTRACTIONS_DIR / f"{safe_file_name(name)}.jsonl"


@dataclass(frozen=True)
class PlannedExtraction:
    """A ``model`` source of the config, with the file it extracts into."""

    where: str  # config key, for error messages
    name: str
    source: ModelSource
    path: Path

    @property
    def model(self) -> str:
        assert self.source.model is not None
        return self.source.model


def plan_extractions(loaded: LoadedRunConfig, out_dir: Path) -> list[PlannedExtraction]:
    """Every model source with its output file; two sources may not share a name."""
    config = loaded.config
    sources = [("reference", config.reference)]
    sources += [(f"challengers.{i}", c) for i, c in enumerate(config.challengers)]
    planned: list[PlannedExtraction] = []
    seen: dict[str, str] = {}
    for where, source in sources:
        if source.model is None:
            continue
        name = source.label
        assert name is not None
        if name in seen:
            raise InputError(
                f"{where} and {seen[name]} are both named {name!r}; give each a unique 'name'",
                path=loaded.path,
                field=where,
            )
        seen[name] = where
        if is_offline_model(source.model):
            # As for `chatledger extract`: a value other than the default is refused.
            defaults = ModelSource.model_fields
            given = [
                k
                for k in ("prompt_style", "max_tokens", "temperature")
                if getattr(source, k) != defaults[k].default
            ]
            if given:
                raise InputError(
                    offline_parameter_message(source.model, given[0]),
                    path=loaded.path,
                    field=f"{where}.{given[0]}",
                )
        planned.append(PlannedExtraction(where, name, source, extraction_path(out_dir, name)))
    return planned


ProgressCallback = Callable[[str, int, int], None]


def run_extractions(
    planned: Sequence[PlannedExtraction],
    chunks: Sequence[Chunk],
    calls: ModelCalls | None,
    on_progress: ProgressCallback | None = None,
) -> list[ExtractionSummary]:
    """Extract every planned source (all at once); raise if any stopped or failed.

    ``calls`` is the run's provider hub; None when every source is an offline extractor. Each
    output file is locked before any extraction starts: if another process holds one, nothing
    is extracted and the error names it.
    """
    if not planned:
        return []
    hub = calls.hub if calls is not None else None
    with contextlib.ExitStack() as locks:
        for plan in planned:
            locks.enter_context(output_lock(plan.path))
        summaries = run_sync(_extract_all(planned, chunks, hub, on_progress))
    for summary in summaries:
        if summary.stopped is not None:
            written = sum(s.progress.written for s in summaries)
            raise EnvironmentFault(
                f"stopped by the budget: {summary.stopped}. {written} extraction line(s) were "
                "written",
                hint="the cap covers all spend of the run's budget_name in its cache: raise "
                "budget_usd or run 'chatledger budget reset', then rerun to continue",
            )
    for summary in summaries:
        summary.raise_if_incomplete()
    return summaries


def _endpoint(model: str) -> str | None:
    return None if is_offline_model(model) else parse_model_id(model).endpoint


async def _extract_all(
    planned: Sequence[PlannedExtraction],
    chunks: Sequence[Chunk],
    hub: ProviderHub | None,
    on_progress: ProgressCallback | None,
) -> list[ExtractionSummary]:
    # One limit per endpoint, shared by the models behind it, so that together they keep to it.
    # Offline extractors call no endpoint.
    slots: dict[str | None, asyncio.Semaphore | None] = {None: None}
    for plan in planned:
        endpoint = _endpoint(plan.model)
        if endpoint not in slots:
            assert hub is not None  # a run that calls a model has a hub
            slots[endpoint] = asyncio.Semaphore(endpoint_concurrency(hub, plan.model))
    total = sum(len(chunks) * plan.source.samples for plan in planned)
    finished: dict[str, int] = {}

    def reporter(name: str) -> Callable[[ExtractionProgress], None]:
        def report(progress: ExtractionProgress) -> None:
            finished[name] = progress.already_done + progress.finished
            if on_progress is not None:
                on_progress(f"extracting: {name}", sum(finished.values()), total)

        return report

    try:
        return list(
            await asyncio.gather(
                *(
                    aextract_chunks(
                        plan.model,
                        chunks,
                        plan.path,
                        prompt_style=plan.source.prompt_style,
                        samples=plan.source.samples,
                        hub=hub,
                        max_tokens=plan.source.max_tokens,
                        temperature=plan.source.temperature,
                        slots=slots[_endpoint(plan.model)],
                        on_progress=reporter(plan.name),
                        lock=False,  # run_extractions holds every file's lock
                    )
                    for plan in planned
                )
            )
        )
    finally:
        if hub is not None:
            await hub.aclose()
