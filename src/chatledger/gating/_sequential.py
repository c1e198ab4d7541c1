"""``chatledger decide``: run a comparison only until every gate rule is decided.

The conversations of a run config are put in a seeded random order and run a batch at a time
(each batch a run of its own under ``OUT/batches/``, so a rerun resumes: finished batches are
read back, model calls come from the cache). After each batch every score rule of the gate gets
an anytime-valid confidence sequence (``stats.confidence_sequence``, Waudby-Smith & Ramdas
2024) for the mean over conversations of its per-conversation figure — candidate − baseline
for ``max_drop`` (bounded in [−1, 1]), the candidate's own for ``min`` — and the run stops
when every rule is decided (the sequence wholly on one side of its threshold), when the
budget is spent, or when the conversations run out. Each decision is wrong with probability at
most α however early it stopped. ``fields.*`` is one rule per field both models score in the
first batch, each at α / (number of fields) — a Bonferroni split, so the chance that *any*
field's decision is wrong stays ≤ α. Cost rules (``cost_per_chunk``, ``latency_per_chunk``)
are not sampled: they are read on the usage measured so far (a ratio of totals, as the gate
reads them) and decided on that point estimate when the run stops; they neither hold a run
open nor end one. ``decision.json`` (:class:`SequentialResult`, written and read by that class)
and ``decision.html`` (the sequences over conversations) go into OUT.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from chatledger.core import (
    EnvironmentFault,
    InputError,
    atomic_write_json,
    atomic_write_text,
    prepare_output_dir,
)
from chatledger.gating._rules import GateRule, GateRules
from chatledger.stats import Decision, confidence_sequence, decide

SEQUENTIAL_VERSION: Literal[2] = 2
RESULT_FILE = "decision.json"
REPORT_FILE = "decision.html"
Stop = Literal["decided", "budget", "exhausted", "limit"]


class SequenceStep(BaseModel):
    """The sequence after a batch: conversations with a value, running mean, bounds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversations: int
    estimate: float
    lower: float
    upper: float


class Spend(BaseModel):
    """Model calls, tokens and dollars (both models; ``calls``: live and cached)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunks: int = 0
    calls: int = 0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float = 0.0


class SequentialRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: GateRule
    # difference / candidate: a score's sequence; ratio / cost: a cost read on the usage so far
    measured: Literal["difference", "candidate", "ratio", "cost"]
    threshold: float
    decision: Decision
    decided_after: int | None = None  # conversations run when it was decided
    # "sequence": anytime-valid; "point estimate": a cost rule, read on the usage measured
    decided_on: Literal["sequence", "point estimate"] = "sequence"
    alpha: float | None = None  # this rule's error (α, or α / K for a field of fields.*)
    expanded_from: str | None = None  # the written rule ("fields.* max_drop 0.05")
    # What had been spent when it was decided (everything run, when undecided).
    spent: Spend | None = None
    estimate: float | None = None
    lower: float | None = None
    upper: float | None = None
    observed: int = 0  # conversations with a value
    steps: list[SequenceStep] = Field(default_factory=list)
    # The per-conversation values read, in the order run (a pilot for planning).
    values: list[float] = Field(default_factory=list)
    # Undecided: the conversations a run over all of them would be expected to need (median
    # of simulated runs) were the observed mean real; None when it would not decide.
    expected_if_real: int | None = None
    reason: str = ""


class SequentialResult(BaseModel):
    """``decision.json`` of ``chatledger decide``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1, 2] = SEQUENTIAL_VERSION
    config: str
    rules_source: str
    baseline_model: str
    candidate_model: str
    alpha: float
    seed: int
    batch_size: int
    conversations_available: int
    conversations_used: int
    chunks_available: int
    order: list[str]  # conversation ids in the order run (those used)
    stopped: Stop
    rules: list[SequentialRule]
    used: Spend
    full_run: Spend  # what running every conversation would have cost, at the rates so far
    notes: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.decision == "pass" for r in self.rules)

    @property
    def failed(self) -> bool:
        return any(r.decision == "fail" for r in self.rules)

    def write(self, out_dir: Path) -> Path:
        path = out_dir / RESULT_FILE
        atomic_write_json(path, self.model_dump(mode="json"))
        return path

    @classmethod
    def read(cls, out_dir: Path) -> SequentialResult:
        from pydantic import ValidationError

        from chatledger.core import first_validation_error

        path = out_dir / RESULT_FILE if out_dir.is_dir() else out_dir
        try:
            return cls.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            raise InputError(
                "no decision.json (not a decide output folder)", path=out_dir
            ) from None
        except ValidationError as exc:
            where, message = first_validation_error(exc)
            raise InputError(message, path=path, field=where) from None


