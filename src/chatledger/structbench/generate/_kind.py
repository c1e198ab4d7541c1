"""What one kind of email (order, invoice, …) must provide to the generator, and their registry."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from datetime import date, timedelta
from typing import Any

from chatledger.core import Registry
from chatledger.structbench.generate._schema import Schema, root

Record = dict[str, Any]
DEPTHS = (1, 2, 3, 4)


class EmailKind(ABC):
    """A kind of email: a random record, its rendering as text, and one view per depth.

    ``record`` holds everything the email says; ``view(record, depth)`` picks and nests a subset
    of it as the ground truth for the schema ``schema(depth)``. The email is rendered from the
    whole record, so every view's values are in the text whatever the depth.
    """

    name: str
    title: str  # the schema title, before " (depth N)"

    @abstractmethod
    def record(self, rng: random.Random) -> Record: ...

    @abstractmethod
    def render(self, rng: random.Random, record: Record) -> str: ...

    @abstractmethod
    def view(self, record: Record, depth: int) -> dict[str, Any]: ...

    @abstractmethod
    def properties(self, depth: int) -> dict[str, Schema]:
        """The top-level properties of ``schema(depth)``, in the order of ``view``'s keys."""

    def schema(self, depth: int) -> Schema:
        return root(f"{self.title} (depth {depth})", self.properties(depth))

    def weights(self, depth: int) -> dict[str, float] | None:
        """Dataset weights for this kind at ``depth`` (None: the default rule)."""
        return None


EMAIL_KINDS: Registry[EmailKind] = Registry("email kind")


def register_kind(kind: EmailKind) -> EmailKind:
    EMAIL_KINDS.register(kind.name)(kind)
    return kind


def take(record: Record, *keys: str) -> dict[str, Any]:
    """The named fields of ``record``, in the order given (values as they are, not copied)."""
    return {key: record[key] for key in keys}


def random_date(rng: random.Random, start: date = date(2025, 9, 1), days: int = 540) -> date:
    return start + timedelta(days=rng.randrange(days))


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def join_names(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def money(value: float) -> float:
    return round(value + 1e-9, 2)


def article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"
