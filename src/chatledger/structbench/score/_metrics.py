"""Per-document metrics (DESIGN §8): DOC, MK, MV, WV, and the counts behind the paper's F1.

- DOC: 1 when the output (after stripping think blocks and fences) is one JSON value that
  validates against the schema; else 0.
- MK: F1 of the ground-truth leaf paths T and the predicted leaf paths P = 2·|T∩P| / (|T|+|P|).
- MV: matched ground-truth leaves / |T|, a leaf matching when the prediction has the same path
  with an equal value (see ``_values``).
- WV: Σ weight of matched leaves / Σ weight of all ground-truth leaves.
- Paper F1 per document: 0.25·F1_keys + 0.75·F1_values, where F1_values takes precision over
  the predicted leaves and recall over the ground-truth leaves (both counted by value match).

Unparseable or missing output scores 0 on all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatledger.structbench.dataset import Document, ValidatorCache, flatten
from chatledger.structbench.score._parse import MALFORMED, parse_output
from chatledger.structbench.score._values import values_match

MISSING = "missing"
CLEAN = "clean"  # a single JSON value that validates, with no wrapper to strip
KEY_F1_SHARE = 0.25  # the paper's blend: 0.25·F1_keys + 0.75·F1_values


@dataclass(frozen=True, slots=True)
class DocumentScore:
    id: str
    strategy: str | None
    depth: int
    doc: float
    mk: float
    mv: float
    wv: float
    truth_leaves: int
    predicted_leaves: int
    matched_keys: int
    matched_values: int
    kinds: tuple[str, ...]

    @property
    def f1_values(self) -> float:
        return _f1(self.matched_values, self.truth_leaves, self.predicted_leaves)

    @property
    def paper_f1(self) -> float:
        return KEY_F1_SHARE * self.mk + (1.0 - KEY_F1_SHARE) * self.f1_values

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "strategy": self.strategy,
            "depth": self.depth,
            "DOC": self.doc,
            "MK": self.mk,
            "MV": self.mv,
            "WV": self.wv,
            "paper_f1": self.paper_f1,
            "kinds": list(self.kinds),
        }


def _f1(matched: int, reference: int, predicted: int) -> float:
    total = reference + predicted
    return 2.0 * matched / total if total else 1.0


def score_document(
    document: Document,
    output: str | None,
    validators: ValidatorCache,
    *,
    strategy: str | None = None,
) -> DocumentScore:
    """Score one raw output (``None``: no prediction for this document) against ``document``."""
    truth = document.truth_leaves
    if output is None:
        return _zero(document, strategy, (MISSING,))
    parsed = parse_output(output)
    if not parsed.parsed:
        return _zero(document, strategy, parsed.kinds)
    kinds = parsed.kinds
    try:
        predicted = flatten(parsed.value)
        violations = (
            validators.violations(document.schema_key, document.schema, parsed.value)
            if parsed.single_value
            else ()
        )
    except RecursionError:  # nesting deeper than Python's stack: no schema is that deep
        return _zero(document, strategy, (*kinds, MALFORMED))
    doc = 0.0
    if parsed.single_value:
        kinds = (*kinds, *violations)
        doc = 0.0 if violations else 1.0
        if not kinds:
            kinds = (CLEAN,)
    matched_keys = 0
    matched_values = 0
    matched_weight = 0.0
    for path, value in truth.items():
        if path in predicted:
            matched_keys += 1
            if values_match(value, predicted[path]):
                matched_values += 1
                matched_weight += document.path_weights[path]
    total_weight = document.total_weight
    return DocumentScore(
        id=document.id,
        strategy=strategy,
        depth=document.depth,
        doc=doc,
        mk=_f1(matched_keys, len(truth), len(predicted)),
        mv=matched_values / len(truth),
        wv=matched_weight / total_weight if total_weight > 0 else matched_values / len(truth),
        truth_leaves=len(truth),
        predicted_leaves=len(predicted),
        matched_keys=matched_keys,
        matched_values=matched_values,
        kinds=kinds,
    )


def _zero(document: Document, strategy: str | None, kinds: tuple[str, ...]) -> DocumentScore:
    return DocumentScore(
        id=document.id,
        strategy=strategy,
        depth=document.depth,
        doc=0.0,
        mk=0.0,
        mv=0.0,
        wv=0.0,
        truth_leaves=len(document.truth_leaves),
        predicted_leaves=0,
        matched_keys=0,
        matched_values=0,
        kinds=kinds,
    )
