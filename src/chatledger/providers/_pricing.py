"""Prices in USD per million tokens, per model id, from a JSON file (a default one ships).

Keys are model ids or shell-style patterns (``openai-compatible:*``); an exact id wins over a
pattern, and a longer pattern over a shorter one, so a specific entry can refine a wildcard.

``batch_multiplier`` says what share of the list price a call sent through the provider's batch
API pays (OpenAI's Batch API and Anthropic's Message Batches both bill half), by model id or
pattern looked up the same way; a model without one pays the list price in batch mode too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path
from typing import Any

from chatledger.core import InputError

_DEFAULT_RESOURCE = "prices.json"
# The highest price read (USD per million tokens: a million dollars a token). Far above any real
# price, and low enough that no call's cost, nor any sum of them, overflows a float (1e308 per
# million tokens made every cost inf: "$/chunk inf").
MAX_PRICE_PER_MTOK = 1e12


@dataclass(frozen=True)
class ModelPrice:
    """USD per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok
        ) / 1_000_000


class PriceTable:
    """Looks up the price of a model id; ``None`` when neither an entry nor a pattern fits."""

    def __init__(
        self,
        prices: Mapping[str, ModelPrice],
        batch_multipliers: Mapping[str, float] | None = None,
    ) -> None:
        self._exact = {k: v for k, v in prices.items() if not _is_pattern(k)}
        # Longest pattern first: the most specific one that matches wins.
        self._patterns = sorted(
            ((k, v) for k, v in prices.items() if _is_pattern(k)), key=lambda kv: -len(kv[0])
        )
        self._batch = _Lookup(dict(batch_multipliers or {}))

    @classmethod
    def default(cls) -> PriceTable:
        """The table shipped in ``chatledger/data/prices.json``."""
        text = resources.files("chatledger").joinpath("data", _DEFAULT_RESOURCE).read_text("utf-8")
        return cls.from_json(json.loads(text), source=f"chatledger/data/{_DEFAULT_RESOURCE}")

    @classmethod
    def from_file(cls, path: str | Path) -> PriceTable:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read price table: {exc}", path=path) from None
        return cls.from_json(data, source=str(path))

    @classmethod
    def from_json(cls, data: Any, *, source: str = "<prices>") -> PriceTable:
        """Read ``{"usd_per_million_tokens": {model: {"input": x, "output": y}}}``; the bare
        inner mapping is accepted too."""
        table = data.get("usd_per_million_tokens", data) if isinstance(data, dict) else None
        if not isinstance(table, dict):
            raise InputError("a price table is a JSON object of model -> prices", path=source)
        prices: dict[str, ModelPrice] = {}
        for model, entry in table.items():
            if model.startswith("_"):
                continue  # comments
            prices[model] = _read_price(entry, source=source, model=model)
        raw = data.get("batch_multiplier", {}) if table is not data else {}
        return cls(prices, _read_multipliers(raw, source=source))

    def with_overrides(
        self,
        overrides: Mapping[str, ModelPrice],
        batch_multipliers: Mapping[str, float] | None = None,
    ) -> PriceTable:
        """This table with some entries (and batch multipliers) added or replaced (e.g. from a
        run config)."""
        merged = dict(self._exact)
        merged.update(self._patterns)
        merged.update(overrides)
        return PriceTable(merged, {**self._batch.entries, **dict(batch_multipliers or {})})

    def batch_multiplier(self, model: str) -> float:
        """The share of the list price a batch call of ``model`` pays (1.0: no discount)."""
        found = self._batch.get(model)
        return 1.0 if found is None else found

    def batch_price(self, model: str) -> ModelPrice | None:
        """What ``model`` costs per million tokens through its provider's batch API."""
        price = self.price(model)
        if price is None:
            return None
        factor = self.batch_multiplier(model)
        return ModelPrice(price.input_per_mtok * factor, price.output_per_mtok * factor)

    def batch_multipliers(self) -> dict[str, float]:
        return dict(self._batch.entries)

    def price(self, model: str) -> ModelPrice | None:
        found = self._exact.get(model)
        if found is not None:
            return found
        for pattern, price in self._patterns:
            if fnmatchcase(model, pattern):
                return price
        return None

    def entries(self) -> dict[str, ModelPrice]:
        return {**self._exact, **dict(self._patterns)}


class _Lookup:
    """Values by exact id or shell pattern (exact first, then the longest pattern)."""

    def __init__(self, entries: dict[str, float]) -> None:
        self.entries = entries
        self._patterns = sorted(
            ((k, v) for k, v in entries.items() if _is_pattern(k)), key=lambda kv: -len(kv[0])
        )

    def get(self, model: str) -> float | None:
        if model in self.entries:
            return self.entries[model]
        for pattern, value in self._patterns:
            if fnmatchcase(model, pattern):
                return value
        return None


def _read_multipliers(raw: Any, *, source: str) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise InputError("batch_multiplier is a JSON object of model -> share", path=source)
    found: dict[str, float] = {}
    for model, value in raw.items():
        if model.startswith("_"):
            continue
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or not 0 <= value <= 1:
            raise InputError(
                "a batch multiplier is a number from 0 to 1 (the share of the list price paid)",
                path=source,
                field=f"batch_multiplier.{model}",
            )
        found[model] = float(value)
    return found


def _is_pattern(key: str) -> bool:
    return any(ch in key for ch in "*?[")


def _read_price(entry: Any, *, source: str, model: str) -> ModelPrice:
    if not isinstance(entry, dict) or set(entry) - {"input", "output"}:
        raise InputError('expected {"input": usd, "output": usd}', path=source, field=model)
    values: list[float] = []
    for side in ("input", "output"):
        value = entry.get(side)
        if not isinstance(value, int | float) or isinstance(value, bool):
            value = None
        if value is None or not math.isfinite(value) or value < 0:
            raise InputError(
                f"{side} price must be a number >= 0 (USD per million tokens)",
                path=source,
                field=f"{model}.{side}",
            )
        if value > MAX_PRICE_PER_MTOK:
            raise InputError(
                f"{side} price {value:g} is beyond any real price (at most "
                f"{MAX_PRICE_PER_MTOK:g} USD per million tokens): its costs would overflow; "
                "prices are per million tokens, not per token",
                path=source,
                field=f"{model}.{side}",
            )
        values.append(float(value))
    return ModelPrice(input_per_mtok=values[0], output_per_mtok=values[1])
