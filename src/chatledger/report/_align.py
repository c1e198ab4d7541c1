"""Side-by-side alignment of a reference and a challenger extraction, as layer 1 matched them.

Pairs come from the scorers' own machinery — ``ScoringContext.match_texts`` for text fields and
``chatledger.matching.assign`` with the configured cutoffs (and the scorers' own weightings for
entities, phases and turning points) — so a pair shown side by side in the report is exactly a
pair that was scored, and an unpaired item is exactly one that counted as missed or invented.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chatledger.core import Chunk, ExtractionV3
from chatledger.matching import get_matcher, preprocess
from chatledger.scoring import (
    ChunkContext,
    ScoringConfig,
    ScoringContext,
    normalise_url,
    pair_entities,
    pair_phases,
    pair_turning_points,
)

# The scorers' own pairing rules for phases and turning points (private to score: reused, not
# re-implemented, so the report can never disagree with the score).

Status = Literal["match", "differs", "missed", "invented", "duplicate"]


@dataclass(frozen=True)
class Item:
    """One extracted item as the report shows it."""

    text: str
    meta: str = ""
    evidence: tuple[str, ...] = ()
    confidence: float | None = None


@dataclass(frozen=True)
class Row:
    """One line of an alignment table: a reference item, a challenger item, or both."""

    ref: int  # index into the reference's items of the field, -1 for none
    pred: int  # index into the challenger's items of the field, -1 for none
    status: Status
    similarity: float | None = None  # 0–100 where the matcher produced one


def _join(*parts: str | None) -> str:
    return " · ".join(p for p in parts if p)


def _who(label: str, name: str | None) -> str:
    return f"{label} {name}" if name else ""


def field_items(extraction: ExtractionV3) -> dict[str, list[Item]]:
    """Every displayable item of every field (``confidence`` has none of its own)."""
    e = extraction
    out: dict[str, list[Item]] = {
        "topics": [Item(t) for t in e.topics],
        "entities": [Item(x.name, x.type) for x in e.entities],
        "decisions": [
            Item(d.text, _who("made by", ", ".join(d.made_by)), tuple(d.evidence), d.confidence)
            for d in e.decisions
        ],
        "action_items": [
            Item(
                a.text,
                _join(_who("owner", a.owner), _who("due", a.due), a.status),
                tuple(a.evidence),
                a.confidence,
            )
            for a in e.action_items
        ],
        "open_questions": [
            Item(q.text, _who("asked by", q.asked_by), tuple(q.evidence), q.confidence)
            for q in e.open_questions
        ],
        "claims": [
            Item(
                c.text,
                _join(_who("subject", c.subject), c.polarity, _who("by", c.speaker)),
                tuple(c.evidence),
                c.confidence,
            )
            for c in e.claims
        ],
        "links": [Item(x.url, x.context) for x in e.links],
        "warnings": [Item(w.text, f"severity {w.severity}", tuple(w.evidence)) for w in e.warnings],
        "evidence_message_ids": [Item(m, "", (m,)) for m in e.evidence_message_ids],
        "summary": [Item(e.summary)] if e.summary.strip() else [],
        "qa_pairs": [
            Item(
                q.question,
                _join(
                    f"answer: {q.answer}" if q.answer else "no answer",
                    _who("asked by", q.asked_by),
                    _who("answered by", q.answered_by),
                ),
                tuple(q.evidence),
            )
            for q in e.qa_pairs
        ],
        "emotional_tone": [
            Item(f"{t.speaker}: {t.emotion}", f"intensity {t.intensity:.2f}", tuple(t.evidence))
            for t in e.emotional_tone
        ],
        "emotional_arc": _arc_items(e),
        "conversation_phases": [
            Item(p.phase, f"{p.start_message_id} → {p.end_message_id}", _phase_ids(p))
            for p in e.conversation_phases
        ],
        "implicit_assumptions": [
            Item(a.text, _who("held by", a.held_by), tuple(a.evidence))
            for a in e.implicit_assumptions
        ],
        "negotiation_patterns": [
            Item(n.pattern, _join(_who("by", n.actor), n.text), tuple(n.evidence))
            for n in e.negotiation_patterns
        ],
    }
    return out


def _phase_ids(phase: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys((phase.start_message_id, phase.end_message_id)))


ARC_SLOTS = ("opening", "closing", "trajectory")


def _arc_items(e: ExtractionV3) -> list[Item]:
    """The arc's three parts first (fixed positions 0–2), then its turning points."""
    arc = e.emotional_arc
    if arc is None:
        return []
    slots = [
        Item(f"opening mood: {arc.opening_mood}"),
        Item(f"closing mood: {arc.closing_mood}"),
        Item(f"trajectory: {arc.trajectory}"),
    ]
    points = [
        Item(t.description or "turning point", f"at {t.message_id}", (t.message_id,))
        for t in arc.turning_points
    ]
    return slots + points


