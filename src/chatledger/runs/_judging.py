"""Layer 2 inside a run: every judge of the panel grades every chunk of one challenger."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from chatledger.core import Chunk, ExtractionRecord
from chatledger.judge import (
    SCORE_NAMES,
    ChunkJudgement,
    Graded,
    Judge,
    Verdict,
    aggregate_chunk,
    panel_agreement,
)
from chatledger.runs._tables import RUN_LEVEL, Row


@dataclass
class JudgeLayerResult:
    """A panel's judgement of one challenger."""

    composite: float
    chunks: list[ChunkJudgement]
    unscored: dict[str, int]
    unusable_chunks: int
    per_judge: dict[str, float]
    label_counts: dict[str, int]
    agreement: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "composite": self.composite,
            "unscored": self.unscored,
            "unusable_chunks": self.unusable_chunks,
            "per_judge": self.per_judge,
            "label_counts": self.label_counts,
            "agreement": self.agreement,
        }


def judge_challenger(
    model: str,
    judges: Sequence[Judge],
    chunks: Sequence[Chunk],
    records: Mapping[str, ExtractionRecord],
    judgements_out: IO[str] | None = None,
) -> JudgeLayerResult:
    """Run the panel on every chunk with a usable extraction (see :func:`aggregate_verdicts`)."""
    usable = [
        (c, r.extraction)
        for c in chunks
        if (r := records.get(c.chunk_id)) is not None and r.extraction is not None
    ]
    verdicts: dict[str, dict[str, Verdict | None]] = {}
    for judge in judges:
        results = judge.judge_many(usable)
        verdicts[judge.name] = {c.chunk_id: v for (c, _), v in zip(usable, results, strict=True)}
    lines = judgement_lines(
        model, [j.name for j in judges], [c.chunk_id for c, _ in usable], verdicts
    )
    if judgements_out is not None:
        judgements_out.writelines(lines)
    return aggregate_verdicts(
        [j.name for j in judges],
        [c.chunk_id for c in chunks],
        [c.chunk_id for c, _ in usable],
        verdicts,
    )


def judgement_lines(
    model: str,
    judge_names: Sequence[str],
    usable: Sequence[str],
    verdicts: Mapping[str, Mapping[str, Verdict | None]],
) -> list[str]:
    """``judgements.jsonl`` lines: per usable chunk, one line per judge."""
    texts = {name: {c: verdict_text(verdicts[name][c]) for c in usable} for name in judge_names}
    return judgement_lines_of_texts(model, judge_names, usable, texts)


def verdict_text(verdict: Verdict | None) -> str | None:
    """A verdict as its ``judgements.jsonl`` line holds it (None: the judge could not score)."""
    if verdict is None:
        return None
    return json.dumps(verdict.model_dump(mode="json"), ensure_ascii=False)


def judgement_lines_of_texts(
    model: str,
    judge_names: Sequence[str],
    usable: Sequence[str],
    texts: Mapping[str, Mapping[str, str | None]],
) -> list[str]:
    """:func:`judgement_lines` from each verdict's text (:func:`verdict_text`): the same bytes
    as ``json.dumps`` of the whole line, which writes a nested object as it writes it alone."""
    head = line_head(model)
    lines: list[str] = []
    for chunk_id in usable:
        chunk_lines(head, chunk_id, judge_names, [texts[n][chunk_id] for n in judge_names], lines)
    return lines


def line_head(model: str) -> str:
    """The start every ``judgements.jsonl`` line of ``model`` shares."""
    return f"{{{json.dumps('model')}: {json.dumps(model, ensure_ascii=False)}, "


def chunk_lines(
    head: str,
    chunk_id: str,
    judge_names: Sequence[str],
    texts: Sequence[str | None],
    lines: list[str],
) -> None:
    """One chunk's lines (one per judge, ``texts`` in the judges' order), appended."""
    chunk = json.dumps(chunk_id, ensure_ascii=False)
    for name, text in zip(judge_names, texts, strict=True):
        lines.append(
            f'{head}"chunk_id": {chunk}, "judge": {json.dumps(name, ensure_ascii=False)}, '
            f'"scored": {"true" if text is not None else "false"}, '
            f'"verdict": {text if text is not None else "null"}}}\n'
        )


def aggregate_verdicts(
    judge_names: Sequence[str],
    chunk_ids: Sequence[str],
    usable: Sequence[str],
    verdicts: Mapping[str, Mapping[str, Graded | None]],
) -> JudgeLayerResult:
    """The panel's result from every judge's verdicts (``{judge: {chunk_id: verdict}}``).

    A chunk whose extraction is missing or invalid has nothing to judge and scores 0 (as on
    layer 1). A chunk no judge could score is unscored: left out of the mean and counted.
    """
    usable_ids = set(usable)
    per_chunk: list[ChunkJudgement] = []
    values: list[float] = []
    for chunk_id in chunk_ids:
        if chunk_id not in usable_ids:
            values.append(0.0)
            continue
        agg = aggregate_chunk(chunk_id, [verdicts[name][chunk_id] for name in judge_names])
        per_chunk.append(agg)
        if agg.composite is not None:
            values.append(agg.composite)
    unscored = {n: sum(1 for v in verdicts[n].values() if v is None) for n in judge_names}
    per_judge = {}
    for name in judge_names:
        scored = [v.composite for v in verdicts[name].values() if v is not None]
        per_judge[name] = sum(scored) / len(scored) if scored else 0.0
    labels = Counter(label for agg in per_chunk for label in agg.labels.values())
    agreement = panel_agreement(verdicts, list(usable)) if len(judge_names) > 1 else {}
    return JudgeLayerResult(
        composite=sum(values) / len(values) if values else 0.0,
        chunks=per_chunk,
        unscored=unscored,
        unusable_chunks=len(chunk_ids) - len(usable),
        per_judge=per_judge,
        label_counts=dict(sorted(labels.items())),
        agreement=agreement,
    )


def judge_rows(model: str, chunk_ids: Sequence[str], result: JudgeLayerResult) -> list[Row]:
    rows: list[Row] = []
    by_id = {j.chunk_id: j for j in result.chunks}
    for chunk_id in chunk_ids:
        judgement = by_id.get(chunk_id)
        if judgement is None:  # unusable extraction: 0, as on layer 1
            rows.append((model, chunk_id, "judge", "composite", "score", 0.0))
            continue
        if judgement.scores is None or judgement.composite is None:
            continue  # unscored: no row, so it cannot be mistaken for a 0
        for name in SCORE_NAMES:
            rows.append((model, chunk_id, "judge", name, "score", judgement.scores[name]))
        rows.append((model, chunk_id, "judge", "composite", "score", judgement.composite))
    return rows + judge_run_rows(model, result)


def judge_run_rows(model: str, result: JudgeLayerResult) -> list[Row]:
    """The run-level layer-2 rows (after every chunk's)."""
    rows: list[Row] = []
    rows.append((model, RUN_LEVEL, "judge", "composite", "score", result.composite))
    for judge_name, value in result.per_judge.items():
        rows.append((model, RUN_LEVEL, "judge", "composite", f"judge:{judge_name}", value))
    for judge_name, count in result.unscored.items():
        rows.append((model, RUN_LEVEL, "judge", "unscored", f"judge:{judge_name}", float(count)))
    for label, count in result.label_counts.items():
        rows.append((model, RUN_LEVEL, "judge", "labels", label, float(count)))
    return rows
