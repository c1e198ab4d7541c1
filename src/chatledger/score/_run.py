"""Layer 1 over a whole run: per-chunk field scores, macro averages, the extraction composite."""

from __future__ import annotations

from array import array
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

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
from chatledger.score._calibration import (
    SMALL,
    expected_calibration_error,
    expected_calibration_error_of,
    reliability_bins_of,
)
from chatledger.score._config import ScoringConfig
from chatledger.score._context import ChunkContext, ScoringContext
from chatledger.score._types import FIELD_SCORERS, FieldScore, FieldScorer


@dataclass(frozen=True)
class ChunkResult:
    """All field scores of one chunk (zeros when the challenger's extraction is unusable)."""

    chunk_id: str
    status: RecordStatus
    fields: dict[str, FieldScore]


@dataclass(frozen=True)
class FieldSummary:
    score: float
    weight: float
    components: dict[str, float]
    n_reference: int
    n_predicted: int
    # Reliability-diagram bins (only for ``confidence``): what a calibration plot needs.
    reliability: list[dict[str, float]] = field(default_factory=list)


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
    problems: list[Problem] = field(default_factory=list)
    excluded_chunks: list[str] = field(default_factory=list)
    # Chunk ids of the reference or challenger file that the chunks file does not hold (not
    # scored), and how many message ids the challenger cites that its chunk does not hold.
    unknown_chunks: list[str] = field(default_factory=list)
    unknown_message_ids: int = 0
    # (chunks, invalid, missing) when the per-chunk results were not kept (``chunks`` is then
    # empty): a report streamed from files (:func:`chatledger.score.score_files`).
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
            "fields": {
                name: {
                    "score": s.score,
                    "weight": s.weight,
                    "components": s.components,
                    "n_reference": s.n_reference,
                    "n_predicted": s.n_predicted,
                    **({"reliability": s.reliability} if s.reliability else {}),
                }
                for name, s in self.fields.items()
            },
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


def zero_scores(chunk_scorers: list[tuple[str, FieldScorer]]) -> dict[str, FieldScore]:
    """Every field 0: a chunk whose challenger extraction is missing or invalid."""
    return {name: FieldScore.zero(FIELD_SCORERS.get(name).components) for name, _ in chunk_scorers}


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
        if record is None or record.extraction is None:
            status = RecordStatus.MISSING if record is None else record.status
            zero = zero_scores(chunk_scorers)
            results.append(ChunkResult(chunk_id, status, zero))
            continue
        chunk = by_id.get(chunk_id)
        if chunk is not None:
            where = _source(record, challenger, challenger_model)
            id_problems.extend(
                unknown_message_ids(record.extraction, chunk, config.fields, where, record.line)
            )
        scores = _score_fields(
            ref_record.extraction, record.extraction, chunk, config, matcher, chunk_scorers
        )
        results.append(ChunkResult(chunk_id, RecordStatus.OK, scores))
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
        totals.add(result.status, result.fields)
    return totals.summaries(config)


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

    def check(message_id: str, where: str) -> None:
        if message_id not in known:
            problems.append(
                Problem(
                    path=path,
                    line=line,
                    field=f"extraction.{where}",
                    message=f"message id {message_id!r} is not in chunk {chunk_id}",
                )
            )

    for name in fields:
        if name == "evidence_message_ids":
            for j, mid in enumerate(extraction.evidence_message_ids):
                check(mid, f"{name}.{j}")
        elif name == "emotional_arc":
            arc = extraction.emotional_arc
            for i, point in enumerate(arc.turning_points if arc is not None else ()):
                check(point.message_id, f"{name}.turning_points.{i}.message_id")
        elif name == "conversation_phases":
            for i, phase in enumerate(extraction.conversation_phases):
                check(phase.start_message_id, f"{name}.{i}.start_message_id")
                check(phase.end_message_id, f"{name}.{i}.end_message_id")
        else:
            items = getattr(extraction, name, None)
            if not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                for j, mid in enumerate(getattr(item, "evidence", None) or ()):
                    check(mid, f"{name}.{i}.evidence.{j}")
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
    for name in fields:
        if name == "evidence_message_ids":
            if any(mid not in known for mid in extraction.evidence_message_ids):
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
                if any(mid not in known for mid in item.evidence):
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


