"""Do the intervals hold? Empirical coverage on subsets of a finished run (issue 27).

A finished run is taken as the population: its figures are the truth. R subsets of ``size``
whole conversations are drawn from it (without replacement within a subset); on each the
figures and their intervals are recomputed exactly as a run of those conversations would
compute them (:func:`chatledger.runs._stats.compute_run_stats`, from the per-unit statistics
the run left in its ``stages/`` folder), and the share of intervals that contain the
population's figure is the empirical coverage, shown with a Wilson interval beside the nominal
level. A figure without an interval on a subset (too few conversations, a field with few
items, a figure with no value there) is counted apart, never as covered.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from chatledger.core import InputError
from chatledger.record import ConversationRun, ModelResult
from chatledger.runs._paired import load_run_side, read_conversation_run
from chatledger.runs._stats import FloatArray, ModelSeries, StatsOptions, compute_run_stats
from chatledger.scoring import combine, composite_value, field_value, statistic_names
from chatledger.stats import wilson_interval

# Conversations (chunks with draw="chunk") in a subset when no size is given and the run has
# more than this; a smaller run gets subsets of all but one of its conversations.
DEFAULT_SIZE = 8

LAYER_ORDER = ("overall", "extraction", "judge", "downstream")


@dataclass
class FigureCoverage:
    """How often one figure's intervals contained the population's figure."""

    model: str
    figure: str  # overall, a layer, or extraction.<field>
    truth: float
    covered: int = 0
    with_interval: int = 0
    without: dict[str, int] = field(default_factory=dict)  # reason → subsets
    widths: list[float] = field(default_factory=list)

    @property
    def coverage(self) -> float | None:
        return self.covered / self.with_interval if self.with_interval else None

    def to_dict(self, confidence: float) -> dict[str, Any]:
        low, high = (
            wilson_interval(self.covered, self.with_interval, confidence=confidence)
            if self.with_interval
            else (None, None)
        )
        return {
            "model": self.model,
            "figure": self.figure,
            "truth": self.truth,
            "coverage": self.coverage,
            "coverage_low": low,
            "coverage_high": high,
            "covered": self.covered,
            "with_interval": self.with_interval,
            "without_interval": dict(self.without),
            "mean_width": float(np.mean(self.widths)) if self.widths else None,
        }


@dataclass
class CoverageResult:
    run_dir: str
    nominal: float
    subsets: int
    size: int
    unit: str
    n_conversations: int
    seed: int
    resamples: int
    figures: list[FigureCoverage]
    draw: str = "conversation"  # what a subset is made of: whole conversations, or chunks
    n_chunks: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_dir": self.run_dir,
            "nominal": self.nominal,
            "subsets": self.subsets,
            "size": self.size,
            "unit": self.unit,
            "draw": self.draw,
            "n_conversations": self.n_conversations,
            "n_chunks": self.n_chunks,
            "seed": self.seed,
            "resamples": self.resamples,
            "distinct_subsets": self.distinct_subsets,
            "figures": [f.to_dict(self.nominal) for f in self.figures],
        }

    @property
    def distinct_subsets(self) -> int:
        """How many different subsets of this size the run has (C(population, size))."""
        population = self.n_conversations if self.draw == "conversation" else self.n_chunks
        return math.comb(population or 0, self.size)

    @property
    def repeats_note(self) -> str | None:
        """Said when the draws must repeat subsets: their coverages are then not independent
        trials, and the Wilson interval is narrower than what is known."""
        if self.distinct_subsets >= self.subsets:
            return None
        return (
            f"the run has only {self.distinct_subsets} different subsets of {self.size}: the "
            f"{self.subsets} draws repeat them, so the Wilson intervals overstate what is known "
            "(a run with more conversations tells more)"
        )


def run_coverage(
    run_dir: Path,
    *,
    subsets: int = 200,
    size: int | None = None,
    seed: int = 0,
    resamples: int = 500,
    unit: str = "conversation",
    models: Sequence[str] | None = None,
    draw: str | None = None,
) -> CoverageResult:
    """Empirical coverage of the intervals of every figure of every challenger (or of
    ``models``) over ``subsets`` random subsets of ``size`` whole conversations — or, with
    ``draw="chunk"`` (the default when ``unit="chunk"``), of ``size`` chunks drawn at random
    from all the run's chunks, as a user's sample of loose chunks would be. ``unit`` is how
    each subset's intervals resample (the run's ``stats: {unit: …}``). A subset of chunks
    that splits a conversation has no downstream figure (consumers read whole
    conversations): its downstream, and an overall that needs it, are counted apart.
    ``size=None`` fits the run: :data:`DEFAULT_SIZE`, or one fewer than the run has."""
    draw = draw or unit
    if draw not in ("conversation", "chunk"):
        raise InputError(f"draw must be conversation or chunk, not {draw!r}", field="draw")
    record = read_conversation_run(run_dir, "population")
    conversations = list(dict.fromkeys(record.chunk_conversations))
    n_chunks = len(record.chunk_conversations)
    population = len(conversations) if draw == "conversation" else n_chunks
    size = _subset_size(size, population, draw)
    chosen = [m for m in record.models if models is None or m.name in models]
    if not chosen:
        raise InputError(f"no model named {', '.join(models or [])} in the run", path=run_dir)
    confidence = record.stats.confidence if record.stats is not None else 0.95
    options = StatsOptions(
        unit="chunk" if unit == "chunk" else "conversation",
        bootstrap_resamples=resamples,
        confidence=confidence,
        dirichlet_draws=100,
    )
    chunk_conv = np.array(record.chunk_conversations)
    position = {c: i for i, c in enumerate(conversations)}
    draws = draw_subsets(record.chunk_conversations, draw, size, subsets, seed)
    out: dict[tuple[str, str], FigureCoverage] = {}
    for model in chosen:
        side = load_run_side(run_dir, record, model)
        truths = _truths(model)
        for key, truth in truths.items():
            out[(model.name, key)] = FigureCoverage(model.name, key, truth)
        for r, (mask, whole) in enumerate(draws):
            sub_convs = [str(c) for c in chunk_conv[mask]]
            order = [position[c] for c in dict.fromkeys(sub_convs)]
            sub = _subset_series(side.series, mask, order, record, model.left_out, whole=whole)
            if sub is None:
                continue
            stats = compute_run_stats(
                [sub],
                record.layer_weights_used,
                record.field_weights,
                options,
                seed + r,
                chunk_conversations=sub_convs,
                all_fields=record.scored_fields or list(record.field_weights),
            )
            intervals = stats.intervals.get(model.name, {}) if stats else {}
            few = stats.few_items.get(model.name, {}) if stats else {}
            concentrated = stats.concentrated.get(model.name, {}) if stats else {}
            too_few = stats is not None and stats.too_few is not None
            # A layer the population has but this subset has no value for (downstream with no
            # event in these conversations) leaves the subset's overall: a different figure
            # from the population's, so it is counted apart, not as a miss.
            gone = [
                x for x in model.layers if x not in sub.layer_scores and x not in model.left_out
            ]
            for key, tally in ((k, out[(model.name, k)]) for k in truths):
                shown = _shown(sub, key)
                if shown is None:
                    reason = (
                        "conversations split" if key == "downstream" and not whole else ("no value")
                    )
                    tally.without[reason] = tally.without.get(reason, 0) + 1
                    continue
                if key == "overall" and gone:
                    reason = f"{', '.join(gone)} left out"
                    tally.without[reason] = tally.without.get(reason, 0) + 1
                    continue
                interval = intervals.get(key)
                if interval is None:
                    name = key.partition(".")[2]
                    reason = (
                        "few items"
                        if name in few
                        else "matches in one unit"
                        if name in concentrated
                        else "too few"
                        if too_few
                        else "none"
                    )
                    tally.without[reason] = tally.without.get(reason, 0) + 1
                    continue
                tally.with_interval += 1
                tally.widths.append(interval.high - interval.low)
                if interval.low - 1e-12 <= tally.truth <= interval.high + 1e-12:
                    tally.covered += 1
    figures = sorted(out.values(), key=lambda f: (f.model, _order(f.figure)))
    return CoverageResult(
        str(run_dir),
        confidence,
        subsets,
        size,
        options.unit,
        len(conversations),
        seed,
        resamples,
        figures,
        draw,
        n_chunks,
    )


def _subset_size(size: int | None, population: int, draw: str) -> int:
    """The size asked for, or the default that fits the run; an error naming ``--size``, the
    run's count and a size that works when there is none."""
    largest = population - 1
    if population < 3:
        raise InputError(
            f"the run has {population} {draw}(s): a subset holds at least 2 and fewer than the "
            "run, so there is none to draw",
            field="--size",
        )
    if size is None:
        return min(DEFAULT_SIZE, largest)
    if not 2 <= size <= largest:
        raise InputError(
            f"a subset of {size} {draw}s from a run of {population}: choose --size from 2 to "
            f"{largest} (e.g. --size {min(DEFAULT_SIZE, largest)})",
            field="--size",
        )
    return size


