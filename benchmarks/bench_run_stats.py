"""The run's statistics stage: intervals of exactly the figures shown vs means of per-chunk values.

Issue 15 made every interval a bootstrap of the run-level figure itself (``runs._stats``:
statistics of resampled sums — pooled ECE, micro F1, renormalised composites, downstream from
summed consumer counts over resampled conversations). The baseline, measured in the same
process on the same inputs, is what the statistics stage computed before: BCa intervals of the
mean of each per-chunk series (``stats.bootstrap_intervals``), paired differences and rank
probabilities of per-chunk overall values. Both at 2,000 resamples, three challengers of the
synthetic corpus, all three layers (judge values drawn, downstream counts real).

Run: python benchmarks/bench_run_stats.py [--chunks 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

from _synthetic import write_run_corpus
from chatledger.core import RecordStatus
from chatledger.corpus import read_chunks, read_extractions
from chatledger.downstream import build_outputs, compare_outputs, composite_from_counts
from chatledger.runs._stats import ModelSeries, StatsOptions, compute_run_stats
from chatledger.scoring import ScoringConfig, chunk_statistics, score_records, statistic_names
from chatledger.stats import bootstrap_intervals, paired_difference, rank_probabilities

LAYERS = {"extraction": 0.60, "judge": 0.25, "downstream": 0.15}


def _inputs(directory: Path, n_chunks: int) -> tuple[list[ModelSeries], list[str], np.ndarray]:
    write_run_corpus(directory, n_chunks, "bench")
    chunks = read_chunks(directory / "chunks.jsonl")
    reference = read_extractions(directory / "reference.jsonl").records
    config = ScoringConfig.default()
    rng = np.random.default_rng(0)
    conversations = [c.conversation_id for c in chunks]
    order = list(dict.fromkeys(conversations))
    ref_outputs = build_outputs(chunks, reference)
    series: list[ModelSeries] = []
    per_chunk_rows: list[np.ndarray] = []
    for name in ("challenger", "challenger_b", "challenger_c"):
        records = read_extractions(directory / f"{name}.jsonl").records
        report = score_records(reference, records, chunks, config)
        field_stats = {
            f: np.array(
                [
                    chunk_statistics(f, r.fields[f], r.status is RecordStatus.OK)
                    for r in report.chunks
                ]
            ).reshape(len(report.chunks), len(statistic_names(f)))
            for f in config.fields
        }
        judge = rng.uniform(0.5, 1.0, len(chunks))
        chal_outputs = build_outputs(chunks, records)
        counts: dict[str, dict[str, list[float]]] = {}
        agreement = {}
        for conv in order:
            compared = compare_outputs(ref_outputs[conv], chal_outputs[conv])
            agreement[conv] = compared.downstream_composite or 0.0
            for consumer, values in compared.counts.items():
                for key, value in values.items():
                    counts.setdefault(consumer, {}).setdefault(key, []).append(value)
        downstream = compare_outputs(
            {k: v for conv in order for k, v in ref_outputs[conv].items()},
            {k: v for conv in order for k, v in chal_outputs[conv].items()},
        )
        layer_scores = {
            "extraction": report.extraction_composite,
            "judge": float(judge.mean()),
            "downstream": float(downstream.downstream_composite or 0.0),
        }
        series.append(
            ModelSeries(
                name=name,
                field_stats=field_stats,
                judge=np.column_stack([judge, np.ones_like(judge)]),
                downstream={c: {k: np.array(v) for k, v in d.items()} for c, d in counts.items()},
                downstream_figure=partial(composite_from_counts, ran=list(counts)),
                field_scores={f: s.score for f, s in report.fields.items()},
                layer_scores=layer_scores,
                overall=sum(LAYERS[k] * v for k, v in layer_scores.items()),
            )
        )
        # The old stage's per-chunk series: each field, the three layers, the overall.
        fields = np.array([[r.fields[f].score for r in report.chunks] for f in config.fields])
        per_chunk_layers = np.vstack(
            [
                fields.T @ np.array([config.weights[f] for f in config.fields]),
                judge,
                np.array([agreement[c] for c in conversations]),
            ]
        )
        overall = np.array(list(LAYERS.values())) @ per_chunk_layers
        per_chunk_rows.append(np.vstack([overall, per_chunk_layers, fields]))
    return series, conversations, np.stack(per_chunk_rows)


def _before(rows: np.ndarray, resamples: int) -> None:
    bootstrap_intervals(rows.reshape(-1, rows.shape[-1]), n_resamples=resamples, seed=0)
    overall = rows[:, 0]
    for i, j in itertools.combinations(range(len(overall)), 2):
        paired_difference(overall[i], overall[j], n_resamples=resamples, seed=0)
    rank_probabilities(overall, n_resamples=resamples, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    options = StatsOptions(dirichlet_draws=100)
    with tempfile.TemporaryDirectory() as tmp:
        series, conversations, rows = _inputs(Path(tmp), args.chunks)
    times: dict[str, list[float]] = {"before_means": [], "now_exact": []}
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        _before(rows, options.bootstrap_resamples)
        times["before_means"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        compute_run_stats(
            series,
            LAYERS,
            ScoringConfig.default().weights,
            options,
            0,
            chunk_conversations=conversations,
        )
        times["now_exact"].append(time.perf_counter() - t0)
    medians = {k: statistics.median(v) for k, v in times.items()}
    ratio = medians["now_exact"] / medians["before_means"]
    print(
        f"{args.chunks} chunks × 3 challengers × 3 layers, "
        f"{len(set(conversations))} conversations, "
        f"{options.bootstrap_resamples} resamples: before {medians['before_means']:.2f} s, "
        f"now {medians['now_exact']:.2f} s (median of {args.repeats}; now/before {ratio:.2f}×)"
    )
    out = Path(__file__).parent / "results" / f"bench_run_stats_{args.chunks}.json"
    out.write_text(
        json.dumps(
            {
                "chunks": args.chunks,
                "conversations": len(set(conversations)),
                "resamples": options.bootstrap_resamples,
                "median_s": medians,
                "ratio_now_before": ratio,
                "repeats": args.repeats,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
