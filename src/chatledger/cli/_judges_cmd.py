"""``chatledger judges audit``: grade every judge against extractions of known truth.

``--judge`` names a registered offline judge (``grounding``), a model id (``local:NAME``,
``anthropic:…``: a live model judge, its calls cached), or ``recorded:FILE`` (verdicts recorded
with ``--record FILE`` and replayed offline). Without ``--chunks``/``--reference`` it audits on
the bundled corpus and its hand-written gold (what the demo runs on).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from chatledger.cli._app import FormatOption, OutputFormat, app, emit_json, note, stdout, styled

if TYPE_CHECKING:
    from chatledger.core import Chunk, ExtractionRecord
    from chatledger.judge import Judge
    from chatledger.providers import ProviderHub
    from chatledger.record._judge_audit import HumanAgreementSummary, JudgeAudit

judges_app = typer.Typer(
    help="Judges: audit each against extractions of known truth (the corruption ladder, "
    "one corruption at a time, a copier, keywords only, empty).",
    no_args_is_help=True,
)
app.add_typer(judges_app, name="judges")

DEFAULT_SEED = 2026  # the demo's: the audit's ladder is the demo's simulated models


@judges_app.command("audit")
def audit_command(
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="grounding (offline), a model id (local:qwen2.5-coder-1.5b, …) or "
            "recorded:FILE (replayed offline, on the chunks and sets it recorded unless "
            "--max-chunks/--sets say otherwise); repeat for several (default: grounding)",
        ),
    ] = None,
    chunks: Annotated[
        Path | None, typer.Option(help="chunks file (.jsonl); default: the bundled corpus")
    ] = None,
    reference: Annotated[
        Path | None,
        typer.Option(help="reference extractions (.jsonl); default: the bundled gold"),
    ] = None,
    max_chunks: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="audit on this many chunks only (those whose reference has fewest items): "
            "enough for a slow model judge",
        ),
    ] = None,
    sets: Annotated[
        str | None,
        typer.Option(
            help="only these probes and adversarial extractions, comma-separated (e.g. "
            "probe:invent_item,adversarial:copier); the reference and the ladder always run"
        ),
    ] = None,
    max_false_alarms: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="share of untouched reference items a judge may flag"),
    ] = 0.10,
    seed: Annotated[int, typer.Option(help="the corruptions' seed (the demo's)")] = DEFAULT_SEED,
    record: Annotated[
        Path | None,
        typer.Option(help="write the (single) judge's verdicts here, to replay with recorded:FILE"),
    ] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="a model judge's reply limit")] = 2048,
    cache_dir: Annotated[
        Path | None, typer.Option(help="call cache folder (default: the user cache)")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option(min=0.001, help="seconds before a request is abandoned")
    ] = None,
    human: Annotated[
        Path | None,
        typer.Option(
            help="a person's decisions from the annotation page (gold .jsonl): judge-vs-person "
            "Cohen's κ on the prefilled model's items (needs --prefill)"
        ),
    ] = None,
    prefill: Annotated[
        Path | None,
        typer.Option(help="the extractions the annotation page was prefilled with (.jsonl)"),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="also write the audits as JSON here")] = None,
    output_format: FormatOption = OutputFormat.table,
) -> None:
    """Audit judges against known truth: detection of each corruption, false alarms on the
    untouched reference, monotone over the ladder, where a copier, keywords and empty land."""
    from chatledger.core import InputError, atomic_write_json
    from chatledger.judge import RecordingJudge
    from chatledger.judge._recorded import write_recorded
    from chatledger.runs._judge_audit import audit_inputs, audit_judge

    specs = judge or ["grounding"]
    if (human is None) != (prefill is None):
        raise InputError("--human and --prefill go together", field="--human")
    if record is not None and len(specs) != 1:
        raise InputError("--record keeps one judge's verdicts: give one --judge", field="--record")
    chunk_list, ref = _inputs(chunks, reference)
    all_chunks = list(chunk_list)
    if max_chunks is not None:
        chunk_list = _fewest_items(chunk_list, ref, max_chunks)
    replay = _as_recorded(specs) if max_chunks is None and sets is None else None
    if replay is not None:  # one recorded judge: replay what was recorded, as it was
        recorded_ids, recorded_sets = replay
        chunk_list = [c for c in chunk_list if c.chunk_id in recorded_ids]
        sets = ",".join(n for n in recorded_sets if n.startswith(("probe:", "adversarial:")))
    inputs = audit_inputs(ref, chunk_list, seed=seed)
    if sets is not None:
        wanted = {s.strip() for s in sets.split(",") if s.strip()}
        known = {i.name for i in inputs if i.kind in ("probe", "adversarial")}
        unknown = sorted(wanted - known)
        if unknown:
            raise InputError(
                f"unknown set(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})",
                field="--sets",
            )
        inputs = [i for i in inputs if i.kind in ("reference", "ladder") or i.name in wanted]
    hub = None
    audits: list[JudgeAudit] = []
    try:
        for spec in specs:
            built, hub = _build_judge(spec, hub, max_tokens, cache_dir, timeout)
            graded: Judge = RecordingJudge(built) if record is not None else built
            if isinstance(graded, RecordingJudge):
                graded.labels = [i.name for i in inputs for _ in i.extractions]
            audit = audit_judge(
                graded,
                ref,
                chunk_list,
                seed=seed,
                max_false_alarms=max_false_alarms,
                inputs=inputs,
            )
            if human is not None and prefill is not None:
                agreement = _against_person(built, human, prefill, all_chunks)
                audit = audit.model_copy(update={"human": agreement})
            audits.append(audit)
            if isinstance(graded, RecordingJudge) and record is not None:
                record.parent.mkdir(parents=True, exist_ok=True)
                write_recorded(graded.lines, record)
                note(f"{len(graded.lines)} verdicts recorded in {record}", err=True)
    finally:
        if hub is not None:
            from chatledger.providers import run_sync

            run_sync(hub.aclose())  # stops a local: model's server
            if hub.cache is not None:
                hub.cache.close()
    data = {"audits": [a.model_dump(mode="json") for a in audits]}
    if out is not None:
        atomic_write_json(out, data)
    if output_format is OutputFormat.json:
        emit_json(data)
        return
    for audit in audits:
        print_audit(audit)


def _against_person(
    judge: Judge, gold: Path, prefill: Path, chunks: list[Chunk]
) -> HumanAgreementSummary:
    """The judge grades the prefilled extractions of the annotated chunks; Cohen's κ of its
    flags against the person's deletions (annotate's judge agreement, the same function as
    ``chatledger annotate agreement GOLD --run``)."""
    import tempfile

    from chatledger.annotate._judge_agreement import judge_agreement, read_annotations
    from chatledger.core import InputError
    from chatledger.corpus import read_extractions
    from chatledger.record._judge_audit import HumanAgreementSummary
    from chatledger.runs._judging import judgement_lines

    annotations = read_annotations(gold)
    if not annotations:
        raise InputError("no line has an annotation block", path=gold)
    records = read_extractions(prefill).records
    model = next(iter(records.values())).model if records else "prefill"
    by_id = {c.chunk_id: c for c in chunks}
    pairs = [
        (by_id[c], extraction)
        for c in annotations
        if c in by_id and c in records and (extraction := records[c].extraction) is not None
    ]
    if not pairs:
        raise InputError(
            "no annotated chunk is both in the chunks and in the prefill file", path=gold
        )
    ids = [c.chunk_id for c, _ in pairs]
    verdicts = judge.judge_many(pairs)
    with tempfile.TemporaryDirectory() as tmp:
        lines = judgement_lines(
            model, [judge.name], ids, {judge.name: dict(zip(ids, verdicts, strict=True))}
        )
        (Path(tmp) / "judgements.jsonl").write_text("".join(lines), encoding="utf-8")
        found = judge_agreement(gold, Path(tmp), model=model, judge=judge.name, n_resamples=200)
    return HumanAgreementSummary(kappa=found.deleted.kappa, items=found.items, source=str(gold))


def _as_recorded(specs: list[str]) -> tuple[set[str], list[str]] | None:
    """The chunks and sets a single ``recorded:`` judge's file holds (None otherwise)."""
    from chatledger.judge import ReplayJudge
    from chatledger.judge._recorded import RECORDED_JUDGE_PREFIX

    if len(specs) != 1 or not specs[0].startswith(RECORDED_JUDGE_PREFIX):
        return None
    judge = ReplayJudge(_recording(specs[0][len(RECORDED_JUDGE_PREFIX) :]))
    if not judge.labels:
        return None
    return set(judge.chunk_ids), judge.labels


