"""Result types of layer 1."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chatledger.core import Registry

if TYPE_CHECKING:  # the scorers' context needs the matchers (rapidfuzz); readers of a run do not
    from chatledger.core import ExtractionV3  # nor the schema's classes
    from chatledger.scoring._context import ScoringContext


@dataclass(frozen=True, slots=True)
class FieldScore:
    """One field of one chunk: the score, its weighted parts, and item counts."""

    score: float
    components: dict[str, float]
    n_reference: int
    n_predicted: int
    # (confidence, correct) of each challenger item with a stated confidence: pooled for ECE.
    calibration: tuple[tuple[float, bool], ...] = ()
    # What the pooled (micro) figures add up over chunks: the matched items (the credit, for
    # entities), and for each component taken over matched pairs its (sum, number of terms).
    matched: float = 0.0
    pooled: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Set fields count distinct keys ((pattern, actor) pairs, URLs …): the items each side
    # listed, when that can differ from n_reference / n_predicted.
    listed: tuple[int, int] | None = None

    @classmethod
    def agree(cls, names: tuple[str, ...], n_ref: int = 0, n_pred: int = 0) -> FieldScore:
        """Both sides empty: they agree; every component is 1."""
        return cls(1.0, dict.fromkeys(names, 1.0), n_ref, n_pred)

    @classmethod
    def zero(cls, names: tuple[str, ...], n_ref: int = 0, n_pred: int = 0) -> FieldScore:
        return cls(0.0, dict.fromkeys(names, 0.0), n_ref, n_pred)

    @property
    def both_empty(self) -> bool:
        """Neither side has an item of this field (the chunk scores 1.0 by agreement)."""
        return self.n_reference == 0 and self.n_predicted == 0


FieldScorer = Callable[["ExtractionV3", "ExtractionV3", "ScoringContext"], FieldScore]


@dataclass(frozen=True)
class ScorerSpec:
    """A registered field scorer and the names of its components."""

    name: str
    components: tuple[str, ...]
    fn: FieldScorer = field(repr=False)


FIELD_SCORERS: Registry[ScorerSpec] = Registry("field scorer")


def field_scorer(name: str, components: tuple[str, ...]) -> Callable[[FieldScorer], FieldScorer]:
    """Register ``fn`` as the layer-1 scorer of field ``name``."""

    def decorate(fn: FieldScorer) -> FieldScorer:
        FIELD_SCORERS.register(name)(ScorerSpec(name, components, fn))
        return fn

    return decorate
