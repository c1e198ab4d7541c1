"""What the template shows, worked out from the run: tables, sentences and what is missing."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from chatledger.core import RECORDED_PREFIX
from chatledger.record._judge_audit import JudgeAudit
from chatledger.report._charts import LAYERS, interval, no_interval
from chatledger.report._load import RunFiles
from chatledger.report._select import DrillSelection
from chatledger.scoring import DegenerateOutputs
from chatledger.simulate import SIMULATED_PREFIX


@dataclass(frozen=True)
class Estimate:
    """A score with its bootstrap interval (when the run has one) and how it was made."""

    value: float | None
    low: float | None = None
    high: float | None = None
    method: str | None = None

    @property
    def widened(self) -> bool:
        """The interval missed its estimate and was widened to it (``method`` says so)."""
        return self.method is not None and "widened" in self.method


@dataclass
class LeaderRow:
    rank: int
    name: str
    colour: str
    simulated: bool
    overall: Estimate
    layers: dict[str, Estimate]
    validity_rate: float
    invalid: int
    missing: int
    cost_per_chunk: float | None
    latency_per_chunk: float | None
    rank_probability: float | None
    gold_composite: float | None
    # Layers left out of this model's overall, with why (a judge that failed its audit, …).
    left_out: dict[str, str] = field(default_factory=dict)


@dataclass
class EventLine:
    text: str
    chunks: list[tuple[str, int | None]]  # (chunk id, drill-down index or None)
    conversation: str


@dataclass
class ConsumerView:
    name: str
    agreement: float | None
    details: list[tuple[str, str]]
    missed: list[EventLine] = field(default_factory=list)  # the first EVENT_CAP
    invented: list[EventLine] = field(default_factory=list)
    n_missed: int = 0  # all of them
    n_invented: int = 0


def is_simulated(name: str) -> bool:
    return name.startswith(SIMULATED_PREFIX)


def is_recorded(name: str) -> bool:
    return name.startswith(RECORDED_PREFIX)


@dataclass
class DegenerateRow:
    name: str
    counts: DegenerateOutputs


def degenerate_rows(files: RunFiles) -> list[DegenerateRow]:
    """Per model, the degenerate-output counts (runs written before they existed have none)."""
    rows = []
    for name in files.model_names:
        stored = files.model(name).degenerate
        if stored is not None:
            rows.append(DegenerateRow(name, stored))
    return rows


def _estimate(files: RunFiles, model: str, key: str, value: float | None) -> Estimate:
    entry = interval(files, model, key)
    if entry is None:  # the method slot says why there is none (the template shows it)
        return Estimate(value, None, None, no_interval(files, model, key))
    return Estimate(value, entry.low, entry.high, entry.method)


def leaderboard(files: RunFiles, colours: dict[str, str]) -> list[LeaderRow]:
    run = files.run
    ranks = run.stats.rank_probabilities if run.stats is not None else {}
    gold = run.human_gold.models if run.human_gold is not None else {}
    priced = any(files.model(m).usage.cost_usd > 0 for m in files.model_names)
    rows = []
    for rank, name in enumerate(files.model_names, start=1):
        model = files.model(name)
        usage = model.usage
        latency = usage.latency_per_chunk_s
        probs = ranks.get(name)
        gold_scores = gold.get(name)
        rows.append(
            LeaderRow(
                rank=rank,
                name=name,
                colour=colours[name],
                simulated=is_simulated(name),
                overall=_estimate(files, name, "overall", model.overall),
                layers={
                    layer: _estimate(files, name, layer, model.layers.get(layer))
                    for layer in LAYERS
                    if layer in run.layers_run
                },
                validity_rate=model.validity_rate,
                invalid=model.invalid,
                missing=model.missing,
                cost_per_chunk=usage.cost_per_chunk_usd if priced else None,
                latency_per_chunk=latency if latency > 0 else None,
                rank_probability=probs[rank - 1] if probs and len(probs) >= rank else None,
                gold_composite=gold_scores.composite if gold_scores is not None else None,
                left_out=dict(model.left_out),
            )
        )
    return rows


def missing_parts(files: RunFiles) -> list[str]:
    """Plain sentences for everything this run does not have (shown at the top)."""
    run = files.run
    layers = run.layers_run
    out = []
    for layer in LAYERS:
        if layer in layers:
            continue
        if layer == "downstream" and downstream_configured(files):
            out.append(
                "Downstream not run: every consumer was skipped because the reference (partial "
                "human gold) does not cover every field it reads; see the Downstream section."
                if downstream_skipped(files)
                else "Downstream not run: no downstream consumer with a weight ran."
            )
        else:
            out.append(f"No {layer} layer in this run.")
    if run.renormalisation:
        out.append(run.renormalisation.capitalize() + ".")
    for name in files.model_names:  # parts without evidence, left out and renormalised
        model = files.model(name)
        for text in (model.downstream_renormalisation, model.renormalisation):
            if text:
                out.append(f"{name}: {text}.")
    if run.human_gold is None and not run.reference_is_human:
        out.append(
            "No human gold: how far the reference itself is from human annotations is unknown."
        )
    if not any(files.model(m).usage.cost_usd > 0 for m in files.model_names):
        out.append("No cost data: no model reports a cost (offline or simulated models).")
    if "judge" in layers and len(run.judges) < 2:
        out.append("One judge only: panel agreement (α, κ) needs at least two judges.")
    if run.stats is None:
        out.append("No statistics: this run has no bootstrap intervals or weight sensitivity.")
    if any(is_simulated(m) for m in files.model_names):
        out.append(
            "Simulated models are present: they are the reference passed through corruption "
            "operators, not real models."
        )
    out.extend(files.notes)
    return out


def gap_finding(files: RunFiles) -> str | None:
    """The model with the widest spread between its layers, in one sentence."""
    layers = [x for x in LAYERS if x in files.run.layers_run]
    if len(layers) < 2:
        return None
    best: tuple[float, str, str, float, str, float] | None = None
    for name in files.model_names:
        values = files.model(name).layers
        present = [(layer, values[layer]) for layer in layers if layer in values]
        if len(present) < 2:
            continue
        hi = max(present, key=lambda p: p[1])
        lo = min(present, key=lambda p: p[1])
        spread = hi[1] - lo[1]
        if best is None or spread > best[0]:
            best = (spread, name, hi[0], hi[1], lo[0], lo[1])
    if best is None:
        return None
    spread, name, hi_layer, hi_value, lo_layer, lo_value = best
    return (
        f"Widest gap: {name} scores {hi_value:.2f} on {hi_layer} but {lo_value:.2f} on "
        f"{lo_layer} ({spread:.2f} apart)."
    )


def adjacent_differences(files: RunFiles) -> list[dict[str, Any]]:
    """Paired bootstrap differences between neighbours on the leaderboard."""
    diffs = files.run.stats.paired_differences if files.run.stats is not None else {}
    names = files.model_names
    out = []
    for a, b in itertools.pairwise(names):
        entry, sign = diffs.get(f"{a}|{b}"), 1.0
        if entry is None:
            entry, sign = diffs.get(f"{b}|{a}"), -1.0
        if entry is None:
            continue
        if entry.low is None or entry.high is None:  # too few conversations: no interval
            low = high = None
        else:
            low, high = sorted((sign * entry.low, sign * entry.high))
        out.append(
            {
                "a": a,
                "b": b,
                "difference": sign * entry.difference,
                "low": low,
                "high": high,
                "p_value": entry.p_value,
                "test": entry.test or "paired bootstrap",
                "note": entry.note,
                "clear": low is not None and low > 0,
            }
        )
    return out


def _format_event(consumer: str, event: dict[str, Any]) -> str:
    if consumer == "drift":
        return (
            f"{event.get('speaker', '?')} on “{event.get('subject', '?')}”: "
            f"{event.get('from_polarity', '?')} → {event.get('to_polarity', '?')}"
        )
    if consumer == "loops":
        return f"[{event.get('kind', 'loop')}] {event.get('text', '')}"
    if consumer == "escalation":
        reasons = ", ".join(str(r) for r in event.get("reasons", []))
        return f"{event.get('flag', '?')}" + (f" — {reasons}" if reasons else "")
    if consumer == "arcs":
        return (
            f"valence {event.get('valence', '?')}, trajectory {event.get('trajectory', '?')} "
            f"(closing mood {event.get('closing_mood', '?')})"
        )
    if consumer == "daily_report":
        return f"{event.get('day', '')}: {event.get('line', '')}"
    skip = {"conversation_id", "chunk_id", "chunk_ids", "position", "positions"}
    return "; ".join(f"{k}: {v}" for k, v in event.items() if k not in skip)


def _event_line(consumer: str, event: dict[str, Any], index: dict[str, int]) -> EventLine:
    ids = event.get("chunk_ids") or ([event["chunk_id"]] if event.get("chunk_id") else [])
    return EventLine(
        text=_format_event(consumer, event),
        chunks=[(str(c), index.get(str(c))) for c in ids],
        conversation=str(event.get("conversation_id", "")),
    )


_DETAIL_KEYS = (
    ("precision", "precision"),
    ("recall", "recall"),
    ("kappa", "Cohen's κ"),
    ("valence_agreement", "valence agreement"),
    ("trajectory_agreement", "trajectory agreement"),
)
_COUNT_KEYS = (("n_reference", "reference events"), ("n_challenger", "challenger events"))


def downstream_views(files: RunFiles) -> dict[str, list[ConsumerView]]:
    """Per model, each consumer's agreement and the events the challenger missed or invented
    (as many as were read: the first ``EVENT_CAP`` of each kind; downstream.json holds them
    all). A chunk id links to the drill-down when that chunk is shown there."""
    data = files.downstream.models if files.downstream is not None else {}
    index = {c.chunk_id: i for i, c in enumerate(files.chunks or [])}
    out: dict[str, list[ConsumerView]] = {}
    for name in files.model_names:
        entry = data.get(name)
        consumers = entry.consumers if entry is not None else {}
        views = []
        for consumer, result in consumers.items():
            figures = result.figures
            details = [(label, f"{figures[k]:.3f}") for k, label in _DETAIL_KEYS if k in figures]
            details += [(label, str(figures[k])) for k, label in _COUNT_KEYS if k in figures]
            views.append(
                ConsumerView(
                    name=consumer,
                    agreement=result.agreement,
                    details=details,
                    missed=[_event_line(consumer, e, index) for e in result.missed],
                    invented=[_event_line(consumer, e, index) for e in result.invented],
                    n_missed=result.n_missed,
                    n_invented=result.n_invented,
                )
            )
        out[name] = views
    return out


def consumer_names(files: RunFiles) -> list[str]:
    """The consumers of the agreement table: those that ran, then those skipped."""
    names: list[str] = []
    for name in files.model_names:
        for consumer in files.model(name).consumers:
            if consumer not in names:
                names.append(consumer)
    for skipped in downstream_skipped(files).values():
        for consumer in skipped:
            if consumer not in names:
                names.append(consumer)
    return names


def downstream_skipped(files: RunFiles) -> dict[str, dict[str, list[str]]]:
    """Per model, the consumers not run because the (partial gold) reference does not cover
    every field they read, with the fields it misses (downstream.json ``skipped``)."""
    data = files.downstream.models if files.downstream is not None else {}
    out: dict[str, dict[str, list[str]]] = {}
    for name in files.model_names:
        entry = data.get(name)
        if entry is not None and entry.skipped:
            out[name] = {k: list(v) for k, v in entry.skipped.items()}
    return out


@dataclass(frozen=True)
class DownstreamComposite:
    """A model's downstream composite, or why there is none."""

    value: float | None
    not_run: str | None = None  # the reason, when no consumer ran