def _inputs(
    chunks: Path | None, reference: Path | None
) -> tuple[list[Chunk], dict[str, ExtractionRecord]]:
    from chatledger.core import InputError
    from chatledger.corpus import read_chunks, read_extractions

    if (chunks is None) != (reference is None):
        raise InputError("give both --chunks and --reference, or neither (the bundled corpus)")
    if chunks is None or reference is None:
        import tempfile

        from chatledger.demo._bundled import write_bundled_corpus

        with tempfile.TemporaryDirectory() as tmp:
            chunks_path, gold_path = write_bundled_corpus(Path(tmp) / "corpus")
            return read_chunks(chunks_path), dict(read_extractions(gold_path).records)
    return read_chunks(chunks), dict(read_extractions(reference).records)


def _fewest_items(
    chunks: list[Chunk], reference: dict[str, ExtractionRecord], n: int
) -> list[Chunk]:
    from chatledger.judge import judged_items

    def size(chunk: Chunk) -> tuple[int, str]:
        record = reference.get(chunk.chunk_id)
        extraction = record.extraction if record is not None else None
        items = len(judged_items(extraction)) if extraction is not None else 10**9
        return items, chunk.chunk_id

    keep = {c.chunk_id for c in sorted(chunks, key=size)[:n]}
    return [c for c in chunks if c.chunk_id in keep]


