"""What stands behind each field score, and how far the intervals go: per model (and against
human gold) the headline with both aggregates, the pooled precision / recall / F1 and the
counts; the reference as human annotation; what each bootstrap interval resamples.

The headline of a field is the figure the extraction composite used (``aggregate`` of the
record): under micro it is the pooled score, so a field with no match shows 0 even where the
per-chunk mean is high (both-empty chunks each score 1.0) — never the macro number.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from chatledger.core import SCHEMA_FIELDS
from chatledger.record import FieldCounts, GoldScores, HumanGoldSample, ModelResult, RunStats
from chatledger.report._charts import LAYERS, interval, no_interval
from chatledger.report._load import RunFiles
from chatledger.scoring import FIELD_RULES
from chatledger.scoring import label as component_label

# micro keys shown in their own columns; any other key is a pooled pair component.
_OWN_COLUMNS = ("precision", "recall", "f1", "score")


@dataclass(frozen=True)
class FieldRow:
    """One field of one model (or of a score against human gold)."""

    name: str
    headline: float | None
    low: float | None = None  # the headline's interval, when the run has one
    high: float | None = None
    method: str | None = None
    macro: float | None = None
    micro: float | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    components: tuple[tuple[str, float], ...] = ()
    matched: float | None = None  # None: a field without item lists (no P/R/F1)
    n_reference: int | None = None
    n_predicted: int | None = None
    both_empty: int | None = None
    chunks: int | None = None
    # A set field counts distinct keys: what, and the items each side listed.
    counted_as: str | None = None
    n_reference_items: int | None = None
    n_predicted_items: int | None = None

    @property
    def rule(self) -> str | None:
        """The field's score in words, from the one table of field rules."""
        found = FIELD_RULES.get(self.name)
        return found.formula() if found is not None else None

    @property
    def count_note(self) -> str | None:
        """What this field's ref/pred counts count, when they are not the items listed."""
        listed = (self.n_reference_items, self.n_predicted_items)
        if self.counted_as is None or listed == (self.n_reference, self.n_predicted):
            return None
        return (
            f"{self.name}: matched / ref / pred count {self.counted_as} (the reference listed "
            f"{self.n_reference_items} items, the prediction {self.n_predicted_items}; "
            "repeats of a key count once)"
        )

    @property
    def widened(self) -> bool:
        return self.method is not None and "widened" in self.method

    @property
    def has_counts(self) -> bool:
        return self.n_reference is not None


@dataclass(frozen=True)
class CountsTable:
    """A model's (or a gold score's) fields, the aggregate its composite used and why."""

    aggregate: str
    rows: list[FieldRow]
    why: str
    example: str | None = None  # the field where the two aggregates differ most, in words

    @property
    def has_counts(self) -> bool:
        return any(r.has_counts for r in self.rows)

    @property
    def count_notes(self) -> list[str]:
        return [note for r in self.rows if (note := r.count_note) is not None]

    @property
    def has_credit(self) -> bool:
        return any(r.name == "entities" and r.matched is not None for r in self.rows)

    @property
    def short(self) -> str:
        """The aggregate in a few words."""
        if self.aggregate == "micro":
            return "micro — items pooled over all chunks"
        return "macro — the mean of per-chunk scores"


def headline(
    name: str, fields: Mapping[str, float], counts: Mapping[str, FieldCounts], aggregate: str
) -> float | None:
    """The figure the composite used for ``name``: the pooled (micro) score or the per-chunk
    mean (macro), as ``aggregate`` says; ``fields`` when the run recorded no counts."""
    found = counts.get(name)
    if found is not None:
        if aggregate == "micro" and "score" in found.micro:
            return found.micro["score"]
        if aggregate == "macro":
            return found.macro
    return fields.get(name)


