"""Layer-1 scoring benchmark: throughput, share of time in the matching kernel, parse time, and
a peer comparison with AWS stickler (see docs/benchmarks.md).

    python benchmarks/bench_score.py --chunks 1000 --repeats 5
    python benchmarks/bench_score.py --process-only --sizes 1000,10000,100000

Every figure is the median of ``--repeats`` runs (the reference machine is a noisy 2-core VM).
Pydantic objects are built once, outside every timed region; only scoring is timed, except for
the parse figure, which times ``read_extractions`` on the two JSON Lines files.

The ``process`` section times whole processes, as a user runs them: ``chatledger score`` on
the files (``--sizes``: chunks/s, CPU, peak RSS), and at the first size, on the same files, a
bare kernel script (read the two files with ``json``, then only ``cdist`` + the assignment for
every text list) and stickler configured as in ``_peer_stickler.py`` (read with ``json``, build
its documents, compare). ``--source DIR`` runs ``chatledger`` from another source tree (an
older commit, for a before/after in one session).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from _peer_stickler import PEER_FIELDS, VARIANTS, Peer, item_texts, load_peer
from _synthetic import generate, write_corpus
from chatledger.core import Chunk, ExtractionV3
from chatledger.corpus import ExtractionFile, read_chunks, read_extractions
from chatledger.matching import KERNEL_CLOCK, get_matcher
from chatledger.scoring import (
    FIELD_SCORERS,
    ChunkContext,
    FieldScore,
    ScoringConfig,
    ScoringContext,
    f1,
    score_records,
)

RESULTS = Path(__file__).resolve().parent / "results" / "bench_score.json"
RATIO_TARGET = 1.5  # end-to-end time / time inside cdist + linear_sum_assignment
SPEEDUP_TARGET = 10.0  # ChatLedger throughput / stickler throughput, same chunks and fields


@dataclass(frozen=True)
class Corpus:
    """The synthetic corpus as ChatLedger reads it: chunks and the two extraction files."""

    chunks: list[Chunk]
    reference: ExtractionFile
    challenger: ExtractionFile
    reference_path: Path
    challenger_path: Path

    def pairs(self) -> list[tuple[ExtractionV3, ExtractionV3, Chunk]]:
        out = []
        for chunk in self.chunks:
            ref = self.reference.records[chunk.chunk_id].extraction
            pred = self.challenger.records[chunk.chunk_id].extraction
            assert ref is not None and pred is not None, chunk.chunk_id
            out.append((ref, pred, chunk))
        return out


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def timed(fn: Callable[[], object]) -> float:
    """Seconds ``fn`` takes, after a full collection so garbage of earlier runs is not billed."""
    return timed_wall_cpu(fn)[0]


def timed_wall_cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and process CPU seconds of ``fn`` (CPU time is what other jobs disturb less)."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def build_corpus(n_chunks: int, seed: int, directory: Path) -> Corpus:
    chunks_path, ref_path, chal_path = generate(n_chunks, seed).write(directory)
    reference = read_extractions(ref_path)
    challenger = read_extractions(chal_path)
    bad = len(reference.problems) + len(challenger.problems)
    if bad:
        raise SystemExit(f"synthetic corpus does not validate ({bad} problems)")
    return Corpus(read_chunks(chunks_path), reference, challenger, ref_path, chal_path)


def bench_parse(corpus: Corpus, repeats: int) -> dict[str, Any]:
    """``read_extractions`` on the reference and the challenger file (JSON + validation)."""
    runs = [
        timed(
            lambda: (
                read_extractions(corpus.reference_path),
                read_extractions(corpus.challenger_path),
            )
        )
        for _ in range(repeats)
    ]
    n = len(corpus.chunks)
    size = corpus.reference_path.stat().st_size + corpus.challenger_path.stat().st_size
    return {
        "what": "read_extractions on reference.jsonl + challenger.jsonl",
        "records": 2 * n,
        "megabytes": round(size / 1e6, 2),
        "median_s": median(runs),
        "records_per_s": 2 * n / median(runs),
        "runs_s": runs,
    }


def bench_layer1(corpus: Corpus, repeats: int) -> dict[str, Any]:
    """End-to-end ``score_records`` (17 fields) and the time spent inside the kernel."""
    config = ScoringConfig.default("v3")
    records = corpus.reference.records, corpus.challenger.records

    def run() -> None:
        score_records(*records, corpus.chunks, config)

    run()  # warm-up: first-call costs (imports, caches) are not what we measure
    e2e: list[float] = []
    cpu: list[float] = []
    kernel: list[float] = []
    cdist: list[float] = []
    assign: list[float] = []
    clock_off: list[float] = []
    try:
        for _ in range(repeats):
            KERNEL_CLOCK.enabled = True
            KERNEL_CLOCK.reset()
            wall_s, cpu_s = timed_wall_cpu(run)
            e2e.append(wall_s)
            cpu.append(cpu_s)
            kernel.append(KERNEL_CLOCK.total_s)
            cdist.append(KERNEL_CLOCK.cdist_s)
            assign.append(KERNEL_CLOCK.assign_s)
            calls = KERNEL_CLOCK.cdist_calls, KERNEL_CLOCK.assign_calls
            KERNEL_CLOCK.enabled = False
            clock_off.append(timed(run))
    finally:
        KERNEL_CLOCK.enabled = False
        KERNEL_CLOCK.reset()
    n = len(corpus.chunks)
    ratios = [e / k for e, k in zip(e2e, kernel, strict=True)]
    report = score_records(*records, corpus.chunks, config)
    return {
        "what": "score_records, 17 fields, objects already parsed",
        "chunks": n,
        "median_s": median(e2e),
        "chunks_per_s": n / median(e2e),
        "kernel_median_s": median(kernel),
        "cdist_median_s": median(cdist),
        "assign_median_s": median(assign),
        "cdist_calls": calls[0],
        "assign_calls": calls[1],
        "ratio_median": median(ratios),
        "ratio_target": RATIO_TARGET,
        "cpu_median_s": median(cpu),  # process CPU time: less sensitive to other jobs
        "clock_off_median_s": median(clock_off),
        "clock_off_chunks_per_s": n / median(clock_off),
        "runs_s": e2e,
        "kernel_runs_s": kernel,
        "ratios": ratios,
        "extraction_composite": report.extraction_composite,
        "field_scores": {name: s.score for name, s in report.fields.items()},
    }


def bench_fields(corpus: Corpus, repeats: int) -> dict[str, dict[str, float]]:
    """Where the time goes: each field scorer timed on its own, with its kernel share.

    Scorers run in schema order on one context per chunk, as in ``score_records``, so a field
    that reuses another's matches (``confidence``) is billed only for its own work.
    """
    config = ScoringConfig.default("v3")
    matcher = get_matcher(config.matcher)
    scorers = [(name, FIELD_SCORERS.get(name).fn) for name in config.fields]
    pairs = corpus.pairs()
    totals: dict[str, list[float]] = {name: [] for name, _ in scorers}
    kernels: dict[str, list[float]] = {name: [] for name, _ in scorers}
    clock, now = KERNEL_CLOCK, time.perf_counter
    try:
        clock.enabled = True
        for _ in range(repeats):
            total = dict.fromkeys(totals, 0.0)
            kernel = dict.fromkeys(totals, 0.0)
            gc.collect()
            for ref, pred, chunk in pairs:
                ctx = ScoringContext(ChunkContext.from_chunk(chunk), config, matcher)
                for name, fn in scorers:
                    k0, t0 = clock.total_s, now()
                    fn(ref, pred, ctx)
                    total[name] += now() - t0
                    kernel[name] += clock.total_s - k0
            for name in totals:
                totals[name].append(total[name])
                kernels[name].append(kernel[name])
    finally:
        clock.enabled = False
        clock.reset()
    n = len(pairs)
    return {
        name: {
            "us_per_chunk": 1e6 * median(totals[name]) / n,
            "kernel_us_per_chunk": 1e6 * median(kernels[name]) / n,
        }
        for name in totals
    }


def chatledger_fields(
    pairs: Sequence[tuple[ExtractionV3, ExtractionV3, Chunk]], fields: Sequence[str]
) -> list[dict[str, FieldScore]]:
    """ChatLedger's scorers for ``fields`` only, per chunk: ``score_chunk`` restricted."""
    config = ScoringConfig.default("v3")
    matcher = get_matcher(config.matcher)
    scorers = [(name, FIELD_SCORERS.get(name).fn) for name in fields]
    out = []
    for ref, pred, chunk in pairs:
        ctx = ScoringContext(ChunkContext.from_chunk(chunk), config, matcher)
        out.append({name: fn(ref, pred, ctx) for name, fn in scorers})
    return out


