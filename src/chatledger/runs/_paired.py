"""Paired bootstrap of two finished runs: the differences a regression gate reads.

A gate compares one model of a baseline run with one model of a candidate run on the same
chunks. Every figure is recomputed from the per-unit statistics the runs left in their
``stages/`` folders (:func:`chatledger.runs._series.build_series`), with the function the run
itself used (``runs._stats._Figures``), over the *same* resamples of units for both sides: a
resample that draws a hard chunk twice draws it twice for both models, which is what makes the
difference's interval narrower than either figure's.

Units are those of the run's own statistics: chunks for layer-1 fields, the extraction and
judge composites and validity; conversations (a cluster bootstrap) for the downstream layer,
its consumers and the overall. With the run's resample count and seed, the candidate's own
interval here is the interval its ``run.json`` shows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from chatledger.core import InputError
from chatledger.record import ConversationRun, ModelResult, read_run_record
from chatledger.runs._series import build_series
from chatledger.runs._stages import StageFigures, StageStore, safe_file_name
from chatledger.runs._stats import FloatArray, ModelSeries, _Columns, _Figures, _stack
from chatledger.scoring import statistic_names
from chatledger.stats import (
    FEW_ITEMS,
    concentrated_note,
    few_items_note,
    outcome_units,
    paired_of,
    resample_statistics,
    t_interval_of,
)

# The stage each layer's output is stored under (``StageOutput.stage``).
STAGE_OF_LAYER = {"extraction": "score", "judge": "judge", "downstream": "downstream"}
CHUNK_LEVEL = "chunks"
CONVERSATION_LEVEL = "conversations"
_USABLE = statistic_names("claims").index("usable")


@dataclass(frozen=True)
class RunSide:
    """One model of one finished run, with what its figures are recomputed from."""

    run_dir: Path
    record: ConversationRun
    model: ModelResult
    series: ModelSeries
    # 1 where the chunk's extraction was usable, in run order (None: layer 1 did not run).
    valid: FloatArray | None


@dataclass(frozen=True)
class PairedFigure:
    """candidate − baseline of one figure, with a paired interval, and the candidate's own."""

    figure: str
    baseline: float
    candidate: float
    difference: float
    low: float | None  # None: no interval (``note`` says why)
    high: float | None
    p_value: float
    candidate_low: float | None
    candidate_high: float | None
    units: str  # chunks | conversations
    n_units: int
    test: str | None = None  # the sign-flip test that gave the p-value
    # "too few conversations to tell (k = 3)" or "few items (n = 5)": no interval, the rule
    # is undecided
    note: str | None = None
    # "matches in 1 conversation: too few to tell": the candidate's own figure has no
    # interval (a ``min`` rule is undecided); the difference keeps its interval
    candidate_note: str | None = None


def read_conversation_run(run_dir: Path, role: str) -> ConversationRun:
    record = read_run_record(run_dir)
    if not isinstance(record, ConversationRun):
        raise InputError(
            f"the {role} is a {record.task} run: the gate compares conversation runs",
            path=run_dir,
        )
    if not record.chunk_ids:
        raise InputError(
            f"the {role}'s run.json, written by an older ChatLedger, does not list its "
            "chunks, which the paired bootstrap needs: run it again with this ChatLedger "
            "(finished stages are reused)",
            path=run_dir,
        )
    return record


def load_run_side(run_dir: Path, record: ConversationRun, model: ModelResult) -> RunSide:
    """The series of ``model`` from the stage outputs ``run.json`` names."""
    store = StageStore(run_dir)
    outputs: dict[str, StageFigures] = {}
    for layer in model.layers:
        stage = STAGE_OF_LAYER.get(layer)
        key = next(
            (s.key for s in record.stages if s.model == model.name and s.stage == stage), None
        )
        loaded = (
            store.load_output(safe_file_name(model.name), stage, key) if stage and key else None
        )
        if loaded is None:
            raise InputError(
                f"the {stage or layer} stage of {model.name!r} is not in the run's stages/ "
                "folder (or is stale): the gate needs the run directory as the run wrote it",
                path=run_dir / "stages",
            )
        outputs[layer] = loaded
    series = build_series(
        model.name,
        outputs,
        n_chunks=len(record.chunk_ids),
        chunk_conversations=record.chunk_conversations,
        consumer_weights=record.consumer_weights or None,
    )
    series.field_scores = dict(model.fields)
    series.layer_scores = dict(model.layers)
    series.overall = model.overall
    series.overall_left_out = dict(model.left_out)
    valid = None
    if series.field_stats:
        usable = np.max(np.column_stack([m[:, _USABLE] for m in series.field_stats.values()]), 1)
        # The validity shown counts invalid and missing chunks; a chunk scored on no field at
        # all would make the two differ, and then only the figure shown is used.
        if abs(float(usable.mean()) - model.validity_rate) <= 1e-9:
            valid = usable
    return RunSide(run_dir, record, model, series, valid)