def _row(
    name: str,
    fields: Mapping[str, float],
    counts: Mapping[str, FieldCounts],
    aggregate: str,
    span: tuple[float | None, float | None, str | None] | None,
) -> FieldRow:
    value = headline(name, fields, counts, aggregate)
    low, high, method = span if span is not None else (None, None, None)
    found = counts.get(name)
    if found is None:
        return FieldRow(name, value, low, high, method)
    micro = found.micro
    items = "f1" in micro  # fields with item lists; summary, arc and confidence have a score
    components = tuple((component_label(k), v) for k, v in micro.items() if k not in _OWN_COLUMNS)
    return FieldRow(
        name,
        value,
        low,
        high,
        method,
        macro=found.macro,
        micro=micro.get("score"),
        precision=micro.get("precision"),
        recall=micro.get("recall"),
        f1=micro.get("f1"),
        components=components,
        matched=found.n_matched if items else None,
        n_reference=found.n_reference,
        n_predicted=found.n_predicted,
        both_empty=found.both_empty,
        chunks=found.chunks,
        counted_as=found.counted_as,
        n_reference_items=found.n_reference_items,
        n_predicted_items=found.n_predicted_items,
    )


def _order(names: list[str], schema: str) -> list[str]:
    """``names`` in the schema's order (any the schema does not know, after it)."""
    known = list(SCHEMA_FIELDS.get(schema, SCHEMA_FIELDS["v3"]))
    return [f for f in known if f in names] + [f for f in names if f not in known]


def why_aggregate(aggregate: str, configured: bool) -> str:
    """In words: which aggregate the composite used, and why."""
    chosen = (
        "as the run's config sets it (weights.aggregate)"
        if configured
        else "the default against human gold with covers"
        if aggregate == "micro"
        else "the default against a reference without covers"
    )
    if aggregate == "micro":
        return (
            f"The extraction composite used micro figures ({chosen}): each field's items are "
            "pooled over the chunks that score it, and precision, recall and F1 are computed "
            "once from the pooled matched / reference / predicted counts (pair components "
            "such as owner accuracy are pooled over all matched pairs). Against partial human "
            "gold many chunks have nothing for a field on either side; each such both-empty "
            "chunk scores 1.0 in a per-chunk mean, and they would dominate it. The macro "
            "column is that per-chunk mean, for comparison."
        )
    return (
        f"The extraction composite used macro figures ({chosen}; DESIGN §3): each field's "
        "score is the mean of its per-chunk scores over all chunks of the run (both-empty "
        "chunks score 1.0, invalid or missing ones 0); confidence pools every item into one "
        "ECE. The micro column pools the items of all chunks instead, for comparison."
    )


def _example(rows: list[FieldRow]) -> str | None:
    """The field where macro and micro differ most, with its both-empty chunks."""
    gaps = [
        (abs(r.macro - r.micro), r.name, r.macro, r.micro, r)
        for r in rows
        if r.macro is not None and r.micro is not None
    ]
    if not gaps:
        return None
    gap, _, macro, micro, top = max(gaps, key=lambda g: (g[0], g[1]))
    if gap < 0.0005:
        return None
    empty = (
        f"{top.both_empty} of its {top.chunks} chunks are empty on both sides; "
        if top.both_empty
        else ""
    )
    return f"They differ most on {top.name}: {empty}macro {macro:.3f}, micro {micro:.3f}."


def _configured(files: RunFiles) -> bool:
    weights = files.run.config.get("weights")
    return isinstance(weights, dict) and weights.get("aggregate") is not None


def model_table(files: RunFiles, model: ModelResult, fields: list[str]) -> CountsTable:
    """The fields of one challenger, each with its interval, in the page's field order."""
    names = [f for f in fields if f in model.fields or f in model.field_counts]
    rows = []
    for f in names:
        found = interval(files, model.name, f"extraction.{f}")
        why = no_interval(files, model.name, f"extraction.{f}")
        span: tuple[float | None, float | None, str | None] | None = (
            (found.low, found.high, found.method)
            if found is not None
            else (None, None, why)
            if why is not None
            else None
        )
        rows.append(_row(f, model.fields, model.field_counts, model.aggregate, span))
    return CountsTable(
        model.aggregate, rows, why_aggregate(model.aggregate, _configured(files)), _example(rows)
    )


