"""Agreement between two annotators' gold files, per field, with bootstrap intervals.

**What is compared.** The chunks both files annotate (and the chunks file holds, when given);
per chunk only the fields *both* lines cover (the intersection of ``covers``; a line without
``covers`` covers every field). Lines with or without the annotation page's ``annotation``
block are read alike (as runs read human gold).

**Field agreement** is the field's layer-1 scorer (:func:`chatledger.scoring.score_records`,
the one matching implementation), run both ways: A as the reference and B as the challenger,
and B against A. The figure is the mean of the two directions, so it does not depend on
which file comes first. Where a scorer is symmetric the mean *is* either direction: F1 of the
one-to-one matching (which maximises the number of pairs the same way both ways), and what the
matching itself maximises (entity credit, phase IoU). Two kinds are not: ``confidence`` grades
the challenger's stated confidences against the reference's items, and a component over
matched pairs that the matching does not optimise (claims' polarity and subject, action items'
owner, decisions' evidence, Q/A answers) depends on which of several equally good pairings the
matching returns (duplicate or equally similar texts), which depends on the direction
(``symmetric: false``). Per field both aggregates are shown; the headline is micro (pooled
items) as for human gold in runs (:func:`chatledger.scoring.resolve_aggregate`), unless the
config says otherwise.

**Krippendorff's α** (nominal) on the enumerated parts. A unit is an item *both* annotators
wrote, so α measures agreement on the label given that both saw the item; an item only one
wrote is a unit with the other rater missing (it enters the reliability data as NaN, and
Krippendorff's α, which only uses pairable values, leaves it out — it is counted in
``only_a`` / ``only_b``, and the field agreement already charges it). How items pair:

- ``claims.polarity``: the layer-1 claim matching (text, optimal, at the text cut-off);
- ``emotional_arc.mood`` and ``emotional_arc.trajectory``: the chunk's arc (its opening and
  closing moods are two units of ``mood``);
- ``conversation_phases.phase`` and ``negotiation_patterns.pattern``: the layer-1 matching of
  these fields pairs only items with the same label (α would be 1 by construction), so here
  they pair without looking at the label: phases by the overlap of their message ranges (the
  most overlapping pairs, then the largest total IoU), moves by their text (the layer-1 text
  matcher and cut-off; moves without text stay unpaired); the same label only breaks ties.

Each chunk is paired in one canonical direction (the two extractions in a fixed order), so
swapping the files gives the same units, each with its two labels swapped.

α is undefined (``None``) without two pairable units of at least two distinct labels.

**Intervals** resample chunks (seeded): BCa for field agreements, each resample's figure the
same function of the resampled chunks' additive statistics as the headline
(:func:`chatledger.stats.resample_statistics`); percentile for α, recomputed per resample from
the resampled chunks' coincidence matrices (resamples where α is undefined are left out and
counted).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

import krippendorff
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from chatledger.annotate._judge_agreement import AgreementInterval, JudgeAgreement
from chatledger.core import (
    DEFAULT_VOCABULARY,
    FIELDS_V3,
    Chunk,
    ExtractionRecord,
    ExtractionV3,
    InputError,
    RecordStatus,
)
from chatledger.corpus import ExtractionFile, read_chunks, read_extractions
from chatledger.matching import IndexArrayPair, assign, get_matcher, preprocess
from chatledger.scoring import (
    Aggregate,
    ChunkContext,
    ChunkResult,
    ScoreReport,
    ScoringConfig,
    ScoringContext,
    chunk_statistics,
    field_value,
    range_iou,
    resolve_aggregate,
    score_records,
    statistic_names,
)
from chatledger.stats import Resamples, intervals_from, resample_statistics

FloatArray = npt.NDArray[np.float64]
Unit = tuple[str | None, str | None]  # (A's label, B's label); None: that side has no item

AGREEMENT_VERSION = 1
# Fields whose scorer can give a different value with the sides swapped, and why. The
# matching maximises the number of pairs (then their similarity) the same way in both
# directions, so F1 and whatever the matching itself maximises (entity credit, phase IoU) are
# symmetric; a component over matched pairs that the matching does not optimise depends on
# which of several equally good pairings it returns (duplicate or equally similar texts), and
# that choice depends on the direction (tests/test_annotate_agreement.py finds such cases).
_TIES = (
    "not symmetric when equally good pairings differ in {what}: the two directions can "
    "differ; the mean of both"
)
ASYMMETRIC: Mapping[str, str] = {
    "decisions": _TIES.format(what="evidence"),
    "action_items": _TIES.format(what="owner"),
    "claims": _TIES.format(what="polarity or subject"),
    "qa_pairs": _TIES.format(what="answer"),
    "confidence": (
        "not symmetric: grades the challenger's stated confidences against the reference's "
        "items; the mean of both directions"
    ),
}


class FieldAgreement(BaseModel):
    """One field: the layer-1 scorer as the agreement of the two annotators."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunks: int  # chunks where both cover the field
    items_a: int
    items_b: int
    # Items paired by the matching (entities: their credit); None for summary and
    # emotional_arc, which are compared whole.
    matched: float | None
    both_empty: int  # chunks where neither wrote an item
    symmetric: bool
    agreement: float  # under the report's aggregate: the mean of both directions
    macro: float
    micro: float
    a_vs_b: float  # A as the reference, under the report's aggregate
    b_vs_a: float
    # Pooled, A as the reference: precision (share of B's items A also has), recall (share
    # of A's items B also has), f1 and the pooled pair components.
    micro_parts: dict[str, float]
    intervals: dict[str, AgreementInterval]  # "macro", "micro"
    note: str | None = None


