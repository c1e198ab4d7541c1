"""Escalation: per-chunk flags for arguments and emotional peaks.

- ``argument``: an ``ultimatum`` negotiation pattern, a ``high``-severity warning, or a
  ``conflict`` conversation phase.
- ``emotional_peak``: an emotional-tone reading of anger, fear, disgust or sadness with
  intensity ≥ 0.7.

Agreement is the F1 of the two sets of (chunk, flag) pairs. Cohen's κ over every (chunk, flag)
unit of the run (two binary ratings per chunk) is reported alongside, overall and per flag; see
:func:`cohen_kappa` for the constant-rater case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chatledger.downstream._agreement import (
    F1_COUNTS,
    F1_EVIDENCE,
    f1_agreement,
    kappa_of_table,
    rating_table,
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

if TYPE_CHECKING:
    from chatledger.core import ExtractionV3

ARGUMENT = "argument"
EMOTIONAL_PEAK = "emotional_peak"
FLAGS = (ARGUMENT, EMOTIONAL_PEAK)
PEAK_EMOTIONS = frozenset({"anger", "fear", "disgust", "sadness"})
PEAK_INTENSITY = 0.7


@dataclass(frozen=True)
class EscalationFlag(DownstreamEvent):
    """Chunk ``chunk_id`` shows ``flag``; ``reasons`` say why (not part of equality)."""

    chunk_id: str
    position: int
    flag: str
    reasons: tuple[str, ...] = field(default=(), compare=False)

    def describe(self) -> str:
        label = self.flag.replace("_", " ")
        return f"{label} ({'; '.join(self.reasons)})" if self.reasons else label

    def about(self) -> tuple[str, ...]:
        return (self.chunk_id,)


def argument_reasons(extraction: ExtractionV3) -> list[str]:
    reasons = [
        f"ultimatum by {m.actor}" if m.actor else "ultimatum"
        for m in extraction.negotiation_patterns
        if m.pattern == "ultimatum"
    ]
    reasons.extend(f"high warning: {w.text}" for w in extraction.warnings if w.severity == "high")
    if any(p.phase == "conflict" for p in extraction.conversation_phases):
        reasons.append("conflict phase")
    return reasons


def peak_reasons(extraction: ExtractionV3) -> list[str]:
    return [
        f"{t.speaker}: {t.emotion} {t.intensity:.2f}"
        for t in extraction.emotional_tone
        if t.emotion in PEAK_EMOTIONS and t.intensity >= PEAK_INTENSITY
    ]


def conversation_flags(conversation: ConversationView) -> tuple[EscalationFlag, ...]:
    """Every flag of every chunk, in chunk order (argument before emotional peak)."""
    return conversation.derived("escalation", _compute_escalation)


def _compute_escalation(conversation: ConversationView) -> tuple[EscalationFlag, ...]:
    flags: list[EscalationFlag] = []
    for view in conversation.chunks:
        for flag, reasons in (
            (ARGUMENT, argument_reasons(view.extraction)),
            (EMOTIONAL_PEAK, peak_reasons(view.extraction)),
        ):
            if reasons:
                flags.append(
                    EscalationFlag(
                        conversation.conversation_id,
                        view.chunk_id,
                        view.position,
                        flag,
                        tuple(reasons),
                    )
                )
    return tuple(flags)


@CONSUMERS.register("escalation")
class EscalationConsumer(Consumer[EscalationFlag]):
    """Agreement: F1 on the (chunk, flag) sets; κ on per-chunk flags in the details."""

    name = "escalation"
    reads = ("warnings", "emotional_tone", "conversation_phases", "negotiation_patterns")
    count_names = F1_COUNTS
    evidence_counts = F1_EVIDENCE

    @staticmethod
    def agreement_from_counts(counts: Counts) -> FloatArray:
        """F1 = 2·matched / (n_reference + n_challenger) of the (chunk, flag) sets; both empty
        1.0, one side empty 0 (κ is reported beside it and is not additive)."""
        return f1_agreement(counts)

    def build(self, conversations: Sequence[ConversationView]) -> ConsumerOutput[EscalationFlag]:
        return self.output([f for c in conversations for f in conversation_flags(c)], conversations)

    def agreement(
        self,
        reference: ConsumerOutput[EscalationFlag],
        challenger: ConsumerOutput[EscalationFlag],
    ) -> ConsumerAgreement:
        ref = set(reference.events)
        chal = set(challenger.events)
        both = ref & chal
        tables = rating_tables(reference, challenger)
        return self.counted(
            {"matched": len(both), "n_reference": len(ref), "n_challenger": len(chal)},
            escalation_details(len(ref), len(chal), len(both), tables),
            [f for f in reference.events if f not in chal],
            [f for f in challenger.events if f not in ref],
        )


def rating_tables(
    reference: ConsumerOutput[EscalationFlag], challenger: ConsumerOutput[EscalationFlag]
) -> dict[str, tuple[int, ...]]:
    """Per flag, the :func:`rating_table` of the two sides over the chunks either looked at
    (flagged or not); the tables of disjoint conversations add up."""
    chunks = [(c.conversation_id, c.chunk_id) for c in union_chunks(reference, challenger)]
    ref_on = {(f.conversation_id, f.chunk_id, f.flag) for f in reference.events}
    chal_on = {(f.conversation_id, f.chunk_id, f.flag) for f in challenger.events}
    return {
        flag: rating_table(
            [(conv, cid, flag) in ref_on for conv, cid in chunks],
            [(conv, cid, flag) in chal_on for conv, cid in chunks],
        )
        for flag in FLAGS
    }


def escalation_details(
    n_reference: int, n_challenger: int, matched: int, tables: dict[str, tuple[int, ...]]
) -> dict[str, Any]:
    """The agreement's details: the counts, κ over every (chunk, flag) rating, κ per flag and
    the chunks rated (each flag's table rates every chunk once)."""
    overall = tuple(sum(parts) for parts in zip(*tables.values(), strict=True))
    return {
        "n_reference": n_reference,
        "n_challenger": n_challenger,
        "matched": matched,
        "kappa": kappa_of_table(overall) if tables else 1.0,
        **{f"kappa_{flag}": kappa_of_table(table) for flag, table in tables.items()},
        "n_chunks": tables[FLAGS[0]][0] if tables else 0,
    }
