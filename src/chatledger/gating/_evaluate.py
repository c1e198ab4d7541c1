"""Deciding each rule of a gate on the paired bootstrap of two runs.

A drop counts only when it is shown: a ``max_drop`` rule fails when the *upper* bound of the
interval of candidate − baseline lies below −max_drop, so noise on a small sample never fails
a build, and a real regression fails it however the point estimate happens to fall. ``min``
rules read the candidate's own interval the same way (fail when its upper bound is below the
minimum). ``strict`` decides every rule on the point estimates instead. Costs carry no sampling
interval (a run records what it spent, not a sample of it): they are decided on the figures.
"""

from __future__ import annotations

from pathlib import Path

from chatledger.core import InputError
from chatledger.gating._result import GateResult, GateSide, RuleOutcome
from chatledger.gating._rules import COST_FIGURES, SCORE_GROUPS, GateRule, GateRules
from chatledger.record import ConversationRun, ModelResult
from chatledger.runs._paired import (
    PairedFigure,
    RunSide,
    align_to,
    figure_value,
    load_run_side,
    paired_figures,
    read_conversation_run,
    resamplable,
    shared_chunk_order,
)

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95


def evaluate_gate(
    rules: GateRules,
    baseline_dir: Path | None = None,
    candidate_dir: Path | None = None,
    *,
    baseline_model: str | None = None,
    candidate_model: str | None = None,
    strict: bool | None = None,
) -> GateResult:
    """Every rule's verdict. Arguments override the rules file's settings. Raises
    :class:`InputError` for what the user must fix (a missing run, unshared chunks, a figure
    a run does not have): a usage error, never a failed rule."""
    settings = rules.settings
    base_path = baseline_dir or rules.resolve(settings.baseline)
    cand_path = candidate_dir or rules.resolve(settings.candidate)
    if base_path is None or cand_path is None:
        which = "baseline" if base_path is None else "candidate"
        raise InputError(
            f"no {which} run directory: give it on the command line or as {which}: in the "
            "rules file",
            path=rules.source,
        )
    base_record = read_conversation_run(base_path, "baseline")
    cand_record = read_conversation_run(cand_path, "candidate")
    base_model = _choose(
        base_record, baseline_model or settings.baseline_model, base_path, "baseline"
    )
    cand_model = _choose(
        cand_record, candidate_model or settings.candidate_model, cand_path, "candidate"
    )
    expanded = _expand(rules.rules, base_model, cand_model, rules.source)
    stats = cand_record.stats or base_record.stats
    resamples = settings.resamples or (stats.bootstrap_resamples if stats else DEFAULT_RESAMPLES)
    confidence = settings.confidence or (stats.confidence if stats else DEFAULT_CONFIDENCE)
    seed = settings.seed if settings.seed is not None else (stats.seed if stats else 0)
    strict = settings.strict if strict is None else strict
    notes: list[str] = []
    if _reference_hash(base_record) != _reference_hash(cand_record):
        notes.append(
            "the runs were scored against different reference files: layer-1 differences mix "
            "the models' change with the reference's"
        )
    score_figures = list(dict.fromkeys(r.figure for r in expanded if not r.is_cost))
    paired: dict[str, PairedFigure] = {}
    if score_figures:
        base_side = load_run_side(base_path, base_record, base_model)
        cand_side = align_to(base_side, load_run_side(cand_path, cand_record, cand_model))
        for rule in expanded:
            if not rule.is_cost:
                _check_present(rule, base_side, cand_side, rules.source)
        sampled = [
            f for f in score_figures if resamplable(base_side, f) and resamplable(cand_side, f)
        ]
        point_only = [f for f in score_figures if f not in sampled]
        for figure in point_only:
            notes.append(f"{figure}: no per-unit statistics to resample; decided on the figures")
        unit = "chunk" if stats is not None and stats.unit == "chunk" else "conversation"
        paired = paired_figures(
            base_side,
            cand_side,
            sampled,
            n_resamples=resamples,
            confidence=confidence,
            seed=seed,
            unit=unit,
        )
        if unit == "chunk":
            notes.append(
                "units: chunks for layer-1 figures, as the run asked (stats: {unit: chunk}); "
                "chunks of one conversation are not independent"
            )
    else:
        shared_chunk_order(base_record, cand_record, cand_path)
    outcomes = [
        _cost_outcome(rule, base_model, cand_model, rules.source)
        if rule.is_cost
        else _score_outcome(rule, base_model, cand_model, paired.get(rule.figure), strict)
        for rule in expanded
    ]
    return GateResult(
        rules_source=rules.source,
        baseline=GateSide(run_dir=str(base_path), run_name=base_record.name, model=base_model.name),
        candidate=GateSide(
            run_dir=str(cand_path), run_name=cand_record.name, model=cand_model.name
        ),
        strict=strict,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        outcomes=outcomes,
        notes=notes,
    )