class LabelAgreement(BaseModel):
    """Krippendorff's α (nominal) of one enumerated part (see the module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    attribute: str
    chunks: int  # chunks where both cover the field
    units: int  # items both annotators labelled (pairable units)
    agreeing: int  # of those, with the same label
    only_a: int  # items only A wrote (a unit with B missing)
    only_b: int
    labels: list[str]  # the labels either annotator gave (vocabulary order)
    alpha: float | None
    interval: AgreementInterval | None
    undefined_resamples: int  # resamples where α is undefined (left out of the interval)
    pairing: str


class AgreementReport(BaseModel):
    """Agreement of two annotators' gold files (see the module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1  # AGREEMENT_VERSION
    a: str
    b: str
    annotator_a: str
    annotator_b: str
    chunks_file: str | None
    chunks: int  # chunks both files annotate
    only_a: list[str]  # chunk ids only A annotates
    only_b: list[str]
    unknown_chunks: list[str]  # chunk ids the chunks file does not hold (not compared)
    aggregate: Literal["macro", "micro"]
    matcher: str
    n_resamples: int
    confidence: float
    seed: int
    fields: dict[str, FieldAgreement]
    alpha: dict[str, LabelAgreement]
    problems: list[str] = Field(default_factory=list)
    judges: list[JudgeAgreement] = Field(default_factory=list)


def annotator_agreement(
    a: Path,
    b: Path,
    *,
    chunks: Path | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    config: ScoringConfig | None = None,
) -> AgreementReport:
    """Agreement of the gold files ``a`` and ``b`` (see the module doc).

    A line of either file that does not validate, a repeated chunk, a chunks file that
    does not read, or files with no chunk and covered field in common are user mistakes:
    :class:`InputError` naming the file (and line and field).
    """
    file_a, file_b = read_gold(Path(a)), read_gold(Path(b))
    chunk_list = read_chunks(chunks) if chunks is not None else None
    return records_agreement(
        file_a.records,
        file_b.records,
        chunk_list,
        config=config,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        names=(str(a), str(b), file_a.model, file_b.model),
        chunks_file=str(chunks) if chunks is not None else None,
    )


def read_gold(path: Path) -> ExtractionFile:
    """An annotator's file, read as runs read gold; its first problem is an error."""
    file = read_extractions(path)
    if file.problems:
        first = file.problems[0]
        raise InputError(first.message, path=first.path, line=first.line, field=first.field)
    if not file.records:
        raise InputError("no gold lines in file", path=path)
    return file


def covered(record: ExtractionRecord) -> frozenset[str]:
    """The fields a gold line covers (every field without ``covers``)."""
    return frozenset(record.covers if record.covers is not None else FIELDS_V3)


