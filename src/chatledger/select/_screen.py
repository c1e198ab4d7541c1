"""Phase 1 over repeated extractions: the four metrics of every candidate, from k runs per
chunk (DESIGN.md §9), and a seeded stochastic simulated extractor to run it offline.

A run is one extraction of a chunk with every candidate in it (``{field: value}``); the proven
fields come from the same runs, so information gain and redundancy compare a candidate with
what the same extractions already hold. Discrimination uses each run's item count of the
field (how much of it the run found) unless human chunk ratings are given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chatledger.select._candidates import CANDIDATES, candidates
from chatledger.select._metrics import (
    DEFAULT_WEIGHTS,
    PASS_MARK,
    REDUNDANCY_FLOOR,
    Screening,
    consistency,
    discrimination,
    information_gain,
    redundancy,
    sentence_embedder,
)
from chatledger.select._simulated import SIMULATED_LABEL


@dataclass(frozen=True)
class ChunkRuns:
    """The k repeated extractions of one chunk, each ``{field: value}``."""

    chunk_id: str
    runs: list[dict[str, Any]]
    model: str = ""


@dataclass(frozen=True)
class ScreenSettings:
    """The composite's weights and the pass mark (DESIGN.md §9 defaults)."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    pass_mark: float = PASS_MARK
    redundancy_floor: float = REDUNDANCY_FLOOR


def screen(
    chunks: Sequence[ChunkRuns],
    fields: Sequence[str] | None = None,
    *,
    ratings: Mapping[str, float] | None = None,
    settings: ScreenSettings | None = None,
    measure: str = "tfidf",
    embedding_model: str | None = None,
) -> list[Screening]:
    """The screening of each candidate of ``fields`` (default: every candidate that is not
    proven), in that order. ``ratings`` are human chunk ratings by chunk id (all chunks);
    ``measure`` is redundancy's vectors: ``tfidf`` or ``embeddings`` (sentence embeddings)."""
    settings = settings or ScreenSettings()
    embed = sentence_embedder(embedding_model) if measure == "embeddings" else None
    proven = [c.name for c in candidates("proven")]
    names = (
        list(fields) if fields is not None else [c.name for c in candidates() if c.tier != "proven"]
    )
    proven_by_chunk = [
        [
            t
            for run in chunk.runs
            for name in proven
            for t in CANDIDATES.get(name).texts(run.get(name))
        ]
        for chunk in chunks
    ]
    proven_docs = {
        name: [
            t
            for chunk in chunks
            for run in chunk.runs
            for t in CANDIDATES.get(name).texts(run.get(name))
        ]
        for name in proven
    }
    chunk_ratings = [ratings[c.chunk_id] for c in chunks] if ratings is not None else None
    out: list[Screening] = []
    for name in names:
        candidate = CANDIDATES.get(name)
        # A run without the field (its output did not validate) says nothing of it: left out.
        values = [[run[name] for run in chunk.runs if name in run] for chunk in chunks]
        texts = [[candidate.texts(v) for v in runs] for runs in values]
        counts = [[float(len(t)) for t in runs] for runs in texts]
        out.append(
            Screening(
                name,
                consistency=consistency(values, candidate.score_pair),
                information_gain=information_gain(texts, proven_by_chunk),
                discrimination=discrimination(counts, chunk_ratings),
                redundancy=redundancy(
                    [t for runs in texts for run in runs for t in run],
                    {p: docs for p, docs in proven_docs.items() if p != name},
                    embed=embed,
                ),
                weights=dict(settings.weights),
                pass_mark=settings.pass_mark,
                redundancy_floor=settings.redundancy_floor,
            )
        )
    return out


def simulate_runs(
    truth: Sequence[tuple[str, Mapping[str, Any]]],
    noise: Mapping[str, float],
    *,
    k: int = 3,
    seed: int = 0,
) -> list[ChunkRuns]:
    """k noisy copies of each chunk's true values (``truth``: (chunk id, {field: value})).

    Each run keeps each item of a list field with probability 1 − ``noise[field]`` (0 when
    the field is not named) and drops it otherwise; a value that is not a list is kept or
    emptied alike. Each (chunk, run) has its own seeded generator, so a run does not depend
    on the others. Labelled :data:`SIMULATED_LABEL`.
    """
    out: list[ChunkRuns] = []
    for position, (chunk_id, values) in enumerate(truth):
        runs: list[dict[str, Any]] = []
        for r in range(k):
            rng = np.random.default_rng([seed, position, r])
            run: dict[str, Any] = {}
            for name, value in values.items():
                p = float(noise.get(name, 0.0))
                if isinstance(value, list):
                    run[name] = [item for item in value if rng.random() >= p]
                elif rng.random() < p:
                    run[name] = _empty_like(value)
                else:
                    run[name] = value
            runs.append(run)
        out.append(ChunkRuns(chunk_id, runs, SIMULATED_LABEL))
    return out


def _empty_like(value: Any) -> Any:
    if isinstance(value, str):
        return ""
    if isinstance(value, int | float):
        return value
    return None
