"""The consumer interface: events, outputs, agreements, and the registry of consumers.

Every consumer's agreement is a function of additive counts (:attr:`ConsumerAgreement.counts`):
its matching is keyed by conversation, so the counts of a run are the sums of the counts of its
conversations, and :meth:`Consumer.agreement_from_counts` turns counts — a run's, or the summed
counts of each resample of a bootstrap over conversations — into the agreement. ``agreement()``
computes its own value through that function, so a headline and its recomputations agree.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from chatledger.core import Registry
from chatledger.downstream._conversation import ChunkRef, ConversationView


@dataclass(frozen=True)
class DownstreamEvent:
    """One item a consumer produces. Hashable; equality ignores fields marked ``compare=False``."""

    conversation_id: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, including the chunk ids the event is about."""
        return {
            f.name: _jsonable(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if not f.name.startswith("_")
        }

    def describe(self) -> str:
        """One line for people."""
        return repr(self)

    def about(self) -> tuple[str, ...]:
        """The chunk ids the event is about, so a report can link it to the conversation."""
        return ()


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


E = TypeVar("E", bound=DownstreamEvent)

FloatArray = npt.NDArray[np.float64]
# A consumer's additive counts by name: numbers (one run) or arrays (e.g. one per resample).
Counts = Mapping[str, npt.ArrayLike]


@dataclass(frozen=True)
class ConsumerOutput(Generic[E]):
    """What one consumer built from one model's extractions, plus the chunks it looked at."""

    consumer: str
    events: tuple[E, ...]
    chunks: tuple[ChunkRef, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"consumer": self.consumer, "events": [e.to_dict() for e in self.events]}


@dataclass(frozen=True)
class ConsumerAgreement:
    """Agreement of a challenger's output with the reference's, in [0, 1].

    ``missed`` are reference events the challenger did not reproduce, ``invented`` challenger
    events with no counterpart in the reference (each names the chunks it is about). ``counts``
    are the consumer's additive sufficient statistics: ``agreement`` is
    ``agreement_from_counts(counts)``, and the counts of several conversations add up.
    """

    agreement: float
    details: dict[str, Any] = field(default_factory=dict)
    missed: tuple[DownstreamEvent, ...] = ()
    invented: tuple[DownstreamEvent, ...] = ()
    counts: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agreement": self.agreement,
            **self.details,
            "counts": dict(self.counts),
            "missed": [e.to_dict() for e in self.missed],
            "invented": [e.to_dict() for e in self.invented],
        }


class Consumer(ABC, Generic[E]):
    """A downstream analysis that reads extractions in time order and produces events.

    ``reads`` are the schema-v3 fields it reads (against partial human gold it runs only when
    the gold covers all of them, DESIGN.md §7); ``count_names`` name its additive counts.
    """

    name: ClassVar[str] = ""
    reads: ClassVar[tuple[str, ...]] = ()
    count_names: ClassVar[tuple[str, ...]] = ()
    # The counts that say a side produced something: where they sum to 0 neither side did,
    # and the consumer has no evidence there (DESIGN.md §5). Default: every count.
    evidence_counts: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def evidence(cls, counts: Counts) -> npt.NDArray[np.bool_]:
        """Where ``counts`` hold evidence (some event on either side), elementwise."""
        names = cls.evidence_counts or cls.count_names
        total = sum((np.asarray(counts[name], dtype=np.float64) for name in names), np.zeros(()))
        out: npt.NDArray[np.bool_] = np.asarray(total > 0)
        return out

    @staticmethod
    @abstractmethod
    def agreement_from_counts(counts: Counts) -> FloatArray:
        """The agreement of ``counts`` (each entry a number or an array, all of one shape),
        elementwise, with the consumer's rules for empty sides."""

    @classmethod
    def missing_fields(cls, covered: Collection[str] | None) -> list[str]:
        """The fields it reads that ``covered`` lacks (none when ``covered`` is None: a model's
        reference speaks to every field)."""
        if covered is None:
            return []
        return [name for name in cls.reads if name not in covered]

    def counted(
        self,
        counts: Mapping[str, float],
        details: dict[str, Any],
        missed: Sequence[DownstreamEvent],
        invented: Sequence[DownstreamEvent],
    ) -> ConsumerAgreement:
        """The agreement of ``counts`` through :meth:`agreement_from_counts`, with the rest."""
        values = {name: float(counts[name]) for name in self.count_names}
        return ConsumerAgreement(
            float(self.agreement_from_counts(values)),
            details,
            tuple(missed),
            tuple(invented),
            values,
        )

    @abstractmethod
    def build(self, conversations: Sequence[ConversationView]) -> ConsumerOutput[E]:
        """Run the analysis over every conversation of a run."""

    @abstractmethod
    def agreement(
        self, reference: ConsumerOutput[E], challenger: ConsumerOutput[E]
    ) -> ConsumerAgreement:
        """How well ``challenger`` reproduces ``reference``; 1.0 when identical or both empty."""

    def output(
        self, events: Sequence[E], conversations: Sequence[ConversationView]
    ) -> ConsumerOutput[E]:
        return ConsumerOutput(
            self.name, tuple(events), tuple(v.ref for c in conversations for v in c.chunks)
        )


# Other packages add consumers through the entry-point group ``chatledger.consumers``; one
# takes part in a run when the config gives it a weight (docs/plugins.md).
CONSUMERS: Registry[type[Consumer[Any]]] = Registry(
    "downstream consumer", group="chatledger.consumers", expects=Consumer
)


def get_consumer(name: str) -> Consumer[Any]:
    """Build a registered consumer by name."""
    return CONSUMERS.get(name)()
