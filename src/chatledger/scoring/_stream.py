"""Layer 1 straight from the files, one chunk at a time (what ``chatledger score`` runs).

:func:`score_records` takes every record already read; :func:`score_files` gives the same
report from the three files while holding one chunk's extractions at a time, so memory does
not grow with the corpus (a 100,000-chunk run needs what a 1,000-chunk run needs, plus a few
bytes per chunk for the running sums). The chunks file is read first, whole but as outlines
(ids, speakers, message ids); the two extraction files are then read in step with it
(:class:`chatledger.corpus.ExtractionStream`). Every figure, problem and error is what
reading everything and calling :func:`score_records` gives, in the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from chatledger.core import Chunk, InputError, Problem, RecordStatus
from chatledger.corpus import ChunkOutline, ExtractionStream, read_chunk_outlines
from chatledger.matching import get_matcher
from chatledger.scoring._config import ScoringConfig
from chatledger.scoring._context import ChunkContext
from chatledger.scoring._run import (
    FieldTotals,
    ScoreReport,
    _score_fields,
    _scorers,
    covered_scorers,
    unknown_ids,
    zero_scores,
)


def score_files(
    reference: str | Path,
    challenger: str | Path,
    chunks: str | Path | None = None,
    config: ScoringConfig | None = None,
    *,
    on_long_chunks: Callable[[list[Chunk]], None] | None = None,
) -> ScoreReport:
    """Score ``challenger`` against ``reference`` (extraction files) over the chunks of
    ``chunks`` (else the reference's), as :func:`score_records` does on what
    :func:`chatledger.corpus.read_extractions` reads.

    The files are opened in the order the CLI always read them (chunks, reference,
    challenger), so a bad chunks line or a missing file fails first where it did.
    ``on_long_chunks`` gets the chunks over :data:`chatledger.core.LONG_CHUNK_MESSAGES`
    messages (whole), before the extraction files are opened. The report keeps no per-chunk
    results (``chunks`` is empty; :attr:`ScoreReport.counted` holds the counts).
    """
    config = config or ScoringConfig.default()
    outlines: list[ChunkOutline] | None = None
    if chunks is not None:
        outlines, long = read_chunk_outlines(chunks)
        if on_long_chunks is not None:
            on_long_chunks(long)
    known = {o.chunk_id for o in outlines} if outlines is not None else None
    ref = ExtractionStream(reference, known_chunks=known)
    chal = ExtractionStream(challenger, known_chunks=known)
    matcher = get_matcher(config.matcher)
    scorers = _scorers(config)
    totals = FieldTotals()
    excluded: list[str] = []
    id_problems: list[Problem] = []
    counts = {RecordStatus.OK: 0, RecordStatus.INVALID: 0, RecordStatus.MISSING: 0}
    order = (
        ((o.chunk_id, o, ref.take(o.chunk_id)) for o in outlines)
        if outlines is not None
        else ((r.chunk_id, None, r) for r in ref.records())
    )
    for chunk_id, outline, ref_record in order:
        if ref_record is None or ref_record.extraction is None:
            excluded.append(chunk_id)
            continue
        record = chal.take(chunk_id)
        chunk_scorers = covered_scorers(scorers, ref_record.covers)
        partial = ref_record.covers is not None
        context = None
        if outline is not None:
            positions = {m: i for i, m in enumerate(outline.message_ids)}
            context = ChunkContext(participants=outline.speakers, positions=positions)
        if record is None or record.extraction is None:
            status = RecordStatus.MISSING if record is None else record.status
            zero = zero_scores(chunk_scorers, ref_record.extraction, context, config, matcher)
            totals.add(status, zero, partial)
            counts[status] += 1
            continue
        if outline is not None:
            id_problems.extend(
                unknown_ids(
                    record.extraction,
                    positions,
                    chunk_id,
                    config.fields,
                    record.path or chal.path,
                    record.line,
                )
            )
        scores = _score_fields(
            ref_record.extraction, record.extraction, context, config, matcher, chunk_scorers
        )
        totals.add(RecordStatus.OK, scores, partial)
        counts[RecordStatus.OK] += 1
    ref.drain()
    chal.drain()
    scored = sum(counts.values())
    if not scored:
        raise _nothing_to_score(ref, outlines is not None)
    problems = [*ref.problems, *chal.problems]
    unknown: list[str] = []
    if outlines is not None:
        seen: set[str] = set()
        for stream in (ref, chal):
            for cid, line in stream.unknown:
                if cid not in seen:
                    seen.add(cid)
                    unknown.append(cid)
                problems.append(
                    Problem(
                        path=stream.path,
                        line=line,
                        field="chunk_id",
                        message=f"chunk {cid!r} is not in the chunks file; not scored",
                    )
                )
    problems.extend(id_problems)
    summaries, composite = totals.summaries(config)
    return ScoreReport(
        schema_version=config.schema_version,
        matcher=config.matcher,
        reference_model=ref.model,
        challenger_model=chal.model,
        fields=summaries,
        extraction_composite=composite,
        chunks=[],
        problems=problems,
        excluded_chunks=excluded,
        unknown_chunks=unknown,
        unknown_message_ids=len(id_problems),
        counted=(scored, counts[RecordStatus.INVALID], counts[RecordStatus.MISSING]),
        aggregate=totals.aggregate(config),
    )


def _nothing_to_score(ref: ExtractionStream, with_chunks: bool) -> InputError:
    """Why nothing could be scored (the message of ``score_records``), naming the reference
    file and its first problem."""
    message = "the reference has no valid extraction for any chunk of the run"
    if ref.valid and with_chunks:
        shown = ", ".join(repr(c) for c in ref.valid_head) + (" …" if ref.valid > 3 else "")
        message += f": its {ref.valid} valid chunk(s) ({shown}) are not in the chunks file"
    elif ref.problems:
        first = ref.problems[0]
        more = len(ref.problems) - 1
        shown = str(first)
        if first.path == ref.path:  # the file is named once, in front
            field = f" [{first.field}]" if first.field else ""
            shown = f"line {first.line}{field}: {first.message}"
        message += f"; {shown}"
        if more:
            message += f" (and {more} more problems)"
    elif not ref.kept:
        message += ": the file holds no extraction lines"
    return InputError(message, path=ref.path)