def model_tables(files: RunFiles, fields: list[str]) -> dict[str, CountsTable]:
    return {name: model_table(files, files.model(name), fields) for name in files.model_names}


def gold_table(files: RunFiles, scores: GoldScores | HumanGoldSample) -> CountsTable:
    """Scores against human gold (``gold:`` or a bundled sample) on the fields it covers."""
    schema = files.run.scoring_settings().extraction_schema
    names = _order(list(dict.fromkeys([*scores.fields, *scores.field_counts])), schema)
    rows = [_row(f, scores.fields, scores.field_counts, scores.aggregate, None) for f in names]
    return CountsTable(
        scores.aggregate, rows, why_aggregate(scores.aggregate, False), _example(rows)
    )


@dataclass(frozen=True)
class GoldBlock:
    """One score against human gold, as the page lists it."""

    title: str
    composite: float
    chunks: int
    table: CountsTable


def gold_blocks(files: RunFiles) -> list[GoldBlock]:
    """The reference and each challenger against the config's ``gold:``."""
    gold = files.run.human_gold
    if gold is None:
        return []
    blocks = [
        GoldBlock(
            f"reference {files.run.reference.name or 'reference'} vs {gold.gold}",
            gold.reference.composite,
            gold.reference.chunks,
            gold_table(files, gold.reference),
        )
    ]
    for name in files.model_names:
        scores = gold.models.get(name)
        if scores is not None:
            blocks.append(
                GoldBlock(
                    f"{name} vs {gold.gold}",
                    scores.composite,
                    scores.chunks,
                    gold_table(files, scores),
                )
            )
    return blocks


def sample_blocks(files: RunFiles) -> list[GoldBlock]:
    """The demo's bundled human-gold samples (AMI, CaSiNo)."""
    return [
        GoldBlock(f"{h.model} vs {h.corpus}", h.composite, h.chunks, gold_table(files, h))
        for h in files.run.human_gold_samples
    ]


@dataclass(frozen=True)
class HumanReference:
    """The reference as human annotation: its name and the fields it covers."""

    name: str
    covered: list[str]  # the fields scored against it (those its records cover)
    schema_fields: int
    partial_chunks: dict[str, tuple[int, int]]  # field → (chunks covering it, all chunks)

    @property
    def partial(self) -> bool:
        return len(self.covered) < self.schema_fields or bool(self.partial_chunks)


def human_reference(files: RunFiles) -> HumanReference | None:
    """Set when the reference is human annotation (``reference_is_human``): its covered fields
    are the fields scored against it (a field no record covers is not scored)."""
    run = files.run
    if not run.reference_is_human:
        return None
    schema = run.scoring_settings().extraction_schema
    every = list(SCHEMA_FIELDS.get(schema, SCHEMA_FIELDS["v3"]))
    scored: list[str] = []
    partial: dict[str, tuple[int, int]] = {}
    for model in run.models:
        for f in [*model.fields, *model.field_counts]:
            if f not in scored:
                scored.append(f)
        for f, c in model.field_counts.items():
            if c.chunks and c.chunks < run.chunks:
                partial.setdefault(f, (c.chunks, run.chunks))
    return HumanReference(
        run.reference.name or "reference", _order(scored, schema), len(every), partial
    )


@dataclass(frozen=True)
class ResamplingLine:
    figure: str
    unit: str  # chunks | conversations | not recorded
    n: int | None


@dataclass(frozen=True)
class WidenedInterval:
    model: str
    figure: str
    estimate: float
    low: float
    high: float
    method: str