def _choose(record: ConversationRun, name: str | None, run_dir: Path, role: str) -> ModelResult:
    names = [m.name for m in record.models]
    if name is not None:
        if name not in names:
            raise InputError(
                f"no model {name!r} in the {role} run (models: {', '.join(names)})", path=run_dir
            )
        return record.model(name)
    if len(names) == 1:
        return record.models[0]
    raise InputError(
        f"the {role} run has {len(names)} models ({', '.join(names)}): name one with "
        f"--{role}-model",
        path=run_dir,
    )


def _expand(
    rules: list[GateRule], baseline: ModelResult, candidate: ModelResult, source: str
) -> list[GateRule]:
    """``fields.*`` (and ``layers.*``, ``consumers.*``) as one rule per name both models have,
    in the baseline's order — but for a figure that a rule names on its own with the same kind
    of threshold: that one holds, and the figure is evaluated once."""
    named = {(r.figure, r.kind) for r in rules if not r.figure.endswith(".*")}
    out: list[GateRule] = []
    for rule in rules:
        group, _, item = rule.figure.partition(".")
        if item != "*":
            out.append(rule)
            continue
        assert group in SCORE_GROUPS
        names = [n for n in _group(baseline, group) if n in _group(candidate, group)]
        if not names:
            raise InputError(f"the models share no {group}", path=source, field=rule.figure)
        out += [
            rule.model_copy(update={"figure": f"{group}.{n}"})
            for n in names
            if (f"{group}.{n}", rule.kind) not in named
        ]
    return out


def _group(model: ModelResult, group: str) -> dict[str, float]:
    return {"layers": model.layers, "fields": model.fields, "consumers": model.consumers}[group]


def _check_present(rule: GateRule, base: RunSide, cand: RunSide, source: str) -> None:
    for side, role in ((base, "baseline"), (cand, "candidate")):
        if figure_value(side, rule.figure) is None:
            group, _, _item = rule.figure.partition(".")
            known = ", ".join(_group(side.model, group)) if group in SCORE_GROUPS else ""
            has = f" (it has: {known})" if known else ""
            raise InputError(
                f"the {role}'s model {side.model.name!r} has no {rule.figure}{has}",
                path=source,
                field=rule.figure,
            )


def _reference_hash(record: ConversationRun) -> str | None:
    return next((i.sha256 for i in record.inputs if i.role == "reference"), None)


