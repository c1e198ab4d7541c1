"""The 17 layer-1 field scorers, exactly as DESIGN.md §3 specifies them.

Shared rules: both sides empty → 1.0 (every component 1); one side empty → 0.0; a component
taken "over matched pairs" with no matched pair is 0.0. A term over matched pairs (owner,
polarity, subject consistency, answer agreement, evidence Jaccard, range IoU) enters the score
multiplied by the matched share 2M/(R+P) (:func:`matched_share`), so that one match out of five
cannot add the whole term; the component shown is the term itself (the mean over matched pairs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from rapidfuzz.utils import default_process

from chatledger.core import CONFIDENCE_FIELDS, ExtractionV3
from chatledger.matching import preprocess, subject_consistency
from chatledger.scoring._calibration import expected_calibration_error
from chatledger.scoring._context import ScoringContext
from chatledger.scoring._pairing import pair_entities, pair_phases, pair_turning_points
from chatledger.scoring._rules import EXACT_CREDIT, FIELD_RULES, FUZZY_CREDIT
from chatledger.scoring._types import FIELD_SCORERS as FIELD_SCORERS  # filled by this module
from chatledger.scoring._types import FieldScore, FieldScorer, field_scorer

PR = FIELD_RULES["topics"].components  # (precision, recall): every plain F1 field's


def _rule_scorer(name: str) -> Callable[[FieldScorer], FieldScorer]:
    """Register the scorer of ``name`` with the components its rule names."""
    return field_scorer(name, FIELD_RULES[name].components)


def f1(matches: float, n_pred: int, n_ref: int) -> tuple[float, float, float]:
    """(precision, recall, F1); both empty → 1, one empty → 0."""
    if n_pred == 0 and n_ref == 0:
        return 1.0, 1.0, 1.0
    if n_pred == 0 or n_ref == 0 or matches <= 0:
        return 0.0, 0.0, 0.0
    precision = matches / n_pred
    recall = matches / n_ref
    return precision, recall, 2 * precision * recall / (precision + recall)


def matched_share(matched: float, n_ref: int, n_pred: int) -> float:
    """2M/(R+P): the share of both sides' items that found a partner (1 when all did)."""
    total = n_ref + n_pred
    return 2.0 * matched / total if total else 1.0


