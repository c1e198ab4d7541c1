"""structbench metrics (DESIGN §8), worked out by hand on one small nested document.

Schema: an order with a nested customer, a list of items and two formatted fields; every object
has additionalProperties false. Ground truth leaf paths T (9):

    order_number, customer.name, customer.email, items.0.sku, items.0.qty,
    items.1.sku, items.1.qty, total, date

Default weights (importance / level; see _weights.py):
    order_number 2/1 = 2      customer.name 1.5/2 = 0.75     customer.email 2/2 = 1
    items.i.sku 2/3 (×2)      items.i.qty 2/3 (×2)            total 2/1 = 2      date 2/1 = 2
    Σ = 2 + 0.75 + 1 + 4·(2/3) + 2 + 2 = 125/12
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatledger.structbench import (
    Document,
    Prediction,
    ValidatorCache,
    default_weight,
    flatten,
    parse_output,
    schema_depth,
    score_document,
    score_predictions,
    value_depth,
    values_match,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_number": {"type": "string"},
        "customer": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string", "format": "email"},
            },
            "required": ["name", "email"],
            "additionalProperties": False,
        },
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["sku", "qty"],
                "additionalProperties": False,
            },
        },
        "total": {"type": "number"},
        "date": {"type": "string", "format": "date"},
    },
    "required": ["order_number", "customer", "items", "total", "date"],
    "additionalProperties": False,
}
TRUTH: dict[str, Any] = {
    "order_number": "PO-1",
    "customer": {"name": "Ann Lee", "email": "ann@x.org"},
    "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}],
    "total": 12.5,
    "date": "2026-03-04",
}
TRUTH_TEXT = json.dumps(TRUTH)
DOCUMENT = Document(id="d1", input="(email)", schema=SCHEMA, ground_truth=TRUTH)


def score(output: str | None, document: Document = DOCUMENT) -> Any:
    return score_document(document, output, ValidatorCache())


def with_changes(**changes: Any) -> dict[str, Any]:
    return {**json.loads(TRUTH_TEXT), **changes}


# --- paths, depth, values, weights -------------------------------------------------------------


def test_flatten_gives_dot_paths_of_leaves_with_list_indices_and_empty_containers() -> None:
    assert list(flatten(TRUTH)) == [
        "order_number",
        "customer.name",
        "customer.email",
        "items.0.sku",
        "items.0.qty",
        "items.1.sku",
        "items.1.qty",
        "total",
        "date",
    ]
    # Empty containers are leaves themselves; a scalar root has the path "".
    assert flatten({"tags": [], "meta": {}, "n": None}) == {"tags": [], "meta": {}, "n": None}
    assert flatten(7) == {"": 7}


def test_depth_counts_nested_objects_and_arrays() -> None:
    # root object (1) → items array (2) → item object (3)
    assert schema_depth(SCHEMA) == 3
    assert value_depth(TRUTH) == 3
    assert value_depth({"a": 1}) == 1
    assert value_depth({"a": {"b": [1]}}) == 3
    ref = {"$defs": {"x": {"type": "object", "properties": {"y": {"type": "array"}}}},
           "type": "object", "properties": {"x": {"$ref": "#/$defs/x"}}}  # fmt: skip
    assert schema_depth(ref) == 3


@pytest.mark.parametrize(
    ("truth", "predicted", "expected"),
    [
        (" Ann  Lee", "ann lee", True),  # case and whitespace
        (12.5, 12.50, True),  # numeric equality
        (12, 12.0, True),
        (12.5, "12.50", False),  # a number written as a string is the wrong type
        (1, True, False),  # booleans are not numbers
        ("2026-03-04", "2026-03-04T00:00:00", True),  # ISO date vs midnight date-time
        ("2026-03-04", "2026-03-04T00:00:00Z", True),
        ("2026-03-04", "2026-03-05", False),
        ("2026-03-04", "March 4, 2026", False),  # only ISO spellings are read as dates
        ("14:30", "14:30:00", True),
        (None, None, True),
        (None, "", False),
        ([], [], True),
        ([], {}, False),
    ],
)
def test_value_normalisation(truth: Any, predicted: Any, expected: bool) -> None:
    assert values_match(truth, predicted) is expected


def test_default_weights_follow_importance_over_level() -> None:
    assert default_weight("order_number") == 2.0
    assert default_weight("customer.name") == 0.75
    assert default_weight("customer.email") == 1.0
    assert default_weight("items.1.sku") == pytest.approx(2 / 3)
    assert default_weight("notes") == 1.0
    assert sum(DOCUMENT.path_weights.values()) == pytest.approx(125 / 12)


# --- the four metrics --------------------------------------------------------------------------


def test_an_exact_answer_scores_one_everywhere() -> None:
    s = score(json.dumps(with_changes(customer={"name": "ann  LEE", "email": "ann@x.org"})))
    assert (s.doc, s.mk, s.mv, s.wv) == (1.0, 1.0, 1.0, 1.0)
    assert s.kinds == ("clean",)


def test_wrong_types_and_an_extra_key_on_nested_objects_and_lists() -> None:
    predicted = {
        "order_number": "PO-1",
        "customer": {"name": "Ann Lee", "email": "ann@x.org", "phone": "555"},
        "items": [{"sku": "A1", "qty": "2"}],
        "total": "12.50",
        "date": "2026-03-04",
    }
    s = score(json.dumps(predicted))
    # P (8) = order_number, customer.name, customer.email, customer.phone, items.0.sku,
    #         items.0.qty, total, date.  T∩P = 7 (all but customer.phone).
    # MK = 2·7 / (9 + 8) = 14/17
    assert s.mk == pytest.approx(14 / 17)
    # Values: items.0.qty "2" ≠ 2 and total "12.50" ≠ 12.5 (wrong type); items.1.* missing.
    # 5 matched of 9 → MV = 5/9
    assert s.mv == pytest.approx(5 / 9)
    # WV = (2 + 0.75 + 1 + 2/3 + 2) / (125/12) = (77/12) / (125/12) = 77/125 = 0.616
    assert s.wv == pytest.approx(77 / 125)
    # A valid JSON value that breaks the schema: DOC 0, and each violation kind is counted once.
    assert s.doc == 0.0
    assert s.kinds == ("extra_keys", "wrong_type")
    # Paper F1 = 0.25·F1_keys + 0.75·F1_values = 0.25·14/17 + 0.75·(2·5/17) = 11/17
    assert s.paper_f1 == pytest.approx(11 / 17)


def test_dataset_weights_override_the_default_and_accept_wildcards() -> None:
    weighted = Document(
        id="w",
        input="",
        schema=SCHEMA,
        ground_truth=TRUTH,
        weights={"total": 5.0, "items.*.sku": 1.0},
    )
    predicted = with_changes(total="12.50", items=[{"sku": "A1", "qty": "2"}])
    s = score(json.dumps(predicted), weighted)
    # weights: order_number 2, name .75, email 1, sku 1 + 1, qty 2/3 + 2/3, total 5, date 2
    # Σ = 2 + .75 + 1 + 2 + 5 + 2 + 4/3 = 12.75 + 4/3 = 169/12
    # matched = order_number 2 + name .75 + email 1 + items.0.sku 1 + date 2 = 6.75 = 81/12
    # WV = 81/169
    assert s.wv == pytest.approx(81 / 169)
    assert s.mv == pytest.approx(5 / 9)


def test_all_zero_weights_make_wv_the_unweighted_share() -> None:
    # A dataset may weigh every path 0 (a weight is "≥ 0"); Σ weights is then 0 and WV has no
    # weighted share to take: it is MV, the share of ground-truth leaves matched (decisions:
    # structbench). The prediction of the test above matches 5 of the 9 leaves → 5/9 for both;
    # a WV of 0 or 1 here (the mutants `else 0.0`, `else 1.0`) would fail.
    weights = dict.fromkeys(DOCUMENT.truth_leaves, 0.0)
    zero = Document(id="z", input="", schema=SCHEMA, ground_truth=TRUTH, weights=weights)
    assert zero.total_weight == 0.0
    predicted = with_changes(total="12.50", items=[{"sku": "A1", "qty": "2"}])
    s = score(json.dumps(predicted), zero)
    assert (s.mv, s.wv) == (pytest.approx(5 / 9), pytest.approx(5 / 9))
    # Every leaf matched: 1.0, not a division by zero.
    assert score(TRUTH_TEXT, zero).wv == 1.0


def test_an_iso_date_time_matches_the_date_but_fails_the_date_format() -> None:
    s = score(json.dumps(with_changes(date="2026-03-04T00:00:00")))
    assert (s.mk, s.mv, s.wv) == (1.0, 1.0, 1.0)
    assert s.doc == 0.0
    assert s.kinds == ("bad_format",)


def test_extra_keys_lower_key_precision_and_fail_doc() -> None:
    s = score(
        json.dumps(
            with_changes(
                note="rush", customer={"name": "Ann Lee", "email": "ann@x.org", "vip": True}
            )
        )
    )
    # P = T + {note, customer.vip} = 11 leaves, T∩P = 9: MK = 2·9 / (9 + 11) = 0.9
    assert s.mk == pytest.approx(0.9)
    assert s.mv == 1.0 and s.wv == 1.0
    assert s.doc == 0.0 and s.kinds == ("extra_keys",)


def test_an_array_where_an_object_is_wanted() -> None:
    s = score(json.dumps([TRUTH]))
    # Paths are "0.order_number", … : none is a ground-truth path.
    assert (s.doc, s.mk, s.mv, s.wv) == (0.0, 0.0, 0.0, 0.0)
    assert s.kinds == ("wrong_type",)


# --- bad outputs -------------------------------------------------------------------------------


def test_fenced_json_is_parsed_and_can_pass_doc() -> None:
    s = score(f"```json\n{TRUTH_TEXT}\n```")
    assert (s.doc, s.mk, s.mv, s.wv) == (1.0, 1.0, 1.0, 1.0)
    assert s.kinds == ("fenced",)


def test_think_blocks_are_stripped_even_when_they_hold_json() -> None:
    s = score(f'<think>maybe {{"total": 99}} …</think>\n{TRUTH_TEXT}')
    assert (s.doc, s.mv) == (1.0, 1.0)
    assert s.kinds == ("think_block",)
    # A think block that never closes swallows the rest: no answer was given.
    s = score(f"<think>reasoning that ran out of tokens {TRUTH_TEXT}")
    assert (s.doc, s.mk, s.mv, s.wv) == (0.0, 0.0, 0.0, 0.0)
    assert s.kinds == ("think_block", "empty")


def test_trailing_prose_fails_doc_but_keeps_mk_mv_wv() -> None:
    s = score(f"Here is the JSON you asked for:\n{TRUTH_TEXT}\nLet me know if anything is off.")
    assert s.doc == 0.0
    assert (s.mk, s.mv, s.wv) == (1.0, 1.0, 1.0)
    assert s.kinds == ("surrounding_prose",)


def test_two_json_values_fail_doc_and_the_first_object_is_scored() -> None:
    s = score(f'{TRUTH_TEXT}\n{{"order_number": "PO-2"}}')
    assert s.doc == 0.0 and s.mv == 1.0


def test_truncated_json_scores_zero_on_all_four_nothing_is_repaired() -> None:
    # The cut falls inside items, after two complete inner objects could have been salvaged.
    cut = TRUTH_TEXT[: TRUTH_TEXT.index('"total"')]
    s = score(cut)
    assert (s.doc, s.mk, s.mv, s.wv) == (0.0, 0.0, 0.0, 0.0)
    assert s.kinds == ("truncated",)
    assert parse_output(cut).parsed is False


def test_malformed_empty_and_no_json() -> None:
    assert score("{'order_number': 'PO-1'}").kinds == ("malformed",)
    assert score('{"total": NaN}').kinds == ("malformed",)
    assert score("").kinds == ("empty",)
    assert score("  \n ").kinds == ("empty",)
    assert score("I could not find an order in this email.").kinds == ("no_json",)
    assert score(None).kinds == ("missing",)
    for output in ("", "no json", "{'a': 1}", None):
        s = score(output)
        assert (s.doc, s.mk, s.mv, s.wv) == (0.0, 0.0, 0.0, 0.0)


# --- aggregation -------------------------------------------------------------------------------


FLAT_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}},
               "required": ["name"], "additionalProperties": False}  # fmt: skip
FLAT = Document(id="d2", input="", schema=FLAT_SCHEMA, ground_truth={"name": "Bo"})


def test_report_means_depths_kinds_and_pooled_paper_f1() -> None:
    predictions = [
        Prediction("d1", f"Sure:\n{TRUTH_TEXT}", strategy="one_shot"),  # DOC 0, MK=MV=WV 1
        Prediction("d2", '{"name": "bo"}', strategy="one_shot"),  # all 1
        Prediction("d1", TRUTH_TEXT[:30], strategy="zero_shot"),  # truncated: all 0
        Prediction("ghost", "{}", strategy="zero_shot"),  # not in the dataset
    ]
    report = score_predictions([DOCUMENT, FLAT], predictions, n_resamples=0)
    out = report.to_dict()
    # 2 documents × 2 strategies; d2 has no zero_shot prediction → missing.
    assert out["n"] == 4
    # DOC: (0 + 1 + 0 + 0)/4; MK = MV = WV: (1 + 1 + 0 + 0)/4
    assert (out["DOC"], out["MK"], out["MV"], out["WV"]) == (0.25, 0.5, 0.5, 0.5)
    assert out["by_depth"] == {
        "1": {"DOC": 0.5, "MK": 0.5, "MV": 0.5, "WV": 0.5, "n": 2},
        "3": {"DOC": 0.0, "MK": 0.5, "MV": 0.5, "WV": 0.5, "n": 2},
    }
    one_shot = out["by_strategy"]["one_shot"]
    assert (one_shot["DOC"], one_shot["MV"], one_shot["n"]) == (0.5, 1.0, 2)
    counts = out["bad_output_counts"]
    assert (counts["surrounding_prose"], counts["truncated"], counts["missing"]) == (1, 1, 1)
    assert sum(counts.values()) == 3
    assert out["clean_outputs"] == 1
    assert out["unknown_ids"] == 1
    # Pooled counts: truth leaves 9 + 1 + 9 + 1 = 20; predicted 9 + 1 + 0 + 0 = 10;
    # matched keys = matched values = 10. F1 = 2·10/30 = 2/3 for both → paper F1 = 2/3.
    assert out["micro_f1"] == pytest.approx(2 / 3)
    assert set(out) >= {"DOC", "MK", "MV", "WV", "n", "by_depth", "intervals", "micro_f1"}


def test_intervals_bracket_the_mean() -> None:
    predictions = [Prediction("d1", TRUTH_TEXT), Prediction("d2", "oops")]
    out = score_predictions([DOCUMENT, FLAT], predictions, n_resamples=200).to_dict()
    interval = out["intervals"]["MV"]
    assert interval["low"] <= out["MV"] == 0.5 <= interval["high"]
    assert "by_strategy" not in out


def test_one_validator_per_distinct_schema() -> None:
    cache = ValidatorCache()
    twin = Document(id="d3", input="", schema=json.loads(json.dumps(SCHEMA)), ground_truth=TRUTH)
    for document in (DOCUMENT, twin, FLAT, DOCUMENT):
        score_document(document, TRUTH_TEXT, cache)
    assert cache.built == 2
