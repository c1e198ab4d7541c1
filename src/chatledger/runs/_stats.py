"""Statistics of a run (DESIGN.md §7): intervals, paired differences, ranks, weight sensitivity.

Every interval is a bootstrap of exactly the figure shown: the figure is a function of sums of
per-unit statistics (``score._aggregate`` for layer 1, the judge's (sum, count), the consumers'
additive counts), and each resample recomputes it with that function from the resampled sums
(``stats._resample``). Layer-1 fields and the extraction and judge composites resample
*chunks* (a field with ``covers`` resamples the chunks that score it); the downstream composite
and the overall — figures that span a conversation — resample *conversations*, each with all
its chunks (a cluster bootstrap). Paired differences and rank probabilities of the overall use
the same conversation resamples for every model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from chatledger.record import (
    HumanGold,
    Interval,
    LayerSimplex,
    PairedDifference,
    RunStats,
    Sensitivity,
    SimplexPoint,
    WeightSensitivity,
)
from chatledger.runs._tables import RUN_LEVEL, Row
from chatledger.scoring import (
    Aggregate,
    combine_arrays,
    composite_value,
    field_value,
    statistic_names,
)
from chatledger.stats import (
    FEW_ITEMS,
    MIN_UNITS,
    T_METHOD,
    Resamples,
    concentrated_note,
    dirichlet_sensitivity,
    outcome_units,
    paired_of,
    rank_probabilities_from,
    resample_statistics,
    simplex_grid,
    t_interval_of,
    too_few_note,
)
from chatledger.stats import Sensitivity as DirichletSensitivity

FloatArray = npt.NDArray[np.float64]
JUDGE_COLUMNS = ("judge:sum", "judge:n")


class StatsOptions(BaseModel):
    """The ``stats:`` block of a run config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The unit of inference (DESIGN.md §7): whole conversations (a cluster bootstrap) by
    # default; "chunk" resamples chunks for layer-1 figures, on request, and says so.
    unit: Literal["conversation", "chunk"] = "conversation"
    bootstrap_resamples: int = Field(default=2000, ge=100)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    dirichlet_concentration: float = Field(default=50.0, gt=0.0)
    dirichlet_draws: int = Field(default=2000, ge=100)
    simplex_step: float = Field(default=0.05, gt=0.0, le=0.5)


# A downstream composite from summed counts: consumer → count name → (resamples,) array.
DownstreamFigure = Callable[[Mapping[str, Mapping[str, FloatArray]]], FloatArray]


@dataclass
class ModelSeries:
    """What one model's figures are computed from, per unit in run order, and the figures
    shown (the headline values every interval must contain)."""

    name: str
    aggregate: Aggregate = "macro"
    # field → chunks × statistic columns (score.statistic_names; zeros where not scored)
    field_stats: dict[str, FloatArray] = field(default_factory=dict)
    # chunks × (sum, count) of the judge composite (count 0: unscored)
    judge: FloatArray | None = None
    # consumer → count name → per-conversation counts, and the composite built from them
    downstream: dict[str, dict[str, FloatArray]] | None = None
    downstream_figure: DownstreamFigure | None = None
    field_scores: dict[str, float] = field(default_factory=dict)
    layer_scores: dict[str, float] = field(default_factory=dict)
    overall: float = 0.0
    overall_weights: dict[str, float] = field(default_factory=dict)  # after leaving out
    # layers the headline left out of the overall (scoring.combine's left_out): every
    # resample leaves them out too
    overall_left_out: dict[str, str] = field(default_factory=dict)


class _Columns:
    """Named blocks of columns of one sums matrix."""

    def __init__(self) -> None:
        self.blocks: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.start: dict[tuple[str, ...], int] = {}
        self.width = 0

    def add(self, key: tuple[str, ...], names: Sequence[str]) -> None:
        self.blocks[key] = tuple(names)
        self.start[key] = self.width
        self.width += len(names)

    def sums(self, matrix: FloatArray, key: tuple[str, ...]) -> dict[str, FloatArray]:
        first = self.start[key]
        return {name: matrix[:, first + i] for i, name in enumerate(self.blocks[key])}


