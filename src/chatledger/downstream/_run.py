"""Layer 3 over a run: every consumer on both sides, their agreements, the downstream composite."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatledger.core import Chunk, ExtractionRecord, InputError
from chatledger.downstream._base import ConsumerAgreement, ConsumerOutput, get_consumer
from chatledger.downstream._conversation import build_conversations
from chatledger.score import WeightError, merge_weights

CONSUMER_NAMES: tuple[str, ...] = ("drift", "loops", "escalation", "arcs", "daily_report")


# Equal weights. The composite divides by their sum, so only their ratios matter; they sum to 1
# so that consumer weights follow the same rule as field and layer weights.
DEFAULT_CONSUMER_WEIGHTS: dict[str, float] = dict.fromkeys(CONSUMER_NAMES, 1 / len(CONSUMER_NAMES))


def resolve_weights(weights: Mapping[str, Any] | None = None) -> dict[str, float]:
    """Consumer weights under the one weight rule (:func:`chatledger.score.merge_weights`):
    the defaults (0.2 each) with ``weights`` put in by name, each a finite number ≥ 0 (0 leaves
    a consumer out of the composite), summing to 1.

    Unknown names and weights that break the rule are input errors (``field`` names the
    consumer at fault, when one is).
    """
    given = dict(weights or {})
    for name in given:
        if name not in DEFAULT_CONSUMER_WEIGHTS:
            known = ", ".join(CONSUMER_NAMES)
            raise InputError(
                f"unknown downstream consumer {name!r} (known: {known})", field=str(name)
            )
    try:
        return merge_weights(DEFAULT_CONSUMER_WEIGHTS, given, what="consumer")
    except WeightError as exc:
        raise InputError(str(exc), field=exc.name) from None


@dataclass(frozen=True)
class ConsumerResult:
    """One consumer's outputs on both sides and how well they agree."""

    name: str
    weight: float
    result: ConsumerAgreement
    reference: ConsumerOutput[Any]
    challenger: ConsumerOutput[Any]

    @property
    def agreement(self) -> float:
        return self.result.agreement

    def to_dict(self) -> dict[str, Any]:
        data = self.result.to_dict()
        return {"agreement": data.pop("agreement"), "weight": self.weight, **data}


@dataclass(frozen=True)
class DownstreamReport:
    """Layer-3 result of one challenger against one reference (DESIGN.md §6 JSON contract)."""

    consumers: dict[str, ConsumerResult]
    downstream_composite: float

    @property
    def weights(self) -> dict[str, float]:
        return {name: c.weight for name, c in self.consumers.items()}

    def outputs(self, side: str) -> dict[str, ConsumerOutput[Any]]:
        """Each consumer's output on ``side`` ("reference" or "challenger")."""
        if side not in ("reference", "challenger"):
            raise ValueError(f"side must be 'reference' or 'challenger', not {side!r}")
        return {
            name: c.reference if side == "reference" else c.challenger
            for name, c in self.consumers.items()
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "consumers": {name: c.to_dict() for name, c in self.consumers.items()},
            "downstream_composite": self.downstream_composite,
        }


ConsumerOutputs = dict[str, ConsumerOutput[Any]]


def build_outputs(
    chunks: Sequence[Chunk], records: Mapping[str, ExtractionRecord]
) -> dict[str, ConsumerOutputs]:
    """Every consumer's output for each conversation of one model (conversation id → name →
    output). Consumers read each conversation on its own, so a run can build the reference's
    outputs once and reuse them for every challenger and for per-conversation agreement."""
    return {
        view.conversation_id: {name: get_consumer(name).build([view]) for name in CONSUMER_NAMES}
        for view in build_conversations(chunks, records)
    }


def merge_outputs(per_conversation: Mapping[str, ConsumerOutputs]) -> ConsumerOutputs:
    """The outputs of all conversations as one (what ``build`` over all of them gives)."""
    merged: ConsumerOutputs = {}
    for name in CONSUMER_NAMES:
        parts = [outputs[name] for outputs in per_conversation.values()]
        merged[name] = ConsumerOutput(
            name,
            tuple(e for part in parts for e in part.events),
            tuple(c for part in parts for c in part.chunks),
        )
    return merged


def compare_outputs(
    reference: ConsumerOutputs,
    challenger: ConsumerOutputs,
    weights: Mapping[str, float] | None = None,
) -> DownstreamReport:
    """Agreement of each consumer's challenger output with the reference's, and the composite.

    The composite is the weighted mean of the five agreements (:func:`resolve_weights`: the
    weights sum to 1, and the mean still divides by their sum so that five agreements of 1.0
    give exactly 1.0); each consumer's reported weight is its share of the total.
    """
    raw = resolve_weights(weights)
    total = sum(raw.values())
    results: dict[str, ConsumerResult] = {}
    for name in CONSUMER_NAMES:
        ref_out, chal_out = reference[name], challenger[name]
        agreement = get_consumer(name).agreement(ref_out, chal_out)
        results[name] = ConsumerResult(name, raw[name] / total, agreement, ref_out, chal_out)
    # Σ w·a / Σ w over the raw weights: identical agreements of 1.0 give exactly 1.0.
    composite = sum(raw[name] * r.agreement for name, r in results.items()) / total
    return DownstreamReport(results, composite)


def run_downstream(
    chunks: Sequence[Chunk],
    reference_records: Mapping[str, ExtractionRecord],
    challenger_records: Mapping[str, ExtractionRecord],
    weights: Mapping[str, float] | None = None,
) -> DownstreamReport:
    """Run the five consumers on the reference's and the challenger's extractions and compare.

    Chunks whose record is missing or not ``ok`` are read as empty extractions on that side.
    """
    if not chunks:
        raise InputError("no chunks to run the downstream consumers on")
    resolve_weights(weights)  # bad weights fail before any work
    reference_view = build_conversations(chunks, reference_records)
    challenger_view = build_conversations(chunks, challenger_records)
    reference = {name: get_consumer(name).build(reference_view) for name in CONSUMER_NAMES}
    challenger = {name: get_consumer(name).build(challenger_view) for name in CONSUMER_NAMES}
    return compare_outputs(reference, challenger, weights)
