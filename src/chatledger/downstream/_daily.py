"""Daily report: per (conversation, day) highlight lines a person would read at the end of a day.

A chunk belongs to the day of its first timestamped message (``undated`` without one). Lines, in
this order, each in chunk order and each written once per day:

- ``decision: <text>`` for every decision;
- ``action: <owner>: <text>`` for every *new* action item, i.e. one that matches (fuzzy ≥ 0.60)
  no action item of an earlier chunk of the conversation (owner resolved to a participant,
  ``unassigned`` when there is none);
- ``drift: <speaker> on <subject>: <from> -> <to>`` for every drift event;
- ``escalation: argument`` / ``escalation: emotional peak`` when a chunk of the day is flagged;
- ``open loop: <text>`` for every loop, on the day of its last mention.

Agreement is the fuzzy F1 of the two sides' lines per day, averaged over the union of days that
have at least one line on either side (a day with lines on one side only scores 0; no lines at all
→ 1.0). Token-set similarity ignores word order and rewards a shared keyword, so it cannot tell
"pro -> con" from "con -> pro" or "argument" from "emotional peak": lines therefore pair only
when their kind and their categorical part (drift speaker and direction, escalation flag, action
owner) are equal, and fuzzy ≥ 0.60 is required of the free text (decision, action, loop text,
drift subject).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chatledger.core import FIELDS_V3
from chatledger.downstream._agreement import (
    TEXT_CUTOFF,
    f1_from_counts,
    fuzzy_pairs,
    share_or_one,
    similarity,
    union_chunks,
)
from chatledger.downstream._base import (
    CONSUMERS,
    Consumer,
    ConsumerAgreement,
    ConsumerOutput,
    Counts,
    DownstreamEvent,
    FloatArray,
)
from chatledger.downstream._conversation import ConversationView
from chatledger.downstream._drift import DriftConsumer, conversation_drifts
from chatledger.downstream._escalation import EscalationConsumer, conversation_flags
from chatledger.downstream._loops import LoopsConsumer, conversation_loops

KINDS = ("decision", "action", "drift", "escalation", "open loop")


@dataclass(frozen=True)
class Highlight(DownstreamEvent):
    """One line of the report of ``day``: ``kind`` + exact ``guard`` + fuzzy ``body``."""

    day: str
    kind: str
    line: str
    body: str
    guard: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = field(default=(), compare=False)

    def describe(self) -> str:
        return self.line

    def about(self) -> tuple[str, ...]:
        return self.chunk_ids


@dataclass
class _DayLines:
    """Lines of one day, deduplicated on (kind, guard, normalised body)."""

    lines: dict[tuple[str, tuple[str, ...], str], tuple[str, str, list[str]]] = field(
        default_factory=dict
    )

    def add(self, kind: str, guard: tuple[str, ...], body: str, line: str, chunk_id: str) -> None:
        from chatledger.matching import preprocess

        key = (kind, guard, preprocess([body])[0])
        entry = self.lines.setdefault(key, (line, body, []))
        if chunk_id not in entry[2]:
            entry[2].append(chunk_id)


def _new_action_flags(conversation: ConversationView) -> list[list[bool]]:
    """Per chunk, per action item: True when no earlier chunk had a matching action item."""
    texts = [a.text for v in conversation.chunks for a in v.extraction.action_items]
    positions = [v.position for v in conversation.chunks for _ in v.extraction.action_items]
    scores = similarity(texts, texts)
    at = np.array(positions, dtype=np.intp)
    earlier = at[None, :] < at[:, None]  # earlier[i, j]: item j is from an earlier chunk than i
    seen_before = np.asarray(((scores >= TEXT_CUTOFF) & earlier).any(axis=1), dtype=bool)
    flags = [not bool(seen) for seen in seen_before]
    out: list[list[bool]] = []
    start = 0
    for view in conversation.chunks:
        count = len(view.extraction.action_items)
        out.append(flags[start : start + count])
        start += count
    return out


def conversation_report(conversation: ConversationView) -> list[Highlight]:
    """Highlight lines of every day of the conversation, day by day in time order."""
    days: dict[str, dict[str, _DayLines]] = {}

    def bucket(day: str, kind: str) -> _DayLines:
        return days.setdefault(day, {k: _DayLines() for k in KINDS})[kind]

    new_actions = _new_action_flags(conversation)
    for view, new_flags in zip(conversation.chunks, new_actions, strict=True):
        day, cid = view.ref.day, view.chunk_id
        for decision in view.extraction.decisions:
            bucket(day, "decision").add(
                "decision", (), decision.text, f"decision: {decision.text}", cid
            )
        for item, new in zip(view.extraction.action_items, new_flags, strict=True):
            if new:
                owner = view.speaker(item.owner) or "unassigned"
                line = f"action: {owner}: {item.text}"
                bucket(day, "action").add("action", (owner.casefold(),), item.text, line, cid)
    day_of = {v.chunk_id: v.ref.day for v in conversation.chunks}
    for drift in conversation_drifts(conversation):
        direction = (drift.speaker.casefold(), drift.from_polarity, drift.to_polarity)
        line = f"drift: {drift.describe()}"
        bucket(day_of[drift.chunk_id], "drift").add(
            "drift", direction, drift.subject, line, drift.chunk_id
        )
    for flag in conversation_flags(conversation):
        line = f"escalation: {flag.flag.replace('_', ' ')}"
        bucket(day_of[flag.chunk_id], "escalation").add(
            "escalation", (flag.flag,), "", line, flag.chunk_id
        )
    for loop in conversation_loops(conversation):
        last = loop.chunk_ids[-1]
        bucket(day_of[last], "open loop").add(
            "open loop", (), loop.text, f"open loop: {loop.text}", last
        )
    chronological = list(dict.fromkeys(v.ref.day for v in conversation.chunks))
    highlights: list[Highlight] = []
    for day in sorted(days, key=chronological.index):
        for kind, lines in days[day].items():
            for (_, exact, _), (line, body, chunk_ids) in lines.lines.items():
                highlights.append(
                    Highlight(
                        conversation.conversation_id, day, kind, line, body, exact, tuple(chunk_ids)
                    )
                )
    return highlights


@CONSUMERS.register("daily_report")
class DailyReportConsumer(Consumer[Highlight]):
    """Agreement: per-day fuzzy F1 of highlight lines, averaged over the union of days."""

    name = "daily_report"
    # Its own lines (decisions, new action items with their owners) and those of the drift,
    # escalation and loops it reports, so everything they read.
    reads = tuple(
        name
        for name in FIELDS_V3
        if name in ("decisions", "action_items")
        or name in (*DriftConsumer.reads, *EscalationConsumer.reads, *LoopsConsumer.reads)
    )
    count_names = ("f1_sum", "n_days")
    evidence_counts = ("n_days",)  # days with a line on either side

    @staticmethod
    def agreement_from_counts(counts: Counts) -> FloatArray:
        """f1_sum / n_days, the mean per-day F1; no day with a line on either side → 1.0."""
        return share_or_one(counts["f1_sum"], counts["n_days"])

    def build(self, conversations: Sequence[ConversationView]) -> ConsumerOutput[Highlight]:
        return self.output(
            [h for c in conversations for h in conversation_report(c)], conversations
        )

    def agreement(
        self, reference: ConsumerOutput[Highlight], challenger: ConsumerOutput[Highlight]
    ) -> ConsumerAgreement:
        ref_days = _by_day(reference.events)
        chal_days = _by_day(challenger.events)
        per_day: list[dict[str, Any]] = []
        missed: list[Highlight] = []
        invented: list[Highlight] = []
        for key in dict.fromkeys([*ref_days, *chal_days]):
            ref, chal = ref_days.get(key, []), chal_days.get(key, [])
            pairs = fuzzy_pairs(ref, chal, key=lambda h: (h.kind, h.guard), text=lambda h: h.body)
            ref_hit = {i for i, _ in pairs}
            chal_hit = {j for _, j in pairs}
            missed.extend(h for i, h in enumerate(ref) if i not in ref_hit)
            invented.extend(h for j, h in enumerate(chal) if j not in chal_hit)
            per_day.append(
                {
                    "conversation_id": key[0],
                    "day": key[1],
                    "f1": f1_from_counts(len(pairs), len(ref), len(chal)),
                    "n_reference": len(ref),
                    "n_challenger": len(chal),
                    "matched": len(pairs),
                }
            )
        # Summed per conversation, then over conversations in run order: exactly what adding
        # up the per-conversation counts in run order gives (float sums depend on grouping).
        by_conversation = {c.conversation_id: 0.0 for c in union_chunks(reference, challenger)}
        for day in per_day:
            conversation = day["conversation_id"]
            by_conversation[conversation] = by_conversation.get(conversation, 0.0) + day["f1"]
        f1_sum = sum(by_conversation.values(), 0.0)
        details: dict[str, Any] = {
            "n_days": len(per_day),
            "n_reference": len(reference.events),
            "n_challenger": len(challenger.events),
            "matched": sum(d["matched"] for d in per_day),
            "days": per_day,
        }
        return self.counted({"f1_sum": f1_sum, "n_days": len(per_day)}, details, missed, invented)


def _by_day(highlights: Sequence[Highlight]) -> dict[tuple[str, str], list[Highlight]]:
    grouped: dict[tuple[str, str], list[Highlight]] = {}
    for h in highlights:
        grouped.setdefault((h.conversation_id, h.day), []).append(h)
    return grouped