def _models(rules: GateRules, baseline: str | None, candidate: str | None) -> tuple[str, str]:
    base = baseline or rules.settings.baseline_model
    cand = candidate or rules.settings.candidate_model
    if base is None or cand is None:
        which = "baseline_model" if base is None else "candidate_model"
        raise InputError(
            f"name the two models of the run to compare: {which}: in the rules file (or "
            f"--{which.replace('_', '-')})",
            path=rules.source,
        )
    return base, cand


def _chunk_batches(chunks_path: Path, seed: int) -> tuple[list[str], dict[str, list[str]], int]:
    """Conversation ids in a seeded random order, each with its chunks' JSON lines."""
    from chatledger.corpus import read_chunks

    chunks = read_chunks(chunks_path)
    lines: dict[str, list[str]] = {}
    for chunk in chunks:
        lines.setdefault(chunk.conversation_id or chunk.chunk_id, []).append(
            chunk.model_dump_json()
        )
    names = list(lines)
    order = [names[i] for i in np.random.default_rng(seed).permutation(len(names))]
    return order, lines, len(chunks)


def run_until_decided(
    config: Path,
    rules: GateRules,
    out_dir: Path,
    *,
    baseline_model: str | None = None,
    candidate_model: str | None = None,
    batch_size: int = 5,
    seed: int = 0,
    alpha: float | None = None,
    budget_usd: float | None = None,
    max_conversations: int | None = None,
    on_batch: object = None,
) -> SequentialResult:
    """Run ``config``'s conversations in batches until every score rule of ``rules`` is
    decided; see the module's docstring."""
    from chatledger.runs import execute_run, load_run_config
    from chatledger.runs._sequential import conversation_figures

    if batch_size < 1:
        raise InputError("the batch size must be at least 1", field="--batch")
    loaded = load_run_config(config)
    base, cand = _models(rules, baseline_model, candidate_model)
    level = alpha if alpha is not None else 1.0 - (rules.settings.confidence or 0.95)
    if not 0.0 < level < 0.5:
        raise InputError("alpha must be in (0, 0.5)", field="--alpha")
    written = [r for r in rules.rules if not r.is_cost]
    if not written:
        raise InputError(
            "only cost rules: nothing to sample (costs are read, not decided on a sequence); "
            "add a score rule, or run the comparison and gate it",
            path=rules.source,
        )
    for rule in written:
        group, _, member = rule.figure.partition(".")
        if member == "*" and group != "fields":
            raise InputError(
                f"name each of the {group}: only fields.* is expanded here",
                path=rules.source,
                field=rule.figure,
            )
    notes: list[str] = []
    order, lines, n_chunks = _chunk_batches(loaded.chunks, seed)
    available = len(order)
    limit = min(available, max_conversations) if max_conversations else available
    # Only the two models compared are run.
    keep = [i for i, c in enumerate(loaded.config.challengers) if c.label in (base, cand)]
    if len(keep) == 2:
        loaded = loaded.model_copy(
            update={
                "config": loaded.config.model_copy(
                    update={"challengers": [loaded.config.challengers[i] for i in keep]}
                ),
                "challengers": [loaded.challengers[i] for i in keep],
            }
        )
    # Each batch's own intervals are not read (the sequences are): the fewest resamples.
    from chatledger.runs._stats import StatsOptions

    quick = StatsOptions(bootstrap_resamples=100, dirichlet_draws=100)
    loaded = loaded.model_copy(update={"config": loaded.config.model_copy(update={"stats": quick})})
    out_dir = prepare_output_dir(out_dir)
    state: dict[str, _Rule] = {}  # filled after the first batch (fields.* needs its fields)
    costs = [_CostRule(r) for r in rules.rules if r.is_cost]
    totals = _Totals()
    base_values: dict[str, list[float]] = {}
    cand_values: dict[str, list[float]] = {}
    used = Spend()
    ran = 0
    chunks_run = 0
    stopped: Stop = "exhausted"
    partial_reference = False
    index = 0
    while ran < limit:
        members = order[ran : min(limit, ran + batch_size)]
        index += 1
        batch_dir = out_dir / "batches" / f"batch-{index:03d}"
        batch_dir.mkdir(parents=True, exist_ok=True)
        subset = batch_dir / "chunks.jsonl"
        text = "".join(line + "\n" for c in members for line in lines[c])
        if not subset.is_file() or subset.read_text(encoding="utf-8") != text:
            atomic_write_text(subset, text)
        try:
            run = execute_run(loaded.model_copy(update={"chunks": subset}), batch_dir / "run")
        except EnvironmentFault as exc:
            # The run config's own cap (budget_usd) stopped this batch's model calls: decide
            # on the batches finished (a rerun with a higher cap resumes this one).
            if "stopped by the budget" not in str(exc) or ran == 0:
                raise
            notes.append(f"batch {index} stopped by the budget: decided on the {ran} before it")
            stopped = "budget"
            break
        record = run.record
        partial_reference = partial_reference or bool(record and record.reference_is_human)
        if not state:
            state = _expand(written, run, base, cand, level, rules.source)
            figures = list(dict.fromkeys(s.rule.figure for s in state.values()))
            base_values = {f: [] for f in figures}
            cand_values = {f: [] for f in figures}
        per = conversation_figures(batch_dir / "run", base, cand, list(base_values), missing=True)
        for figure, values in per.items():
            position = {c: i for i, c in enumerate(values.conversations)}
            for c in members:
                i = position[c]
                base_values[figure].append(float(values.baseline[i]))
                cand_values[figure].append(float(values.candidate[i]))
        ran += len(members)
        batch_chunks = sum(len(lines[c]) for c in members)
        chunks_run += batch_chunks
        used = _add(used, run, batch_chunks)
        totals.add(run, base, cand, batch_chunks)
        for item in state.values():
            item.update(
                base_values[item.rule.figure],
                cand_values[item.rule.figure],
                ran,
                None if partial_reference else available,
                used,
            )
        for cost in costs:
            cost.update(totals, ran)
        if callable(on_batch):
            on_batch(ran, available, [s.decision for s in state.values()])
        if all(s.decision != "undecided" for s in state.values()):
            stopped = "decided"
            break
        if budget_usd is not None and used.cost_usd >= budget_usd:
            stopped = "budget"
            break
    if stopped == "exhausted" and ran < available:
        stopped = "limit"
    if partial_reference:
        notes.append(
            "the reference is human gold that covers some fields on some chunks: the sequences "
            "treat conversations as drawn with replacement (the conversations a field is "
            "scored on are not known in advance)"
        )
    families = {s.expanded_from: s.alpha for s in state.values() if s.expanded_from}
    for name, share in families.items():
        count = sum(s.expanded_from == name for s in state.values())
        notes.append(
            f"{name}: {count} fields, each decided at α/{count} = {share:.4g} (Bonferroni): the "
            f"chance that any of them is decided wrongly is at most {level:g}"
        )
    if costs:
        notes.append(
            "cost rules are read on the usage measured so far (the candidate's total over the "
            "baseline's, or per chunk) and decided on that point estimate when the run stops: "
            "not anytime-valid, and they do not keep the run going"
        )
    scale = n_chunks / max(chunks_run, 1)
    full = Spend(
        chunks=n_chunks,
        calls=round(used.calls * scale),
        input_tokens=used.input_tokens * scale,
        output_tokens=used.output_tokens * scale,
        cost_usd=used.cost_usd * scale,
    )
    result = SequentialResult(
        config=str(config),
        rules_source=rules.source,
        baseline_model=base,
        candidate_model=cand,
        alpha=level,
        seed=seed,
        batch_size=batch_size,
        conversations_available=available,
        conversations_used=ran,
        chunks_available=n_chunks,
        order=order[:ran],
        stopped=stopped,
        rules=[
            *(s.result(available, batch_size, used) for s in state.values()),
            *(c.result(ran, used) for c in costs),
        ],
        used=used,
        full_run=full,
        notes=notes,
    )
    result.write(out_dir)
    atomic_write_text(out_dir / REPORT_FILE, sequence_report(result))
    return result