def _score_outcome(
    rule: GateRule,
    baseline: ModelResult,
    candidate: ModelResult,
    paired: PairedFigure | None,
    strict: bool,
) -> RuleOutcome:
    base = _value(baseline, rule.figure)
    cand = _value(candidate, rule.figure)
    use_interval = paired is not None and not strict
    decided = "interval" if use_interval else "point estimate"
    common = {
        "rule": rule,
        "baseline": base,
        "candidate": cand,
        "decided_on": decided,
        "units": paired.units if paired else None,
        "n_units": paired.n_units if paired else None,
        "p_value": paired.p_value if paired and rule.kind == "max_drop" else None,
        "test": paired.test if paired and rule.kind == "max_drop" else None,
    }
    if use_interval and paired is not None and paired.note is not None:
        # Too few conversations (or too few items) for an interval: the data cannot decide
        # the rule, and the gate says so (exit status 3), never a silent pass.
        return RuleOutcome(
            **common,
            passed=False,
            undecided=True,
            difference=cand - base,
            reason=f"undecided: {paired.note} (changed {cand - base:+.4f}, no interval)",
        )
    if rule.kind == "max_drop":
        diff = cand - base
        low, high = (paired.low, paired.high) if paired else (None, None)
        bound = -rule.value
        if use_interval:
            assert high is not None and low is not None
            passed = not high < bound
            span = f"[{low:+.4f}, {high:+.4f}]"
            reason = (
                f"changed {diff:+.4f} {span}; the interval reaches {bound:+.4f} or above: "
                "no drop beyond the allowance is shown"
                if passed
                else f"changed {diff:+.4f} {span}; the whole interval is below {bound:+.4f}"
            )
        else:
            passed = not diff < bound
            reason = (
                f"changed {diff:+.4f}, within the allowance of {bound:+.4f}"
                if passed
                else f"changed {diff:+.4f}, below the allowance of {bound:+.4f}"
            )
        return RuleOutcome(
            **common, passed=passed, difference=diff, low=low, high=high, reason=_why(rule, reason)
        )
    assert rule.kind == "min"
    if use_interval and paired is not None and paired.candidate_note is not None:
        # The candidate's matches lie in one conversation: its own figure has no interval.
        return RuleOutcome(
            **common,
            passed=False,
            undecided=True,
            difference=cand - base,
            reason=_why(rule, f"undecided: {paired.candidate_note} ({cand:.4f}, no interval)"),
        )
    low, high = (paired.candidate_low, paired.candidate_high) if paired else (None, None)
    if use_interval:
        assert high is not None and low is not None
        passed = not high < rule.value
        span = f"[{low:.4f}, {high:.4f}]"
        reason = (
            f"{cand:.4f} {span}; the interval reaches the minimum {rule.value:g}"
            if passed
            else f"{cand:.4f} {span}; the whole interval is below the minimum {rule.value:g}"
        )
    else:
        passed = not cand < rule.value
        word = "at or above" if passed else "below"
        reason = f"{cand:.4f}, {word} the minimum {rule.value:g}"
    return RuleOutcome(
        **common,
        passed=passed,
        difference=cand - base,
        low=low,
        high=high,
        reason=_why(rule, reason),
    )


def _why(rule: GateRule, text: str) -> str:
    """A reason that stands alone: the figure first, the rule it answers last
    ("fields.claims changed -0.0300 [...]; … (rule: max_drop 0.05)")."""
    return f"{rule.figure} {text} (rule: {rule.kind} {rule.value:g})"


def _value(model: ModelResult, figure: str) -> float:
    if figure == "overall":
        return model.overall
    if figure == "validity":
        return model.validity_rate
    group, _, item = figure.partition(".")
    return _group(model, group)[item]


def _cost(model: ModelResult, figure: str) -> float:
    assert figure in COST_FIGURES
    usage = model.usage
    return usage.cost_per_chunk_usd if figure == "cost_per_chunk" else usage.latency_per_chunk_s


def _cost_outcome(
    rule: GateRule, baseline: ModelResult, candidate: ModelResult, source: str
) -> RuleOutcome:
    base, cand = _cost(baseline, rule.figure), _cost(candidate, rule.figure)
    unit = "$" if rule.figure == "cost_per_chunk" else "s"
    common = {"rule": rule, "baseline": base, "candidate": cand, "decided_on": "point estimate"}
    if rule.kind == "max":
        passed = not cand > rule.value
        word = "within" if passed else "above"
        return RuleOutcome(
            **common,
            passed=passed,
            difference=cand - base,
            reason=_why(rule, f"{cand:.6g} {unit} per chunk, {word} the maximum {rule.value:g}"),
        )
    assert rule.kind == "max_ratio"
    if base <= 0:
        what = "cost" if rule.figure == "cost_per_chunk" else "latency"
        raise InputError(
            f"the baseline's {what} per chunk is 0 (nothing recorded): a ratio to it is "
            "undefined; use max instead",
            path=source,
            field=f"{rule.figure}.max_ratio",
        )
    ratio = cand / base
    passed = not ratio > rule.value
    word = "within" if passed else "above"
    return RuleOutcome(
        **common,
        passed=passed,
        difference=ratio,
        reason=_why(
            rule,
            f"{cand:.6g} vs {base:.6g} {unit} per chunk: ratio {ratio:.3f}, {word} "
            f"the maximum {rule.value:g}",
        ),
    )
