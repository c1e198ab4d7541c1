"""Layer 1 over a whole run: per-chunk field scores, macro averages, the extraction composite."""

from __future__ import annotations

import dataclasses
import operator
from array import array
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict, get_args

import numpy as np
from pydantic import BaseModel

from chatledger.core import (
    Chunk,
    ExtractionRecord,
    ExtractionV3,
    InputError,
    Problem,
    RecordStatus,
)
from chatledger.matching import TextMatcher, get_matcher
from chatledger.scoring._aggregate import (
    COUNTED_AS,
    PER_CHUNK_ITEM,
    POOLED_RULES,
    Aggregate,
    FloatArray,
    chunk_statistics,
    composite_value,
    macro_value,
    micro_parts,
    pooled_ece,
    resolve_aggregate,
    statistic_names,
    usable_share,
)
from chatledger.scoring._calibration import reliability_bins_of
from chatledger.scoring._config import ScoringConfig
from chatledger.scoring._context import ChunkContext, ScoringContext
from chatledger.scoring._fields import FIELD_SCORERS
from chatledger.scoring._message_ids import cited_message_ids
from chatledger.scoring._types import FieldScore, FieldScorer


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """All field scores of one chunk (zeros when the challenger's extraction is unusable)."""

    chunk_id: str
    status: RecordStatus
    fields: dict[str, FieldScore]
    # The reference record names the fields it covers (partial human gold): the composite's
    # default aggregate is then micro (resolve_aggregate).
    partial: bool = False


class FieldCountsDict(TypedDict):
    """:meth:`FieldSummary.counts`: the fields of ``record.FieldCounts`` (which reads it), in
    the order ``score --format json`` shows them; a set field's item counts only with
    ``counted_as``."""

    n_matched: float | None
    n_reference: int
    n_predicted: int
    counted_as: NotRequired[str | None]
    n_reference_items: NotRequired[int | None]
    n_predicted_items: NotRequired[int | None]
    both_empty: NotRequired[int]
    chunks: NotRequired[int]
    macro: NotRequired[float]
    micro: NotRequired[dict[str, float]]


@dataclass(frozen=True)
class FieldSummary:
    """One field over a run: the headline score (under the report's aggregate), both
    aggregates, the macro means of its components and the item counts behind it."""

    score: float
    weight: float
    components: dict[str, float]
    n_reference: int
    n_predicted: int
    # Reliability-diagram bins (only for ``confidence``): what a calibration plot needs.
    reliability: list[dict[str, float]] = field(default_factory=list)
    # Matched items over all chunks (entities: their credit); None for a field that matches
    # no items (summary, emotional_arc: one per chunk, compared whole).
    n_matched: float | None = 0.0
    both_empty: int = 0  # usable chunks where neither side has an item
    chunks: int = 0  # chunks that score this field
    macro: float = 0.0  # the mean of the per-chunk scores (DESIGN.md §3)
    # Pooled over all chunks' items: precision, recall, f1, the pooled pair components and
    # the field score built from them (only ``score`` for fields without item lists).
    micro: dict[str, float] = field(default_factory=dict)
    # A set field's counts are of distinct keys (``counted_as`` says which); the items each
    # side listed are kept beside them (CaSiNo: 478 annotated moves are 324 distinct pairs).
    counted_as: str | None = None
    n_reference_items: int | None = None
    n_predicted_items: int | None = None

    def counts(self) -> FieldCountsDict:
        """The counts and both aggregates (what a run record keeps as ``FieldCounts``)."""
        out: FieldCountsDict = {
            "n_matched": self.n_matched,
            "n_reference": self.n_reference,
            "n_predicted": self.n_predicted,
        }
        if self.counted_as is not None:  # in this place of the JSON, after the counts
            out["counted_as"] = self.counted_as
            out["n_reference_items"] = self.n_reference_items
            out["n_predicted_items"] = self.n_predicted_items
        out["both_empty"] = self.both_empty
        out["chunks"] = self.chunks
        out["macro"] = self.macro
        out["micro"] = self.micro
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "weight": self.weight,
            "components": self.components,
            **self.counts(),
            **({"reliability": self.reliability} if self.reliability else {}),
        }