@dataclass
class _Figures:
    """Every figure of every model as a function of one sums matrix (resamples × columns)."""

    series: Sequence[ModelSeries]
    layer_weights: Mapping[str, float]
    field_weights: Mapping[str, float]
    all_fields: Sequence[str]
    columns: _Columns
    # The last sums matrix each model's fields were computed from, and those fields: every
    # figure of a stacked statistic (each field, the extraction layer, the overall) reads the
    # same sums, so the model's fields are computed once per matrix instead of once a figure.
    _fields_of: dict[int, tuple[FloatArray, dict[str, FloatArray]]] = field(
        default_factory=dict, init=False, repr=False
    )

    def fields(self, m: int, sums: FloatArray) -> dict[str, FloatArray]:
        last = self._fields_of.get(m)
        if last is not None and last[0] is sums:
            return last[1]
        model = self.series[m]
        values = {
            f: field_value(f, self.columns.sums(sums, (model.name, f)), model.aggregate)
            for f in model.field_stats
        }
        self._fields_of[m] = (sums, values)
        return values

    def extraction(self, m: int, sums: FloatArray) -> FloatArray:
        model = self.series[m]
        values = self.fields(m, sums)
        present = {
            f: self.columns.sums(sums, (model.name, f))["covered"] > 0 for f in model.field_stats
        }
        return composite_value(values, present, self.field_weights, self.all_fields)

    def judge(self, m: int, sums: FloatArray) -> FloatArray:
        parts = self.columns.sums(sums, (self.series[m].name, "judge"))
        n = parts["judge:n"]
        out: FloatArray = np.where(n > 0, parts["judge:sum"] / np.where(n > 0, n, 1.0), 0.0)
        return out

    def downstream(self, m: int, sums: FloatArray) -> FloatArray:
        model = self.series[m]
        assert model.downstream is not None and model.downstream_figure is not None
        counts = {
            consumer: self.columns.sums(sums, (model.name, "downstream", consumer))
            for consumer in model.downstream
        }
        return model.downstream_figure(counts)

    def field_of(self, m: int, name: str, sums: FloatArray) -> FloatArray:
        return self.fields(m, sums)[name]

    def layer_of(self, m: int, layer: str, sums: FloatArray) -> FloatArray:
        return self.layer(m, layer, sums)

    def layer(self, m: int, layer: str, sums: FloatArray) -> FloatArray:
        if layer == "extraction":
            return self.extraction(m, sums)
        if layer == "judge":
            return self.judge(m, sums)
        return self.downstream(m, sums)

    def overall(self, m: int, sums: FloatArray) -> FloatArray:
        """The overall as the headline computes it (scoring.combine): a layer with no value in
        a resample (downstream with no events drawn) leaves it, the rest renormalised."""
        layers = self.series[m].layer_scores
        gone = self.series[m].overall_left_out
        values = {
            layer: self.layer(m, layer, sums)
            for layer in self.layer_weights
            if layer in layers and layer not in gone
        }
        return combine_arrays(values, self.layer_weights)


def conversation_rows(chunk_conversations: Sequence[str]) -> npt.NDArray[np.intp]:
    """Each chunk's conversation as its place in order of first appearance (the order of
    the statistics' conversations)."""
    position: dict[str, int] = {}
    return np.fromiter(
        (position.setdefault(c, len(position)) for c in chunk_conversations),
        dtype=np.intp,
        count=len(chunk_conversations),
    )


def _conversation_sums(
    chunk_matrix: FloatArray, chunk_conversations: Sequence[str], n_conversations: int
) -> FloatArray:
    out = np.zeros((n_conversations, chunk_matrix.shape[1]), dtype=np.float64)
    np.add.at(out, conversation_rows(chunk_conversations), chunk_matrix)
    return out