class FieldTotals:
    """What the run-level field summaries need, gathered chunk by chunk in chunk order.

    Each field keeps its per-chunk scores and components as flat float arrays (8 bytes each,
    not a ChunkResult per chunk), summed left to right at the end exactly as a list is;
    ``confidence`` keeps its (confidence, correct) pairs as two arrays for the pooled ECE.
    """

    def __init__(self) -> None:
        self._scores: dict[str, array[float]] = {}
        self._components: dict[str, dict[str, array[float]]] = {}
        self._n_ref: dict[str, int] = {}
        self._n_pred: dict[str, int] = {}
        self._usable: dict[str, int] = {}
        self._conf: array[float] = array("d")
        self._correct = bytearray()

    def add(self, status: RecordStatus, fields: Mapping[str, FieldScore]) -> None:
        """One chunk's field scores (chunks must come in the run's order)."""
        ok = status is RecordStatus.OK
        for name, score in fields.items():
            scores = self._scores.get(name)
            if scores is None:
                scores = self._scores[name] = array("d")
                components = FIELD_SCORERS.get(name).components
                self._components[name] = {c: array("d") for c in components}
                self._n_ref[name] = self._n_pred[name] = self._usable[name] = 0
            scores.append(score.score)
            for comp, values in self._components[name].items():
                values.append(score.components[comp])
            self._n_ref[name] += score.n_reference
            self._n_pred[name] += score.n_predicted
            if ok:
                self._usable[name] += 1
                if name == "confidence" and score.calibration:
                    self._conf.extend([c for c, _ in score.calibration])
                    self._correct.extend([1 if k else 0 for _, k in score.calibration])

    def summaries(self, config: ScoringConfig) -> tuple[dict[str, FieldSummary], float]:
        """The summaries of the config's fields that any chunk scored, and the extraction
        composite (weights renormalised over the fields present)."""
        present = [name for name in config.fields if name in self._scores]
        summaries = {name: self._summarise(name, config.weights[name]) for name in present}
        composite = sum(s.score * s.weight for s in summaries.values())
        if len(present) < len(config.fields):
            total = sum(s.weight for s in summaries.values())
            composite = composite / total if total > 0 else 0.0
        return summaries, composite

    def _summarise(self, name: str, weight: float) -> FieldSummary:
        n_ref, n_pred = self._n_ref[name], self._n_pred[name]
        n = len(self._scores[name])
        if name == "confidence":
            return self._pooled_confidence(weight, n, n_ref, n_pred)
        # Plain left-to-right sums over chunks (sum() of an array is sum() of a list).
        score = sum(self._scores[name]) / n
        components = {c: sum(values) / n for c, values in self._components[name].items()}
        return FieldSummary(score, weight, components, n_ref, n_pred)

    def _pooled_confidence(self, weight: float, n: int, n_ref: int, n_pred: int) -> FieldSummary:
        """1 − ECE over the items of all chunks, scaled by the share of usable chunks.

        Pooling is what DESIGN.md asks (ECE is noisy at small n). The scaling keeps the rule
        that an invalid or missing chunk costs every field, this one included.
        """
        usable = self._usable["confidence"] / n
        n_items = len(self._conf)
        bins: list[dict[str, float]] = []
        if n_items:
            if n_items <= SMALL:
                pairs = [(c, k == 1) for c, k in zip(self._conf, self._correct, strict=True)]
                ece = expected_calibration_error(pairs)
            else:
                ece = expected_calibration_error_of(*self._arrays())
            accuracy = self._correct.count(1) / n_items
            bins = reliability_bins_of(*self._arrays())
        else:
            ece, accuracy = (0.0, 1.0) if n_ref == 0 and n_pred == 0 else (1.0, 0.0)
        base = 1.0 - ece
        components = {
            "ece": ece,
            "n_items": float(n_items),
            "accuracy": accuracy,
            "usable_share": usable,
        }
        return FieldSummary(base * usable, weight, components, n_ref, n_pred, bins)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        conf = np.frombuffer(self._conf, dtype=np.float64)
        correct = np.frombuffer(self._correct, dtype=np.uint8).astype(np.float64)
        return conf, correct
