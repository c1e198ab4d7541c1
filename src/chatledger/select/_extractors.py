"""Who answers a selection's extractions: a model, a recording, or the simulated extractor.

Every extractor takes one unit — a chunk, the fields asked (with their instructions), a prompt
style and a sample index — and returns a :class:`UnitLine` (what the phases record). A model's
answer is validated field by field against the candidates' shapes: a field that breaks its shape
is named in ``invalid`` and the others are kept; an answer that is no JSON object at all is an
``error``. Either way the line is written and counted — a malformed output is never dropped.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue, ValidationError

from chatledger.core import FIELDS_V3, Chunk, ExtractionRecord, RecordStatus
from chatledger.extraction import uses_strict_schema
from chatledger.providers import Completion, Provider, parse_model_id
from chatledger.select._candidates import CANDIDATES
from chatledger.select._prompt import FieldAsk, selection_request
from chatledger.select._record import Phase, UnitLine
from chatledger.select._simulated import SIMULATED_LABEL, simulate_extraction


@dataclass(frozen=True)
class UnitRequest:
    """One extraction a phase asks for."""

    phase: Phase
    chunk: Chunk
    asks: tuple[FieldAsk, ...]
    sample: int = 0
    style: str = "plain"
    schema_name: str = ""
    n_fields: int = 0  # the schema's size (the simulation's crowding); 0 in the screen

    def key(self, extractor: str) -> str:
        return unit_key(
            self.phase, self.chunk.chunk_id, self.sample, self.asks, self.style, extractor
        )


def unit_key(
    phase: Phase,
    chunk_id: str,
    sample: int,
    asks: Sequence[FieldAsk],
    style: str,
    extractor: str,
) -> str:
    """What identifies one unit across reruns: its phase, chunk, sample, the fields asked with
    their instructions, the style and the extractor."""
    # Phase 3 re-scores schemas on chunks the tournament may have run: the same unit.
    group = "tournament" if phase == "validate" else phase
    text = json.dumps(
        [group, chunk_id, sample, [[a.name, a.instruction] for a in asks], style, extractor]
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def validate_values(
    parsed: Mapping[str, Any], names: Sequence[str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """(values that fit their candidate's shape, {field: why not} for the others)."""
    values: dict[str, Any] = {}
    invalid: dict[str, str] = {}
    for name in names:
        if name not in parsed:
            invalid[name] = "missing from the answer"
            continue
        try:
            CANDIDATES.get(name).validate(parsed[name])
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            invalid[name] = f"{where}: {first['msg']}" if where else str(first["msg"])
            continue
        values[name] = parsed[name]
    return values, invalid


class SelectionExtractor(ABC):
    """Answers units. ``label`` names it in records and reports."""

    label: str
    simulated: bool = False
    # The prompt styles and variants it can tell apart (a recording has only its own).
    varies_prompt: bool = True

    @abstractmethod
    async def extract(self, request: UnitRequest) -> UnitLine: ...

    async def aclose(self) -> None:
        return None

    def chunk_ids(self) -> set[str] | None:
        """The chunks it can answer (None: any)."""
        return None

    def line(
        self,
        request: UnitRequest,
        *,
        values: dict[str, Any] | None = None,
        invalid: dict[str, str] | None = None,
        unavailable: list[str] | None = None,
        error: str | None = None,
        completion: Completion | None = None,
    ) -> UnitLine:
        asks = request.asks
        usage: dict[str, Any] = {}
        if completion is not None:
            usage = {
                "calls": completion.calls,
                "cached": completion.cached,
                "input_tokens": completion.input_tokens,
                "output_tokens": completion.output_tokens,
                "cost_usd": completion.cost_usd,
            }
        return UnitLine(
            key=request.key(self.label),
            phase=request.phase,
            chunk_id=request.chunk.chunk_id,
            sample=request.sample,
            style=request.style,
            variant=asks[0].variant if request.phase == "variants" and asks else "base",
            schema_name=request.schema_name,
            fields=[a.name for a in asks],
            values=values or {},
            invalid=invalid or {},
            unavailable=unavailable or [],
            error=error,
            **usage,
        )


class SimulatedExtractor(SelectionExtractor):
    """The seeded stochastic simulation of :mod:`._simulated`, over the chunks' truths."""

    simulated = True

    def __init__(
        self,
        truths: Mapping[str, Mapping[str, Any]],
        *,
        seed: int = 0,
        noise: Mapping[str, float] | None = None,
    ) -> None:
        self.label = SIMULATED_LABEL
        self.truths = truths
        self.seed = seed
        self.noise = noise

    async def extract(self, request: UnitRequest) -> UnitLine:
        truth = self.truths.get(request.chunk.chunk_id)
        if truth is None:
            return self.line(request, error="no reference for this chunk")
        values = simulate_extraction(
            truth,
            [a.name for a in request.asks],
            chunk_id=request.chunk.chunk_id,
            sample=request.sample,
            variants={a.name: a.variant for a in request.asks},
            style=request.style,
            n_fields=request.n_fields,
            noise=self.noise,
            seed=self.seed,
        )
        return self.line(request, values=values)


class RecordedExtractor(SelectionExtractor):
    """An extraction file with repeated samples (``"sample": 0, 1, …``): each unit reads the
    line of its (chunk, sample). Only the v3 fields are there; the others are ``unavailable``.
    Prompt styles and variants cannot change a recording: it answers every one alike."""

    varies_prompt = False

    def __init__(self, label: str, samples: Mapping[int, Mapping[str, ExtractionRecord]]) -> None:
        self.label = label
        self.samples = samples

    def chunk_ids(self) -> set[str] | None:
        return set(self.samples.get(0, {}))

    async def extract(self, request: UnitRequest) -> UnitLine:
        asks = request.asks
        record = self.samples.get(request.sample, {}).get(request.chunk.chunk_id)
        if record is None:
            return self.line(request, error="not in the recording")
        unavailable = [a.name for a in asks if a.name not in FIELDS_V3 or a.name == "confidence"]
        if record.status is not RecordStatus.OK or record.extraction is None:
            problem = record.problems[0].message if record.problems else record.status.value
            return self.line(request, error=f"invalid output: {problem}", unavailable=unavailable)
        dumped = record.extraction.model_dump(mode="json")
        values = {a.name: dumped[a.name] for a in asks if a.name not in unavailable}
        return self.line(request, values=values, unavailable=unavailable)


class ModelExtractor(SelectionExtractor):
    """A model through the provider layer: cached (each sample its own key), retried,
    rate-limited, accounted and budget-capped like every model call of ChatLedger."""

    def __init__(
        self,
        model: str,
        provider: Provider,
        *,
        temperature: float | None,
        max_tokens: int,
        strict: bool | None = None,
    ) -> None:
        self.label = model
        self.provider = provider
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.strict = uses_strict_schema(model, strict)
        kind = parse_model_id(model).provider
        # A server that takes a seed gets the sample's: repeats at a fixed seed are one answer.
        self.seeded = kind in ("local", "openai-compatible")

    async def extract(self, request: UnitRequest) -> UnitLine:
        options: dict[str, JsonValue] = {"seed": request.sample} if self.seeded else {}
        completion = await self.provider.complete(
            selection_request(
                request.chunk,
                request.asks,
                model=self.label,
                style=request.style,
                sample=request.sample,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
                strict=self.strict,
                options=options,
            )
        )
        parsed = completion.parsed
        if not isinstance(parsed, dict):
            error = completion.error or "the answer is not a JSON object"
            return self.line(request, error=error, completion=completion)
        values, invalid = validate_values(parsed, [a.name for a in request.asks])
        return self.line(request, values=values, invalid=invalid, completion=completion)