def records_agreement(
    records_a: Mapping[str, ExtractionRecord],
    records_b: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk] | None = None,
    *,
    config: ScoringConfig | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    names: tuple[str, str, str, str] = ("A", "B", "A", "B"),
    chunks_file: str | None = None,
) -> AgreementReport:
    """:func:`annotator_agreement` of records in memory; ``names``: (file A, file B,
    annotator A, annotator B)."""
    config = config or ScoringConfig.default()
    by_id = {c.chunk_id: c for c in chunks} if chunks is not None else None
    known = list(by_id) if by_id is not None else list(records_a)
    unknown = (
        [c for c in dict.fromkeys([*records_a, *records_b]) if c not in by_id]
        if by_id is not None
        else []
    )
    common = [c for c in known if c in records_a and c in records_b]
    only_a = [c for c in known if c in records_a and c not in records_b]
    only_b = [c for c in (by_id or records_b) if c in records_b and c not in records_a]
    if not common:
        raise InputError(f"{names[0]} and {names[1]} annotate no chunk in common", path=names[1])
    shared: dict[str, tuple[str, ...]] = {}
    for cid in common:
        both = covered(records_a[cid]) & covered(records_b[cid])
        shared[cid] = tuple(f for f in FIELDS_V3 if f in both and f in config.fields)
    if not any(shared.values()):
        raise InputError(
            f"{names[0]} and {names[1]} cover no field in common on their {len(common)} "
            "common chunk(s)",
            path=names[1],
        )
    ref_a = {c: replace(records_a[c], covers=shared[c]) for c in common}
    ref_b = {c: replace(records_b[c], covers=shared[c]) for c in common}
    scored_chunks = [by_id[c] for c in common] if by_id is not None else None
    ab = score_records(ref_a, ref_b, scored_chunks, config, reference_model=names[2])
    ba = score_records(ref_b, ref_a, scored_chunks, config, reference_model=names[3])
    aggregate = resolve_aggregate(config.aggregate, True)
    fields = _field_agreements(ab, ba, aggregate, config, n_resamples, confidence, seed)
    alpha = _label_agreements(
        common, ref_a, ref_b, shared, by_id, config, n_resamples, confidence, seed
    )
    problems = list(dict.fromkeys(str(p) for p in (*ab.problems, *ba.problems)))
    return AgreementReport(
        a=names[0],
        b=names[1],
        annotator_a=names[2],
        annotator_b=names[3],
        chunks_file=chunks_file,
        chunks=len(common),
        only_a=only_a,
        only_b=only_b,
        unknown_chunks=unknown,
        aggregate=aggregate,
        matcher=config.matcher,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        fields=fields,
        alpha=alpha,
        problems=problems,
    )


# ---- field agreement -----------------------------------------------------------------------


def _field_agreements(
    ab: ScoreReport,
    ba: ScoreReport,
    aggregate: Aggregate,
    config: ScoringConfig,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, FieldAgreement]:
    reverse = {r.chunk_id: r for r in ba.chunks}
    out: dict[str, FieldAgreement] = {}
    for name in config.fields:
        forward, backward = ab.fields.get(name), ba.fields.get(name)
        if forward is None or backward is None:
            continue
        macro = (forward.macro + backward.macro) / 2.0
        micro = (forward.micro["score"] + backward.micro["score"]) / 2.0
        units = _field_units(name, ab.chunks, reverse)
        intervals = intervals_from(
            resample_statistics(
                units,
                _mean_of_directions(name),
                n_resamples=n_resamples,
                seed=seed,
                estimates=[macro, micro],
            ),
            confidence=confidence,
        )

        def pick(m: float, p: float) -> float:
            return m if aggregate == "macro" else p

        out[name] = FieldAgreement(
            chunks=forward.chunks,
            items_a=forward.n_reference,
            items_b=forward.n_predicted,
            matched=forward.n_matched,
            both_empty=forward.both_empty,
            symmetric=name not in ASYMMETRIC,
            agreement=pick(macro, micro),
            macro=macro,
            micro=micro,
            a_vs_b=pick(forward.macro, forward.micro["score"]),
            b_vs_a=pick(backward.macro, backward.micro["score"]),
            micro_parts={k: v for k, v in forward.micro.items() if k != "score"},
            intervals={
                "macro": AgreementInterval.of(intervals[0]),
                "micro": AgreementInterval.of(intervals[1]),
            },
            note=ASYMMETRIC.get(name),
        )
    return out