@dataclass
class ScoreReport:
    """Layer-1 result of one challenger against one reference (DESIGN.md §6 JSON contract)."""

    schema_version: str
    matcher: str
    reference_model: str
    challenger_model: str
    fields: dict[str, FieldSummary]
    extraction_composite: float
    chunks: list[ChunkResult]
    # Which per-field figure the composite used: "macro" (per-chunk mean) or "micro" (pooled).
    aggregate: str = "macro"
    problems: list[Problem] = field(default_factory=list)
    excluded_chunks: list[str] = field(default_factory=list)
    # Chunk ids of the reference or challenger file that the chunks file does not hold (not
    # scored), and how many message ids the challenger cites that its chunk does not hold.
    unknown_chunks: list[str] = field(default_factory=list)
    unknown_message_ids: int = 0
    # (chunks, invalid, missing) when the per-chunk results were not kept (``chunks`` is then
    # empty): a report streamed from files (:func:`chatledger.scoring.score_files`).
    counted: tuple[int, int, int] | None = None

    @property
    def n_chunks(self) -> int:
        return self.counted[0] if self.counted is not None else len(self.chunks)

    @property
    def invalid(self) -> int:
        if self.counted is not None:
            return self.counted[1]
        return sum(1 for c in self.chunks if c.status is RecordStatus.INVALID)

    @property
    def missing(self) -> int:
        if self.counted is not None:
            return self.counted[2]
        return sum(1 for c in self.chunks if c.status is RecordStatus.MISSING)

    @property
    def validity_rate(self) -> float:
        if not self.n_chunks:
            return 0.0
        if self.counted is not None:
            total, invalid, missing = self.counted
            return (total - invalid - missing) / total
        return sum(1 for c in self.chunks if c.status is RecordStatus.OK) / len(self.chunks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema_version,
            "matcher": self.matcher,
            "reference": self.reference_model,
            "challenger": self.challenger_model,
            "chunks": self.n_chunks,
            "invalid": self.invalid,
            "missing": self.missing,
            "validity_rate": self.validity_rate,
            "aggregate": self.aggregate,
            "fields": {name: s.to_dict() for name, s in self.fields.items()},
            "extraction_composite": self.extraction_composite,
            "excluded_chunks": self.excluded_chunks,
            "unknown_chunks": self.unknown_chunks,
            "unknown_message_ids": self.unknown_message_ids,
            "problem_count": len(self.problems),
            "problems": [str(p) for p in self.problems],
        }


def score_chunk(
    reference: ExtractionV3,
    challenger: ExtractionV3,
    chunk: ChunkContext | Chunk | None = None,
    config: ScoringConfig | None = None,
    matcher: TextMatcher | None = None,
) -> dict[str, FieldScore]:
    """Score every field of ``config``'s schema for one chunk."""
    config = config or ScoringConfig.default()
    return _score_fields(
        reference,
        challenger,
        chunk,
        config,
        matcher or get_matcher(config.matcher),
        _scorers(config),
    )


def covered_scorers(
    scorers: list[tuple[str, FieldScorer]], covers: tuple[str, ...] | None
) -> list[tuple[str, FieldScorer]]:
    """The scorers of the fields a reference record covers (all of them without ``covers``)."""
    return scorers if covers is None else [s for s in scorers if s[0] in covers]


def zero_scores(
    chunk_scorers: list[tuple[str, FieldScorer]],
    reference: ExtractionV3 | None = None,
    chunk: ChunkContext | Chunk | None = None,
    config: ScoringConfig | None = None,
    matcher: TextMatcher | None = None,
) -> dict[str, FieldScore]:
    """Every field 0: a chunk whose challenger extraction is missing or invalid.

    With ``reference``, each field keeps the reference's item count (what scoring it against
    an empty extraction counts), so the pooled (micro) recall counts those items as missed.
    """
    if reference is None:
        return {
            name: FieldScore.zero(FIELD_SCORERS.get(name).components) for name, _ in chunk_scorers
        }
    config = config or ScoringConfig.default()
    against_empty = _score_fields(
        reference,
        _EMPTY,
        chunk,
        config,
        matcher or get_matcher(config.matcher),
        chunk_scorers,
    )
    return {
        name: dataclasses.replace(
            FieldScore.zero(FIELD_SCORERS.get(name).components, score.n_reference, 0),
            listed=None if score.listed is None else (score.listed[0], 0),
        )
        for name, score in against_empty.items()
    }


_EMPTY = ExtractionV3()