def draw_subsets(
    chunk_conversations: Sequence[str], draw: str, size: int, subsets: int, seed: int
) -> list[tuple[npt.NDArray[np.bool_], bool]]:
    """``subsets`` random subsets of the run's chunks, each as (mask over the chunks, whether
    every conversation it touches is whole): ``size`` distinct conversations with all their
    chunks (``draw="conversation"``), or ``size`` distinct chunks drawn from all of them
    (``draw="chunk"``), seeded."""
    conversations = list(dict.fromkeys(chunk_conversations))
    chunk_conv = np.array(chunk_conversations)
    population = len(conversations) if draw == "conversation" else len(chunk_conversations)
    rng = np.random.default_rng(seed)
    out: list[tuple[npt.NDArray[np.bool_], bool]] = []
    for _ in range(subsets):
        picked = np.sort(rng.choice(population, size=size, replace=False))
        if draw == "conversation":
            names = {conversations[i] for i in picked}
            mask = np.array([c in names for c in chunk_conversations])
            out.append((mask, True))
            continue
        mask = np.zeros(len(chunk_conversations), dtype=bool)
        mask[picked] = True
        held = set(chunk_conv[mask].tolist())
        out.append((mask, all(mask[chunk_conv == c].all() for c in held)))
    return out


def _order(key: str) -> tuple[int, str]:
    return (LAYER_ORDER.index(key), key) if key in LAYER_ORDER else (len(LAYER_ORDER), key)