def chatledger_text_f1(
    pairs: Sequence[tuple[ExtractionV3, ExtractionV3, Chunk]], fields: Sequence[str]
) -> list[dict[str, float]]:
    """Only the quantity stickler computes: optimal text matching at 0.60, then F1."""
    config = ScoringConfig.default("v3")
    matcher = get_matcher(config.matcher)
    out = []
    for ref, pred, chunk in pairs:
        ctx = ScoringContext(ChunkContext.from_chunk(chunk), config, matcher)
        row = {}
        for name in fields:
            ref_texts, pred_texts = item_texts(ref, name), item_texts(pred, name)
            rows, _ = ctx.match_texts(name, ref_texts, pred_texts)
            row[name] = f1(len(rows), len(pred_texts), len(ref_texts))[2]
        out.append(row)
    return out


def text_f1(score: FieldScore) -> float:
    """The text-matching F1 inside a field score (the whole score for plain text-F1 fields)."""
    return score.components.get("text_f1", score.score)


def bench_peer(corpus: Corpus, repeats: int) -> dict[str, Any]:
    """ChatLedger vs stickler on the same chunks, restricted to the list fields both can score.

    Each tool first makes one untimed pass over all chunks (warm-up); its results are the ones
    whose F1 values are compared, so the agreement check costs no extra pass.
    """
    peer, reason = load_peer()
    if peer is None:
        return {"status": "skipped", "reason": reason}
    pairs = corpus.pairs()
    n = len(pairs)
    our_scores = chatledger_fields(pairs, PEER_FIELDS)
    ours = [timed(lambda: chatledger_fields(pairs, PEER_FIELDS)) for _ in range(repeats)]
    our_f1 = chatledger_text_f1(pairs, PEER_FIELDS)
    if any(  # the lean path must compute exactly the scorers' text F1
        our_f1[k][name] != text_f1(our_scores[k][name]) for k in range(n) for name in PEER_FIELDS
    ):
        raise SystemExit("text-F1-only path disagrees with the field scorers")
    ours_f1, kernel_f1 = [], []
    try:
        KERNEL_CLOCK.enabled = True
        for _ in range(repeats):
            KERNEL_CLOCK.reset()
            ours_f1.append(timed(lambda: chatledger_text_f1(pairs, PEER_FIELDS)))
            kernel_f1.append(KERNEL_CLOCK.total_s)
    finally:
        KERNEL_CLOCK.enabled = False
        KERNEL_CLOCK.reset()
    result: dict[str, Any] = {
        "status": "ok",
        "stickler_version": peer.version,
        "fields": list(PEER_FIELDS),
        "chunks": n,
        "chatledger": {
            "what": "ChatLedger's field scorers for these fields (text F1 plus the owner, "
            "polarity, subject and evidence components on matched pairs)",
            "median_s": median(ours),
            "chunks_per_s": n / median(ours),
            "runs_s": ours,
        },
        "chatledger_text_f1": {
            "what": "ChatLedger computing only what stickler computes: text matching + F1",
            "median_s": median(ours_f1),
            "chunks_per_s": n / median(ours_f1),
            "kernel_median_s": median(kernel_f1),
            "runs_s": ours_f1,
        },
        "stickler": {},
        "speedup": {},
        "speedup_text_f1": {},
        "speedup_bound": {},
        "speedup_target": SPEEDUP_TARGET,
        "f1_agreement": {},
    }
    for variant in VARIANTS:
        docs = [(peer.build(variant, ref), peer.build(variant, pred)) for ref, pred, _ in pairs]
        their_results = _compare_all(peer, docs)
        theirs = [timed(partial(_compare_all, peer, docs)) for _ in range(repeats)]
        result["stickler"][variant] = {
            "median_s": median(theirs),
            "chunks_per_s": n / median(theirs),
            "runs_s": theirs,
        }
        result["speedup"][variant] = median(theirs) / median(ours)
        result["speedup_text_f1"][variant] = median(theirs) / median(ours_f1)
        # What no amount of Python trimming on our side could beat: stickler vs our kernel alone.
        result["speedup_bound"][variant] = median(theirs) / median(kernel_f1)
        result["f1_agreement"][variant] = f1_agreement(our_scores, their_results)
    return result