def _expand(
    written: list[GateRule], run: object, base: str, cand: str, alpha: float, source: str
) -> dict[str, _Rule]:
    """The score rules to follow: each written rule, ``fields.*`` as one rule per field both
    models score in the first batch (the baseline's order), each at α / (their number)."""
    from chatledger.runs import RunResult

    assert isinstance(run, RunResult)
    record = run.record
    family = {r.kind for r in written if r.figure == "fields.*"}
    # A field of fields.* also named on its own with the same kind of threshold is followed
    # once: under the threshold named on its own, at the family's share of α.
    own = {
        (r.figure, r.kind): r
        for r in written
        if r.figure.startswith("fields.") and r.figure != "fields.*" and r.kind in family
    }
    out: dict[str, _Rule] = {}
    for rule in written:
        if rule.figure != "fields.*":
            if (rule.figure, rule.kind) not in own and rule.name not in out:
                out[rule.name] = _Rule(rule, alpha)
            continue
        names: list[str] = []
        if record is not None:
            fields_of = {m.name: m.fields for m in record.models}
            names = [f for f in fields_of.get(base, {}) if f in fields_of.get(cand, {})]
        if not names:
            raise InputError(
                "fields.*: the two models share no scored field in the first batch",
                path=source,
                field=rule.figure,
            )
        share = alpha / len(names)
        for name in names:
            one = own.pop((f"fields.{name}", rule.kind), None) or rule.model_copy(
                update={"figure": f"fields.{name}"}
            )
            out[one.name] = _Rule(one, share, expanded_from=rule.name)
    for left in own.values():  # named on its own, but not a field both models score
        out[left.name] = _Rule(left, alpha)
    return out


