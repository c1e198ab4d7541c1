"""The options every command that calls models shares (``extract``, ``structbench run``), and
how they become the provider layer's call settings."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from pydantic import JsonValue

    from chatledger.providers import CallSettings

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