def _compare_all(peer: Peer, docs: Sequence[tuple[Any, Any]]) -> list[dict[str, Any]]:
    return [peer.compare(ref, pred) for ref, pred in docs]


def f1_agreement(
    ours: Sequence[dict[str, FieldScore]], theirs: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """ChatLedger's text F1 vs stickler's F1 for every (chunk, field).

    Where they differ, stickler's assignment (maximum total similarity, sub-threshold pairs
    included) has traded a match for similarity; ChatLedger maximises the number of matches
    first (DESIGN.md §3), so its F1 is the higher one.
    """
    diffs: list[float] = []
    for our_chunk, their_chunk in zip(ours, theirs, strict=True):
        for name in PEER_FIELDS:
            diffs.append(text_f1(our_chunk[name]) - Peer.field_f1(their_chunk, name))
    return {
        "chunks": len(ours),
        "pairs": len(diffs),
        "mean_abs_diff": statistics.fmean(abs(d) for d in diffs),
        "max_abs_diff": max(abs(d) for d in diffs),
        "share_equal": sum(1 for d in diffs if abs(d) < 1e-9) / len(diffs),
        "share_chatledger_higher": sum(1 for d in diffs if d >= 1e-9) / len(diffs),
        "share_stickler_higher": sum(1 for d in diffs if d <= -1e-9) / len(diffs),
    }


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def pkg(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "load_average_1_5_15min": [round(x, 2) for x in os.getloadavg()],
        # chatledger asks for one OpenBLAS thread unless this is set; the bare script does not
        "openblas_num_threads_env": os.environ.get("OPENBLAS_NUM_THREADS"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": {
            name: pkg(name)
            for name in ("chatledger", "rapidfuzz", "scipy", "numpy", "pydantic", "stickler-eval")
        },
    }


def print_table(results: dict[str, Any]) -> None:
    layer1, parse, peer = results["layer1"], results["parse"], results["peer"]
    n = layer1["chunks"]
    rows = [
        (
            "layer 1, 17 fields (score_records)",
            f"{layer1['median_s']:.3f} s",
            f"{layer1['chunks_per_s']:,.0f} chunks/s",
        ),
        (
            "  inside kernel (cdist + LSA)",
            f"{layer1['kernel_median_s']:.3f} s",
            f"ratio {layer1['ratio_median']:.2f}x (target <= {RATIO_TARGET})",
        ),
        (
            "  CPU time of the same runs",
            f"{layer1['cpu_median_s']:.3f} s",
            f"{n / layer1['cpu_median_s']:,.0f} chunks per CPU-second",
        ),
        (
            "  same, kernel clock off",
            f"{layer1['clock_off_median_s']:.3f} s",
            f"{layer1['clock_off_chunks_per_s']:,.0f} chunks/s",
        ),
        (
            "parse (read_extractions x 2 files)",
            f"{parse['median_s']:.3f} s",
            f"{parse['records_per_s']:,.0f} records/s",
        ),
    ]
    if peer["status"] == "ok":
        k = len(peer["fields"])
        for key, label in (("chatledger", "full scorers"), ("chatledger_text_f1", "text F1 only")):
            ours = peer[key]
            rows.append(
                (
                    f"ChatLedger, {k} list fields, {label}",
                    f"{ours['median_s']:.3f} s",
                    f"{ours['chunks_per_s']:,.0f} chunks/s",
                )
            )
        for variant, stats in peer["stickler"].items():
            agree = peer["f1_agreement"][variant]
            rows.append(
                (
                    f"stickler {peer['stickler_version']}, {variant}",
                    f"{stats['median_s']:.3f} s",
                    f"{stats['chunks_per_s']:,.0f} chunks/s",
                )
            )
            full, lean = peer["speedup"][variant], peer["speedup_text_f1"][variant]
            rows.append(
                (
                    "  ChatLedger speed-up (full / F1 only)",
                    f"{full:.1f}x/{lean:.1f}x",
                    f"|dF1| mean {agree['mean_abs_diff']:.4f}, max {agree['max_abs_diff']:.3f}, "
                    f"equal in {agree['share_equal']:.1%} of {agree['pairs']}",
                )
            )
    else:
        rows.append(("stickler", "skipped", peer["reason"]))
    outside = {
        name: f["us_per_chunk"] - f["kernel_us_per_chunk"] for name, f in results["fields"].items()
    }
    top = sorted(outside, key=lambda name: -outside[name])
    width = max(len(r[0]) for r in rows)
    load = results["machine_at_start"]["load_average_1_5_15min"][0]
    print(
        f"ChatLedger layer-1 benchmark: {n} chunks, median of {results['settings']['repeats']} "
        f"runs (load average {load} at start, {results['load_average_at_end'][0]} at end)"
    )
    for label, time_s, rate in rows:
        print(f"  {label:<{width}}  {time_s:>10}  {rate}")
    by_field = ", ".join(f"{name} {outside[name]:.0f}" for name in top)
    line = f"outside-kernel us/chunk by field: {by_field}"
    print(textwrap.fill(line, 100, initial_indent="  ", subsequent_indent="    "))


BENCH_DIR = Path(__file__).resolve().parent

# The bare kernel: what any layer-1 scorer of these texts must do, and nothing else — read the
# two files, then for every chunk and text list preprocess, cdist and assign (DESIGN.md §3).
BARE_KERNEL = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from rapidfuzz import fuzz, process, utils
from scipy.optimize import linear_sum_assignment
t1 = time.perf_counter()
def rows(path):
    with open(path, encoding="utf-8-sig") as handle:
        return {r["chunk_id"]: r["extraction"] for r in map(json.loads, handle)}
ref, chal = rows(sys.argv[1]), rows(sys.argv[2])
t2 = time.perf_counter()
LISTS = ("decisions", "action_items", "open_questions", "claims", "warnings",
         "implicit_assumptions")
def texts(e):
    yield [t for t in e.get("topics", [])]
    yield [x["name"] for x in e.get("entities", [])]
    for name in LISTS:
        yield [x["text"] for x in e.get(name, [])]
    yield [x["question"] for x in e.get("qa_pairs", [])]
    yield [e["summary"]] if e.get("summary") else []
kernel = 0.0
now = time.perf_counter
for cid, r in ref.items():
    c = chal.get(cid)
    if c is None:
        continue
    for a, b in zip(texts(r), texts(c)):
        if not a or not b:
            continue
        a = [utils.default_process(x) for x in a]
        b = [utils.default_process(x) for x in b]
        k = now()
        s = process.cdist(a, b, scorer=fuzz.token_set_ratio, dtype=np.float64)
        kernel += now() - k
        w = np.where(s >= 60.0, 100.0 * (min(s.shape) + 1) + s, 0.0)
        k = now()
        linear_sum_assignment(w, maximize=True)
        kernel += now() - k
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "read_s": t2 - t1, "match_s": t3 - t2,
                  "kernel_s": kernel}))