def _add(spend: Spend, run: object, chunks: int) -> Spend:
    """``spend`` plus what the batch's run used (both models' usage, the calls it made)."""
    from chatledger.runs import RunResult

    assert isinstance(run, RunResult)
    record = run.record
    calls = 0
    if record is not None and record.model_calls is not None:
        info = record.model_calls
        calls = (info.live_calls or 0) + (info.cached_calls or 0)
    tokens_in = tokens_out = cost = 0.0
    for model in run.models:
        usage = model.usage
        tokens_in += usage.input_tokens
        tokens_out += usage.output_tokens
        cost += usage.cost_usd
    return Spend(
        chunks=spend.chunks + chunks,
        calls=spend.calls + calls,
        input_tokens=spend.input_tokens + tokens_in,
        output_tokens=spend.output_tokens + tokens_out,
        cost_usd=spend.cost_usd + cost,
    )


class _Totals:
    """Both models' dollars and seconds over the batches run, the chunks they cover, and the
    lines each model really called (latency per chunk is over those, as the run's is)."""

    def __init__(self) -> None:
        self.chunks = 0
        self.dollars = {"base": 0.0, "cand": 0.0}
        self.seconds = {"base": 0.0, "cand": 0.0}
        self.live = {"base": 0.0, "cand": 0.0}

    def add(self, run: object, base: str, cand: str, chunks: int) -> None:
        from chatledger.runs import RunResult

        assert isinstance(run, RunResult)
        by_name = {m.name: m.usage for m in run.models}
        for name, side in ((base, "base"), (cand, "cand")):
            usage = by_name.get(name)
            if usage is not None:
                self.dollars[side] += usage.cost_usd
                self.seconds[side] += usage.latency_s
                self.live[side] += max(chunks - usage.cached_chunks, 0.0)
        self.chunks += chunks

    def per_chunk(self, figure: str, side: str) -> float:
        """Dollars per chunk run, or seconds per chunk really called (0 when none was)."""
        if figure == "cost_per_chunk":
            return self.dollars[side] / self.chunks if self.chunks else 0.0
        return self.seconds[side] / self.live[side] if self.live[side] else 0.0


class _CostRule:
    """A cost rule, read on the usage measured so far and decided when the run stops."""

    def __init__(self, rule: GateRule) -> None:
        self.rule = rule
        self.steps: list[SequenceStep] = []
        self.base = self.cand = 0.0
        self.chunks = 0

    def update(self, totals: _Totals, ran: int) -> None:
        self.base = totals.per_chunk(self.rule.figure, "base")
        self.cand = totals.per_chunk(self.rule.figure, "cand")
        self.chunks = totals.chunks
        value = self.value()
        if value is not None:
            self.steps.append(
                SequenceStep(conversations=ran, estimate=value, lower=value, upper=value)
            )

    def value(self) -> float | None:
        """The candidate's figure per chunk over the baseline's (max_ratio), or its own (max);
        None when a ratio to a baseline of 0 is asked."""
        if self.rule.kind == "max_ratio":
            return None if self.base <= 0 else self.cand / self.base
        return self.cand

    def result(self, ran: int, spent: Spend) -> SequentialRule:
        unit = "$" if self.rule.figure == "cost_per_chunk" else "s"
        value = self.value() if self.chunks else None
        decision: Decision = "undecided"
        if self.chunks == 0:
            reason = "nothing was run"
        elif value is None:
            what = "cost" if self.rule.figure == "cost_per_chunk" else "latency"
            reason = (
                f"the baseline's {what} over the {self.chunks} chunks run is 0: a ratio to it "
                "is undefined (use max)"
            )
        else:
            decision = "pass" if not value > self.rule.value else "fail"
            word = "within" if decision == "pass" else "above"
            per = f"{self.cand:.6g} vs {self.base:.6g} {unit}"
            shown = f"ratio {value:.3f}" if self.rule.kind == "max_ratio" else f"{value:.6g} {unit}"
            reason = (
                f"{per} per chunk over {self.chunks} chunks ({ran} conversations): {shown}, "
                f"{word} the maximum {self.rule.value:g} (point estimate)"
            )
        return SequentialRule(
            rule=self.rule,
            measured="ratio" if self.rule.kind == "max_ratio" else "cost",
            threshold=self.rule.value,
            decision=decision,
            decided_after=ran if decision != "undecided" else None,
            decided_on="point estimate",
            estimate=value,
            lower=value,
            upper=value,
            observed=ran,
            steps=self.steps,
            spent=spent,
            reason=reason,
        )