@dataclass(frozen=True)
class IntervalsView:
    """What the intervals resample, the methods used and the intervals that were widened."""

    confidence: float
    resamples: int
    n_chunks: int
    n_conversations: int | None
    lines: list[ResamplingLine]
    methods: list[tuple[str, int]]
    widened: list[WidenedInterval]
    # The record says what each kind resamples: written by a ChatLedger whose every interval
    # is the bootstrap of exactly the figure shown (older runs bootstrapped per-chunk means).
    recorded: bool = True
    unit: str | None = None  # conversation | chunk (None: an older run)
    unit_label: str | None = None  # "conversations (k = 6)"
    method: str | None = None
    min_units: int | None = None
    too_few: str | None = None  # "too few conversations to tell (k = 3)"
    few_items_threshold: int | None = None
    few_items: list[str] = field(default_factory=list)  # "model: field (n = 5)"
    concentrated: list[str] = field(default_factory=list)  # "model: field (matches in 1 …)"

    def unit_of(self, kind: str) -> str:
        """What the intervals of ``kind`` (``overall``, a layer, ``fields``) resample: "the 6
        conversations", "the 36 chunks", or "units not recorded"."""
        label = dict(_FIGURES).get(kind, kind)
        for line in self.lines:
            if line.figure == label:
                if line.unit == "not recorded" or line.n is None:
                    return line.unit if line.unit != "not recorded" else "units not recorded"
                return f"the {line.n} {line.unit}"
        return "units not recorded"

    def summary(self) -> str:
        """Which figures resample which units, in one clause."""
        groups: dict[tuple[str, int | None], list[str]] = {}
        for line in self.lines:
            figure = line.figure.replace(" composite", "").replace("each field's score", "fields")
            groups.setdefault((line.unit, line.n), []).append(figure)
        parts = []
        for (unit, n), figures in groups.items():
            names = (
                " and ".join([", ".join(figures[:-1]), figures[-1]])
                if len(figures) > 1
                else figures[0]
            )
            verb = "resample" if len(figures) > 1 else "resamples"
            if unit == "not recorded" or n is None:
                parts.append(f"{names}: units not recorded")
            else:
                parts.append(f"{names} {verb} the {n} {unit}")
        return "; ".join(parts)


_FIGURES = (
    ("overall", "overall composite"),
    ("extraction", "extraction composite"),
    ("judge", "judge composite"),
    ("downstream", "downstream composite"),
    ("fields", "each field's score"),
)


def figure_label(key: str) -> str:
    if key.startswith("extraction."):
        return f"field {key.split('.', 1)[1]}"
    return key


def intervals_view(files: RunFiles) -> IntervalsView | None:
    stats: RunStats | None = files.run.stats
    if stats is None:
        return None
    layers = [x for x in LAYERS if x in files.run.layers_run]
    shown = {"overall", *layers, *(["fields"] if "extraction" in layers else [])}
    lines = []
    for kind, label in _FIGURES:
        if kind not in shown:
            continue
        unit = stats.resampling.get(kind)
        if unit is None:
            lines.append(ResamplingLine(label, "not recorded", None))
            continue
        n = stats.n_conversations if unit == "conversations" else stats.n_chunks
        lines.append(ResamplingLine(label, unit, n))
    methods: Counter[str] = Counter()
    widened = []
    for model in files.model_names:
        for key, entry in stats.intervals.get(model, {}).items():
            method = entry.method or "unknown"
            methods[method.split(",")[0]] += 1
            if "widened" in method:
                widened.append(
                    WidenedInterval(
                        model, figure_label(key), entry.estimate, entry.low, entry.high, method
                    )
                )
    return IntervalsView(
        confidence=stats.confidence,
        resamples=stats.bootstrap_resamples,
        n_chunks=stats.n_chunks,
        n_conversations=stats.n_conversations,
        lines=lines,
        methods=sorted(methods.items(), key=lambda kv: (-kv[1], kv[0])),
        widened=widened,
        recorded=bool(stats.resampling),
        unit=stats.unit,
        unit_label=stats.unit_label() if stats.unit is not None else None,
        method=stats.interval_method,
        min_units=stats.min_units,
        too_few=stats.too_few,
        few_items_threshold=stats.few_items_threshold,
        few_items=[
            f"{model}: {name} (n = {n})"
            for model, entries in stats.few_items.items()
            for name, n in entries.items()
        ],
        concentrated=[
            f"{model}: {name} ({note})"
            for model, entries in stats.concentrated.items()
            for name, note in entries.items()
        ],
    )