def _scorers(config: ScoringConfig) -> list[tuple[str, FieldScorer]]:
    """The scorer of every field of the config's schema, looked up once per run."""
    return [(name, FIELD_SCORERS.get(name).fn) for name in config.fields]


def _score_fields(
    reference: ExtractionV3,
    challenger: ExtractionV3,
    chunk: ChunkContext | Chunk | None,
    config: ScoringConfig,
    matcher: TextMatcher,
    scorers: list[tuple[str, FieldScorer]],
) -> dict[str, FieldScore]:
    if isinstance(chunk, Chunk):
        chunk_ctx = ChunkContext.from_chunk(chunk)
    elif chunk is None:
        chunk_ctx = ChunkContext.from_ids(_message_ids(reference, challenger))
    else:
        chunk_ctx = chunk
    ctx = ScoringContext(chunk_ctx, config, matcher)
    return {name: fn(reference, challenger, ctx) for name, fn in scorers}


def _message_ids(*extractions: ExtractionV3) -> list[str]:
    ids: list[str] = []
    for e in extractions:
        ids.extend(e.evidence_message_ids)
        if e.emotional_arc is not None:
            ids.extend(t.message_id for t in e.emotional_arc.turning_points)
        for p in e.conversation_phases:
            ids.extend((p.start_message_id, p.end_message_id))
    return ids


def score_records(
    reference: Mapping[str, ExtractionRecord],
    challenger: Mapping[str, ExtractionRecord],
    chunks: Sequence[Chunk] | None = None,
    config: ScoringConfig | None = None,
    *,
    reference_model: str = "reference",
    challenger_model: str = "challenger",
    problems: Sequence[Problem] = (),
) -> ScoreReport:
    """Score a challenger's records against the reference's over the run's chunks.

    The chunks are those of ``chunks`` when given, else the reference's. A chunk whose reference
    extraction is missing or invalid cannot be scored and is excluded (and listed); a challenger
    chunk that is missing or invalid scores 0 on every field. With ``chunks``, a chunk id of
    either file that the chunks file does not hold is not scored: it is a problem of its line
    and listed in ``unknown_chunks``; a message id the challenger cites that its chunk does not
    hold is a problem of the challenger's line (counted in ``unknown_message_ids``), and the
    chunk is still scored.

    A reference record with ``covers`` (partial human gold) is scored on those fields only; a
    field averages over the chunks that cover it, a field no chunk covers is left out, and the
    composite renormalises the weights of the fields present.
    """
    config = config or ScoringConfig.default()
    matcher = get_matcher(config.matcher)
    scorers = _scorers(config)
    by_id = {c.chunk_id: c for c in chunks} if chunks is not None else {}
    order = list(by_id) if chunks is not None else list(reference)
    results: list[ChunkResult] = []
    excluded: list[str] = []
    id_problems: list[Problem] = []
    for chunk_id in order:
        ref_record = reference.get(chunk_id)
        if ref_record is None or ref_record.extraction is None:
            excluded.append(chunk_id)
            continue
        record = challenger.get(chunk_id)
        chunk_scorers = covered_scorers(scorers, ref_record.covers)
        partial = ref_record.covers is not None
        chunk = by_id.get(chunk_id)
        if record is None or record.extraction is None:
            status = RecordStatus.MISSING if record is None else record.status
            zero = zero_scores(chunk_scorers, ref_record.extraction, chunk, config, matcher)
            results.append(ChunkResult(chunk_id, status, zero, partial))
            continue
        if chunk is not None:
            where = _source(record, challenger, challenger_model)
            id_problems.extend(
                unknown_message_ids(record.extraction, chunk, config.fields, where, record.line)
            )
        scores = _score_fields(
            ref_record.extraction, record.extraction, chunk, config, matcher, chunk_scorers
        )
        results.append(ChunkResult(chunk_id, RecordStatus.OK, scores, partial))
    if not results:
        raise _no_usable_reference(reference, by_id if chunks is not None else None)
    all_problems = list(problems)
    unknown: list[str] = []
    if chunks is not None:
        for records, model in ((reference, reference_model), (challenger, challenger_model)):
            for cid, rec in records.items():
                if cid in by_id:
                    continue
                if cid not in unknown:
                    unknown.append(cid)
                all_problems.append(
                    Problem(
                        path=_source(rec, records, model),
                        line=rec.line,
                        field="chunk_id",
                        message=f"chunk {cid!r} is not in the chunks file; not scored",
                    )
                )
    all_problems.extend(id_problems)
    summaries, composite = summarise_chunks(results, config)
    return ScoreReport(
        schema_version=config.schema_version,
        matcher=config.matcher,
        reference_model=reference_model,
        challenger_model=challenger_model,
        fields=summaries,
        extraction_composite=composite,
        chunks=results,
        aggregate=aggregate_of(results, config),
        problems=all_problems,
        excluded_chunks=excluded,
        unknown_chunks=unknown,
        unknown_message_ids=len(id_problems),
    )