def downstream_composites(files: RunFiles) -> dict[str, DownstreamComposite]:
    """Per model: its downstream composite as the leaderboard has it; "not run" (never 0)
    when downstream.json has none (every consumer skipped against partial gold)."""
    data = files.downstream.models if files.downstream is not None else {}
    skipped = downstream_skipped(files)
    out: dict[str, DownstreamComposite] = {}
    for name in files.model_names:
        value = files.model(name).layers.get("downstream")
        entry = data.get(name)
        if value is None and entry is not None:  # an absent composite reads as None
            value = entry.downstream_composite
        if value is None:
            missed = skipped.get(name, {})
            reason = (
                "every consumer skipped: the reference does not cover the fields they read"
                if missed
                else "no downstream consumer with a weight ran"
            )
            out[name] = DownstreamComposite(None, reason)
        else:
            out[name] = DownstreamComposite(float(value))
    return out


def downstream_configured(files: RunFiles) -> bool:
    """The run was asked for the downstream layer (it may have been left out after)."""
    layers = files.run.config.get("layers")
    asked = isinstance(layers, list) and "downstream" in layers
    return asked or "downstream" in files.run.layers_run or bool(downstream_skipped(files))


def chunk_index(files: RunFiles, selection: DrillSelection | None = None) -> list[dict[str, Any]]:
    """The drill-down's list of chunks, grouped by conversation, with each model's chunk score
    (and, when the page shows a selection, why each chunk is in it)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    lowest = selection.lowest_for if selection is not None and selection.sampled else {}
    for i, chunk in enumerate(files.chunks or []):
        scores = [
            (name, files.chunk_value(name, chunk.chunk_id, "extraction", "composite"))
            for name in files.model_names
        ]
        entry: dict[str, Any] = {
            "index": i,
            "chunk_id": chunk.chunk_id,
            "title": chunk.title or "",
            "n_messages": len(chunk.messages),
            "scores": scores,
        }
        if selection is not None and selection.sampled:
            models = lowest.get(chunk.chunk_id)
            entry["why"] = f"lowest for {', '.join(models)}" if models else "sample"
        groups.setdefault(chunk.conversation_id or "(no conversation id)", []).append(entry)
    return [{"conversation": k, "chunks": v} for k, v in groups.items()]


def judge_tables(files: RunFiles) -> dict[str, Any]:
    """Per model: panel composite, each judge's composite, unscored counts, agreement."""
    judges = [j.name for j in files.run.judges]
    rows = []
    agreement = []
    for name in files.model_names:
        judge = files.model(name).judge
        if judge is None:
            continue
        rows.append(
            {
                "name": name,
                "composite": judge.composite,
                "per_judge": judge.per_judge,
                "unscored": judge.unscored,
                "unusable": judge.unusable_chunks,
                "labels": sum(judge.label_counts.values()),
            }
        )
        if judge.agreement:
            agreement.append(
                {
                    "name": name,
                    "alpha": _mapping(judge.agreement.get("alpha")),
                    "kappa": _mapping(judge.agreement.get("kappa")),
                }
            )
    return {
        "judges": judges,
        "rows": rows,
        "agreement": agreement,
        "audit_mode": files.run.judge_audit,
        "audits": [_audit_row(a, files.run.judges_left_out) for a in files.run.judge_audits],
    }