def compute_run_stats(
    series: Sequence[ModelSeries],
    layer_weights: Mapping[str, float],
    field_weights: Mapping[str, float],
    options: StatsOptions,
    seed: int,
    *,
    chunk_conversations: Sequence[str],
    all_fields: Sequence[str] | None = None,
    chunk_matrix: FloatArray | None = None,
    conversation_matrix: FloatArray | None = None,
) -> RunStats | None:
    """All run statistics, as the record keeps them (None without models or chunks).
    ``chunk_conversations`` names the conversation of each chunk in run order (the units of
    the cluster bootstrap). ``chunk_matrix``: every model's field statistics and judge columns
    already side by side, in the order laid out here (the series' arrays are views of it),
    instead of a copy of them made here. ``conversation_matrix``: the same columns already
    summed per conversation (conversations in order of first appearance), each summed in
    chunk order as here — all the statistics read when the conversation is the unit, so the
    series' arrays are not read then (only their names and widths) and no chunk matrix need
    exist (issue 34: at 100,000 chunks × 3 models it is ~440 MB)."""
    if not series or not chunk_conversations:
        return None
    fields_order = list(all_fields if all_fields is not None else field_weights)
    conversations = list(dict.fromkeys(chunk_conversations))
    n_chunks = len(chunk_conversations)
    columns = _Columns()
    chunk_blocks: list[FloatArray] = []
    for model in series:
        for f, matrix in model.field_stats.items():
            columns.add((model.name, f), statistic_names(f))
            chunk_blocks.append(matrix)
        if model.judge is not None:
            columns.add((model.name, "judge"), JUDGE_COLUMNS)
            chunk_blocks.append(model.judge)
    chunk_width = columns.width
    by_conversation = options.unit == "conversation"
    k = len(conversations)
    if conversation_matrix is not None:
        if not by_conversation:
            raise ValueError("the chunk as the unit needs the chunk matrix, not its sums")
        if conversation_matrix.shape != (k, chunk_width):
            raise ValueError(
                f"conversation matrix {conversation_matrix.shape}, expected {(k, chunk_width)}"
            )
        chunk_sums = conversation_matrix
    else:
        if chunk_matrix is None:
            chunk_matrix = np.hstack(chunk_blocks) if chunk_blocks else np.zeros((n_chunks, 0))
        elif chunk_matrix.shape != (n_chunks, chunk_width):
            raise ValueError(
                f"chunk matrix {chunk_matrix.shape}, expected {(n_chunks, chunk_width)}"
            )
        chunk_sums = _conversation_sums(chunk_matrix, chunk_conversations, k)
    del chunk_blocks
    conv_blocks = [chunk_sums]
    for model in series:
        for consumer, counts in (model.downstream or {}).items():
            count_names = tuple(counts)
            columns.add((model.name, "downstream", consumer), count_names)
            conv_blocks.append(np.column_stack([counts[c] for c in count_names]))
    conv_matrix = np.hstack(conv_blocks)
    figures = _Figures(series, layer_weights, field_weights, fields_order, columns)
    small = "chunks" if by_conversation is False else "conversations"
    out = RunStats(
        n_chunks=n_chunks,
        n_conversations=k,
        unit=options.unit,
        n_units=k if by_conversation else n_chunks,
        bootstrap_resamples=options.bootstrap_resamples,
        confidence=options.confidence,
        seed=seed,
        interval_method=T_METHOD,
        min_units=MIN_UNITS,
        few_items_threshold=FEW_ITEMS,
        resampling={
            "fields": small,
            "extraction": small,
            "judge": small,
            "downstream": "conversations",
            "overall": "conversations",
        },
        too_few=too_few_note(k) if k < MIN_UNITS else None,
    )
    by_model: dict[str, dict[str, Interval]] = {model.name: {} for model in series}
    few: dict[str, dict[str, int]] = {}
    for model in series:
        for f in model.field_stats:
            n_ref = round(float(columns.sums(chunk_sums, (model.name, f))["n_reference"].sum()))
            if n_ref < FEW_ITEMS:
                few.setdefault(model.name, {})[f] = n_ref
    out.few_items = few
    if by_conversation:
        small_units = conv_matrix
    else:
        assert chunk_matrix is not None  # refused above with conversation sums
        small_units = chunk_matrix[:, :chunk_width]
    # A list field whose matched (or unmatched) items lie in fewer than two units: its spread
    # over units rests on one unit, and no interval is given (stats._inference's doc).
    concentrated: dict[str, dict[str, str]] = {}
    for model in series:
        for f in model.field_stats:
            sums = columns.sums(small_units, (model.name, f))
            if f in few.get(model.name, {}) or "matched" not in sums or f == "confidence":
                continue
            note = concentrated_note(
                *outcome_units(sums["matched"], sums["n_reference"], sums["n_predicted"]),
                unit=options.unit,
            )
            if note is not None:
                concentrated.setdefault(model.name, {})[f] = note
    out.concentrated = concentrated

    def keep(labels: list[tuple[str, str]], resamples: Resamples, n_units: int) -> None:
        if n_units < MIN_UNITS:
            return  # too few units: the figure without an interval (out.too_few)
        for row, (model_name, key) in enumerate(labels):
            name = key.partition(".")[2]
            if name and (
                name in few.get(model_name, {}) or name in concentrated.get(model_name, {})
            ):
                continue  # few items, or outcomes in one unit: no interval the data lacks
            interval = t_interval_of(resamples, row, confidence=options.confidence)
            if interval is not None:
                by_model[model_name][key] = Interval(
                    estimate=interval.estimate,
                    low=interval.low,
                    high=interval.high,
                    method=interval.method,
                )

    resample = {"n_resamples": options.bootstrap_resamples, "seed": seed}
    # The extraction and judge composites over all units.
    chunk_labels: list[tuple[str, str]] = []
    chunk_stats: list[Callable[[FloatArray], FloatArray]] = []
    estimates: list[float] = []
    for m, model in enumerate(series):
        for layer in ("extraction", "judge"):
            if layer in model.layer_scores:
                chunk_labels.append((model.name, layer))
                chunk_stats.append(partial(figures.layer_of, m, layer))
                estimates.append(model.layer_scores[layer])
    if chunk_stats:
        keep(
            chunk_labels,
            resample_statistics(small_units, _stack(chunk_stats), estimates=estimates, **resample),
            small_units.shape[0],
        )
    # Fields: the units that score them (the same units for every field, usually).
    groups: dict[bytes, list[tuple[int, str]]] = {}
    for m, model in enumerate(series):
        for f in model.field_stats:
            mask = columns.sums(small_units, (model.name, f))["covered"] > 0
            groups.setdefault(mask.tobytes(), []).append((m, f))
    for key, members in groups.items():
        mask = np.frombuffer(key, dtype=bool)
        if not mask.any():
            continue
        labels = [(series[m].name, f"extraction.{f}") for m, f in members]
        stats = [partial(figures.field_of, m, f) for m, f in members]
        shown = [series[m].field_scores[f] for m, f in members]
        keep(
            labels,
            resample_statistics(small_units[mask], _stack(stats), estimates=shown, **resample),
            int(mask.sum()),
        )
    # Conversation level: downstream and overall, the same resamples for every model.
    conv_labels: list[tuple[str, str]] = []
    conv_stats: list[Callable[[FloatArray], FloatArray]] = []
    conv_estimates: list[float] = []
    for m, model in enumerate(series):
        if "downstream" in model.layer_scores and model.downstream is not None:
            conv_labels.append((model.name, "downstream"))
            conv_stats.append(partial(figures.downstream, m))
            conv_estimates.append(model.layer_scores["downstream"])
    overall_rows = []
    for m, model in enumerate(series):
        overall_rows.append(len(conv_stats))
        conv_labels.append((model.name, "overall"))
        conv_stats.append(partial(figures.overall, m))
        conv_estimates.append(model.overall)
    overall_statistic = _stack(conv_stats)
    cluster = resample_statistics(
        conv_matrix, overall_statistic, estimates=conv_estimates, **resample
    )
    keep(conv_labels, cluster, k)
    out.intervals = {
        name: dict(sorted(entries.items(), key=lambda kv: _interval_order(kv[0])))
        for name, entries in by_model.items()
    }
    names = [model.name for model in series]
    # Each conversation's own overall (the statistic of its own sums): the sign-flip test's
    # per-conversation differences.
    per_conversation = overall_statistic(conv_matrix)
    for i, j in itertools.combinations(range(len(series)), 2):
        compared = paired_of(
            cluster,
            overall_rows[i],
            overall_rows[j],
            per_conversation[overall_rows[i]] - per_conversation[overall_rows[j]],
            confidence=options.confidence,
            seed=seed,
        )
        out.paired_differences[f"{names[i]}|{names[j]}"] = PairedDifference(
            difference=compared.difference,
            low=compared.low,
            high=compared.high,
            p_value=compared.p_value,
            test=compared.test,
            n_units=compared.k,
            note=compared.note,
        )
    probs = rank_probabilities_from(cluster, overall_rows)
    out.rank_probabilities = {model: [float(p) for p in probs[m]] for m, model in enumerate(names)}
    out.weight_sensitivity = _sensitivity(
        series,
        [x for x in layer_weights if all(x in s.layer_scores for s in series)],
        layer_weights,
        field_weights,
        options,
        seed,
    )
    return out