def shared_chunk_order(
    baseline: ConversationRun, candidate: ConversationRun, where: Path
) -> np.ndarray | None:
    """Where each of the baseline's chunks is in the candidate's run order (None: the same
    order). Refuses runs that do not share their chunks, or that put a chunk in different
    conversations: a paired comparison needs the same units on both sides."""
    order, theirs = baseline.chunk_ids, candidate.chunk_ids
    if order == theirs:
        if baseline.chunk_conversations != candidate.chunk_conversations:
            raise InputError(_conversation_mismatch(baseline, candidate), path=where)
        return None
    mine, other = set(order), set(theirs)
    only_base = [c for c in order if c not in other]
    only_cand = [c for c in theirs if c not in mine]
    if only_base or only_cand or len(order) != len(theirs):
        parts = []
        if only_base:
            parts.append(f"{len(only_base)} only in the baseline (first: {only_base[0]})")
        if only_cand:
            parts.append(f"{len(only_cand)} only in the candidate (first: {only_cand[0]})")
        detail = "; ".join(parts) or "a chunk id repeats in one of them"
        raise InputError(
            f"the runs do not share their chunks ({len(order)} in the baseline, {len(theirs)} "
            f"in the candidate; {detail}): a paired comparison needs the same chunks",
            path=where,
        )
    position = {c: i for i, c in enumerate(theirs)}
    perm = np.array([position[c] for c in order], dtype=np.intp)
    if [candidate.chunk_conversations[i] for i in perm] != baseline.chunk_conversations:
        raise InputError(_conversation_mismatch(baseline, candidate), path=where)
    return perm


def align_to(baseline: RunSide, candidate: RunSide) -> RunSide:
    """The candidate's series in the baseline's chunk order (see :func:`shared_chunk_order`)."""
    perm = shared_chunk_order(baseline.record, candidate.record, candidate.run_dir)
    if perm is None:
        return candidate
    series = candidate.series
    aligned = dataclasses.replace(
        series,
        field_stats={f: m[perm] for f, m in series.field_stats.items()},
        judge=None if series.judge is None else series.judge[perm],
    )
    # Conversation counts follow the order of first appearance, which the reorder may change.
    if series.downstream is not None:
        before = list(dict.fromkeys(candidate.record.chunk_conversations))
        after = list(dict.fromkeys(baseline.record.chunk_conversations))
        conv_perm = np.array([before.index(c) for c in after], dtype=np.intp)
        aligned.downstream = {
            consumer: {name: v[conv_perm] for name, v in counts.items()}
            for consumer, counts in series.downstream.items()
        }
    valid = None if candidate.valid is None else candidate.valid[perm]
    return dataclasses.replace(candidate, series=aligned, valid=valid)


def _conversation_mismatch(baseline: ConversationRun, candidate: ConversationRun) -> str:
    base = dict(zip(baseline.chunk_ids, baseline.chunk_conversations, strict=True))
    cand = dict(zip(candidate.chunk_ids, candidate.chunk_conversations, strict=True))
    chunk = next(c for c in base if base[c] != cand[c])
    return (
        f"chunk {chunk} is in conversation {base[chunk]!r} in the baseline and {cand[chunk]!r} "
        "in the candidate: the runs did not read the same chunks"
    )


@dataclass
class _Sides:
    """Both sides' statistics as blocks of one chunk matrix and one conversation matrix."""

    figures: tuple[_Figures, _Figures]
    columns: _Columns
    chunk_matrix: FloatArray
    conversation_matrix: FloatArray
    chunk_width: int