def _field_units(
    name: str, forward: Sequence[ChunkResult], reverse: Mapping[str, ChunkResult]
) -> FloatArray:
    """Per chunk that scores ``name``: its statistics A→B, then B→A (chunks × 2·columns)."""
    rows = []
    for result in forward:
        score = result.fields.get(name)
        if score is None:
            continue
        back = reverse[result.chunk_id]
        rows.append(
            chunk_statistics(name, score, result.status is RecordStatus.OK)
            + chunk_statistics(name, back.fields[name], back.status is RecordStatus.OK)
        )
    return np.array(rows, dtype=np.float64)


def _mean_of_directions(name: str) -> Callable[[FloatArray], FloatArray]:
    """sums (resamples × 2·columns) → (macro, micro) mean of both directions × resamples."""
    columns = statistic_names(name)
    k = len(columns)

    def statistic(sums: FloatArray) -> FloatArray:
        one = {c: sums[:, i] for i, c in enumerate(columns)}
        two = {c: sums[:, k + i] for i, c in enumerate(columns)}
        rows = [
            (field_value(name, one, agg) + field_value(name, two, agg)) / 2.0
            for agg in ("macro", "micro")
        ]
        return np.vstack(rows)

    return statistic


# ---- Krippendorff's α on the enumerated parts ----------------------------------------------

UnitFunction = Callable[[ExtractionV3, ExtractionV3, ScoringContext], list[Unit]]


def _paired(
    a: Sequence[str], b: Sequence[str], rows: Sequence[int], cols: Sequence[int]
) -> list[Unit]:
    """Matched pairs as units, then the unmatched items of each side with the other missing."""
    units: list[Unit] = [(a[i], b[j]) for i, j in zip(rows, cols, strict=True)]
    taken_a, taken_b = set(rows), set(cols)
    units += [(label, None) for i, label in enumerate(a) if i not in taken_a]
    units += [(None, label) for j, label in enumerate(b) if j not in taken_b]
    return units


def _lists(pairs: IndexArrayPair) -> tuple[list[int], list[int]]:
    return [int(i) for i in pairs[0]], [int(j) for j in pairs[1]]


def _claim_units(a: ExtractionV3, b: ExtractionV3, ctx: ScoringContext) -> list[Unit]:
    rows: list[int] = []
    cols: list[int] = []
    if a.claims and b.claims:  # the layer-1 claim matching
        rows, cols = _lists(
            ctx.match_texts("claims", [c.text for c in a.claims], [c.text for c in b.claims])
        )
    return _paired([c.polarity for c in a.claims], [c.polarity for c in b.claims], rows, cols)


def _mood_units(a: ExtractionV3, b: ExtractionV3, ctx: ScoringContext) -> list[Unit]:
    arc_a, arc_b = a.emotional_arc, b.emotional_arc
    return [
        (
            getattr(arc_a, attr) if arc_a is not None else None,
            getattr(arc_b, attr) if arc_b is not None else None,
        )
        for attr in ("opening_mood", "closing_mood")
        if arc_a is not None or arc_b is not None
    ]


def _trajectory_units(a: ExtractionV3, b: ExtractionV3, ctx: ScoringContext) -> list[Unit]:
    arc_a, arc_b = a.emotional_arc, b.emotional_arc
    if arc_a is None and arc_b is None:
        return []
    return [
        (
            arc_a.trajectory if arc_a is not None else None,
            arc_b.trajectory if arc_b is not None else None,
        )
    ]


def _same_label(a: Sequence[str], b: Sequence[str]) -> FloatArray:
    """A bonus below one point where the labels agree: it only breaks ties."""
    return np.array([[0.5 if x == y else 0.0 for y in b] for x in a], dtype=np.float64)


def _phase_units(a: ExtractionV3, b: ExtractionV3, ctx: ScoringContext) -> list[Unit]:
    pa, pb = a.conversation_phases, b.conversation_phases
    la, lb = [p.phase for p in pa], [p.phase for p in pb]
    rows: list[int] = []
    cols: list[int] = []
    if pa and pb:
        iou = np.array([[range_iou(x, y, ctx) for y in pb] for x in pa], dtype=np.float64)
        # Any overlap makes a candidate: the most pairs, then the largest total IoU.
        rows, cols = _lists(assign(100.0 * iou, 1e-9, bonus=_same_label(la, lb)))
    return _paired(la, lb, rows, cols)