def _truths(model: ModelResult) -> dict[str, float]:
    truths = {"overall": model.overall, **model.layers}
    truths.update({f"extraction.{f}": v for f, v in model.fields.items()})
    return truths


def _shown(series: ModelSeries, key: str) -> float | None:
    if key == "overall":
        return series.overall
    if key.startswith("extraction."):
        return series.field_scores.get(key.partition(".")[2])
    return series.layer_scores.get(key)


def _subset_series(
    series: ModelSeries,
    mask: np.ndarray,
    order: Sequence[int],
    record: ConversationRun,
    left_out: Mapping[str, str],
    *,
    whole: bool = True,
) -> ModelSeries | None:
    """The series of the chunks in ``mask`` (conversations ``order``), with the figures a run
    of those chunks shows, computed with the run's own functions. Unless every conversation
    is ``whole`` (all its chunks in the mask) there is no downstream figure: the stored counts
    are per conversation."""
    sub = ModelSeries(name=series.name, aggregate=series.aggregate)
    sub.field_stats = {f: m[mask] for f, m in series.field_stats.items() if m[mask][:, 0].sum() > 0}
    sub.judge = series.judge[mask] if series.judge is not None else None
    if series.downstream is not None and whole:
        rows = np.asarray(order, dtype=np.intp)
        sub.downstream = {
            c: {k: v[rows] for k, v in counts.items()} for c, counts in series.downstream.items()
        }
        sub.downstream_figure = series.downstream_figure
    fields = {
        f: float(field_value(f, _sums(m, statistic_names(f)), sub.aggregate)[0])
        for f, m in sub.field_stats.items()
    }
    sub.field_scores = fields
    layers: dict[str, float] = {}
    if sub.field_stats:
        all_fields = record.scored_fields or list(record.field_weights)
        values = {f: np.array([v]) for f, v in fields.items()}
        present = {f: np.array([True]) for f in fields}
        layers["extraction"] = float(
            composite_value(values, present, record.field_weights, all_fields)[0]
        )
    if sub.judge is not None and sub.judge[:, 1].sum() > 0:
        layers["judge"] = float(sub.judge[:, 0].sum() / sub.judge[:, 1].sum())
    if sub.downstream is not None and sub.downstream_figure is not None:
        summed = {
            c: {k: np.array([v.sum()]) for k, v in counts.items()}
            for c, counts in sub.downstream.items()
        }
        value = float(np.asarray(sub.downstream_figure(summed)).reshape(-1)[0])
        if math.isnan(value):
            sub.downstream = None  # no events in these conversations: left out
        else:
            layers["downstream"] = value
    sub.layer_scores = layers
    # What the population's overall left out for a reason (a judge that failed its audit)
    # each subset leaves out too: the same figure.
    reasons = {k: v for k, v in left_out.items() if k in layers}
    combined = combine(layers, record.layer_weights_used, reasons)
    if combined.value is None:
        return None
    sub.overall = combined.value
    sub.overall_left_out = dict(reasons)
    return sub


