"""Layer 3 over a run: every consumer on both sides, their agreements, the downstream composite.

Against a partial reference (human gold whose records carry ``covers``) a consumer runs only when
the reference covers every field it reads (DESIGN.md §7); the others are skipped, named with the
fields that were missing, and the composite is renormalised over the consumers that ran.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from chatledger.core import FIELDS_V3, InputError
from chatledger.downstream._base import (
    CONSUMERS,
    ConsumerAgreement,
    ConsumerOutput,
    Counts,
    FloatArray,
    get_consumer,
)
from chatledger.downstream._conversation import build_conversations
from chatledger.scoring import NO_EVENTS, WeightError, combine, combine_arrays, merge_weights

if TYPE_CHECKING:
    from chatledger.core import Chunk, ExtractionRecord

# The built-in consumers; a consumer another package adds (CONSUMERS, entry-point group
# chatledger.consumers) takes part when the weights name it (:func:`consumer_names`).
CONSUMER_NAMES: tuple[str, ...] = ("drift", "loops", "escalation", "arcs", "daily_report")


# Equal weights. The composite divides by their sum, so only their ratios matter; they sum to 1
# so that consumer weights follow the same rule as field and layer weights.
DEFAULT_CONSUMER_WEIGHTS: dict[str, float] = dict.fromkeys(CONSUMER_NAMES, 1 / len(CONSUMER_NAMES))


def resolve_weights(weights: Mapping[str, Any] | None = None) -> dict[str, float]:
    """Consumer weights under the one weight rule (:func:`chatledger.scoring.merge_weights`):
    the defaults (0.2 each) with ``weights`` put in by name, each a finite number ≥ 0 (0 leaves
    a consumer out of the composite), summing to 1.

    Unknown names and weights that break the rule are input errors (``field`` names the
    consumer at fault, when one is).
    """
    given = dict(weights or {})
    defaults = dict(DEFAULT_CONSUMER_WEIGHTS)
    for name in given:
        if name not in CONSUMERS:
            known = ", ".join(sorted(CONSUMERS.names()))
            raise InputError(
                f"unknown downstream consumer {name!r} (known: {known})", field=str(name)
            )
        # A consumer of another package joins the run only when named, at weight 0 unless given.
        defaults.setdefault(name, 0.0)
    try:
        return merge_weights(defaults, given, what="consumer")
    except WeightError as exc:
        raise InputError(str(exc), field=exc.name) from None


def consumer_names(weights: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The consumers a run with these consumer ``weights`` runs: the built-in five, then any
    consumer of another package the weights name (:func:`resolve_weights`)."""
    return tuple(resolve_weights(weights)) if weights else CONSUMER_NAMES


def reference_coverage(
    records: Mapping[str, ExtractionRecord], chunks: Sequence[Chunk] | None = None
) -> tuple[str, ...] | None:
    """The fields a reference speaks to: the intersection of ``covers`` over its usable records
    (of ``chunks`` when given), in schema order. None when no usable record has ``covers`` (a
    model's reference speaks to every field); a record without ``covers`` restricts nothing."""
    ids = [c.chunk_id for c in chunks] if chunks is not None else list(records)
    covered: set[str] | None = None
    for chunk_id in ids:
        covered = narrow_coverage(covered, records.get(chunk_id))
    return coverage_fields(covered)


def narrow_coverage(covered: set[str] | None, record: ExtractionRecord | None) -> set[str] | None:
    """One step of :func:`reference_coverage` (a reader streaming the reference): what is
    covered once ``record`` is counted (None: nothing restricts yet)."""
    if record is None:
        return covered
    from chatledger.core import RecordStatus  # a record exists: its module is loaded

    if record.status is not RecordStatus.OK or record.extraction is None or record.covers is None:
        return covered
    return set(record.covers) if covered is None else covered & set(record.covers)


def coverage_fields(covered: set[str] | None) -> tuple[str, ...] | None:
    """:func:`reference_coverage`'s answer from what :func:`narrow_coverage` gathered."""
    if covered is None:
        return None
    return (*(f for f in FIELDS_V3 if f in covered), *sorted(covered.difference(FIELDS_V3)))


def skipped_consumers(
    covered: Collection[str] | None, weights: Mapping[str, Any] | None = None
) -> dict[str, list[str]]:
    """The consumers (of :func:`consumer_names`) that do not run against a reference covering
    only ``covered``, each with the fields it reads that are not covered (none when ``covered``
    is None)."""
    skipped: dict[str, list[str]] = {}
    for name in consumer_names(weights):
        missing = CONSUMERS.get(name).missing_fields(covered)
        if missing:
            skipped[name] = missing
    return skipped