def _sides(baseline: RunSide, candidate: RunSide) -> _Sides:
    record = baseline.record
    series = (
        dataclasses.replace(baseline.series, name="baseline"),
        dataclasses.replace(candidate.series, name="candidate"),
    )
    columns = _Columns()
    chunk_blocks: list[FloatArray] = []
    n = len(record.chunk_ids)
    for side, s in zip((baseline, candidate), series, strict=True):
        for f, matrix in s.field_stats.items():
            columns.add((s.name, f), statistic_names(f))
            chunk_blocks.append(matrix)
        if s.judge is not None:
            columns.add((s.name, "judge"), ("judge:sum", "judge:n"))
            chunk_blocks.append(s.judge)
        if side.valid is not None:
            columns.add((s.name, "validity"), ("valid", "chunks"))
            chunk_blocks.append(np.column_stack([side.valid, np.ones(n)]))
    chunk_width = columns.width
    chunk_matrix = np.hstack(chunk_blocks) if chunk_blocks else np.zeros((n, 0))
    conversations = list(dict.fromkeys(record.chunk_conversations))
    position = {c: i for i, c in enumerate(conversations)}
    rows = np.array([position[c] for c in record.chunk_conversations], dtype=np.intp)
    summed = np.zeros((len(conversations), chunk_width), dtype=np.float64)
    np.add.at(summed, rows, chunk_matrix)
    conv_blocks = [summed]
    for s in series:
        for consumer, counts in (s.downstream or {}).items():
            names = tuple(counts)
            columns.add((s.name, "downstream", consumer), names)
            conv_blocks.append(np.column_stack([counts[c] for c in names]))
    figures = tuple(
        _Figures(
            [s],
            side.model.layer_weights_used,
            side.record.field_weights,
            side.record.scored_fields or list(side.record.field_weights),
            columns,
        )
        for side, s in zip((baseline, candidate), series, strict=True)
    )
    assert len(figures) == 2
    return _Sides(
        (figures[0], figures[1]), columns, chunk_matrix, np.hstack(conv_blocks), chunk_width
    )


Statistic = Callable[[FloatArray], FloatArray]


def _statistic(sides: _Sides, side: int, figure: str) -> tuple[Statistic, str]:
    """The function of summed units that gives ``figure`` of one side, and its units."""
    figures = sides.figures[side]
    name = figures.series[0].name
    group, _, item = figure.partition(".")
    if figure == "overall":
        return partial(figures.overall, 0), CONVERSATION_LEVEL
    if group == "layers" and item == "downstream":
        return partial(figures.downstream, 0), CONVERSATION_LEVEL
    if group == "layers":
        return partial(figures.layer, 0, item), CHUNK_LEVEL
    if group == "fields":
        return partial(figures.field_of, 0, item), CHUNK_LEVEL
    if group == "consumers":
        from chatledger.downstream import CONSUMERS

        agreement = CONSUMERS.get(item).agreement_from_counts

        def consumer(sums: FloatArray) -> FloatArray:
            out: FloatArray = np.asarray(
                agreement(sides.columns.sums(sums, (name, "downstream", item))), dtype=np.float64
            )
            return out

        return consumer, CONVERSATION_LEVEL
    assert figure == "validity"

    def validity(sums: FloatArray) -> FloatArray:
        parts = sides.columns.sums(sums, (name, "validity"))
        out: FloatArray = parts["valid"] / np.maximum(parts["chunks"], 1.0)
        return out

    return validity, CHUNK_LEVEL


def figure_value(side: RunSide, figure: str) -> float | None:
    """The figure as ``run.json`` shows it, or None when the run does not have it."""
    model = side.model
    group, _, item = figure.partition(".")
    if figure == "overall":
        return model.overall
    if figure == "validity":
        return model.validity_rate
    table = {"layers": model.layers, "fields": model.fields, "consumers": model.consumers}
    return table.get(group, {}).get(item)


def resamplable(side: RunSide, figure: str) -> bool:
    """Whether the run left what resampling ``figure`` needs."""
    group, _, item = figure.partition(".")
    if figure == "validity":
        return side.valid is not None
    if group == "consumers" or (group == "layers" and item == "downstream"):
        return side.series.downstream is not None and (
            group == "layers" or item in side.series.downstream
        )
    if group == "fields":
        return item in side.series.field_stats
    if group == "layers" and item == "judge":
        return side.series.judge is not None
    if group == "layers" and item == "extraction":
        return bool(side.series.field_stats)
    if figure == "overall":
        return all(resamplable(side, f"layers.{layer}") for layer in side.model.layers)
    return False


