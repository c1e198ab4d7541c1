"""The seeded email generator (DESIGN §8): kinds × depths 1–4, deterministic for a seed.

Document ``i`` gets kind ``i mod K`` (K kinds in registration order) and depth
``1 + (i div K) mod 4``, so every (kind, depth) cell is equally filled; its email, record and
one-shot example come from random streams seeded by ``(seed, i)`` alone, so document ``i`` is the
same whatever ``n`` is. Every document is checked before it is returned: the ground truth
validates against the schema and each ground-truth value appears in the email in some spelling.
"""

from __future__ import annotations

import random

from jsonschema import Draft202012Validator

from chatledger.structbench.dataset import Document, Example, Json
from chatledger.structbench.generate import kinds as kinds  # registers the email kinds
from chatledger.structbench.generate._kind import DEPTHS, EMAIL_KINDS, EmailKind
from chatledger.structbench.generate._surface import values_missing_from_text

DEFAULT_SEED = 20260304
DATASET_VERSION = "emails-v1"


def kind_and_depth(index: int, kinds: list[EmailKind]) -> tuple[EmailKind, int]:
    return kinds[index % len(kinds)], DEPTHS[(index // len(kinds)) % len(DEPTHS)]


def generate_document(
    index: int, seed: int = DEFAULT_SEED, *, with_example: bool = True
) -> Document:
    """Document ``index`` of the set generated with ``seed``."""
    kinds = [EMAIL_KINDS.get(name) for name in EMAIL_KINDS.names()]
    kind, depth = kind_and_depth(index, kinds)
    rng = random.Random(f"structbench:{seed}:{index}")
    record = kind.record(rng)
    text = kind.render(rng, record)
    truth = kind.view(record, depth)
    schema = kind.schema(depth)
    _check(kind, depth, schema, truth, text)
    example = None
    if with_example:
        example_rng = random.Random(f"structbench:{seed}:{index}:example")
        example_record = kind.record(example_rng)
        example_text = kind.render(example_rng, example_record)
        example_truth = kind.view(example_record, depth)
        _check(kind, depth, schema, example_truth, example_text)
        example = Example(example_text, example_truth)
    return Document(
        id=f"{kind.name}-d{depth}-{index:04d}",
        input=text,
        schema=schema,
        ground_truth=truth,
        weights=kind.weights(depth),
        example=example,
    )


def generate_documents(
    n: int = 1000, seed: int = DEFAULT_SEED, *, with_example: bool = True
) -> list[Document]:
    if n < 0:
        raise ValueError("n must be ≥ 0")
    return [generate_document(i, seed, with_example=with_example) for i in range(n)]


def _check(kind: EmailKind, depth: int, schema: Json, truth: Json, text: str) -> None:
    error = next(
        iter(
            Draft202012Validator(
                schema, format_checker=Draft202012Validator.FORMAT_CHECKER
            ).iter_errors(truth)
        ),
        None,
    )
    if error is not None:  # a generator bug, never a user error
        raise AssertionError(f"{kind.name} depth {depth}: ground truth breaks the schema: {error}")
    missing = values_missing_from_text(truth, text)
    if missing:
        raise AssertionError(f"{kind.name} depth {depth}: values not in the email: {missing}")