def summarise_chunks(
    results: Sequence[ChunkResult], config: ScoringConfig
) -> tuple[dict[str, FieldSummary], float]:
    """Run-level field scores and the extraction composite from the per-chunk results, in
    chunk order: the one aggregation, whether the chunks were scored in one call or in
    batches on several workers (the sums run left to right, so the floats are the same)."""
    totals = FieldTotals()
    for result in results:
        totals.add(result.status, result.fields, result.partial)
    return totals.summaries(config)


def aggregate_of(results: Sequence[ChunkResult], config: ScoringConfig) -> Aggregate:
    """The aggregate :func:`summarise_chunks` used for these results."""
    return resolve_aggregate(config.aggregate, any(r.partial for r in results))


def _source(record: ExtractionRecord, records: Mapping[str, ExtractionRecord], label: str) -> str:
    """The file a record was read from (else its file's, else the model's name)."""
    return record.path or str(getattr(records, "path", "") or label)


def unknown_message_ids(
    extraction: ExtractionV3,
    chunk: Chunk,
    fields: Sequence[str],
    path: str,
    line: int,
) -> list[Problem]:
    """A problem for every message id (evidence, turning point, phase bound, salient message)
    in ``fields`` of ``extraction`` that ``chunk`` does not hold; the record is still scored."""
    known = {m.id for m in chunk.messages}
    return unknown_ids(extraction, known, chunk.chunk_id, fields, path, line)


def unknown_ids(
    extraction: ExtractionV3,
    known: Container[str],
    chunk_id: str,
    fields: Sequence[str],
    path: str,
    line: int,
) -> list[Problem]:
    """:func:`unknown_message_ids` given the chunk's message ids (``known``) and its id."""
    problems: list[Problem] = []
    if not _cites_unknown(extraction, known, fields):  # the usual case: nothing to name
        return problems

    for where, message_id in cited_message_ids(extraction, fields):
        if message_id not in known:
            problems.append(
                Problem(
                    path=path,
                    line=line,
                    field=f"extraction.{where}",
                    message=f"message id {message_id!r} is not in chunk {chunk_id}",
                )
            )
    return problems


def _lists_with_evidence() -> frozenset[str]:
    """The fields of schema v3 that are lists of items carrying ``evidence``."""
    names = []
    for name, info in ExtractionV3.model_fields.items():
        args = get_args(info.annotation)
        item = args[0] if len(args) == 1 else None
        if (
            isinstance(item, type)
            and issubclass(item, BaseModel)
            and "evidence" in item.model_fields
        ):
            names.append(name)
    return frozenset(names)


_EVIDENCE_LISTS = _lists_with_evidence()


def _cites_unknown(extraction: ExtractionV3, known: Container[str], fields: Sequence[str]) -> bool:
    """Whether any message id :func:`unknown_ids` checks is missing from ``known``."""
    cited = known.__contains__
    for name in fields:
        if name == "evidence_message_ids":
            if not all(map(cited, extraction.evidence_message_ids)):
                return True
        elif name == "emotional_arc":
            arc = extraction.emotional_arc
            if arc is not None and any(p.message_id not in known for p in arc.turning_points):
                return True
        elif name == "conversation_phases":
            for phase in extraction.conversation_phases:
                if phase.start_message_id not in known or phase.end_message_id not in known:
                    return True
        elif name in _EVIDENCE_LISTS:
            for item in getattr(extraction, name):
                if not all(map(cited, item.evidence)):
                    return True
    return False


