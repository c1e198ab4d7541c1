"""A model's per-unit statistics (:class:`ModelSeries`) from its stage outputs.

The run builds each challenger's series from the outputs it just computed; a regression gate
(``chatledger gate``) builds the same series from the outputs a finished run left in its
``stages/`` folder. One function does both, so the two can never resample different things.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np

from chatledger.runs._stages import StageFigures
from chatledger.runs._stats import FloatArray, ModelSeries
from chatledger.scoring import statistic_names


def build_series(
    name: str,
    outputs: Mapping[str, StageFigures],
    *,
    n_chunks: int,
    chunk_conversations: Sequence[str],
    consumer_weights: Mapping[str, float] | None,
) -> ModelSeries:
    """The per-unit statistics of the stages in ``outputs`` (layer → output): layer 1's field
    statistics, the judge's (sum, count) per chunk, and the consumers' counts per conversation
    with the composite built from them. The figures shown (``field_scores``, ``layer_scores``,
    ``overall``) are the caller's to set."""
    series = ModelSeries(name=name)
    extraction = outputs.get("extraction")
    if extraction is not None:
        series.aggregate = "micro" if extraction.aggregate == "micro" else "macro"
        series.field_stats = {
            field: np.array(values, dtype=np.float64).reshape(n_chunks, len(statistic_names(field)))
            for field, values in extraction.field_stats.items()
        }
    judge = outputs.get("judge")
    if judge is not None:
        series.judge = np.array(
            [[0.0, 0.0] if v is None else [v, 1.0] for v in judge.per_chunk], dtype=np.float64
        ).reshape(n_chunks, 2)
    downstream = outputs.get("downstream")
    if downstream is not None and downstream.layer_score is not None:
        series.downstream, series.downstream_figure = _downstream_series(
            downstream, chunk_conversations, consumer_weights
        )
    return series


def _downstream_series(
    output: StageFigures,
    chunk_conversations: Sequence[str],
    consumer_weights: Mapping[str, float] | None,
) -> tuple[dict[str, dict[str, FloatArray]], partial[FloatArray]]:
    """Per consumer that ran, its counts per conversation in run order, and the composite
    built from summed counts (what the cluster bootstrap recomputes)."""
    from chatledger.downstream import composite_from_counts

    conversations = list(dict.fromkeys(chunk_conversations))
    per_conversation = output.conversation_counts
    ran = list(per_conversation[conversations[0]]) if conversations else []
    counts: dict[str, dict[str, FloatArray]] = {}
    for consumer in ran:
        names = list(per_conversation[conversations[0]][consumer])
        counts[consumer] = {
            name: np.array(
                [per_conversation[conv][consumer][name] for conv in conversations],
                dtype=np.float64,
            )
            for name in names
        }
    figure = partial(composite_from_counts, weights=consumer_weights, ran=ran)
    return counts, figure
