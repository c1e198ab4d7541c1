"""The consumer interface: events, outputs, agreements, and the registry of consumers."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

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
    events with no counterpart in the reference (each names the chunks it is about).
    """

    agreement: float
    details: dict[str, Any] = field(default_factory=dict)
    missed: tuple[DownstreamEvent, ...] = ()
    invented: tuple[DownstreamEvent, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "agreement": self.agreement,
            **self.details,
            "missed": [e.to_dict() for e in self.missed],
            "invented": [e.to_dict() for e in self.invented],
        }


class Consumer(ABC, Generic[E]):
    """A downstream analysis that reads extractions in time order and produces events."""

    name: ClassVar[str] = ""

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


CONSUMERS: Registry[type[Consumer[Any]]] = Registry("consumer")


def get_consumer(name: str) -> Consumer[Any]:
    """Build a registered consumer by name."""
    return CONSUMERS.get(name)()
