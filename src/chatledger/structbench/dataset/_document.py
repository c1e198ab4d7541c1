"""One benchmark document (email, schema, ground truth) and one prediction, in memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chatledger.structbench.dataset._paths import Json, flatten, schema_depth, value_depth
from chatledger.structbench.dataset._validation import schema_key
from chatledger.structbench.dataset._weights import resolve_weights


@dataclass(frozen=True, slots=True)
class Example:
    """A one-shot demonstration: an email and the JSON it should give."""

    input: str
    output: Json

    def to_dict(self) -> dict[str, Json]:
        return {"input": self.input, "output": self.output}


@dataclass(frozen=True, slots=True)
class Document:
    """A dataset line plus what scoring needs again and again, computed once."""

    id: str
    input: str
    schema: Json
    ground_truth: Json
    weights: Mapping[str, float] | None = None
    example: Example | None = None
    depth: int = field(init=False)
    schema_key: str = field(init=False)
    truth_leaves: dict[str, Json] = field(init=False)
    path_weights: dict[str, float] = field(init=False)
    total_weight: float = field(init=False)

    def __post_init__(self) -> None:
        leaves = flatten(self.ground_truth)
        # Depth is the schema's (what the model is asked to produce); a schema too loose to
        # say (no properties/items) falls back to the ground truth's own nesting.
        depth = schema_depth(self.schema) or value_depth(self.ground_truth)
        object.__setattr__(self, "depth", depth)
        object.__setattr__(self, "schema_key", schema_key(self.schema))
        object.__setattr__(self, "truth_leaves", leaves)
        weights = resolve_weights(leaves, self.weights)
        object.__setattr__(self, "path_weights", weights)
        object.__setattr__(self, "total_weight", sum(weights.values()))

    def to_dict(self) -> dict[str, Json]:
        """The dataset line (DESIGN §8 format)."""
        line: dict[str, Json] = {
            "id": self.id,
            "input": self.input,
            "schema": self.schema,
            "ground_truth": self.ground_truth,
        }
        if self.weights is not None:
            line["weights"] = dict(self.weights)
        if self.example is not None:
            line["example"] = self.example.to_dict()
        return line


@dataclass(frozen=True, slots=True)
class Prediction:
    """A predictions line: the raw model text for one document (``strategy`` may be None)."""

    id: str
    output: str
    strategy: str | None = None
    model: str | None = None
    usage: Mapping[str, Any] | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Json]:
        out: dict[str, Json] = {"id": self.id, "output": self.output}
        if self.strategy is not None:
            out["strategy"] = self.strategy
        if self.model is not None:
            out["model"] = self.model
        if self.usage is not None:
            out["usage"] = dict(self.usage)
        return out