def scoring_context(chunk: Chunk, config: ScoringConfig) -> ScoringContext:
    return ScoringContext(ChunkContext.from_chunk(chunk), config, get_matcher(config.matcher))


def align(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> dict[str, list[Row]]:
    """Alignment rows of every displayable field, in the scorers' pairing."""
    rows: dict[str, list[Row]] = {}
    for name, texts in _TEXT_FIELDS.items():
        rows[name] = _text_rows(name, texts(ref), texts(pred), ctx)
    rows["entities"] = _entity_rows(ref, pred, ctx)
    normal = normalise_url
    rows["links"] = _key_rows(
        [normal(x.url) for x in ref.links], [normal(x.url) for x in pred.links]
    )
    rows["evidence_message_ids"] = _key_rows(ref.evidence_message_ids, pred.evidence_message_ids)
    rows["emotional_tone"] = _key_rows(
        [(ctx.resolve(t.speaker), t.emotion) for t in ref.emotional_tone],
        [(ctx.resolve(t.speaker), t.emotion) for t in pred.emotional_tone],
    )
    rows["negotiation_patterns"] = _key_rows(
        [(n.pattern, ctx.resolve(n.actor)) for n in ref.negotiation_patterns],
        [(n.pattern, ctx.resolve(n.actor)) for n in pred.negotiation_patterns],
    )
    rows["summary"] = _summary_rows(ref, pred, ctx)
    rows["emotional_arc"] = _arc_rows(ref, pred, ctx)
    rows["conversation_phases"] = _phase_rows(ref, pred, ctx)
    return rows


Texts = Callable[[ExtractionV3], list[str]]

# Field → the texts its scorer matches (the scorer's cache key is the field name).
_TEXT_FIELDS: dict[str, Texts] = {
    "topics": lambda e: list(e.topics),
    "decisions": lambda e: [x.text for x in e.decisions],
    "action_items": lambda e: [x.text for x in e.action_items],
    "open_questions": lambda e: [x.text for x in e.open_questions],
    "claims": lambda e: [x.text for x in e.claims],
    "warnings": lambda e: [x.text for x in e.warnings],
    "qa_pairs": lambda e: [x.question for x in e.qa_pairs],
    "implicit_assumptions": lambda e: [x.text for x in e.implicit_assumptions],
}


def _unpaired(n_ref: int, n_pred: int, pairs: dict[int, tuple[int, float | None]]) -> list[Row]:
    """Reference order, each item with its partner or as missed; then the invented ones."""
    out: list[Row] = []
    for i in range(n_ref):
        if i in pairs:
            j, sim = pairs[i]
            out.append(Row(i, j, "match", sim))
        else:
            out.append(Row(i, -1, "missed"))
    used = {j for j, _ in pairs.values()}
    out.extend(Row(-1, j, "invented") for j in range(n_pred) if j not in used)
    return out


def _text_rows(key: str, ref: list[str], pred: list[str], ctx: ScoringContext) -> list[Row]:
    pairs: dict[int, tuple[int, float | None]] = {}
    if ref and pred:
        rows, cols = ctx.match_texts(key, ref, pred)
        if len(rows):
            sims = ctx.matcher.matrix(preprocess(ref), preprocess(pred))
            for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
                pairs[i] = (j, float(sims[i, j]))
    return _unpaired(len(ref), len(pred), pairs)


def _entity_rows(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> list[Row]:
    """The entity scorer's pairing: name fuzzy ≥ cutoff and the same type, exact names first."""
    pairing = pair_entities(ref.entities, pred.entities, ctx)
    pairs: dict[int, tuple[int, float | None]] = {
        i: (j, sim)
        for i, j, sim in zip(pairing.rows, pairing.cols, pairing.similarity, strict=True)
    }
    return _unpaired(len(ref.entities), len(pred.entities), pairs)


def _key_rows(ref: Sequence[Hashable], pred: Sequence[Hashable]) -> list[Row]:
    """Set-F1 fields: items pair on an equal key; a repeated key counts once (a duplicate)."""
    first_pred: dict[Hashable, int] = {}
    for j, key in enumerate(pred):
        first_pred.setdefault(key, j)
    out: list[Row] = []
    seen_ref: set[Hashable] = set()
    for i, key in enumerate(ref):
        if key in seen_ref:
            out.append(Row(i, -1, "duplicate"))
            continue
        seen_ref.add(key)
        partner = first_pred.get(key)
        out.append(Row(i, -1, "missed") if partner is None else Row(i, partner, "match"))
    ref_keys = set(ref)
    for j, key in enumerate(pred):
        if first_pred[key] != j:
            out.append(Row(-1, j, "duplicate"))
        elif key not in ref_keys:
            out.append(Row(-1, j, "invented"))
    return out


def _summary_rows(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> list[Row]:
    a, b = ref.summary.strip(), pred.summary.strip()
    if a and b:
        sim = float(ctx.matcher.matrix(preprocess([a]), preprocess([b]))[0, 0])
        return [Row(0, 0, "match" if sim >= 100.0 else "differs", sim)]
    return _unpaired(int(bool(a)), int(bool(b)), {})


def _arc_rows(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> list[Row]:
    a, b = ref.emotional_arc, pred.emotional_arc
    if a is None or b is None:
        return _unpaired(len(_arc_items(ref)), len(_arc_items(pred)), {})
    same = (
        a.opening_mood == b.opening_mood,
        a.closing_mood == b.closing_mood,
        a.trajectory == b.trajectory,
    )
    rows = [Row(k, k, "match" if ok else "differs") for k, ok in enumerate(same)]
    ref_ids = [t.message_id for t in a.turning_points]
    pred_ids = [t.message_id for t in b.turning_points]
    pairs: dict[int, tuple[int, float | None]] = {}
    if ref_ids and pred_ids:
        found, cols = pair_turning_points(ref_ids, pred_ids, ctx)
        pairs = {i: (j, None) for i, j in zip(found.tolist(), cols.tolist(), strict=True)}
    offset = len(ARC_SLOTS)
    for row in _unpaired(len(ref_ids), len(pred_ids), pairs):
        rows.append(
            Row(
                row.ref + offset if row.ref >= 0 else -1,
                row.pred + offset if row.pred >= 0 else -1,
                row.status,
            )
        )
    return rows


def _phase_rows(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> list[Row]:
    """The phase scorer's pairing: the same label, the best range overlap among candidates."""
    a, b = ref.conversation_phases, pred.conversation_phases
    pairs: dict[int, tuple[int, float | None]] = {}
    rows, cols, ious = pair_phases(a, b, ctx)
    for i, j, iou in zip(rows, cols, ious, strict=True):
        pairs[i] = (j, iou * 100.0)  # range overlap, %
    return _unpaired(len(a), len(b), pairs)
