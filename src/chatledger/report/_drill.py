"""The drill-down's data: per chunk, its messages, the reference's items, and for each
challenger its items, their alignment with the reference and the judges' labels.

Everything is packed for size: each distinct string is stored once in a table and referred to
by index (simulated and real challengers repeat the reference's wording a lot), and the page
builds a chunk's view only when it is opened. The page writes strings with ``textContent``,
never as HTML.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from chatledger.core import Chunk, ExtractionV3, RecordStatus
from chatledger.report._align import Item, align, field_items, scoring_context
from chatledger.report._context import ConsumerView, EventLine
from chatledger.report._load import RunFiles
from chatledger.scoring import ScoringConfig

# Fields in the order the drill-down lists them (the schema's order; confidence has no items).
STATUS_CODES = {"match": 0, "differs": 1, "missed": 2, "invented": 3, "duplicate": 4}


class StringTable:
    """Distinct strings, each stored once; callers keep indices (0 is the empty string)."""

    def __init__(self) -> None:
        self.strings: list[str] = [""]
        self._index: dict[str, int] = {"": 0}

    def __call__(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.strings)
            self.strings.append(text)
        return found


def _item(item: Item, s: StringTable) -> list[Any]:
    """``[text, meta, [evidence…], confidence]`` with trailing empty parts dropped."""
    packed: list[Any] = [s(item.text), s(item.meta), [s(e) for e in item.evidence]]
    if item.confidence is not None:
        packed.append(round(item.confidence, 3))
    elif not packed[2]:
        packed.pop()
        if packed[1] == 0:
            packed.pop()
    return packed


def scoring_config(files: RunFiles) -> ScoringConfig:
    """The run's own matcher, thresholds and schema (weights do not change any pairing)."""
    settings = files.run.scoring_settings()
    data: dict[str, Any] = {"matcher": settings.matcher}
    if settings.thresholds:
        data["thresholds"] = settings.thresholds
    return ScoringConfig.from_mapping(data, schema_version=settings.extraction_schema)


def _labels(files: RunFiles) -> dict[tuple[str, str], list[dict[str, Any]]]:
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for line in files.judgements:
        by_key[line.get("model", ""), line.get("chunk_id", "")].append(line)
    return by_key


def drill_payload(files: RunFiles, fields: list[str], s: StringTable) -> dict[str, Any] | None:
    """JSON-ready drill-down data, or None when the chunks or the reference are unavailable."""
    if files.chunks is None or files.reference is None:
        return None
    config = scoring_config(files)
    models = files.model_names
    judged = _labels(files)
    shown = [f for f in fields if f != "confidence"]
    chunks_out = []
    for chunk in files.chunks:
        ref_record = files.reference.records.get(chunk.chunk_id)
        ref = ref_record.extraction if ref_record is not None else None
        entry: dict[str, Any] = {
            "m": [[s(m.id), s(m.speaker), s(m.timestamp or ""), s(m.text)] for m in chunk.messages],
            "rs": "ok" if ref is not None else "unusable",
        }
        if ref is not None:
            ref_items = field_items(ref)
            entry["r"] = [[_item(i, s) for i in ref_items[f]] for f in shown]
            entry["v"] = [
                _model_view(files, name, chunk, ref, shown, config, judged, s) for name in models
            ]
        chunks_out.append(entry)
    return {"fields": shown, "chunks": chunks_out}


def events_payload(views: dict[str, list[ConsumerView]], s: StringTable) -> list[Any]:
    """Per model (leaderboard order), per consumer: missed and invented events as
    ``[text, [[chunk id, drill-down index or -1], …]]``."""

    def pack(lines: list[EventLine]) -> list[Any]:
        return [[s(e.text), [[s(c), -1 if i is None else i] for c, i in e.chunks]] for e in lines]

    return [
        {v.name: {"missed": pack(v.missed), "invented": pack(v.invented)} for v in model_views}
        for model_views in views.values()
    ]


def _model_view(
    files: RunFiles,
    name: str,
    chunk: Chunk,
    ref: ExtractionV3,
    shown: list[str],
    config: ScoringConfig,
    judged: dict[tuple[str, str], list[dict[str, Any]]],
    s: StringTable,
) -> dict[str, Any]:
    source = files.challengers.get(name)
    record = source.records.get(chunk.chunk_id) if source is not None else None
    scores = [files.chunk_value(name, chunk.chunk_id, "extraction", f) for f in shown]
    view: dict[str, Any] = {
        "sc": [None if v is None else round(v, 3) for v in scores],
    }
    composite = files.chunk_value(name, chunk.chunk_id, "extraction", "composite")
    if composite is not None:
        view["c"] = round(composite, 3)
    if source is None:
        view["st"] = "unavailable"
        return view
    if record is None or record.extraction is None:
        view["st"] = RecordStatus.MISSING.value if record is None else record.status.value
        view["pr"] = [s(str(p)) for p in (record.problems if record is not None else ())]
        return view
    view["st"] = "ok"
    pred = record.extraction
    items = field_items(pred)
    rows = align(ref, pred, scoring_context(chunk, config))
    view["p"] = [[_item(i, s) for i in items[f]] for f in shown]
    view["a"] = [_rows(rows.get(f, [])) for f in shown]
    verdicts = judged.get((name, chunk.chunk_id), [])
    if verdicts:
        view["j"] = _verdicts(verdicts, s)
    return view


def _rows(rows: list[Any]) -> list[int]:
    """Flat ``[ref, pred, status, similarity]`` quadruples (similarity −1 when none)."""
    flat: list[int] = []
    for row in rows:
        sim = -1 if row.similarity is None else round(row.similarity)
        flat.extend((row.ref, row.pred, STATUS_CODES[row.status], sim))
    return flat


def _verdicts(lines: list[dict[str, Any]], s: StringTable) -> dict[str, Any]:
    """Per judge: its three scores; per item id: ``[judge, label, reason]`` triples."""
    scores = []
    items: dict[str, list[list[int]]] = defaultdict(list)
    for line in lines:
        judge = s(str(line.get("judge", "")))
        verdict = line.get("verdict")
        if not line.get("scored") or not isinstance(verdict, dict):
            scores.append([judge, None, None, None])
            continue
        scores.append(
            [
                judge,
                verdict.get("content_accuracy"),
                verdict.get("completeness"),
                verdict.get("hallucination"),
            ]
        )
        for item in verdict.get("items", []):
            items[str(item.get("item_id", ""))].append(
                [judge, s(str(item.get("label", ""))), s(str(item.get("reason", "")))]
            )
    return {"scores": scores, "items": dict(items)}
