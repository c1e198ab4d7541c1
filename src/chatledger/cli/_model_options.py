"""The options every command that calls models shares (``extract``, ``structbench run``), and
how they become the provider layer's call settings."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from pydantic import JsonValue

    from chatledger.providers import BatchSettings, CallSettings, ProviderHub

TimeoutOption = Annotated[
    float | None,
    typer.Option(min=0.001, help="seconds before one request is abandoned and retried"),
]
MaxAttemptsOption = Annotated[
    int | None, typer.Option(min=1, help="tries per call, the first included (default 5)")
]
BudgetUsdOption = Annotated[
    float | None,
    typer.Option(
        min=0.0,
        help="stop before the spend ledger passes this (cumulative across runs sharing the "
        "cache; see chatledger budget)",
    ),
]
BudgetNameOption = Annotated[str, typer.Option(help="spend ledger the cap applies to")]
SeedOption = Annotated[
    int | None, typer.Option(help="sampling seed sent to the server (local default 0)")
]
RepeatPenaltyOption = Annotated[
    float | None,
    typer.Option(min=0.0, help="repeat penalty sent to the server (local default 1.1)"),
]
StrictSchemaOption = Annotated[
    bool | None,
    typer.Option(
        "--strict-schema/--lenient-schema",
        help="ask with every field required (default: strict for local: models)",
    ),
]
BoundedListsOption = Annotated[
    bool | None,
    typer.Option(
        "--bounded-lists/--unbounded-lists",
        help="give every list a maxItems and every text a maxLength from the bundled gold, so "
        "a grammar-constrained model ends a looping list (default: bounded for local: models)",
    ),
]
ChunkIdsOption = Annotated[
    bool | None,
    typer.Option(
        "--chunk-ids/--any-ids",
        help="restrict message ids in the schema to the chunk's own ids (default: on for "
        "local: models)",
    ),
]


BatchOption = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="send OpenAI and Anthropic calls through their batch APIs at half price (results "
        "within 24 h; rerun to resume a submitted batch; other providers call one by one). "
        "See docs/batch.md",
    ),
]
BatchPollOption = Annotated[
    float | None,
    typer.Option(
        "--batch-poll",
        min=0.001,
        help="seconds before the first poll of a batch, doubled after each up to 60 (default 5)",
    ),
]


def batch_settings(batch: bool, poll_s: float | None = None) -> BatchSettings | None:
    """Batch mode's settings, or None when it is off."""
    if not batch:
        return None
    from chatledger.providers import BatchSettings

    if poll_s is None:
        return BatchSettings()
    return BatchSettings(poll_initial_s=poll_s, poll_max_s=max(poll_s, 60.0))


def batch_report(hub: ProviderHub, model: str) -> dict[str, JsonValue] | None:
    """What batch mode did for the summary (None when it was off)."""
    if hub.batch is None:
        return None
    stats = hub.batch_stats()
    return {
        "batches": stats.batches,
        "submitted": stats.batches_submitted,
        "resumed": stats.batches_resumed,
        "requests": stats.requests,
        "succeeded": stats.succeeded,
        "failed": stats.failed,
        "price_share": hub.prices.batch_multiplier(model),
        "per_call_endpoints": list(hub.batch_fallbacks()),
    }


def batch_rows(report: dict[str, JsonValue] | None) -> list[tuple[str, str]]:
    """The summary table's lines for ``batch_report``."""
    if report is None:
        return []
    fallbacks = report["per_call_endpoints"]
    if fallbacks and not report["batches"]:
        return [("batch mode", "off: no batch API (called one by one at list price)")]
    share = report["price_share"]
    assert isinstance(share, float)
    rows = [
        (
            "batches (submitted + resumed)",
            f"{report['batches']} ({report['submitted']} + {report['resumed']})",
        ),
        ("requests batched / failed", f"{report['requests']} / {report['failed']}"),
        ("batch price", f"{share:.0%} of list ({1 - share:.0%} discount)"),
    ]
    return rows


def batch_note(report: dict[str, JsonValue] | None) -> str | None:
    """One line saying what batch mode did (None when it was off)."""
    rows = batch_rows(report)
    if not rows:
        return None
    return "batch mode: " + "; ".join(f"{label} {value}" for label, value in rows)


def sampling_options(seed: int | None, repeat_penalty: float | None) -> dict[str, JsonValue]:
    """The request options for a seed and a repeat penalty (only those given)."""
    options: dict[str, JsonValue] = {}
    if seed is not None:
        options["seed"] = seed
    if repeat_penalty is not None:
        options["repeat_penalty"] = repeat_penalty
    return options


def call_settings(
    base: CallSettings,
    *,
    concurrency: int | None = None,
    timeout: float | None = None,
    max_attempts: int | None = None,
) -> CallSettings:
    """``base`` with the values the user gave on the command line."""
    if concurrency:
        base = replace(base, concurrency=concurrency)
    if timeout is not None:
        base = replace(base, timeout_s=timeout)
    if max_attempts is not None:
        base = replace(base, max_attempts=max_attempts)
    return base
