"""structbench scoring benchmark: throughput, and total time over schema-validation time.

    python benchmarks/bench_structbench.py --predictions 100000 --repeats 3

The shipped set (1,000 emails) is replicated to ``--predictions`` documents (ids suffixed
``#r``), each with a raw output of one of six kinds, in fixed proportions:

    exact 30 %   fenced 15 %   perturbed 30 %   truncated 10 %   prose 10 %   think 5 %

(perturbed = one value changed, one key dropped, one extra key and one number written as a
string). Two things are timed, each the median of ``--repeats`` runs:

- *total*: ``score_predictions`` plus the summary without bootstrap (``to_dict()`` with 0
  resamples) — parsing, validation, flattening, matching, weighting, aggregation;
- *validation alone*: the same ``ValidatorCache.violations`` calls the scorer makes (one per
  output that parses as a single JSON value), on outputs parsed beforehand.

Validators are built before either timing (28 distinct schemas), so neither pays for them, and
one untimed warm-up run fills the string-normalisation cache first.
The ratio reported is the median over repeats of total / validation (each repeat times both back
to back).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from chatledger.structbench import (
    Document,
    Prediction,
    ValidatorCache,
    parse_output,
    read_dataset,
    score_predictions,
    shipped_dataset_path,
)

RESULTS = Path(__file__).resolve().parent / "results" / "bench_structbench.json"
VARIANTS = (("exact", 30), ("fenced", 15), ("perturbed", 30), ("truncated", 10), ("prose", 10),
            ("think", 5))  # fmt: skip
_CYCLE = [name for name, share in VARIANTS for _ in range(share)]  # 100 slots


def perturb(truth: Any) -> Any:
    """Change one string, drop one key, add one key, write one number as a string."""
    value = json.loads(json.dumps(truth))
    if not isinstance(value, dict):
        return value
    keys = list(value)
    changed_string = changed_number = False
    for key in keys:
        leaf = value[key]
        if not changed_string and isinstance(leaf, str):
            value[key] = leaf.upper() + " X"
            changed_string = True
        elif not changed_number and isinstance(leaf, int | float) and not isinstance(leaf, bool):
            value[key] = str(leaf)
            changed_number = True
    value.pop(keys[-1], None)
    value["notes"] = "see email"
    return value


def raw_output(document: Document, variant: str) -> str:
    exact = json.dumps(document.ground_truth, ensure_ascii=False)
    if variant == "exact":
        return exact
    if variant == "fenced":
        return f"```json\n{json.dumps(document.ground_truth, indent=2, ensure_ascii=False)}\n```"
    if variant == "perturbed":
        return json.dumps(perturb(document.ground_truth), ensure_ascii=False)
    if variant == "truncated":
        return exact[: int(len(exact) * 0.7)]
    if variant == "prose":
        return f"Here is the extracted data:\n{exact}\nLet me know if you need anything else."
    return f"<think>The email mentions several values; list them first.</think>\n{exact}"


def build(base: list[Document], n: int) -> tuple[list[Document], list[Prediction], dict[str, int]]:
    documents: list[Document] = []
    predictions: list[Prediction] = []
    counts: dict[str, int] = {name: 0 for name, _ in VARIANTS}
    for i in range(n):
        source = base[i % len(base)]
        replica = dataclasses.replace(source, id=f"{source.id}#{i // len(base)}", example=None)
        variant = _CYCLE[(i * 37) % len(_CYCLE)]  # spread variants over kinds and depths
        counts[variant] += 1
        documents.append(replica)
        predictions.append(Prediction(replica.id, raw_output(replica, variant)))
    return documents, predictions, counts


def time_total(
    documents: list[Document], predictions: list[Prediction], validators: ValidatorCache
) -> tuple[float, dict[str, object]]:
    gc.collect()
    started = time.perf_counter()
    report = score_predictions(documents, predictions, validators=validators, n_resamples=0)
    summary = report.to_dict()
    return time.perf_counter() - started, summary


def time_validation(
    documents: list[Document], predictions: list[Prediction], validators: ValidatorCache
) -> tuple[float, int]:
    work = []
    for document, prediction in zip(documents, predictions, strict=True):
        parsed = parse_output(prediction.output)
        if parsed.single_value:
            work.append((document.schema_key, document.schema, parsed.value))
    gc.collect()
    started = time.perf_counter()
    for key, schema, value in work:
        validators.violations(key, schema, value)
    return time.perf_counter() - started, len(work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--predictions", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    base = read_dataset(shipped_dataset_path())
    documents, predictions, counts = build(base, args.predictions)
    validators = ValidatorCache()
    for document in base:  # warm: every distinct schema's validator exists before timing
        validators.validator(document.schema_key, document.schema)

    time_total(documents, predictions, validators)  # warm-up: caches and allocator, untimed
    totals: list[float] = []
    validations: list[float] = []
    summary: dict[str, object] = {}
    validated = 0
    for repeat in range(args.repeats):
        total_s, summary = time_total(documents, predictions, validators)
        validation_s, validated = time_validation(documents, predictions, validators)
        totals.append(total_s)
        validations.append(validation_s)
        print(f"repeat {repeat + 1}: total {total_s:.2f} s, validation {validation_s:.2f} s",
              file=sys.stderr)  # fmt: skip

    total = statistics.median(totals)
    validation = statistics.median(validations)
    result = {
        "benchmark": "structbench scoring",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "predictions": args.predictions,
        "dataset": shipped_dataset_path().name,
        "variants": counts,
        "validated_outputs": validated,
        "distinct_schemas": validators.built,
        "repeats": args.repeats,
        "total_s": totals,
        "validation_s": validations,
        "median_total_s": total,
        "median_validation_s": validation,
        "documents_per_s": args.predictions / total,
        # Each repeat times both back to back; the median of those ratios is steadier on a shared
        # machine than the ratio of two medians (both are reported).
        "total_over_validation": statistics.median(
            t / v for t, v in zip(totals, validations, strict=True)
        ),
        "median_total_over_median_validation": total / validation,
        "scores": {k: summary[k] for k in ("DOC", "MK", "MV", "WV", "micro_f1")},
        "bad_output_counts": summary["bad_output_counts"],
        "environment": {
            "python": platform.python_version(),
            "jsonschema": version("jsonschema"),
            "machine": platform.machine(),
            "processor_count": os.cpu_count(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("median_total_s", "median_validation_s",
                                             "documents_per_s", "total_over_validation")},
                     indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