def composite_from_counts(
    counts: Mapping[str, Counts],
    weights: Mapping[str, float] | None = None,
    ran: Collection[str] | None = None,
) -> FloatArray:
    """The downstream composite of consumers' summed counts, elementwise: Σ w·a / Σ w over the
    consumers that ran and have evidence, each ``a`` its ``agreement_from_counts`` and ``w``
    its weight of :func:`resolve_weights` (``weights``) — the arithmetic of
    :func:`compare_outputs`, which computes its composite with this function.

    ``counts`` maps each consumer that ran to its counts, all arrays of one shape (a leading
    batch dimension: one entry per bootstrap resample, say) or numbers; ``ran`` names the
    consumers that ran (default: those in ``counts``; skipped consumers are left out and the
    weights renormalised over the others). A consumer whose counts hold no event on either
    side (:meth:`Consumer.evidence`) gives no evidence and is left out of that entry, the
    weights renormalised over the rest (:func:`chatledger.scoring.combine_arrays`); an entry
    where no consumer has evidence is NaN ("no events": the layer leaves the overall). Raises
    ValueError when the consumers that ran weigh 0 together: there is no composite
    (:func:`compare_outputs` reports None).
    """
    raw = resolve_weights(weights)
    chosen = set(counts if ran is None else ran)
    unknown = sorted(chosen.difference(raw))
    if unknown:
        raise ValueError(f"unknown downstream consumer(s): {', '.join(unknown)}")
    names = [name for name in raw if name in chosen]
    absent = [name for name in names if name not in counts]
    if absent:
        raise ValueError(f"no counts for consumer(s) that ran: {', '.join(absent)}")
    total = sum((raw[name] for name in names), 0.0)
    if not total > 0:
        raise ValueError("no consumer with a weight above 0 ran: there is no downstream composite")
    agreements: dict[str, FloatArray] = {}
    for name in names:
        consumer = CONSUMERS.get(name)
        value = np.asarray(consumer.agreement_from_counts(counts[name]), dtype=np.float64)
        agreements[name] = np.where(consumer.evidence(counts[name]), value, np.nan)
    result: FloatArray = combine_arrays(agreements, {name: raw[name] for name in names})
    return result