def _audit_row(audit: JudgeAudit, left_out: dict[str, str]) -> dict[str, Any]:
    """One judge's audit as the report's table shows it."""
    composite = {s.name: s.composite for s in audit.sets}

    def detected(effect: str) -> float | None:
        found = audit.detection_of(effect)
        return found.flagged if found is not None else None

    swaps = [d.flagged for d in audit.detection if d.effect == "speaker_swapped" and d.field]
    if audit.skipped is not None:
        status = "not audited"
    elif audit.passed:
        status = "passed"
    else:
        status = "left out of the panel" if audit.judge in left_out else "FAILED"
    return {
        "judge": audit.judge,
        "status": status,
        "skipped": audit.skipped,
        "failures": audit.failures,
        "chunks": audit.chunks,
        "ladder": [
            composite.get(n)
            for n in ("reference", "simulated:light", "simulated:medium", "simulated:heavy")
        ],
        "adversarial": [composite.get(f"adversarial:{n}") for n in ("copier", "keywords", "empty")],
        "false_alarms": audit.false_alarms,
        "invented": detected("invented"),
        "swaps_min": min(swaps) if swaps else None,
        "flips": detected("polarity_flipped"),
        "human": audit.human.kappa if audit.human is not None else None,
    }


def _mapping(value: object) -> dict[str, object]:
    """A block of the panel's agreement (α per score, κ per pair); {} when it has none."""
    return value if isinstance(value, dict) else {}