def _build_judge(
    spec: str,
    hub: ProviderHub | None,
    max_tokens: int,
    cache_dir: Path | None,
    timeout: float | None,
) -> tuple[Judge, ProviderHub | None]:
    from chatledger.core import InputError
    from chatledger.judge import JUDGES, LLMJudge, ReplayJudge
    from chatledger.judge._recorded import RECORDED_JUDGE_PREFIX

    if spec.startswith(RECORDED_JUDGE_PREFIX):
        return ReplayJudge(_recording(spec[len(RECORDED_JUDGE_PREFIX) :])), hub
    if ":" not in spec:
        return JUDGES.get(spec)(), hub
    from chatledger.cli._model_options import call_settings
    from chatledger.extraction import validate_model_id
    from chatledger.providers import (
        LOCAL_CALL_SETTINGS,
        CallSettings,
        CompletionCache,
        ProviderHub,
    )

    try:
        validate_model_id(spec)
    except ValueError as exc:
        raise InputError(str(exc), field="--judge") from None
    if hub is None:
        hub = ProviderHub(
            settings=call_settings(CallSettings(), timeout=timeout),
            local_settings=call_settings(LOCAL_CALL_SETTINGS, timeout=timeout),
            cache=CompletionCache(cache_dir),
        )
    return LLMJudge(spec, hub=hub, max_tokens=max_tokens, temperature=0.0), hub


def _recording(name: str) -> Path:
    """A path, or the name of a recording shipped in ``data/recorded/judges``."""
    path = Path(name)
    if path.suffix == ".jsonl" or path.exists():
        return path
    from chatledger.judge._recorded import bundled_recording

    return bundled_recording(name)


def print_audit(audit: JudgeAudit) -> None:
    from rich.table import Table

    mark = styled("passed", "green") if audit.passed else styled("FAILED", "bold red")
    stdout.print(styled(f"judge {audit.judge}", "bold"), "—", mark, f"({audit.chunks} chunks)")
    sets = Table(title="judge composite per extraction of known truth", title_justify="left")
    for column in ("extraction", "kind", "composite", "accuracy", "completeness", "halluc."):
        sets.add_column(column, justify="left" if column in ("extraction", "kind") else "right")
    for s in audit.sets:
        scores = [f"{s.scores[k]:.1f}" if k in s.scores else "—" for k in _SCORES]
        composite = f"{s.composite:.3f}" if s.composite is not None else "unscored"
        sets.add_row(s.name, s.kind, composite, *scores)
    stdout.print(sets)
    det = Table(title="detection (items that underwent one corruption alone)", title_justify="left")
    for column in ("corruption", "field", "items", "flagged", "as expected"):
        det.add_column(column, justify="left" if column in ("corruption", "field") else "right")
    for d in audit.detection:
        expected = f"{d.as_expected:.2f} ({d.expected_label})" if d.as_expected is not None else "—"
        det.add_row(d.effect, d.field or "all", str(d.items), f"{d.flagged:.2f}", expected)
    stdout.print(det)
    if audit.false_alarms is not None:
        labels = ", ".join(f"{k} {v}" for k, v in audit.false_alarm_labels.items()) or "none"
        stdout.print(
            f"false alarms on the untouched reference: {audit.false_alarms:.3f} of "
            f"{audit.false_alarm_items} items ({labels}); allowed {audit.max_false_alarms:.2f}"
        )
    stdout.print(f"monotone over the ladder: {audit.monotone}")
    for name, where in audit.adversarial_rank.items():
        stdout.print(f"adversarial {name}: {where}")
    if audit.human is not None:
        kappa = f"{audit.human.kappa:.3f}" if audit.human.kappa is not None else "—"
        stdout.print(f"judge vs person: κ {kappa} on {audit.human.items} items")
    for failure in audit.failures:
        note(failure, label="fails", style="red")


_SCORES = ("content_accuracy", "completeness", "hallucination")