def _pattern_units(a: ExtractionV3, b: ExtractionV3, ctx: ScoringContext) -> list[Unit]:
    ma, mb = a.negotiation_patterns, b.negotiation_patterns
    la, lb = [m.pattern for m in ma], [m.pattern for m in mb]
    ta, tb = preprocess([m.text for m in ma]), preprocess([m.text for m in mb])
    with_a = [i for i, t in enumerate(ta) if t]  # moves without text stay unpaired
    with_b = [j for j, t in enumerate(tb) if t]
    rows: list[int] = []
    cols: list[int] = []
    if with_a and with_b:
        scores = ctx.matcher.matrix([ta[i] for i in with_a], [tb[j] for j in with_b])
        bonus = _same_label([la[i] for i in with_a], [lb[j] for j in with_b])
        r, c = _lists(assign(scores, 100.0 * ctx.config.thresholds.text, bonus=bonus))
        rows, cols = [with_a[i] for i in r], [with_b[j] for j in c]
    return _paired(la, lb, rows, cols)


# part → (field, attribute, vocabulary kind, unit function, how units pair)
LABEL_PARTS: dict[str, tuple[str, str, str, UnitFunction, str]] = {
    "claims.polarity": (
        "claims",
        "polarity",
        "polarity",
        _claim_units,
        "claims paired by the layer-1 claim matching",
    ),
    "emotional_arc.mood": (
        "emotional_arc",
        "opening_mood, closing_mood",
        "emotion",
        _mood_units,
        "each chunk's opening and closing mood",
    ),
    "emotional_arc.trajectory": (
        "emotional_arc",
        "trajectory",
        "trajectory",
        _trajectory_units,
        "each chunk's trajectory",
    ),
    "conversation_phases.phase": (
        "conversation_phases",
        "phase",
        "phase",
        _phase_units,
        "phases paired by overlapping message ranges, not by label",
    ),
    "negotiation_patterns.pattern": (
        "negotiation_patterns",
        "pattern",
        "negotiation_pattern",
        _pattern_units,
        "moves paired by their text, not by label (moves without text stay unpaired)",
    ),
}


def _context(
    a: ExtractionV3, b: ExtractionV3, chunk: Chunk | None, config: ScoringConfig
) -> ScoringContext:
    """The scoring context layer 1 builds for this chunk (without a chunk: message order by
    the ids the two extractions cite, as :func:`chatledger.scoring.score_chunk` orders them)."""
    if chunk is not None:
        chunk_ctx = ChunkContext.from_chunk(chunk)
    else:
        ids: list[str] = []
        for e in (a, b):
            ids.extend(e.evidence_message_ids)
            if e.emotional_arc is not None:
                ids.extend(t.message_id for t in e.emotional_arc.turning_points)
            for p in e.conversation_phases:
                ids.extend((p.start_message_id, p.end_message_id))
        chunk_ctx = ChunkContext.from_ids(ids)
    return ScoringContext(chunk_ctx, config, get_matcher(config.matcher))


def _label_agreements(
    common: Sequence[str],
    ref_a: Mapping[str, ExtractionRecord],
    ref_b: Mapping[str, ExtractionRecord],
    shared: Mapping[str, tuple[str, ...]],
    by_id: Mapping[str, Chunk] | None,
    config: ScoringConfig,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, LabelAgreement]:
    per_part: dict[str, list[list[Unit]]] = {part: [] for part in LABEL_PARTS}
    for cid in common:
        fields = shared[cid]
        if not any(spec[0] in fields for spec in LABEL_PARTS.values()):
            continue
        ext_a, ext_b = ref_a[cid].extraction, ref_b[cid].extraction
        assert ext_a is not None and ext_b is not None
        ctx = _context(ext_a, ext_b, by_id.get(cid) if by_id is not None else None, config)
        # Pair in one canonical direction (the extraction that sorts first as the rows), so
        # that swapping the files swaps each unit and changes nothing else: among equally
        # good pairings the matching's choice depends on the direction.
        flip = ext_b.model_dump_json() < ext_a.model_dump_json()
        for part, (field, _, _, units_of, _) in LABEL_PARTS.items():
            if field not in fields:
                continue
            if flip:
                units = [(x, y) for y, x in units_of(ext_b, ext_a, ctx)]
            else:
                units = units_of(ext_a, ext_b, ctx)
            per_part[part].append(units)
    out: dict[str, LabelAgreement] = {}
    for part, chunk_units in per_part.items():
        if not chunk_units:
            continue
        field, attribute, kind, _, pairing = LABEL_PARTS[part]
        out[part] = _label_agreement(
            chunk_units, field, attribute, kind, pairing, n_resamples, confidence, seed
        )
    return out