def jaccard(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def _text_f1_field(
    key: str, ref: Sequence[str], pred: Sequence[str], ctx: ScoringContext
) -> FieldScore:
    if not ref and not pred:
        return FieldScore.agree(PR)
    if not ref or not pred:
        return FieldScore.zero(PR, len(ref), len(pred))
    rows, _ = ctx.match_texts(key, ref, pred)
    p, r, score = f1(len(rows), len(pred), len(ref))
    return FieldScore(score, {"precision": p, "recall": r}, len(ref), len(pred), matched=len(rows))


def _set_f1_field(ref: set[Hashable], pred: set[Hashable], listed: tuple[int, int]) -> FieldScore:
    """Set F1 over distinct keys; ``listed`` is the items each side listed (duplicates of a
    key collapse, so the counts of keys and of items are both kept)."""
    if not ref and not pred:
        return dataclasses.replace(FieldScore.agree(PR), listed=listed)
    matched = len(ref & pred)
    p, r, score = f1(matched, len(pred), len(ref))
    return FieldScore(
        score, {"precision": p, "recall": r}, len(ref), len(pred), matched=matched, listed=listed
    )


@_rule_scorer("topics")
def score_topics(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    return _text_f1_field("topics", ref.topics, pred.topics, ctx)


@_rule_scorer("entities")
def score_entities(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    """Lenient NER F1: name fuzzy ≥ 0.70 and same type; credit 1 exact name, 0.5 fuzzy only."""
    names = FIELD_RULES["entities"].components
    n_ref, n_pred = len(ref.entities), len(pred.entities)
    if not n_ref and not n_pred:
        return FieldScore.agree(names)
    if not n_ref or not n_pred:
        return FieldScore.zero(names, n_ref, n_pred)
    pairing = pair_entities(ref.entities, pred.entities, ctx)
    exact_hits = float(sum(pairing.exact))
    credit = EXACT_CREDIT * exact_hits + FUZZY_CREDIT * (len(pairing.rows) - exact_hits)
    p, r, score = f1(credit, n_pred, n_ref)
    share = exact_hits / len(pairing.rows) if pairing.rows else 0.0
    return FieldScore(
        score,
        {"precision": p, "recall": r, "exact_share": share},
        n_ref,
        n_pred,
        matched=credit,
        pooled={"exact_share": (exact_hits, float(len(pairing.rows)))},
    )


PairTerm = tuple[float, tuple[float, float]]  # (the mean over matched pairs, (Σ value, n))
PairValue = Callable[[int, int], float]  # one matched pair's value (reference i, predicted j)
PairTerms = Callable[[list[int], list[int]], dict[str, PairTerm]]  # over all matched pairs


def _paired_field(
    name: str,
    texts: tuple[Sequence[str], Sequence[str]],
    ctx: ScoringContext,
    per_pair: dict[str, PairValue],
    whole: PairTerms | None = None,
) -> FieldScore:
    """A list field whose items match on their text (reference, predicted ``texts``), with
    terms over the matched pairs — the mean of ``per_pair`` values, or a term of all pairs at
    once (``whole``) — combined by the field's rule: F1 plus each pair term × matched share
    (DESIGN.md §3)."""
    rule = FIELD_RULES[name]
    n_ref, n_pred = len(texts[0]), len(texts[1])
    if not n_ref and not n_pred:
        return FieldScore.agree(rule.components)
    if not n_ref or not n_pred:
        return FieldScore.zero(rule.components, n_ref, n_pred)
    rows, cols = ctx.match_texts(name, texts[0], texts[1])
    pairs = list(zip(rows.tolist(), cols.tolist(), strict=True))
    terms = {comp: _over_pairs([fn(i, j) for i, j in pairs]) for comp, fn in per_pair.items()}
    if whole is not None:
        terms.update(whole(rows.tolist(), cols.tolist()))
    parts = {rule.components[0]: f1(len(rows), n_pred, n_ref)[2]}
    parts.update((comp, mean) for comp, (mean, _) in terms.items())
    return FieldScore(
        rule.combine(parts, matched_share(len(rows), n_ref, n_pred)),
        {comp: parts[comp] for comp in rule.components},
        n_ref,
        n_pred,
        matched=len(rows),
        pooled={comp: pooled for comp, (_, pooled) in terms.items()},
    )


def _over_pairs(values: Sequence[float]) -> PairTerm:
    return _mean(values), _pooled(values)


@_rule_scorer("decisions")
def score_decisions(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    a, b = ref.decisions, pred.decisions
    texts = [d.text for d in a], [d.text for d in b]
    jaccards: PairValue = lambda i, j: jaccard(a[i].evidence, b[j].evidence)  # noqa: E731
    return _paired_field("decisions", texts, ctx, {"evidence_jaccard": jaccards})


@_rule_scorer("action_items")
def score_action_items(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    a, b = ref.action_items, pred.action_items
    texts = [x.text for x in a], [x.text for x in b]
    owners: PairValue = lambda i, j: float(ctx.resolve(a[i].owner) == ctx.resolve(b[j].owner))  # noqa: E731
    return _paired_field("action_items", texts, ctx, {"owner_accuracy": owners})


@_rule_scorer("open_questions")
def score_open_questions(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    return _text_f1_field(
        "open_questions",
        [q.text for q in ref.open_questions],
        [q.text for q in pred.open_questions],
        ctx,
    )


@_rule_scorer("claims")
def score_claims(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    """Text F1, with polarity accuracy and subject consistency over matched pairs."""
    a, b = ref.claims, pred.claims

    def subjects(rows: list[int], cols: list[int]) -> dict[str, PairTerm]:
        """Subject consistency is a share of pairs of matched claims (one "pair" for a single
        matched claim): pooled, the agreeing pairs of all chunks over all their pairs."""
        subject = _subject_consistency(
            [a[i].subject for i in rows], [b[j].subject for j in cols], ctx
        )
        k = len(rows)
        n_pairs = float(k * (k - 1) // 2 if k > 1 else k)
        return {"subject_consistency": (subject, (float(round(subject * n_pairs)), n_pairs))}

    polarity: PairValue = lambda i, j: float(a[i].polarity == b[j].polarity)  # noqa: E731
    texts = [c.text for c in a], [c.text for c in b]
    return _paired_field("claims", texts, ctx, {"polarity_accuracy": polarity}, subjects)


def _subject_consistency(
    ref_subjects: list[str], pred_subjects: list[str], ctx: ScoringContext
) -> float:
    """Do matched claims group into the same subjects on both sides? (DESIGN.md §3)

    Subjects are compared on their content words (stop words removed, the one list of
    :mod:`chatledger.matching`) with the configured matcher.
    """
    cutoff = 100.0 * ctx.config.thresholds.subject
    return subject_consistency(ref_subjects, pred_subjects, cutoff, ctx.matcher)


@_rule_scorer("links")
def score_links(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    if not ref.links and not pred.links:
        return FieldScore.agree(PR)
    # Both sides usually cite the same URLs: normalise each distinct one once.
    normal = {url: normalise_url(url) for url in {link.url for link in (*ref.links, *pred.links)}}
    return _set_f1_field(
        {normal[link.url] for link in ref.links},
        {normal[link.url] for link in pred.links},
        (len(ref.links), len(pred.links)),
    )


def normalise_url(url: str) -> str:
    """Case-fold scheme and host, drop ``www.``, default ports, fragments and a trailing slash,
    sort query parameters; add ``https://`` when the scheme is missing."""
    raw = url.strip()
    if "://" not in raw:
        raw = "https://" + raw
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().removeprefix("www.")
    try:
        port = parts.port  # a property that parses the netloc: read it once
    except ValueError:  # not a number or out of range: keep the URL's own spelling
        return raw.casefold().rstrip("/")
    if port in (80, 443):
        port = None
    netloc = f"{host}:{port}" if port else host
    path = parts.path.rstrip("/")
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True))) if parts.query else ""
    return urlunsplit((scheme, netloc, path, query, ""))


@_rule_scorer("warnings")
def score_warnings(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    return _text_f1_field(
        "warnings", [w.text for w in ref.warnings], [w.text for w in pred.warnings], ctx
    )


@_rule_scorer("evidence_message_ids")
def score_evidence_ids(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    ref_ids, pred_ids = ref.evidence_message_ids, pred.evidence_message_ids
    return _set_f1_field(set(ref_ids), set(pred_ids), (len(ref_ids), len(pred_ids)))


def _item_texts(extraction: ExtractionV3, name: str) -> list[str]:
    return [item.text for item in getattr(extraction, name)]


@_rule_scorer("confidence")
def score_confidence(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    """1 − ECE of this chunk's items; the run-level score pools the items of all chunks."""
    pairs: list[tuple[float, bool]] = []
    n_ref = n_pred = 0
    for name in CONFIDENCE_FIELDS:
        ref_items = getattr(ref, name)
        pred_items = getattr(pred, name)
        n_ref += len(ref_items)
        n_pred += len(pred_items)
        if not pred_items:
            continue
        matched: set[int] = set()
        if ref_items:
            # The field's own scorer has usually matched these texts already.
            cached = ctx.text_matches.get(name)
            _, cols = (
                cached[0]
                if cached is not None
                else ctx.match_texts(name, _item_texts(ref, name), _item_texts(pred, name))
            )
            matched = set(cols.tolist())
        for j, item in enumerate(pred_items):
            if item.confidence is not None:
                pairs.append((float(item.confidence), j in matched))
    if not n_ref and not n_pred:
        return FieldScore(1.0, {"ece": 0.0, "n_items": 0.0, "accuracy": 1.0}, 0, 0)
    if not pairs:
        return FieldScore(0.0, {"ece": 1.0, "n_items": 0.0, "accuracy": 0.0}, n_ref, n_pred)
    ece = expected_calibration_error(pairs)
    accuracy = sum(c for _, c in pairs) / len(pairs)
    comps = {"ece": ece, "n_items": float(len(pairs)), "accuracy": accuracy}
    hits = float(sum(1 for _, correct in pairs if correct))
    return FieldScore(1.0 - ece, comps, n_ref, n_pred, tuple(pairs), matched=hits)


@_rule_scorer("summary")
def score_summary(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    a, b = ref.summary.strip(), pred.summary.strip()
    n_ref, n_pred = int(bool(a)), int(bool(b))
    if not a and not b:
        return FieldScore.agree(("similarity",))
    if not a or not b:
        return FieldScore.zero(("similarity",), n_ref, n_pred)
    sim = float(ctx.matcher.matrix(preprocess([a]), preprocess([b]))[0, 0]) / 100.0
    return FieldScore(sim, {"similarity": sim}, n_ref, n_pred)


@_rule_scorer("qa_pairs")
def score_qa_pairs(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    """Question F1, with answer agreement over matched pairs (both answers absent agree)."""
    a, b = ref.qa_pairs, pred.qa_pairs
    cutoff = 100.0 * ctx.config.thresholds.answer

    def answers(rows: list[int], cols: list[int]) -> dict[str, PairTerm]:
        # Every matched pair with both answers, scored in one call of the matcher.
        pairs = list(zip(rows, cols, strict=True))
        agree = [float(a[i].answer is None and b[j].answer is None) for i, j in pairs]
        both = [
            n
            for n, (i, j) in enumerate(pairs)
            if a[i].answer is not None and b[j].answer is not None
        ]
        if both:
            left = [default_process(a[rows[n]].answer or "") for n in both]
            right = [default_process(b[cols[n]].answer or "") for n in both]
            for n, sim in zip(both, ctx.matcher.pairs(left, right).tolist(), strict=True):
                agree[n] = float(sim >= cutoff)
        return {"answer_agreement": _over_pairs(agree)}

    texts = [q.question for q in a], [q.question for q in b]
    return _paired_field("qa_pairs", texts, ctx, {}, answers)


@_rule_scorer("emotional_tone")
def score_emotional_tone(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    return _set_f1_field(
        {(ctx.resolve(t.speaker), t.emotion) for t in ref.emotional_tone},
        {(ctx.resolve(t.speaker), t.emotion) for t in pred.emotional_tone},
        (len(ref.emotional_tone), len(pred.emotional_tone)),
    )


@_rule_scorer("emotional_arc")
def score_emotional_arc(ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext) -> FieldScore:
    """Opening, closing, trajectory (exact) and turning points F1 (±window)."""
    names = FIELD_RULES["emotional_arc"].components
    a, b = ref.emotional_arc, pred.emotional_arc
    if a is None and b is None:
        return FieldScore.agree(names)
    if a is None or b is None:
        return FieldScore.zero(names, int(a is not None), int(b is not None))
    ref_ids = [t.message_id for t in a.turning_points]
    pred_ids = [t.message_id for t in b.turning_points]
    if not ref_ids and not pred_ids:
        tp = 1.0
    else:
        rows, _ = pair_turning_points(ref_ids, pred_ids, ctx)
        tp = f1(len(rows), len(pred_ids), len(ref_ids))[2]
    comps = {
        "opening": float(a.opening_mood == b.opening_mood),
        "closing": float(a.closing_mood == b.closing_mood),
        "trajectory": float(a.trajectory == b.trajectory),
        "turning_points_f1": tp,
    }
    return FieldScore(FIELD_RULES["emotional_arc"].combine(comps), comps, 1, 1)


@_rule_scorer("conversation_phases")
def score_conversation_phases(
    ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext
) -> FieldScore:
    """Phase-label F1, with the mean IoU of the message ranges of matched phases."""
    names = FIELD_RULES["conversation_phases"].components
    a, b = ref.conversation_phases, pred.conversation_phases
    if not a and not b:
        return FieldScore.agree(names)
    if not a or not b:
        return FieldScore.zero(names, len(a), len(b))
    rows, _, ious = pair_phases(a, b, ctx)
    _, _, label_f1 = f1(len(rows), len(b), len(a))
    mean_iou = _mean(ious)
    comps = {"phase_f1": label_f1, "mean_iou": mean_iou}
    share = matched_share(len(rows), len(a), len(b))
    return FieldScore(
        FIELD_RULES["conversation_phases"].combine(comps, share),
        comps,
        len(a),
        len(b),
        matched=len(rows),
        pooled={"mean_iou": _pooled(ious)},
    )


@_rule_scorer("implicit_assumptions")
def score_implicit_assumptions(
    ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext
) -> FieldScore:
    return _text_f1_field(
        "implicit_assumptions",
        [a.text for a in ref.implicit_assumptions],
        [a.text for a in pred.implicit_assumptions],
        ctx,
    )


@_rule_scorer("negotiation_patterns")
def score_negotiation_patterns(
    ref: ExtractionV3, pred: ExtractionV3, ctx: ScoringContext
) -> FieldScore:
    return _set_f1_field(
        {(n.pattern, ctx.resolve(n.actor)) for n in ref.negotiation_patterns},
        {(n.pattern, ctx.resolve(n.actor)) for n in pred.negotiation_patterns},
        (len(ref.negotiation_patterns), len(pred.negotiation_patterns)),
    )


def _pooled(values: Sequence[float]) -> tuple[float, float]:
    """(sum, count) of a component's per-pair values, for pooling over chunks."""
    return float(sum(values)), float(len(values))


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return float(sum(items) / len(items)) if items else 0.0