def no_events(counts: Mapping[str, Counts]) -> list[str]:
    """The consumers (of ``counts``, one run's numbers) with no event on either side."""
    return [name for name, c in counts.items() if not bool(CONSUMERS.get(name).evidence(c))]


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
    """Layer-3 result of one challenger against one reference (DESIGN.md §6 JSON contract).

    ``consumers`` are the consumers that ran; ``skipped`` names each consumer that did not
    (the reference does not cover every field it reads) with the fields that were missing.
    ``left_out`` names each consumer that ran but is not in the composite, with the reason
    ("no events": no event on either side anywhere, DESIGN.md §5), and ``combined`` says how
    the composite renormalised. ``downstream_composite`` is None when no consumer with a
    weight above 0 ran, or none of them had an event ("no events").
    """

    consumers: dict[str, ConsumerResult]
    downstream_composite: float | None
    skipped: dict[str, list[str]] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    renormalisation: str | None = None  # the line saying what was left out and the weights

    @property
    def weights(self) -> dict[str, float]:
        return {name: c.weight for name, c in self.consumers.items()}

    @property
    def counts(self) -> dict[str, dict[str, float]]:
        """Each consumer's additive counts (see :func:`composite_from_counts`)."""
        return {name: dict(c.result.counts) for name, c in self.consumers.items()}

    def outputs(self, side: str) -> dict[str, ConsumerOutput[Any]]:
        """Each consumer's output on ``side`` ("reference" or "challenger")."""
        if side not in ("reference", "challenger"):
            raise ValueError(f"side must be 'reference' or 'challenger', not {side!r}")
        return {
            name: c.reference if side == "reference" else c.challenger
            for name, c in self.consumers.items()
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; ``skipped`` is there when a consumer was skipped."""
        data: dict[str, Any] = {
            "consumers": {name: c.to_dict() for name, c in self.consumers.items()},
            "downstream_composite": self.downstream_composite,
        }
        if self.skipped:
            data["skipped"] = {name: list(missing) for name, missing in self.skipped.items()}
        if self.left_out:
            data["left_out"] = dict(self.left_out)
            data["renormalisation"] = self.renormalisation
        return data


ConsumerOutputs = dict[str, ConsumerOutput[Any]]


def _running(covered: Collection[str] | None, weights: Mapping[str, Any] | None) -> list[str]:
    skipped = skipped_consumers(covered, weights)
    return [name for name in consumer_names(weights) if name not in skipped]


def build_outputs(
    chunks: Sequence[Chunk],
    records: Mapping[str, ExtractionRecord],
    covered: Collection[str] | None = None,
    weights: Mapping[str, Any] | None = None,
) -> dict[str, ConsumerOutputs]:
    """The output of every consumer (of :func:`consumer_names`) that runs against a reference
    covering ``covered`` (all for None) for each conversation of one model (conversation id →
    name → output).
    Consumers read each conversation on its own, so a run can build the reference's outputs
    once and reuse them for every challenger and for per-conversation agreement."""
    names = _running(covered, weights)
    return {
        view.conversation_id: {name: get_consumer(name).build([view]) for name in names}
        for view in build_conversations(chunks, records)
    }


def merge_outputs(per_conversation: Mapping[str, ConsumerOutputs]) -> ConsumerOutputs:
    """The outputs of all conversations as one (what ``build`` over all of them gives), for
    the consumers every conversation has."""
    merged: ConsumerOutputs = {}
    names = dict.fromkeys(name for outputs in per_conversation.values() for name in outputs)
    for name in names:
        if not all(name in outputs for outputs in per_conversation.values()):
            continue
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
    covered: Collection[str] | None = None,
) -> DownstreamReport:
    """Agreement of each consumer's challenger output with the reference's, and the composite.

    ``covered`` are the fields the reference covers (:func:`reference_coverage`; None: all): a
    consumer reading a field outside them is skipped (its outputs need not be given). The
    composite is the weighted mean of the agreements of the consumers that ran
    (:func:`composite_from_counts`: the weights of :func:`resolve_weights` renormalised over
    them, dividing by their sum so that agreements of 1.0 give exactly 1.0), None when no
    consumer with a weight above 0 ran; each consumer's reported weight is its share of that sum.
    """
    raw = resolve_weights(weights)
    skipped = skipped_consumers(covered, weights)
    names = [name for name in raw if name not in skipped]
    agreements = {}
    for name in names:
        ref_out, chal_out = reference[name], challenger[name]
        agreements[name] = get_consumer(name).agreement(ref_out, chal_out)
    combined = combine_agreements(agreements, weights, covered)
    results = {
        name: ConsumerResult(
            name, combined.weights[name], agreements[name], reference[name], challenger[name]
        )
        for name in names
    }
    return DownstreamReport(
        results,
        combined.composite,
        combined.skipped,
        combined.left_out,
        combined.renormalisation,
    )


@dataclass(frozen=True)
class CombinedAgreements:
    """What the consumers' agreements make together (:func:`combine_agreements`)."""

    weights: dict[str, float]  # each consumer that ran: its share of the weights
    composite: float | None
    skipped: dict[str, list[str]]
    left_out: dict[str, str]
    renormalisation: str | None


def combine_agreements(
    agreements: Mapping[str, ConsumerAgreement],
    weights: Mapping[str, float] | None = None,
    covered: Collection[str] | None = None,
) -> CombinedAgreements:
    """The composite of the agreements of the consumers that ran (those :func:`compare_outputs`
    compares, in the order of :func:`resolve_weights`), each consumer's weight in it, the
    consumers skipped and those left out: :func:`compare_outputs`'s arithmetic, for
    agreements however they were computed (a run merges them conversation by conversation)."""
    raw = resolve_weights(weights)
    skipped = skipped_consumers(covered, weights)
    names = [name for name in raw if name not in skipped]
    silent = no_events({n: agreements[n].counts for n in names})
    combined = combine(
        {n: agreements[n].agreement for n in names},
        {n: raw[n] for n in names},
        dict.fromkeys(silent, NO_EVENTS),
    )
    composite = None
    if combined.value is not None:
        composite = float(composite_from_counts({n: agreements[n].counts for n in names}, weights))
    left_out = {n: r for n, r in combined.left_out.items() if n in names}
    return CombinedAgreements(
        {name: combined.weights.get(name, 0.0) for name in names},
        composite,
        skipped,
        left_out,
        combined.note("downstream") if left_out else None,
    )


def run_downstream(
    chunks: Sequence[Chunk],
    reference_records: Mapping[str, ExtractionRecord],
    challenger_records: Mapping[str, ExtractionRecord],
    weights: Mapping[str, float] | None = None,
    covered: Collection[str] | Literal["auto"] | None = "auto",
) -> DownstreamReport:
    """Run the consumers on the reference's and the challenger's extractions and compare.

    ``covered``: the fields the reference covers — by default its :func:`reference_coverage`
    (partial gold's ``covers``), None for every field; consumers that read other fields are
    skipped. Chunks whose record is missing or not ``ok`` are read as empty extractions on that
    side.
    """
    if not chunks:
        raise InputError("no chunks to run the downstream consumers on")
    resolve_weights(weights)  # bad weights fail before any work
    if covered == "auto":
        covered = reference_coverage(reference_records, chunks)
    names = _running(covered, weights)
    reference_view = build_conversations(chunks, reference_records)
    challenger_view = build_conversations(chunks, challenger_records)
    reference = {name: get_consumer(name).build(reference_view) for name in names}
    challenger = {name: get_consumer(name).build(challenger_view) for name in names}
    return compare_outputs(reference, challenger, weights, covered)