class _Rule:
    """One score rule's sequence as batches come in."""

    def __init__(self, rule: GateRule, alpha: float, expanded_from: str | None = None) -> None:
        self.rule = rule
        self.alpha = alpha
        self.expanded_from = expanded_from
        self.measured: Literal["difference", "candidate"] = (
            "difference" if rule.kind == "max_drop" else "candidate"
        )
        self.threshold = -rule.value if rule.kind == "max_drop" else rule.value
        self.decision: Decision = "undecided"
        self.decided_after: int | None = None
        self.spent: Spend | None = None
        self.steps: list[SequenceStep] = []
        self.observed = 0
        self.values: list[float] = []
        self.population: int | None = None

    def update(
        self,
        base: list[float],
        cand: list[float],
        ran: int,
        population: int | None,
        spent: Spend,
    ) -> None:
        b, c = np.asarray(base), np.asarray(cand)
        values = c - b if self.measured == "difference" else c
        values = values[np.isfinite(values)]
        if values.size == 0:
            return
        self.observed = int(values.size)
        self.values = [float(v) for v in values]
        low = -1.0 if self.measured == "difference" else 0.0
        seq = confidence_sequence(
            np.clip(values, low, 1.0), low=low, high=1.0, alpha=self.alpha, population=population
        )
        estimate, lower, upper = seq.at(values.size)
        self.steps.append(
            SequenceStep(conversations=ran, estimate=estimate, lower=lower, upper=upper)
        )
        if self.decision == "undecided":
            self.decision = decide(lower, upper, self.threshold)
            if self.decision != "undecided":
                self.decided_after = ran
                self.spent = spent

    def plan(self, available: int, batch: int) -> int | None:
        """Expected conversations to decide over all ``available``, were the mean real."""
        from chatledger.stats import expected_conversations

        if self.decision != "undecided" or len(self.values) < 2:
            return None
        low = -1.0 if self.measured == "difference" else 0.0
        plan = expected_conversations(
            self.values,
            threshold=self.threshold,
            population=available,
            low=low,
            batch=batch,
            alpha=self.alpha,
            repetitions=100,
        )
        return plan.median

    def result(self, available: int, batch: int, spent: Spend) -> SequentialRule:
        last = self.steps[-1] if self.steps else None
        what = "candidate − baseline" if self.measured == "difference" else "the candidate"
        if last is None:
            reason = "no conversation had a value for this figure"
        elif self.decision == "undecided":
            reason = (
                f"{what} {last.estimate:+.4f} [{last.lower:+.4f}, {last.upper:+.4f}] still "
                f"contains {self.threshold:+.4f}"
            )
        else:
            side = "above" if self.decision == "pass" else "below"
            reason = (
                f"{what} {last.estimate:+.4f} [{last.lower:+.4f}, {last.upper:+.4f}]: wholly "
                f"{side} {self.threshold:+.4f} after {self.decided_after} conversations"
            )
        return SequentialRule(
            rule=self.rule,
            measured=self.measured,
            threshold=self.threshold,
            decision=self.decision,
            decided_after=self.decided_after,
            alpha=self.alpha,
            expanded_from=self.expanded_from,
            spent=self.spent or spent,
            estimate=last.estimate if last else None,
            lower=last.lower if last else None,
            upper=last.upper if last else None,
            observed=self.observed,
            steps=self.steps,
            values=self.values,
            expected_if_real=self.plan(available, batch) if available else None,
            reason=reason,
        )