def _sums(matrix: FloatArray, names: Sequence[str]) -> Mapping[str, FloatArray]:
    totals = matrix.sum(axis=0)
    return {name: np.array([totals[i]]) for i, name in enumerate(names)}


@dataclass
class PPICoverage:
    """Hidings of human gold on a run scored against it: how often the prediction-powered
    interval and the human-only one on the meetings kept contain the full-gold figure."""

    run_dir: str
    model: str
    predictor: str  # the human-free figure on every conversation (layers.judge)
    nominal: float
    n_conversations: int
    kept: int
    hidings: int
    seed: int
    truth: float  # the full-gold figure: the mean over conversations of the human figure
    correlation: float  # across conversations, of the human figure and the predictor
    ppi: FigureCoverage
    human: FigureCoverage
    ratios: list[float] = field(default_factory=list)  # PPI width / human-only width
    lambdas: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        ratios = np.array(self.ratios)
        return {
            "run_dir": self.run_dir,
            "model": self.model,
            "predictor": self.predictor,
            "nominal": self.nominal,
            "conversations": self.n_conversations,
            "kept": self.kept,
            "hidings": self.hidings,
            "seed": self.seed,
            "full_gold_figure": self.truth,
            "correlation": self.correlation,
            "ppi": self.ppi.to_dict(self.nominal),
            "human": self.human.to_dict(self.nominal),
            "median_width": {
                "ppi": float(np.median(self.ppi.widths)),
                "human": float(np.median(self.human.widths)),
            },
            "median_width_ratio": float(np.median(ratios)),
            "max_width_ratio": float(ratios.max()),
            "narrower_share": float(np.mean(ratios < 1.0 - 1e-12)),
            "wider_share": float(np.mean(ratios > 1.0 + 1e-12)),
            "median_lambda": float(np.median(self.lambdas)),
        }


