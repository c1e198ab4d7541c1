"""The whole selection, phase by phase, resumable (DESIGN.md §9, issue 16).

``Selection(loaded, out_dir).run(until="weights")`` runs Phase 1 (screen), 1.5 (prompt
variants), 2 (tournament), 3 (validation) and the weights, writing ``selection.json`` after each
phase. Every extraction is a unit of ``units.jsonl``: a rerun skips the units found there (and a
model call whose line was lost comes from the provider's cache), so each phase's figures are
worked out again from the same answers in a moment — an interrupted selection resumes, a
finished one makes no call. A budget stop ends the phase it happens in: what finished is
written, the record says where it stopped, and the same command resumes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from chatledger._version import __version__
from chatledger.core import (
    FIELDS_V3,
    Chunk,
    EnvironmentFault,
    ExtractionV3,
    InputError,
    RecordStatus,
    atomic_write_json,
    prepare_output_dir,
    require_extra,
)
from chatledger.corpus import read_chunks, read_extractions
from chatledger.providers import BudgetExceeded, Provider, ProviderError, ProviderHub
from chatledger.scoring import ScoringConfig, score_chunk
from chatledger.select._candidates import CANDIDATES, candidates
from chatledger.select._config import LoadedSelectConfig, Recorded
from chatledger.select._extractors import (
    ModelExtractor,
    RecordedExtractor,
    SelectionExtractor,
    SimulatedExtractor,
    UnitRequest,
)
from chatledger.select._metrics import consistency
from chatledger.select._prompt import FieldAsk, default_asks
from chatledger.select._ratings import read_ratings
from chatledger.select._record import (
    PHASES,
    WEIGHTS_FILE,
    Phase,
    ScreenRow,
    SelectionRecord,
    TournamentRow,
    TournamentSummary,
    UnitLine,
    Usage,
    ValidationSummary,
    VariantRow,
    WeightsSummary,
)
from chatledger.select._schemas import candidate_schemas
from chatledger.select._screen import ChunkRuns, ScreenSettings, screen
from chatledger.select._simulated import simulated_truth
from chatledger.select._tables import write_screening_table, write_tournament_table
from chatledger.select._tournament import tournament, validate
from chatledger.select._units import UnitStore
from chatledger.select._variants import needs_variants, prompt_variants, search_variants
from chatledger.select._weights import derive_weights

T = TypeVar("T")
ProgressCallback = Callable[[str, int, int], None]
PROVEN = tuple(c.name for c in candidates("proven"))


def spread(items: Sequence[T], n: int | None) -> list[T]:
    """``n`` items evenly spaced over ``items`` (first and last included); all when None."""
    if n is None or n >= len(items):
        return list(items)
    if n == 1:
        return [items[0]]
    return [items[round(i)] for i in np.linspace(0, len(items) - 1, n)]


@dataclass
class _Stop:
    budget: BudgetExceeded | None = None
    failures: list[str] = field(default_factory=list)


class Selection:
    """One selection directory and the extractor that answers its units."""

    def __init__(
        self,
        loaded: LoadedSelectConfig,
        out_dir: Path,
        *,
        extractor: SelectionExtractor | None = None,
        provider: Provider | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> None:
        self.loaded = loaded
        self.config = loaded.config
        self.out_dir = prepare_output_dir(out_dir)
        self.on_progress = on_progress
        self.chunks = read_chunks(loaded.chunks)
        self.by_id = {c.chunk_id: c for c in self.chunks}
        self.reference = self._read_reference()
        self.ratings = (
            read_ratings(loaded.ratings, [c.chunk_id for c in self.chunks])
            if loaded.ratings is not None
            else None
        )
        self._provider = provider
        self._own_hub: ProviderHub | None = None  # the hub this selection made (it closes it)
        self.extractor = extractor or self._extractor()
        self.store = UnitStore(self.out_dir)
        self.loop = asyncio.new_event_loop()
        self.record = self._start_record()
        self.scoring = ScoringConfig.default()

    # -- set-up -------------------------------------------------------------------------------

    def _read_reference(self) -> dict[str, ExtractionV3]:
        if self.loaded.reference is None:
            return {}
        found = read_extractions(self.loaded.reference)
        bad = [p for p in found.problems]
        if bad:
            first = bad[0]
            raise InputError(first.message, path=self.loaded.reference, line=first.line or None)
        return {
            cid: r.extraction
            for cid, r in found.records.items()
            if r.status is RecordStatus.OK and r.extraction is not None and cid in self.by_id
        }

    def _extractor(self) -> SelectionExtractor:
        config = self.config
        if isinstance(config.extractor, Recorded):
            assert self.loaded.recorded is not None
            found = read_extractions(self.loaded.recorded)
            samples = {0: found.records, **found.samples}
            return RecordedExtractor(f"recorded:{self.loaded.recorded.name}", samples)
        model = config.model_id
        if model is None:
            truths = {
                cid: simulated_truth(self.by_id[cid], ref) for cid, ref in self.reference.items()
            }
            return SimulatedExtractor(truths, seed=config.seed)
        provider = self._provider or self._hub()
        return ModelExtractor(
            model, provider, temperature=config.temperature, max_tokens=config.max_tokens
        )

    def _hub(self) -> ProviderHub:
        from dataclasses import replace

        from chatledger.core import ChatLedgerError
        from chatledger.extraction import load_prices
        from chatledger.providers import (
            LOCAL_CALL_SETTINGS,
            Budget,
            CallSettings,
            CompletionCache,
        )

        config = self.config
        prices = self.loaded.prices_file or config.prices
        try:
            table = load_prices(prices)
        except ChatLedgerError as exc:
            raise InputError(str(exc), path=self.loaded.path, field="prices") from None
        settings, local = CallSettings(), LOCAL_CALL_SETTINGS
        if config.concurrency:
            settings = replace(settings, concurrency=config.concurrency)
            local = replace(local, concurrency=config.concurrency)
        self._own_hub = ProviderHub(
            settings=settings,
            local_settings=local,
            cache=CompletionCache(self.loaded.cache_dir),
            budget=Budget(cap_usd=config.budget_usd, name="select"),
            prices=table,
        )
        return self._own_hub

    def _start_record(self) -> SelectionRecord:
        digest = self.config.digest()
        try:
            previous = SelectionRecord.read(self.out_dir)
        except InputError:
            previous = None
        if previous is not None and previous.config_digest != digest:
            raise InputError(
                "this selection directory was made with another config (or extractor); "
                "use a new --out, or delete the directory to start again",
                path=self.out_dir,
            )
        if previous is not None:
            return previous
        return SelectionRecord(
            chatledger=__version__,
            config=self.config.model_dump(mode="json"),
            config_digest=digest,
            extractor=self.extractor.label,
            simulated=self.extractor.simulated,
            chunks=len(self.chunks),
        )

    def _pool(self) -> list[Chunk]:
        """Chunks a phase may use: with a reference where the phase scores against one, and
        (a recording) with a recorded answer."""
        answered = self.extractor.chunk_ids()
        return [
            c
            for c in self.chunks
            if c.chunk_id in self.reference and (answered is None or c.chunk_id in answered)
        ]

    # -- units --------------------------------------------------------------------------------

    def _await(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)

    async def _one(self, spec: UnitRequest, usage: Usage, stop: _Stop) -> UnitLine | None:
        found = self.store.get(spec.key(self.extractor.label))
        if found is not None:
            usage.reused += 1
            return found
        if stop.budget is not None:
            return None
        try:
            line = await self.extractor.extract(spec)
        except BudgetExceeded as exc:
            stop.budget = stop.budget or exc
            return None
        except ProviderError as exc:
            usage.failed += 1
            stop.failures.append(f"chunk {spec.chunk.chunk_id} sample {spec.sample}: {exc}")
            return None
        self.store.append(line)
        usage.calls += line.calls
        usage.cached_calls += line.calls if line.cached else 0
        usage.invalid += 1 if line.error or line.invalid else 0
        usage.input_tokens += line.input_tokens
        usage.output_tokens += line.output_tokens
        usage.cost_usd += line.cost_usd
        return line

    def _units(
        self, label: str, specs: Sequence[UnitRequest], usage: Usage
    ) -> list[UnitLine | None]:
        """Every spec's unit (found, or asked with up to the endpoint's concurrency)."""
        stop = _Stop()
        done = 0
        total = len(specs)
        usage.units += total
        self._progress(label, 0, total)
        slots = asyncio.Semaphore(self._concurrency())

        async def guarded(spec: UnitRequest) -> UnitLine | None:
            nonlocal done
            async with slots:
                line = await self._one(spec, usage, stop)
            done += 1
            self._progress(label, done, total)
            return line

        async def gather() -> list[UnitLine | None]:
            return list(await asyncio.gather(*(guarded(s) for s in specs)))

        lines = self._await(gather())
        self._raise_stop(stop)
        return lines

    def _concurrency(self) -> int:
        if isinstance(self.extractor, ModelExtractor):
            from chatledger.extraction import endpoint_concurrency

            return endpoint_concurrency(self.extractor.provider, self.extractor.label)
        return 8

    def _raise_stop(self, stop: _Stop) -> None:
        if stop.budget is not None:
            self.record.notes.append(f"stopped by the budget: {stop.budget}")
            self.record.write(self.out_dir)
            raise stop.budget
        if stop.failures:
            raise EnvironmentFault(
                f"{len(stop.failures)} call(s) failed (first: {stop.failures[0]}); "
                "finished units are kept: run the same command again to retry them"
            )

    def _progress(self, label: str, done: int, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(label, done, total)

    def _finish(self, phase: Phase, usage: Usage) -> None:
        self.record.usage[phase] = usage
        if phase not in self.record.phases:
            self.record.phases.append(phase)
        self.record.write(self.out_dir)

    # -- Phase 1 ------------------------------------------------------------------------------

    def _screen_fields(self) -> list[str]:
        chosen = self.config.screen.fields
        names = (
            chosen if chosen is not None else [c.name for c in candidates() if c.tier != "proven"]
        )
        return [n for n in names if n not in PROVEN]

    def run_screen(self) -> list[ScreenRow]:
        settings = self.config.screen
        answered = self.extractor.chunk_ids()
        pool = self._pool() or [
            c for c in self.chunks if answered is None or c.chunk_id in answered
        ]
        chunks = spread(pool, settings.chunks)
        names = [*PROVEN, *self._screen_fields()]
        size = settings.fields_per_call or len(names)
        groups = [names[i : i + size] for i in range(0, len(names), size)]
        specs = [
            UnitRequest("screen", chunk, tuple(default_asks(group)), sample=s)
            for chunk in chunks
            for s in range(settings.k)
            for group in groups
        ]
        usage = Usage()
        lines = self._units("Phase 1: screening", specs, usage)
        runs = _merge_runs(chunks, settings.k, specs, lines)
        unavailable = sorted({n for line in lines if line for n in line.unavailable})
        screened = [n for n in self._screen_fields() if n not in unavailable]
        if unavailable:
            self.record.notes.append(
                f"not screened (the recording has no such field): {', '.join(unavailable)}"
            )
        results = screen(
            [ChunkRuns(c.chunk_id, r) for c, r in zip(chunks, runs, strict=True)],
            screened,
            ratings=self.ratings,
            settings=ScreenSettings(
                weights=dict(settings.weights),
                pass_mark=settings.pass_mark,
                redundancy_floor=settings.redundancy_floor,
            ),
            measure=settings.redundancy_measure,
            embedding_model=settings.embedding_model,
        )
        rows = []
        for result in results:
            candidate = CANDIDATES.get(result.name)
            per_run = [r for chunk_runs in runs for r in chunk_runs]
            valid = [r for r in per_run if result.name in r]
            rows.append(
                ScreenRow(
                    name=result.name,
                    tier=candidate.tier,
                    in_v3=candidate.in_v3,
                    consistency=result.consistency,
                    information_gain=result.information_gain,
                    discrimination=result.discrimination,
                    redundancy=result.redundancy,
                    composite=result.composite,
                    passed=result.passed,
                    reason=result.reason,
                    runs=len(valid),
                    invalid=len(per_run) - len(valid),
                    items=sum(len(candidate.texts(r[result.name])) for r in valid),
                )
            )
        self.record.screen_chunks = [c.chunk_id for c in chunks]
        self.record.screening = rows
        write_screening_table(self.out_dir, rows)
        self._finish("screen", usage)
        return rows

    # -- Phase 1.5 ----------------------------------------------------------------------------

    def run_variants(self) -> list[VariantRow]:
        floor = self.config.variants.floor
        todo = [r for r in self.record.screening if needs_variants(r.consistency, r.passed, floor)]
        usage = Usage()
        if todo and not self.extractor.varies_prompt:
            self.record.notes.append(
                "Phase 1.5 skipped: a recording answers every prompt variant alike "
                f"({', '.join(r.name for r in todo)} kept their base instruction)"
            )
            self.record.variants = []
            self._finish("variants", usage)
            return []
        chunks = [self.by_id[c] for c in self.record.screen_chunks]
        k = self.config.screen.k
        plan: list[tuple[str, str, UnitRequest]] = []
        for row in todo:
            candidate = CANDIDATES.get(row.name)
            for variant in prompt_variants(candidate):
                ask = FieldAsk(row.name, variant.instruction, variant.name)
                plan += [
                    (row.name, variant.name, UnitRequest("variants", chunk, (ask,), sample=s))
                    for chunk in chunks
                    for s in range(k)
                ]
        lines = self._units("Phase 1.5: prompt variants", [p[2] for p in plan], usage)
        measured: dict[tuple[str, str], list[list[Any]]] = {}
        for (name, variant_name, spec), line in zip(plan, lines, strict=True):
            per_chunk = measured.setdefault((name, variant_name), [[] for _ in chunks])
            position = self.record.screen_chunks.index(spec.chunk.chunk_id)
            if line is not None and name in line.values:
                per_chunk[position].append(line.values[name])
        rows = []
        for row in todo:
            candidate = CANDIDATES.get(row.name)

            def measure(
                variant: Any, name: str = row.name, scorer: Any = candidate.score_pair
            ) -> float:
                return consistency(measured[(name, variant.name)], scorer)

            found = search_variants(candidate, measure)
            rows.append(
                VariantRow(
                    field=row.name,
                    before=row.consistency,
                    consistency=found.consistency,
                    best=found.best.name,
                    instruction=found.best.instruction,
                )
            )
        self.record.variants = rows
        self._finish("variants", usage)
        return rows

    def _asks(self, names: Sequence[str]) -> list[FieldAsk]:
        """The fields with the instructions Phase 1.5 kept."""
        kept = {r.field: r for r in self.record.variants}
        asks = []
        for name in names:
            row = kept.get(name)
            if row is not None:
                asks.append(FieldAsk(name, row.instruction, row.best))
            else:
                asks.append(FieldAsk(name, CANDIDATES.get(name).instruction))
        return asks

    # -- Phase 2 ------------------------------------------------------------------------------

    def _score(self, line: UnitLine | None) -> float:
        """The layer-1 extraction composite of one unit against the chunk's reference; a unit
        whose output is unusable scores 0, as an invalid extraction does in layer 1."""
        if line is None or line.error is not None:
            return 0.0
        reference = self.reference[line.chunk_id]
        scored = {
            n: v for n, v in line.values.items() if n in FIELDS_V3 and n not in ("confidence",)
        }
        prediction = ExtractionV3.model_validate(scored)
        scores = score_chunk(reference, prediction, self.by_id[line.chunk_id], self.scoring)
        weights = self.scoring.weights
        return float(sum(weights[n] * s.score for n, s in scores.items()))

    def _styles(self) -> list[str]:
        styles = list(self.config.tournament.styles)
        if not self.extractor.varies_prompt:
            self.record.notes.append(
                f"one prompt style only ({styles[0]}): a recording answers every style alike"
            )
            return styles[:1]
        return styles

    def _schemas(self) -> dict[str, list[str]]:
        return candidate_schemas(
            PROVEN,
            [(r.name, r.tier, r.composite) for r in self.record.screening if r.passed],
            self.config.tournament.schemas,
        )

    def run_tournament(self) -> TournamentSummary:
        settings = self.config.tournament
        pool = self._pool()
        if not pool:
            raise InputError(
                "the tournament scores against a reference: give 'reference' in the config",
                path=self.loaded.path,
                field="reference",
            )
        chunks = spread(pool, settings.chunks)
        schemas = self._schemas()
        styles = self._styles()
        usage = Usage()
        stop = _Stop()
        total = len(schemas) * len(styles) * len(chunks)
        seen = 0
        usage.units = 0

        def evaluate(schema: str, style: str, chunk_id: str) -> float:
            nonlocal seen
            names = schemas[schema]
            spec = UnitRequest(
                "tournament",
                self.by_id[chunk_id],
                tuple(self._asks(names)),
                style=style,
                schema_name=schema,
                n_fields=len(names),
            )
            usage.units += 1
            line = self._await(self._one(spec, usage, stop))
            if stop.budget is not None:
                raise stop.budget
            seen += 1
            self._progress("Phase 2: tournament", seen, total)
            return self._score(line)

        self._progress("Phase 2: tournament", 0, total)
        try:
            result = tournament(
                schemas,
                styles,
                [c.chunk_id for c in chunks],
                evaluate,
                min_chunks=settings.min_chunks,
                reduction_factor=settings.reduction_factor,
                max_calls=settings.max_calls,
                seed=self.config.seed,
            )
        except BudgetExceeded as exc:
            stop.budget = exc
        self._raise_stop(stop)
        order = result.leaderboard()
        chunk_ids = [c.chunk_id for c in chunks]
        rows = [
            TournamentRow(
                schema_name=e.schema,
                style=e.style,
                fields=schemas[e.schema],
                scores=list(e.scores),
                chunk_ids=chunk_ids[: e.chunks],
                mean=e.mean,
                pruned=e.pruned,
                rank=rank,
            )
            for rank, e in enumerate(order, start=1)
        ]
        runner = result.runner_up
        summary = TournamentSummary(
            rows=rows,
            calls=result.calls,
            budget_stopped=result.budget_stopped,
            pruned_share=result.pruned_share,
            winner=f"{result.winner.schema} / {result.winner.style}",
            runner_up=f"{runner.schema} / {runner.style}" if runner else None,
        )
        self.record.tournament = summary
        write_tournament_table(self.out_dir, rows)
        self._finish("tournament", usage)
        return summary

    # -- Phase 3 ------------------------------------------------------------------------------

    def _row(self, label: str) -> TournamentRow:
        assert self.record.tournament is not None
        return next(
            r for r in self.record.tournament.rows if f"{r.schema_name} / {r.style}" == label
        )

    def run_validation(self) -> ValidationSummary:
        tour = self.record.tournament
        assert tour is not None
        settings = self.config.validation
        chunks = spread(self._pool(), settings.chunks)
        entrants = [self._row(tour.winner)] + (
            [self._row(tour.runner_up)] if tour.runner_up else []
        )
        specs = [
            UnitRequest(
                "validate",
                chunk,
                tuple(self._asks(row.fields)),
                style=row.style,
                schema_name=row.schema_name,
                n_fields=len(row.fields),
            )
            for row in entrants
            for chunk in chunks
        ]
        usage = Usage()
        lines = self._units("Phase 3: validation", specs, usage)
        scores = [self._score(line) for line in lines]
        n = len(chunks)
        first = scores[:n]
        second = scores[n:] if len(entrants) > 1 else first
        found = validate(
            first,
            second,
            n_resamples=settings.n_resamples,
            confidence=settings.confidence,
            seed=self.config.seed,
        )
        summary = ValidationSummary(
            winner=tour.winner,
            runner_up=tour.runner_up,
            chunks=n,
            winner_mean=found.winner.estimate,
            winner_low=found.winner.low,
            winner_high=found.winner.high,
            confidence=settings.confidence,
        )
        if len(entrants) > 1:
            diff, low, high, p = found.difference
            summary = summary.model_copy(
                update={
                    "runner_up_mean": found.runner_up.estimate,
                    "runner_up_low": found.runner_up.low,
                    "runner_up_high": found.runner_up.high,
                    "difference": diff,
                    "difference_low": low,
                    "difference_high": high,
                    "p_value": p,
                }
            )
        self.record.validation = summary
        self._finish("validate", usage)
        return summary

    # -- weights ------------------------------------------------------------------------------

    def run_weights(self) -> WeightsSummary:
        tour = self.record.tournament
        assert tour is not None
        winner = self._row(tour.winner)
        composites = {r.name: r.composite for r in self.record.screening}
        derived = derive_weights(winner.fields, composites, v1_share=self.config.weights.v1_share)
        file, left_out = derived.weights_file("v3")
        atomic_write_json(self.out_dir / WEIGHTS_FILE, file)
        scorer = file["weights"]
        assert isinstance(scorer, dict)
        summary = WeightsSummary(
            weights=derived.weights,
            v1_share=derived.v1_share,
            scorer_weights={str(k): float(v) for k, v in scorer.items()},
            left_out=left_out,
        )
        self.record.weights = summary
        self._finish("weights", Usage())
        return summary

    # -- all ----------------------------------------------------------------------------------

    def run(self, until: Phase = "weights") -> SelectionRecord:
        steps: dict[Phase, Callable[[], object]] = {
            "screen": self.run_screen,
            "variants": self.run_variants,
            "tournament": self.run_tournament,
            "validate": self.run_validation,
            "weights": self.run_weights,
        }
        # Every phase is worked out again from its units (found, or asked now).
        self.record.notes = []
        self.record.phases = []
        try:
            for phase in PHASES[: PHASES.index(until) + 1]:
                steps[phase]()
        finally:
            self.close()
        return self.record

    def close(self) -> None:
        self.store.close()
        if self.loop.is_closed():
            return
        try:
            # An interruption leaves the units in flight as tasks: cancel them, then close the
            # extractor (and the hub this selection made) on the same loop.
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:

                async def drain() -> None:
                    await asyncio.gather(*pending, return_exceptions=True)

                self._await(drain())
            self._await(self._aclose())
        finally:
            self.loop.close()

    async def _aclose(self) -> None:
        await self.extractor.aclose()
        hub = self._own_hub
        if hub is not None:
            await hub.aclose()
            if hub.cache is not None:
                hub.cache.close()


def _merge_runs(
    chunks: Sequence[Chunk],
    k: int,
    specs: Sequence[UnitRequest],
    lines: Sequence[UnitLine | None],
) -> list[list[dict[str, Any]]]:
    """chunk → sample → {field: value} merged over the field groups of each (chunk, sample);
    a field whose value did not validate (or whose unit failed) is absent from its run."""
    position = {c.chunk_id: i for i, c in enumerate(chunks)}
    runs: list[list[dict[str, Any]]] = [[{} for _ in range(k)] for _ in chunks]
    for spec, line in zip(specs, lines, strict=True):
        if line is None or line.error is not None:
            continue
        runs[position[spec.chunk.chunk_id]][spec.sample].update(line.values)
    return runs


def run_selection(
    loaded: LoadedSelectConfig,
    out_dir: Path,
    *,
    until: Phase = "weights",
    on_progress: ProgressCallback | None = None,
    extractor: SelectionExtractor | None = None,
    provider: Provider | None = None,
) -> SelectionRecord:
    """The selection up to ``until`` (earlier phases resumed from their units)."""
    require_extra("select", "schema selection")
    selection = Selection(
        loaded, out_dir, extractor=extractor, provider=provider, on_progress=on_progress
    )
    return selection.run(until)