def _no_usable_reference(
    reference: Mapping[str, ExtractionRecord], by_id: Mapping[str, Chunk] | None
) -> InputError:
    """Why nothing could be scored, naming the reference file and its first problem."""
    path = str(getattr(reference, "path", "") or "") or next(
        (r.path for r in reference.values() if r.path), ""
    )
    valid = [cid for cid, r in reference.items() if r.extraction is not None]
    message = "the reference has no valid extraction for any chunk of the run"
    if valid and by_id is not None:
        shown = ", ".join(repr(c) for c in valid[:3]) + (" …" if len(valid) > 3 else "")
        message += f": its {len(valid)} valid chunk(s) ({shown}) are not in the chunks file"
    else:
        file_problems: list[Problem] = list(getattr(reference, "problems", None) or [])
        if not file_problems:
            file_problems = [p for r in reference.values() for p in r.problems]
        if file_problems:
            first = file_problems[0]
            more = len(file_problems) - 1
            shown = str(first)
            if path and first.path == path:  # the file is named once, in front
                field = f" [{first.field}]" if first.field else ""
                shown = f"line {first.line}{field}: {first.message}"
            message += f"; {shown}"
            if more:
                message += f" (and {more} more problems)"
        elif not reference:
            message += ": the file holds no extraction lines"
    return InputError(message, path=path or None)


@dataclass(frozen=True)
class _Counts:
    """The counts and both aggregates that go beside a field's headline score."""

    n_matched: float | None
    both_empty: int
    chunks: int
    macro: float
    micro: dict[str, float]
    listed: tuple[int, int] | None = None  # items each side listed (set fields)
    counted_as: str | None = None

    def summary(
        self,
        score: float,
        weight: float,
        components: dict[str, float],
        n_ref: int,
        n_pred: int,
        reliability: list[dict[str, float]] | None = None,
    ) -> FieldSummary:
        return FieldSummary(
            score,
            weight,
            components,
            n_ref,
            n_pred,
            reliability or [],
            n_matched=self.n_matched,
            both_empty=self.both_empty,
            chunks=self.chunks,
            macro=self.macro,
            micro=self.micro,
            counted_as=self.counted_as,
            n_reference_items=None if self.listed is None else self.listed[0],
            n_predicted_items=None if self.listed is None else self.listed[1],
        )