def _stack(
    stats: Sequence[Callable[[FloatArray], FloatArray]],
) -> Callable[[FloatArray], FloatArray]:
    def statistic(sums: FloatArray) -> FloatArray:
        return np.vstack([np.broadcast_to(f(sums), (sums.shape[0],)) for f in stats])

    return statistic


def _interval_order(key: str) -> tuple[int, str]:
    """overall, then the layers, then the fields (the order readers expect)."""
    rank = {"overall": 0, "extraction": 1, "judge": 2, "downstream": 3}
    return (rank.get(key, 4), key)


def _sensitivity(
    series: Sequence[ModelSeries],
    layers: list[str],
    layer_weights: Mapping[str, float],
    field_weights: Mapping[str, float],
    options: StatsOptions,
    seed: int,
) -> WeightSensitivity:
    names = [s.name for s in series]
    result = WeightSensitivity()
    if len(names) < 2:
        return result
    fields = [f for f in field_weights if all(f in s.field_scores for s in series)]
    if fields and all("extraction" in s.layer_scores for s in series):
        scores = np.array([[s.field_scores[f] for f in fields] for s in series])
        result.fields = _sensitivity_record(
            dirichlet_sensitivity(
                scores,
                [field_weights[f] for f in fields],
                names,
                concentration=options.dirichlet_concentration,
                n_draws=options.dirichlet_draws,
                seed=seed,
            )
        )
    if len(layers) >= 2:
        scores = np.array([[s.layer_scores[layer] for layer in layers] for s in series])
        weights = [layer_weights[layer] for layer in layers]
        result.layers = _sensitivity_record(
            dirichlet_sensitivity(
                scores,
                weights,
                names,
                concentration=options.dirichlet_concentration,
                n_draws=options.dirichlet_draws,
                seed=seed,
            )
        )
        grid = simplex_grid(scores, layers, weights, step=options.simplex_step)
        result.layer_simplex = LayerSimplex(
            layers=grid["layers"],
            step=grid["step"],
            configured_ranking=[names[i] for i in grid["configured_ranking"]],
            points=[
                SimplexPoint(
                    weights=point["weights"],
                    ranking=[names[i] for i in point["ranking"]],
                    holds=point["holds"],
                )
                for point in grid["points"]
            ],
            share_holding=grid["share_holding"],
        )
    return result