def skipped_groups(files: RunFiles) -> list[tuple[list[str], dict[str, list[str]]]]:
    """The skipped consumers with their missing fields, once per distinct set (the reference's
    coverage is the same for every model, so usually one group naming every model)."""
    groups: list[tuple[list[str], dict[str, list[str]]]] = []
    for name, skipped in downstream_skipped(files).items():
        for models, found in groups:
            if found == skipped:
                models.append(name)
                break
        else:
            groups.append(([name], skipped))
    return groups


DETECT = 0.02  # the drop the report's power sentence is about


def power_sentence(files: RunFiles, detect: float = DETECT) -> str | None:
    """ "To tell a 0.02 drop in overall you need ≈ N conversations; you have k." — from the
    run's own per-conversation spread (``chatledger plan``), for the challenger that needs
    the most; None when the run cannot say (an older run without stages)."""
    from chatledger.core import InputError
    from chatledger.runs._plan import plan_run

    try:
        plan = plan_run(files.run_dir, detect=detect)
    except (InputError, OSError, ValueError):
        return None
    overall = [r for r in plan["figures"] if r["figure"] == "overall"]
    if not overall:
        return None
    worst = max(overall, key=lambda r: r["needed"] if r["needed"] is not None else 10**9)
    needed = worst["needed"]
    k = plan["k"]
    if needed is None:
        return (
            f"To tell a {detect:g} drop in overall more than a million conversations would be "
            f"needed (the figure varies too much from one to the next); you have {k}."
        )
    enough = "enough" if k >= needed else "not enough yet"
    return (
        f"To tell a {detect:g} drop in overall you need ≈ {needed:,} conversations "
        f"({worst['model']}, 80 % power; `chatledger plan` for every figure); you have {k}: "
        f"{enough}."
    )