def sequence_report(result: SequentialResult) -> str:
    """A self-contained page: each rule's sequence over conversations (inline SVG)."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>decide — {html.escape(result.candidate_model)}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}"
        "table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd}"
        ".pass{color:#1a7f37}.fail{color:#cf222e}.undecided{color:#9a6700}</style></head><body>",
        f"<h1>{html.escape(result.baseline_model)} → {html.escape(result.candidate_model)}</h1>",
        f"<p>Stopped: <b>{result.stopped}</b> after {result.conversations_used} of "
        f"{result.conversations_available} conversations (batches of {result.batch_size}, "
        f"seed {result.seed}); anytime-valid {1 - result.alpha:.0%} confidence sequences "
        "(Waudby-Smith &amp; Ramdas 2024): each decision is wrong with probability at most "
        f"{result.alpha:g} however early it stopped.</p>",
        f"<p>Used: {result.used.chunks} chunks, {result.used.calls} model calls, "
        f"{result.used.input_tokens + result.used.output_tokens:,.0f} tokens, "
        f"${result.used.cost_usd:.4f}. The full run would have cost about "
        f"{result.full_run.calls} calls, "
        f"{result.full_run.input_tokens + result.full_run.output_tokens:,.0f} tokens, "
        f"${result.full_run.cost_usd:.4f}.</p>",
        "<table><tr><th>rule</th><th>decision</th><th>after</th><th>model calls</th>"
        "<th>α</th><th>why</th></tr>",
    ]
    for r in result.rules:
        after = "—" if r.decided_after is None else str(r.decided_after)
        parts.append(
            f"<tr><td>{html.escape(r.rule.name)}</td><td class='{r.decision}'>{r.decision}</td>"
            f"<td>{after}</td><td>{r.spent.calls if r.spent else '—'}</td>"
            f"<td>{'—' if r.alpha is None else f'{r.alpha:.4g}'}</td>"
            f"<td>{html.escape(r.reason)}</td></tr>"
        )
    parts.append("</table>")
    for r in result.rules:
        parts.append(f"<h2>{html.escape(r.rule.name)}</h2>")
        parts.append(_svg(r, result.conversations_available))
    for text in result.notes:
        parts.append(f"<p><i>{html.escape(text)}</i></p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _svg(rule: SequentialRule, available: int) -> str:
    width, height, pad = 640, 220, 36
    low = -1.0 if rule.measured == "difference" else 0.0
    steps = rule.steps
    if rule.decided_on == "point estimate":
        return f"<p>a cost, read on the usage measured: {html.escape(rule.reason)}</p>"
    if not steps:
        return "<p>no values</p>"

    def x(n: int) -> float:
        return pad + (width - 2 * pad) * n / max(available, 1)

    def y(v: float) -> float:
        return height - pad - (height - 2 * pad) * (v - low) / (1.0 - low)

    band = [f"{x(s.conversations):.1f},{y(s.upper):.1f}" for s in steps]
    band += [f"{x(s.conversations):.1f},{y(s.lower):.1f}" for s in reversed(steps)]
    line = " ".join(f"{x(s.conversations):.1f},{y(s.estimate):.1f}" for s in steps)
    t = y(rule.threshold)
    return (
        f"<svg width='{width}' height='{height}' role='img' "
        f"aria-label='confidence sequence of {html.escape(rule.rule.name)}'>"
        f"<rect x='{pad}' y='{pad}' width='{width - 2 * pad}' height='{height - 2 * pad}' "
        "fill='none' stroke='#ccc'/>"
        f"<polygon points='{' '.join(band)}' fill='#0969da' fill-opacity='0.2'/>"
        f"<polyline points='{line}' fill='none' stroke='#0969da' stroke-width='2'/>"
        f"<line x1='{pad}' x2='{width - pad}' y1='{t:.1f}' y2='{t:.1f}' stroke='#cf222e' "
        "stroke-dasharray='4 3'/>"
        f"<text x='{pad}' y='{height - 8}' font-size='11'>conversations run (of {available})</text>"
        f"<text x='{width - pad}' y='{t - 4:.1f}' font-size='11' text-anchor='end'>"
        f"threshold {rule.threshold:+g}</text>"
        f"<text x='4' y='{pad - 8}' font-size='11'>{1:g}</text>"
        f"<text x='4' y='{height - pad}' font-size='11'>{low:g}</text></svg>"
    )