def _sensitivity_record(found: DirichletSensitivity) -> Sensitivity:
    return Sensitivity(
        models=found.models,
        configured_ranking=found.configured_ranking,
        kendall_tau_mean=found.tau_mean,
        kendall_tau_quantiles=found.tau_quantiles,
        p_same_ranking=found.p_same_ranking,
        swap_probability=found.swap_probability,
        n_draws=found.n_draws,
        concentration=found.concentration,
    )


PAIR_SEPARATOR = "|"  # a row about two models names them "a|b" in the model column


def stats_rows(stats: RunStats | None, human_gold: HumanGold | None = None) -> list[Row]:
    """Every statistic of the run as run-level rows of the score table, so the table alone
    answers what run.json does: interval bounds (ci_low / ci_high), rank probabilities, paired
    differences and swap probabilities (model column "a|b"), Kendall's τ and P(same ranking)
    of the weight sensitivity (model column "*"), repeat variance and human-gold scores."""
    rows: list[Row] = []
    if stats is not None:
        rows += _figure_rows(stats)
    if human_gold is not None:
        sides = {"__reference__": human_gold.reference, **human_gold.models}
        for model, result in sides.items():
            rows.append((model, RUN_LEVEL, "human_gold", "composite", "score", result.composite))
            for fname, value in result.fields.items():
                rows.append((model, RUN_LEVEL, "human_gold", fname, "score", float(value)))
    return rows