class FieldTotals:
    """What the run-level field summaries need, gathered chunk by chunk in chunk order.

    Each field keeps running sums of its per-chunk statistics (``score._aggregate``) and
    components, added left to right exactly as ``sum()`` of a list would, so memory does not
    grow with the number of chunks; ``confidence`` also keeps its (confidence, correct) pairs
    for the reliability diagram. The run-level figures are the functions of
    ``score._aggregate`` applied to these sums — the functions a bootstrap applies to the sums
    of each resample.
    """

    def __init__(self) -> None:
        self._sums: dict[str, list[float]] = {}
        self._columns: dict[str, tuple[str, ...]] = {}
        self._components: dict[str, dict[str, float]] = {}
        # The same sums over the chunks where either side has an item: the micro components of
        # the fields without item lists (summary, emotional_arc).
        self._item_components: dict[str, dict[str, float]] = {}
        self._listed: dict[str, list[int]] = {}  # set fields: items listed (reference, predicted)
        self._partial = False
        self._conf: array[float] = array("d")
        self._correct = bytearray()

    def add(
        self, status: RecordStatus, fields: Mapping[str, FieldScore], partial: bool = False
    ) -> None:
        """One chunk's field scores (chunks must come in the run's order); ``partial``: the
        reference record covers only some fields (human gold)."""
        ok = status is RecordStatus.OK
        self._partial = self._partial or partial
        for name, score in fields.items():
            sums = self._sums.get(name)
            if sums is None:
                self._columns[name] = statistic_names(name)
                sums = self._sums[name] = [0.0] * len(self._columns[name])
                components = FIELD_SCORERS.get(name).components
                self._components[name] = dict.fromkeys(components, 0.0)
                self._item_components[name] = dict.fromkeys(components, 0.0)
            self._sums[name] = list(map(operator.add, sums, chunk_statistics(name, score, ok)))
            running = self._components[name]
            for comp in running:
                running[comp] += score.components[comp]
            if name in COUNTED_AS:
                listed = self._listed.setdefault(name, [0, 0])
                ref_items, pred_items = score.listed or (score.n_reference, score.n_predicted)
                listed[0] += ref_items
                listed[1] += pred_items
            if name in PER_CHUNK_ITEM and not score.both_empty:
                with_items = self._item_components[name]
                for comp in with_items:
                    with_items[comp] += score.components[comp]
            if ok and name == "confidence" and score.calibration:
                self._conf.extend([c for c, _ in score.calibration])
                self._correct.extend([1 if k else 0 for _, k in score.calibration])

    def sums(self, name: str) -> dict[str, FloatArray]:
        """The field's summed statistics, each as a one-element array."""
        return {
            col: np.array([value])
            for col, value in zip(self._columns[name], self._sums[name], strict=True)
        }

    def summaries(self, config: ScoringConfig) -> tuple[dict[str, FieldSummary], float]:
        """The summaries of the config's fields that any chunk scored, and the extraction
        composite (weights renormalised over the fields present), under
        :attr:`aggregate`."""
        present = [name for name in config.fields if name in self._sums]
        aggregate = self.aggregate(config)
        summaries = {
            name: self._summarise(name, config.weights[name], aggregate) for name in present
        }
        values = {name: np.array([s.score]) for name, s in summaries.items()}
        found = {name: np.array([True]) for name in summaries}
        composite = float(composite_value(values, found, config.weights, config.fields)[0])
        return summaries, composite

    def aggregate(self, config: ScoringConfig) -> Aggregate:
        """The aggregate the composite uses (configured, else micro against partial gold)."""
        return resolve_aggregate(config.aggregate, self._partial)

    def _summarise(self, name: str, weight: float, aggregate: Aggregate) -> FieldSummary:
        sums = self.sums(name)
        n = int(sums["covered"][0])
        macro = float(macro_value(name, sums)[0])
        micro = {k: float(v[0]) for k, v in micro_parts(name, sums).items()}
        score = micro["score"] if aggregate == "micro" else macro
        n_ref, n_pred = int(sums["n_reference"][0]), int(sums["n_predicted"][0])
        listed = self._listed.get(name)
        counts = _Counts(
            n_matched=float(sums["matched"][0]) if "matched" in sums else None,
            both_empty=int(sums["both_empty"][0]),
            chunks=n,
            macro=macro,
            micro=micro,
            listed=(listed[0], listed[1]) if listed is not None else None,
            counted_as=COUNTED_AS.get(name),
        )
        if name == "confidence":
            return self._pooled_confidence(score, weight, sums, n_ref, n_pred, counts)
        if aggregate == "micro":
            components = self._micro_components(name, sums, micro)
        else:
            # Plain left-to-right sums over chunks (running sums add as sum() of a list does).
            components = {c: total / n for c, total in self._components[name].items()}
        return counts.summary(score, weight, components, n_ref, n_pred)

    def _micro_components(
        self, name: str, sums: Mapping[str, FloatArray], micro: Mapping[str, float]
    ) -> dict[str, float]:
        """The field's components as the micro score uses them (DESIGN.md §3: the components
        shown are of the same aggregate as the score): pooled precision / recall / F1 and pair
        components; for summary and emotional_arc the mean over the chunks where either side
        has one (the usable share when none has)."""
        names = self._components[name]
        if name in PER_CHUNK_ITEM:
            with_items = float(sums["has_items"][0])
            if not with_items:
                return dict.fromkeys(names, micro["score"])
            return {c: total / with_items for c, total in self._item_components[name].items()}
        f1_name = POOLED_RULES[name].terms[0].part
        return {c: micro["f1" if c == f1_name else c] for c in names}

    def _pooled_confidence(
        self,
        score: float,
        weight: float,
        sums: Mapping[str, FloatArray],
        n_ref: int,
        n_pred: int,
        counts: _Counts,
    ) -> FieldSummary:
        """1 − ECE over the items of all chunks, scaled by the share of usable chunks.

        Pooling is what DESIGN.md asks (ECE is noisy at small n). The scaling keeps the rule
        that an invalid or missing chunk costs every field, this one included.
        """
        n_items = len(self._conf)
        bins: list[dict[str, float]] = []
        if n_items:
            ece = float(pooled_ece(sums)[0])
            accuracy = self._correct.count(1) / n_items
            bins = reliability_bins_of(*self._arrays())
        else:
            ece, accuracy = (0.0, 1.0) if n_ref == 0 and n_pred == 0 else (1.0, 0.0)
        components = {
            "ece": ece,
            "n_items": float(n_items),
            "accuracy": accuracy,
            "usable_share": float(usable_share(sums)[0]),
        }
        return counts.summary(score, weight, components, n_ref, n_pred, bins)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        conf = np.frombuffer(self._conf, dtype=np.float64)
        correct = np.frombuffer(self._correct, dtype=np.uint8).astype(np.float64)
        return conf, correct