def _label_agreement(
    chunk_units: Sequence[Sequence[Unit]],
    field: str,
    attribute: str,
    kind: str,
    pairing: str,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> LabelAgreement:
    flat = [u for units in chunk_units for u in units]
    pairable = [(x, y) for x, y in flat if x is not None and y is not None]
    seen = {v for u in flat for v in u if v is not None}
    vocabulary = DEFAULT_VOCABULARY.get(kind, ())
    labels = [v for v in vocabulary if v in seen] + sorted(seen - set(vocabulary))
    alpha = alpha_nominal(flat, labels)
    interval: AgreementInterval | None = None
    undefined = 0
    if alpha is not None:
        index = {label: i for i, label in enumerate(labels)}
        units = np.array([coincidences(u, index) for u in chunk_units], dtype=np.float64)
        resamples = resample_statistics(
            units,
            lambda sums: alpha_from_coincidences(sums, len(labels))[None, :],
            n_resamples=n_resamples,
            seed=seed,
            estimates=[alpha],
        )
        values = resamples.values[0]
        finite = values[np.isfinite(values)]
        undefined = int(values.size - finite.size)
        if finite.size:
            kept = Resamples(resamples.estimates, finite[None, :], resamples.jackknife)
            iv = intervals_from(kept, confidence=confidence, method="percentile")[0]
            interval = AgreementInterval.of(iv)
    return LabelAgreement(
        field=field,
        attribute=attribute,
        chunks=len(chunk_units),
        units=len(pairable),
        agreeing=sum(1 for x, y in pairable if x == y),
        only_a=sum(1 for x, y in flat if y is None and x is not None),
        only_b=sum(1 for x, y in flat if x is None and y is not None),
        labels=labels,
        alpha=alpha,
        interval=interval,
        undefined_resamples=undefined,
        pairing=pairing,
    )


def alpha_nominal(units: Sequence[Unit], labels: Sequence[str]) -> float | None:
    """Krippendorff's α (nominal, the ``krippendorff`` package) of two raters' units, None
    when undefined (no pairable unit, or pairable units of one label only)."""
    pairable_labels = {v for x, y in units if x is not None and y is not None for v in (x, y)}
    if len(pairable_labels) < 2:
        return None
    index = {label: float(i) for i, label in enumerate(labels)}
    data = np.array(
        [
            [index[x] if x is not None else np.nan for x, _ in units],
            [index[y] if y is not None else np.nan for _, y in units],
        ],
        dtype=np.float64,
    )
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def coincidences(units: Sequence[Unit], index: Mapping[str, int]) -> list[float]:
    """One chunk's coincidence matrix (flattened, labels × labels): each pairable unit
    (x, y) adds 1 at (x, y) and 1 at (y, x); a unit with one rater adds nothing."""
    v = len(index)
    matrix = [0.0] * (v * v)
    for x, y in units:
        if x is None or y is None:
            continue
        i, j = index[x], index[y]
        matrix[i * v + j] += 1.0
        matrix[j * v + i] += 1.0
    return matrix


def alpha_from_coincidences(sums: FloatArray, n_labels: int) -> FloatArray:
    """Nominal α of summed coincidence matrices (resamples × labels²), NaN where undefined:
    α = 1 − (n − 1)·Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k (Krippendorff 2011, two raters)."""
    o = sums.reshape(sums.shape[0], n_labels, n_labels)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    observed = n - np.trace(o, axis1=1, axis2=2)
    expected = n * n - (n_c * n_c).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    out: FloatArray = np.where(expected > 0, alpha, np.nan)
    return out
