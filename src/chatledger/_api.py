"""The Python API: what the CLI's ``score``, ``run`` and ``gate`` do, as functions that return
the typed results instead of printing them.

    import chatledger as cl

    report = cl.score("gold.jsonl", "cheap.jsonl", "chunks.jsonl")   # cl.ScoreReport
    record = cl.run("run.yaml", out="runs/today")                    # cl.ConversationRun
    verdict = cl.gate("runs/main", "runs/today", rules="gate.yaml")  # cl.GateResult

Every function raises :class:`chatledger.InputError` (a :class:`chatledger.ChatLedgerError`)
for bad input, with the file, line and field in its message, exactly as the CLI prints it — an
argument out of its choices included (``aggregate="mcro"``: "aggregate='mcro' is not one of:
macro, micro"), before any file is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from chatledger.core import Chunk, ExtractionRecord, Problem
    from chatledger.gating import GateResult
    from chatledger.record import ConversationRun
    from chatledger.scoring import ScoreReport, ScoringConfig

PathLike = str | os.PathLike[str]
# Extractions in memory: records, or the lines of an extraction file as mappings.
Extractions = PathLike | Iterable["ExtractionRecord | Mapping[str, Any]"]
Chunks = PathLike | Iterable["Chunk | Mapping[str, Any]"]
DEFAULT_RUN_OUT = Path("runs/latest")  # as ``chatledger run``


def score(
    reference: Extractions,
    challenger: Extractions,
    chunks: Chunks | None = None,
    *,
    schema: Literal["v1", "v3"] = "v3",
    weights: PathLike | None = None,
    matcher: str | None = None,
    aggregate: Literal["macro", "micro"] | None = None,
) -> ScoreReport:
    """Layer 1: the challenger's extractions scored against the reference's, field by field
    (``chatledger score``). Each of ``reference``, ``challenger`` and ``chunks`` is a JSONL
    path, or the records themselves (:class:`ExtractionRecord` / :class:`Chunk`, or mappings
    shaped as the file's lines). ``weights`` is a weights file (weights, thresholds, matcher).
    Unlike the CLI, which streams the files, the report keeps every chunk's scores
    (``report.chunks``)."""
    from chatledger.matching import MATCHERS
    from chatledger.scoring import score_records

    _choice("schema", schema, ("v1", "v3"))
    if matcher is not None:
        _choice("matcher", matcher, tuple(MATCHERS))
    if aggregate is not None:
        _choice("aggregate", aggregate, ("macro", "micro"))
    config = _scoring_config(schema, weights, matcher, aggregate)

    problems: list[Problem] = []
    ref_records, ref_model = _records(reference, "reference", problems)
    chal_records, chal_model = _records(challenger, "challenger", problems)
    chunk_list = _chunks(chunks) if chunks is not None else None
    return score_records(
        ref_records,
        chal_records,
        chunk_list,
        config,
        reference_model=ref_model,
        challenger_model=chal_model,
        problems=problems,
    )


def run(
    config: PathLike,
    out: PathLike = DEFAULT_RUN_OUT,
    *,
    executor: str | None = None,
    batch: bool = False,
    report: bool = False,
) -> ConversationRun:
    """Every layer of a run config for every challenger (``chatledger run``): writes the run
    directory ``out`` and returns its record, what ``run.json`` holds. A rerun into the same
    ``out`` reuses every finished stage. ``report`` also writes ``report.html``."""
    from chatledger.core import prepare_output_dir
    from chatledger.runs import execute_run, load_run_config

    _path_like("config", config)
    _path_like("out", out)
    _flag("batch", batch)
    _flag("report", report)
    if executor is not None and not isinstance(executor, str):
        _refuse("executor", executor, "local, processes[:N] or dask[:ADDRESS]")
    loaded = load_run_config(Path(config))
    if batch and not loaded.config.batch:
        loaded = loaded.model_copy(
            update={"config": loaded.config.model_copy(update={"batch": True})}
        )
    out_dir = Path(out)
    prepare_output_dir(out_dir)
    result = execute_run(loaded, out_dir, executor=executor)
    if report:
        from chatledger.report import build_report

        build_report(out_dir)
    assert result.record is not None  # set once the directory is written
    return result.record


def gate(
    baseline: PathLike | None = None,
    candidate: PathLike | None = None,
    *,
    rules: PathLike | str,
    baseline_model: str | None = None,
    candidate_model: str | None = None,
    strict: bool | None = None,
) -> GateResult:
    """The regression gate (``chatledger gate``): every rule's verdict, on the paired
    bootstrap of the two runs. ``rules`` is a rules file or the rules as YAML text;
    ``result.passed`` says whether every rule passed."""
    from chatledger.gating import evaluate_gate, load_gate_rules

    for name, value in (("baseline", baseline), ("candidate", candidate)):
        if value is not None:
            _path_like(name, value)
    _path_like("rules", rules)
    if strict is not None:
        _flag("strict", strict)
    return evaluate_gate(
        load_gate_rules(os.fspath(rules)),
        Path(baseline) if baseline is not None else None,
        Path(candidate) if candidate is not None else None,
        baseline_model=baseline_model,
        candidate_model=candidate_model,
        strict=strict,
    )


def _refuse(name: str, value: object, allowed: str) -> None:
    from chatledger.core import InputError

    raise InputError(f"{name}={value!r} is not one of: {allowed}", field=name)


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    """An argument that must be one of ``allowed``: else an InputError listing them."""
    if not isinstance(value, str) or value not in allowed:
        _refuse(name, value, ", ".join(allowed))


def _flag(name: str, value: object) -> None:
    if not isinstance(value, bool):
        _refuse(name, value, "True, False")


def _path_like(name: str, value: object) -> None:
    from chatledger.core import InputError

    if not isinstance(value, str | os.PathLike):
        raise InputError(
            f"{name} is a {type(value).__name__}, not a path (a str or a pathlib.Path)",
            field=name,
        )


def _scoring_config(
    schema: str, weights: PathLike | None, matcher: str | None, aggregate: str | None
) -> ScoringConfig:
    from chatledger.scoring import ScoringConfig, load_scoring_config

    if weights is not None:
        config = load_scoring_config(Path(weights), schema_version=schema, matcher=matcher)
    else:
        config = ScoringConfig.default(schema, matcher or "token_set")
    if aggregate is not None:
        config = config.model_copy(update={"aggregate": aggregate})
    return config


def _records(
    given: Extractions, role: str, problems: list[Problem]
) -> tuple[dict[str, ExtractionRecord], str]:
    """Records by chunk id from a path or from records/mappings (parsed as file lines, so
    a bad one is a counted problem of its position, not an exception)."""
    from chatledger.core import ExtractionRecord, InputError
    from chatledger.corpus import parse_extraction_line, read_extractions

    if isinstance(given, str | os.PathLike):
        path = Path(given)
        if not path.is_file():
            raise InputError(f"{role} extraction file not found", path=path)
        read = read_extractions(path)
        problems += read.problems
        return dict(read.records), read.model or path.stem
    out: dict[str, ExtractionRecord] = {}
    where = f"<{role}>"
    for position, item in enumerate(given, start=1):
        record: ExtractionRecord | None = None
        problem: Problem | None = None
        if isinstance(item, ExtractionRecord):
            record = item
        elif isinstance(item, Mapping):
            text = json.dumps(item, default=str)
            record, problem = parse_extraction_line(text, path=where, line=position)
        else:
            raise InputError(
                f"item {position} is a {type(item).__name__}, not an extraction record or a "
                "mapping",
                path=where,
            )
        if problem is not None:
            problems.append(problem)
        if record is not None:
            out[record.chunk_id] = record
    model = next((r.model for r in out.values() if r.model), role)
    return out, model


def _chunks(given: Chunks) -> list[Chunk]:
    from pydantic import ValidationError

    from chatledger.core import Chunk, InputError, first_validation_error
    from chatledger.corpus import read_chunks

    if isinstance(given, str | os.PathLike):
        return read_chunks(Path(given))
    out: list[Chunk] = []
    for position, item in enumerate(given, start=1):
        if isinstance(item, Chunk):
            out.append(item)
            continue
        try:
            out.append(Chunk.model_validate(item))
        except ValidationError as exc:
            where, message = first_validation_error(exc)
            raise InputError(message, path="<chunks>", line=position, field=where) from None
    return out