"""

# stickler as _peer_stickler.py configures it, as a process: read, build documents, compare.
STICKLER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[4])
t0 = time.perf_counter()
from _peer_stickler import PEER_FIELDS, load_peer, row_texts
peer, reason = load_peer()
assert peer is not None, reason
t1 = time.perf_counter()
def rows(path):
    with open(path, encoding="utf-8-sig") as handle:
        return {r["chunk_id"]: r["extraction"] for r in map(json.loads, handle)}
ref, chal = rows(sys.argv[1]), rows(sys.argv[2])
t2 = time.perf_counter()
variant = sys.argv[3]
for cid, r in ref.items():
    c = chal[cid]
    a = peer.build_texts(variant, {f: row_texts(r, f) for f in PEER_FIELDS})
    b = peer.build_texts(variant, {f: row_texts(c, f) for f in PEER_FIELDS})
    peer.compare(a, b)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "read_s": t2 - t1, "compare_s": t3 - t2}))
"""


def run_process(cmd: Sequence[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Wall seconds, CPU seconds and peak RSS of one process (its own rusage, from wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {stderr[-1000:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "stdout": stdout,
    }


def corpus_files(n_chunks: int, seed: int, data: Path) -> tuple[Path, Path, Path]:
    """The synthetic corpus of ``n_chunks`` under ``data`` (written once, then reused)."""
    folder = data / f"n{n_chunks}-s{seed}"
    paths = (folder / "chunks.jsonl", folder / "reference.jsonl", folder / "challenger.jsonl")
    if not all(p.exists() for p in paths):
        write_corpus(n_chunks, seed, folder)
    return paths


def _summary(runs: Sequence[dict[str, Any]], n: int) -> dict[str, Any]:
    wall = median([r["wall_s"] for r in runs])
    return {
        "wall_median_s": wall,
        "cpu_median_s": median([r["cpu_s"] for r in runs]),
        "peak_rss_mb_median": median([r["peak_rss_mb"] for r in runs]),
        "chunks_per_s": n / wall,
        "chunks_per_cpu_s": n / median([r["cpu_s"] for r in runs]),
        "runs": [{k: v for k, v in r.items() if k != "stdout"} for r in runs],
    }


def compile_sources(*trees: Path | None) -> None:
    """Byte-compile ChatLedger's sources (this tree's and ``trees``) before timing processes,
    as an installed package is: with PYTHONDONTWRITEBYTECODE set (CI sandboxes set it) every
    process would compile ChatLedger's modules again, ~0.1 s that neither a user nor the
    floor pays (numpy, scipy and rapidfuzz come compiled in their wheels)."""
    import compileall

    for tree in (Path(__file__).resolve().parents[1] / "src", *trees):
        if tree is not None:
            compileall.compile_dir(str(tree), quiet=1)


def bench_process(
    sizes: Sequence[int], seed: int, repeats: int, data: Path, source: Path | None, peer: bool
) -> dict[str, Any]:
    """Whole processes: ``chatledger score`` at each size; bare kernel and stickler at the
    first. Runs of different tools alternate, so a change of load weighs on all alike."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    compile_sources(source)
    result: dict[str, Any] = {"source": str(source) if source else "installed", "sizes": {}}
    for index, n in enumerate(sizes):
        chunks, ref, chal = corpus_files(n, seed, data)
        score = [
            sys.executable,
            "-m",
            "chatledger",
            "score",
            "--reference",
            str(ref),
            "--challenger",
            str(chal),
            "--chunks",
            str(chunks),
            "--format",
            "json",
        ]
        times = repeats if index == 0 else max(1, min(repeats, 3) if n <= 10_000 else 1)
        runs, bare, sticklers = [], [], {v: [] for v in VARIANTS}
        for _ in range(times):
            runs.append(run_process(score, env))
            if index == 0:
                bare.append(run_process([sys.executable, "-c", BARE_KERNEL, str(ref), str(chal)]))
                if peer and load_peer()[0] is not None:
                    for variant in VARIANTS:
                        cmd = [sys.executable, "-c", STICKLER, str(ref), str(chal), variant]
                        sticklers[variant].append(run_process([*cmd, str(BENCH_DIR)]))
        entry = _summary(runs, n)
        report = json.loads(runs[-1]["stdout"])
        entry["extraction_composite"] = report["extraction_composite"]
        entry["megabytes"] = round(sum(p.stat().st_size for p in (chunks, ref, chal)) / 1e6, 1)
        result["sizes"][str(n)] = entry
        if index == 0:
            inner = [json.loads(r["stdout"]) for r in bare]
            result["bare_kernel"] = {
                "chunks": n,
                **_summary(bare, n),
                "kernel_median_s": median([i["kernel_s"] for i in inner]),
                "import_median_s": median([i["import_s"] for i in inner]),
                "read_median_s": median([i["read_s"] for i in inner]),
            }
            result["score_vs_bare_process"] = (
                entry["wall_median_s"] / result["bare_kernel"]["wall_median_s"]
            )
            result["score_vs_bare_process_cpu"] = (
                entry["cpu_median_s"] / result["bare_kernel"]["cpu_median_s"]
            )
            # Each round's score and bare runs ran side by side: the median of their ratios is
            # steadier on a shared machine than the ratio of the two medians.
            result["score_vs_bare_cpu_paired"] = median(
                [s["cpu_s"] / b["cpu_s"] for s, b in zip(runs, bare, strict=True)]
            )
            result["score_vs_kernel_in_process"] = (
                entry["wall_median_s"] / result["bare_kernel"]["kernel_median_s"]
            )
            result["stickler"] = {}
            for variant, variant_runs in sticklers.items():
                if not variant_runs:
                    continue
                summary = _summary(variant_runs, n)
                result["stickler"][variant] = summary
                result[f"speedup_vs_stickler_{variant}"] = (
                    summary["wall_median_s"] / entry["wall_median_s"]
                )
                result[f"speedup_vs_stickler_{variant}_cpu"] = (
                    summary["cpu_median_s"] / entry["cpu_median_s"]
                )
    first, last = str(sizes[0]), str(sizes[-1])
    result["peak_rss_largest_over_smallest"] = (
        result["sizes"][last]["peak_rss_mb_median"] / result["sizes"][first]["peak_rss_mb_median"]
    )
    return result


def print_process(process: dict[str, Any]) -> None:
    print(f"whole processes (chatledger from {process['source']}):")
    for n, entry in process["sizes"].items():
        print(
            f"  chatledger score, {int(n):>7,} chunks: {entry['wall_median_s']:7.2f} s wall, "
            f"{entry['cpu_median_s']:7.2f} CPU-s, {entry['chunks_per_s']:7,.0f} chunks/s, "
            f"peak RSS {entry['peak_rss_mb_median']:7.1f} MB"
        )
    bare = process.get("bare_kernel")
    if bare:
        print(
            f"  bare kernel script, {bare['chunks']:,} chunks: {bare['wall_median_s']:.2f} s wall "
            f"({bare['kernel_median_s']:.2f} s in cdist + assignment); score / bare process "
            f"{process['score_vs_bare_process']:.2f}x wall, CPU "
            f"{process['score_vs_bare_process_cpu']:.2f}x (paired by round "
            f"{process['score_vs_bare_cpu_paired']:.2f}x), / kernel in-process "
            f"{process['score_vs_kernel_in_process']:.2f}x"
        )
    for variant, stats in process.get("stickler", {}).items():
        print(
            f"  stickler {variant}: {stats['wall_median_s']:.2f} s wall; chatledger score "
            f"{process[f'speedup_vs_stickler_{variant}']:.1f}x faster "
            f"({process[f'speedup_vs_stickler_{variant}_cpu']:.1f}x in CPU time)"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1000, help="synthetic chunks (default 1000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per figure (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--no-peer", action="store_true", help="skip the stickler comparison")
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})"
    )
    parser.add_argument(
        "--sizes",
        default="1000,10000,100000",
        help="chunk counts of the whole-process runs (default 1000,10000,100000; '' skips)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(tempfile.gettempdir()) / "chatledger-bench-data",
        help="where the whole-process corpora are written once and reused",
    )
    parser.add_argument("--source", type=Path, help="run chatledger from this source tree")
    parser.add_argument(
        "--process-only", action="store_true", help="only the whole-process section"
    )
    args = parser.parse_args(argv)
    if args.chunks < 1 or args.repeats < 1:
        parser.error("--chunks and --repeats must be at least 1")
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    if args.process_only:
        if not sizes:
            parser.error("--process-only needs --sizes")
        results = {
            "benchmark": "bench_score",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "settings": {"sizes": sizes, "repeats": args.repeats, "seed": args.seed},
            "machine_at_start": machine(),
            "process": bench_process(
                sizes, args.seed, args.repeats, args.data, args.source, not args.no_peer
            ),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        }
        print_process(results["process"])
        _write(args.out, results)
        return 0

    with tempfile.TemporaryDirectory(prefix="chatledger-bench-") as tmp:
        corpus = build_corpus(args.chunks, args.seed, Path(tmp))
        results: dict[str, Any] = {
            "benchmark": "bench_score",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "settings": {"chunks": args.chunks, "repeats": args.repeats, "seed": args.seed},
            "machine_at_start": machine(),
            "corpus": corpus_stats(corpus),
            "layer1": bench_layer1(corpus, args.repeats),
            "fields": bench_fields(corpus, args.repeats),
            "parse": bench_parse(corpus, args.repeats),
        }
        if args.no_peer:
            results["peer"] = {"status": "skipped", "reason": "--no-peer"}
        else:
            results["peer"] = bench_peer(corpus, args.repeats)
        if sizes:
            results["process"] = bench_process(
                sizes, args.seed, args.repeats, args.data, args.source, not args.no_peer
            )
        results["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print_table(results)
    if "process" in results:
        print_process(results["process"])
    _write(args.out, results)
    return 0


def _write(out: Path, results: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"results written to {out}")


def corpus_stats(corpus: Corpus) -> dict[str, Any]:
    """Mean sizes of the generated data, so a reader can judge how realistic it is."""
    pairs = corpus.pairs()
    messages = statistics.fmean(len(c.messages) for c in corpus.chunks)
    per_field = {
        name: round(statistics.fmean(len(getattr(ref, name)) for ref, _, _ in pairs), 2)
        for name in ("topics", "entities", "decisions", "claims", "qa_pairs", "links")
    }
    words = [len(c.text.split()) for ref, _, _ in pairs for c in ref.claims]
    return {
        "chunks": len(pairs),
        "messages_per_chunk": round(messages, 2),
        "reference_items_per_chunk": per_field,
        "claim_words_mean": round(statistics.fmean(words), 2),
    }


if __name__ == "__main__":
    sys.exit(main())