def ppi_coverage(
    y: FloatArray,
    f: FloatArray,
    *,
    keep: int,
    hidings: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    model: str = "",
    predictor: str = "",
    run_dir: str = "",
    student: bool = True,
) -> PPICoverage:
    """``hidings`` seeded draws of ``keep`` conversations whose human figure ``y`` is kept (the
    rest hidden), drawn as :func:`run_coverage` draws its subsets; on each, the Student PPI
    interval (``y`` on those kept, the predictor ``f`` on every conversation) and the human-only
    interval on the same kept ones, each checked against the mean of ``y`` over all
    (``student=False``: normal quantiles and ppi-python's λ, as the package computes them)."""
    from chatledger.stats import ppi_mean

    y = np.asarray(y, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    n = y.size
    if f.size != n or not np.all(np.isfinite(y)) or not np.all(np.isfinite(f)):
        raise InputError("one finite human figure and one predictor value per conversation")
    if not 2 <= keep < n:
        raise InputError(f"keep 2 ≤ k < {n} conversations' gold", field="keep")
    truth = float(y.mean())
    result = PPICoverage(
        run_dir=run_dir,
        model=model,
        predictor=predictor,
        nominal=confidence,
        n_conversations=n,
        kept=keep,
        hidings=hidings,
        seed=seed,
        truth=truth,
        correlation=float(np.corrcoef(y, f)[0, 1]) if np.std(f) > 0 else 0.0,
        ppi=FigureCoverage(model, "ppi", truth),
        human=FigureCoverage(model, "humans only", truth),
    )
    rng = np.random.default_rng(seed)
    for _ in range(hidings):
        kept = np.zeros(n, dtype=bool)
        kept[np.sort(rng.choice(n, size=keep, replace=False))] = True
        est = ppi_mean(y[kept], f[kept], f[~kept], alpha=1.0 - confidence, student=student)
        for tally, (low, high) in (
            (result.ppi, (est.low, est.high)),
            (result.human, (est.human_low, est.human_high)),
        ):
            tally.with_interval += 1
            tally.widths.append(high - low)
            tally.covered += low - 1e-12 <= truth <= high + 1e-12
        result.ratios.append(est.width / est.human_width if est.human_width > 0 else 1.0)
        result.lambdas.append(est.lam)
    return result


def run_ppi_coverage(
    run_dir: Path,
    *,
    model: str,
    keep: int,
    predictor: str | None = None,
    hidings: int = 200,
    seed: int = 0,
    student: bool = True,
) -> PPICoverage:
    """:func:`ppi_coverage` on a finished run whose every conversation has human gold: per
    conversation the model's extraction agreement with the humans (``y``) and a human-free
    figure (``f``). Scored against the gold itself, ``f`` is a judge layer (``predictor``,
    default ``judge``); scored against a reference model with the gold beside it
    (``human_gold:``), ``f`` defaults to the extraction agreement with that model — what a run
    with ``human_gold: {ppi: true}`` leans on."""
    from chatledger.runs._ppi import Predictor, human_figures, predictor_figures
    from chatledger.runs._sequential import conversation_figures

    record = read_conversation_run(run_dir, "population")
    gold = next((i.path for i in record.inputs if i.role == "gold"), None)
    if record.reference_is_human:
        predictor = predictor or "judge"
        if predictor == "extraction":
            raise InputError(
                "the predictor must be a layer other than extraction", field="predictor"
            )
    elif gold is None:
        raise InputError(
            "the run has no human gold: hide gold only from a run scored against it "
            "(reference or human_gold:)",
            path=run_dir,
        )
    else:
        predictor = predictor or "extraction"
    figure = f"layers.{predictor}"
    if record.reference_is_human or gold is None:
        per = conversation_figures(run_dir, model, model, ["layers.extraction", figure])
        y, f = per["layers.extraction"].candidate, per[figure].candidate
    else:
        source = next((i.path for i in record.inputs if i.role == f"challenger:{model}"), None)
        chunks = next(i.path for i in record.inputs if i.role == "chunks")
        if source is None:
            raise InputError(f"no challenger {model!r} in the run", path=run_dir, field="model")
        if predictor != "extraction" and predictor != "judge":
            raise InputError(
                f"the predictor is extraction or judge, not {predictor!r}", field="predictor"
            )
        layer: Predictor = "extraction" if predictor == "extraction" else "judge"
        conversations, f = predictor_figures(run_dir, model, layer, Path(gold))
        humans = human_figures(Path(gold), Path(source), Path(chunks))
        missing = [c for c in conversations if c not in humans]
        if missing:
            raise InputError(
                f"hiding gold needs gold on every conversation: {len(missing)} of "
                f"{len(conversations)} have none (e.g. {missing[0]})",
                path=Path(gold),
            )
        y = np.array([humans[c] for c in conversations], dtype=np.float64)
    known = np.isfinite(y) & np.isfinite(f)
    confidence = record.stats.confidence if record.stats is not None else 0.95
    return ppi_coverage(
        y[known],
        f[known],
        keep=keep,
        hidings=hidings,
        seed=seed,
        confidence=confidence,
        model=model,
        predictor=figure,
        run_dir=str(run_dir),
        student=student,
    )