def _figure_rows(stats: RunStats) -> list[Row]:
    rows: list[Row] = []
    for model, entries in stats.intervals.items():
        for key, interval in sorted(entries.items()):
            layer, _, fname = key.partition(".")
            fname = fname or "composite"
            rows.append((model, RUN_LEVEL, layer, fname, "ci_low", float(interval.low)))
            rows.append((model, RUN_LEVEL, layer, fname, "ci_high", float(interval.high)))
    for model, probs in stats.rank_probabilities.items():
        for rank, p in enumerate(probs, start=1):
            rows.append((model, RUN_LEVEL, "overall", "rank_probability", f"rank_{rank}", p))
    for pair, diff in stats.paired_differences.items():
        for component, got in (
            ("difference", diff.difference),
            ("low", diff.low),
            ("high", diff.high),
            ("p_value", diff.p_value),
        ):
            if got is None:
                continue  # too few conversations: no interval
            rows.append((pair, RUN_LEVEL, "overall", "paired_difference", component, float(got)))
    sensitivity = stats.weight_sensitivity
    for kind, result in (("fields", sensitivity.fields), ("layers", sensitivity.layers)):
        if result is None:
            continue
        rows.append(("*", RUN_LEVEL, "weights", kind, "kendall_tau_mean", result.kendall_tau_mean))
        rows.append(("*", RUN_LEVEL, "weights", kind, "p_same_ranking", result.p_same_ranking))
        for pair, p in result.swap_probability.items():
            rows.append((pair, RUN_LEVEL, "weights", kind, "swap_probability", float(p)))
    if sensitivity.layer_simplex is not None:
        share = sensitivity.layer_simplex.share_holding
        rows.append(("*", RUN_LEVEL, "weights", "layer_simplex", "share_holding", share))
    for model, variance in stats.repeat_variance.items():
        for component, value in (
            ("mean", variance.mean),
            ("chunk_sd_mean", variance.chunk_sd_mean),
            ("sampling_share", variance.sampling_share),
        ):
            rows.append(
                (model, RUN_LEVEL, "extraction", "repeat_variance", component, float(value))
            )
    return rows
