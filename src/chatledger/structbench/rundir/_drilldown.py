"""The report's per-document drill-down: for each row, its worst documents in full.

Worst = lowest WV, then MV, DOC, MK, then dataset order. Each is shown as the email, the schema,
the ground truth, the raw output, the parsed JSON and the paths that were missed, wrong or extra,
plus the schema errors that cost it DOC. Stored in the run directory (``drilldown.json``) so the
report can be rebuilt from the directory alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from chatledger.structbench.aggregate import Row
from chatledger.structbench.dataset import Document, ValidatorCache, flatten
from chatledger.structbench.score import DocumentScore, parse_output, values_match

DRILLDOWN_PER_ROW = 30
# A rambling output (or its parsed JSON) is cut here: the page must stay small enough to open.
MAX_SHOWN_CHARS = 20_000
MAX_LISTED = 100  # extra paths and schema errors listed per document
MAX_MESSAGE_CHARS = 300


def worst_first(scores: Sequence[DocumentScore]) -> list[int]:
    return sorted(
        range(len(scores)),
        key=lambda k: (scores[k].wv, scores[k].mv, scores[k].doc, scores[k].mk, k),
    )


def _schema_errors(document: Document, value: Any, validators: ValidatorCache) -> list[Any]:
    validator = validators.validator(document.schema_key, document.schema)
    errors = []
    for error in validator.iter_errors(value):
        message = error.message
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS] + "…"
        path = ".".join(str(p) for p in error.absolute_path)
        errors.append({"path": path, "keyword": str(error.validator), "message": message})
    errors.sort(key=lambda e: (e["path"], e["keyword"], e["message"]))
    return errors[:MAX_LISTED]


def document_view(
    document: Document, score: DocumentScore, output: str | None, validators: ValidatorCache
) -> dict[str, Any]:
    """One row's answer on one document, with what it got wrong, JSON-ready."""
    view: dict[str, Any] = {
        "id": document.id,
        "scores": {
            "DOC": score.doc,
            "MK": score.mk,
            "MV": score.mv,
            "WV": score.wv,
            "paper_f1": score.paper_f1,
        },
        "kinds": list(score.kinds),
        "output": None,
        "output_chars": 0,
        "parsed": None,
        "parsed_ok": False,
        "single_value": False,
        "schema_errors": [],
    }
    truth = document.truth_leaves
    predicted: dict[str, Any] = {}
    if output is not None:
        view["output"] = output[:MAX_SHOWN_CHARS]
        view["output_chars"] = len(output)
        parsed = parse_output(output)
        if parsed.parsed:
            view["parsed_ok"] = True
            view["single_value"] = parsed.single_value
            try:
                predicted = flatten(parsed.value)
                shown = json.dumps(parsed.value, ensure_ascii=False)
                view["parsed"] = parsed.value if len(shown) <= MAX_SHOWN_CHARS else None
                if parsed.single_value:
                    view["schema_errors"] = _schema_errors(document, parsed.value, validators)
            except RecursionError:  # as in scoring: nesting no schema has is unparseable
                view["parsed_ok"] = False
                predicted = {}
    weights = document.path_weights
    view["missed"] = [
        {"path": p, "expected": v, "weight": weights[p]}
        for p, v in truth.items()
        if p not in predicted
    ]
    view["wrong"] = [
        {"path": p, "expected": v, "got": predicted[p], "weight": weights[p]}
        for p, v in truth.items()
        if p in predicted and not values_match(v, predicted[p])
    ]
    extra = [{"path": p, "got": v} for p, v in predicted.items() if p not in truth]
    view["extra"] = extra[:MAX_LISTED]
    view["extra_count"] = len(extra)
    return view


def drilldown(
    documents: Sequence[Document],
    rows: Sequence[Row],
    validators: ValidatorCache,
    *,
    per_row: int = DRILLDOWN_PER_ROW,
) -> dict[str, Any]:
    """``{"per_row", "documents": {id: email, schema, truth…}, "rows": [{"name", "documents":
    [view…]}]}``; each document's text is stored once however many rows show it."""
    by_id = {d.id: d for d in documents}
    order = {d.id: k for k, d in enumerate(documents)}
    shown: set[str] = set()
    out_rows = []
    for row in rows:
        views = []
        for k in worst_first(row.scores)[:per_row]:
            score = row.scores[k]
            document = by_id[score.id]
            views.append(document_view(document, score, row.outputs.get(score.id), validators))
            shown.add(document.id)
        out_rows.append({"name": row.name, "documents": views})
    texts = {}
    for doc_id in sorted(shown, key=order.__getitem__):
        d = by_id[doc_id]
        texts[doc_id] = {
            "depth": d.depth,
            "input": d.input,
            "schema": d.schema,
            "ground_truth": d.ground_truth,
        }
    return {"per_row": per_row, "documents": texts, "rows": out_rows}