def paired_figures(
    baseline: RunSide,
    candidate: RunSide,
    figures: Sequence[str],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
    unit: str = "conversation",
) -> dict[str, PairedFigure]:
    """candidate − baseline of each figure over the same resamples, plus the candidate's own
    interval. The caller has checked that both sides have every figure (:func:`figure_value`,
    :func:`resamplable`) and aligned the candidate (:func:`align_to`).

    Units are whole conversations (``unit="chunk"``: chunks for chunk-level figures, as a
    run asked with ``stats: {unit: chunk}``); intervals are the t intervals of the run's own
    statistics (none below ``stats.MIN_UNITS`` units, nor for a field with fewer than
    ``stats.FEW_ITEMS`` reference items on either side: ``note`` says which), the p-value the
    sign-flip test on the per-unit differences."""
    sides = _sides(baseline, candidate)
    # Figures resampled over the same units share one call: the same draws as one call each
    # (the same units and seed), with one product of multiplicities and units instead of many.
    groups: dict[tuple[str, bytes | None], list[str]] = {}
    for figure in figures:
        _, level = _statistic(sides, 0, figure)
        if unit == "conversation":
            level = CONVERSATION_LEVEL
        mask = _scored_units(sides, figure, level)
        key = (level, None if mask is None or mask.all() else mask.tobytes())
        groups.setdefault(key, []).append(figure)
    out: dict[str, PairedFigure] = {}
    for (level, mask_bytes), members in groups.items():
        if level == CHUNK_LEVEL:
            matrix = sides.chunk_matrix[:, : sides.chunk_width]
        else:
            matrix = sides.conversation_matrix
        if mask_bytes is not None:
            matrix = matrix[np.frombuffer(mask_bytes, dtype=bool)]
        statistics: list[Statistic] = []
        estimates: list[float] = []
        for figure in members:
            for side, run_side in ((0, baseline), (1, candidate)):
                statistics.append(_statistic(sides, side, figure)[0])
                value = figure_value(run_side, figure)
                assert value is not None
                estimates.append(float(value))
        statistic = _stack(statistics)
        resamples = resample_statistics(
            matrix, statistic, n_resamples=n_resamples, seed=seed, estimates=estimates
        )
        per_unit = statistic(matrix)  # each unit's own figure, both sides
        n_units = matrix.shape[0]
        for k, figure in enumerate(members):
            few = _few_items(sides, figure)
            compared = paired_of(
                resamples,
                2 * k + 1,
                2 * k,
                per_unit[2 * k + 1] - per_unit[2 * k],
                confidence=confidence,
                seed=seed,
            )
            note = compared.note if few is None else few
            own = t_interval_of(resamples, 2 * k + 1, confidence=confidence)
            concentrated = _concentrated(sides, figure, matrix, level)
            if note is not None or concentrated is not None:
                own = None  # as the run's own stats: no interval for the candidate's figure
            out[figure] = PairedFigure(
                figure=figure,
                baseline=estimates[2 * k],
                candidate=estimates[2 * k + 1],
                difference=compared.difference,
                low=compared.low if note is None else None,
                high=compared.high if note is None else None,
                p_value=compared.p_value,
                candidate_low=own.low if own is not None else None,
                candidate_high=own.high if own is not None else None,
                units=level,
                n_units=n_units,
                test=compared.test,
                note=note,
                candidate_note=concentrated if note is None else None,
            )
    return {figure: out[figure] for figure in figures}


def _few_items(sides: _Sides, figure: str) -> str | None:
    """ "few items (n = 5)" for a field with fewer than ``stats.FEW_ITEMS`` reference items on
    either side (the fewer), else None."""
    group, _, item = figure.partition(".")
    if group != "fields":
        return None
    counts = [
        round(
            float(
                sides.columns.sums(sides.chunk_matrix, (f.series[0].name, item))[
                    "n_reference"
                ].sum()
            )
        )
        for f in sides.figures
    ]
    n = min(counts)
    return few_items_note(n) if n < FEW_ITEMS else None


def _concentrated(sides: _Sides, figure: str, matrix: FloatArray, level: str) -> str | None:
    """ "matches in 1 conversation: too few to tell" for a list field whose matched (or
    unmatched) items lie in fewer than two of the resampled units on the candidate's side
    (its own interval; the difference keeps its t interval and sign-flip test)."""
    group, _, item = figure.partition(".")
    if group != "fields" or item == "confidence":
        return None
    unit = "chunk" if level == CHUNK_LEVEL else "conversation"
    for f in sides.figures[1:]:
        sums = sides.columns.sums(matrix, (f.series[0].name, item))
        if "matched" not in sums:
            return None
        note = concentrated_note(
            *outcome_units(sums["matched"], sums["n_reference"], sums["n_predicted"]), unit=unit
        )
        if note is not None:
            return f"{note}: too few to tell"
    return None


def _scored_units(sides: _Sides, figure: str, level: str) -> np.ndarray | None:
    """For a field, the units (chunks or conversations) either side scores it on; None:
    every unit."""
    group, _, item = figure.partition(".")
    if group != "fields":
        return None
    matrix = sides.chunk_matrix if level == CHUNK_LEVEL else sides.conversation_matrix
    masks = [
        sides.columns.sums(matrix, (f.series[0].name, item))["covered"] > 0 for f in sides.figures
    ]
    mask: np.ndarray = masks[0] | masks[1]
    return mask


def _scored_chunks(sides: _Sides, figure: str) -> np.ndarray | None:
    """For a field, the chunks either side scores it on; None: every chunk (runs._sequential
    reads it to know which conversations a field speaks of)."""
    return _scored_units(sides, figure, CHUNK_LEVEL)
