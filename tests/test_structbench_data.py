"""structbench data: the seeded email generator, the shipped set, and both dataset loaders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatledger.core import InputError
from chatledger.structbench import (
    DEFAULT_SEED,
    EMAIL_KINDS,
    Document,
    ValidatorCache,
    baseline_predictions,
    flatten,
    generate_document,
    generate_documents,
    read_dataset,
    read_original,
    read_predictions,
    schema_depth,
    score_predictions,
    shipped_dataset_path,
    value_in_text,
    values_missing_from_text,
    write_dataset,
)

SAMPLE = generate_documents(56, seed=7)  # two documents of every (kind, depth) cell


def test_generation_is_deterministic_and_depends_on_the_seed() -> None:
    again = generate_documents(56, seed=7)
    assert [d.to_dict() for d in again] == [d.to_dict() for d in SAMPLE]
    other = generate_documents(56, seed=8)
    assert [d.input for d in other] != [d.input for d in SAMPLE]
    # Document i does not depend on how many are generated.
    assert generate_document(30, seed=7).to_dict() == SAMPLE[30].to_dict()


def test_seven_kinds_each_at_depths_one_to_four() -> None:
    assert len(EMAIL_KINDS.names()) >= 6
    cells = {(d.id.rsplit("-", 2)[0], d.depth) for d in SAMPLE}
    assert cells == {(kind, depth) for kind in EMAIL_KINDS.names() for depth in (1, 2, 3, 4)}
    for d in SAMPLE:
        assert d.id.rsplit("-", 2)[1] == f"d{d.depth}"
        assert schema_depth(d.schema) == d.depth


def test_every_ground_truth_value_appears_in_the_email() -> None:
    for d in SAMPLE:
        assert values_missing_from_text(d.ground_truth, d.input) == [], d.id
        assert d.example is not None
        assert values_missing_from_text(d.example.output, d.example.input) == [], d.id


def test_the_surface_check_is_not_vacuous() -> None:
    text = "Order PO-12345 placed on March 4, 2026 for $1,234.50; three chairs; at 2:30 pm."
    assert value_in_text("PO-12345", text)
    assert value_in_text("2026-03-04", text)
    assert value_in_text(1234.5, text)
    assert value_in_text(3, text)
    assert value_in_text("14:30", text)
    assert not value_in_text("2026-04-03", text)
    assert not value_in_text(1234.0, text)
    assert not value_in_text("PO-99999", text)
    assert values_missing_from_text({"a": "PO-12345", "b": {"c": "nope"}}, text) == ["b.c"]


def test_emails_vary() -> None:
    inputs = [d.input for d in SAMPLE]
    assert len(set(inputs)) == len(inputs)
    orders = [d for d in SAMPLE if d.id.startswith("order-")]
    openings = {d.input.splitlines()[0] for d in orders}
    assert len(openings) >= 3


def test_shipped_set_is_the_documented_generation() -> None:
    path = shipped_dataset_path()
    assert path.stat().st_size < 3_000_000
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1000
    # Spot-check lines against `chatledger structbench generate --n 1000` (default seed).
    for index in (0, 1, 27, 500, 999):
        assert json.loads(lines[index]) == generate_document(index, DEFAULT_SEED).to_dict()
    readme = (path.parent / "README.md").read_text(encoding="utf-8")
    assert f"--seed {DEFAULT_SEED}" in readme


def test_baseline_is_a_real_but_imperfect_row() -> None:
    report = score_predictions(SAMPLE, baseline_predictions(SAMPLE), n_resamples=0).to_dict()
    for metric in ("DOC", "MK", "MV", "WV"):
        assert 0.3 < report[metric] < 1.0, metric
    assert report["by_depth"]["1"]["MV"] > report["by_depth"]["4"]["MV"]


# --- our dataset format ------------------------------------------------------------------------


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def good_line(**changes: Any) -> dict[str, Any]:
    return {**SAMPLE[0].to_dict(), **changes}


def test_dataset_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    write_dataset(SAMPLE[:5], path)
    assert [d.to_dict() for d in read_dataset(path)] == [d.to_dict() for d in SAMPLE[:5]]


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ({"id": "x", "input": "", "schema": {"type": "object"}}, ":2 [ground_truth]"),
        (good_line(id=""), ":2 [id]"),
        (good_line(input=5), ":2 [input]"),
        (good_line(schema={"type": "thing"}), ":2 [schema]"),
        (
            good_line(ground_truth={**SAMPLE[0].ground_truth, "total": "12"}),
            ":2 [ground_truth.total]",
        ),
        (good_line(weights={"total": -1}), ":2 [weights.total]"),
        (good_line(example={"input": "x"}), ":2 [example]"),
        (good_line(example={"input": "x", "output": {}}), ":2 [example.output]"),
        (good_line(weight={"total": 1}), ":2 [weight]"),
        (good_line(), ":2 [id]"),  # duplicate of line 1
    ],
)
def test_dataset_errors_name_file_line_and_field(tmp_path: Path, line: Any, where: str) -> None:
    path = write_lines(tmp_path / "bad.jsonl", [good_line(), line])
    with pytest.raises(InputError) as caught:
        read_dataset(path)
    assert f"bad.jsonl{where}" in str(caught.value)


def test_a_broken_json_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good_line()) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl:2: not valid JSON"):
        read_dataset(path)


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ({"id": "a", "output": None}, ":2 [output]"),
        ({"output": "{}"}, ":2 [id]"),
        ({"id": "a", "output": "{}", "usage": 3}, ":2 [usage]"),
        ({"id": "a", "output": "{}"}, ":2 [id]"),  # same id, same (absent) strategy as line 1
    ],
)
def test_prediction_errors_name_file_line_and_field(tmp_path: Path, line: Any, where: str) -> None:
    # Predictions are model output: a bad line is a problem of the file, never an exception.
    path = write_lines(tmp_path / "p.jsonl", [{"id": "a", "output": "{}"}, line])
    predictions = read_predictions(path)
    assert [(p.id, p.line) for p in predictions] == [("a", 1)]
    assert predictions.lines_read == 2
    assert len(predictions.problems) == 1
    assert str(predictions.problems[0]).startswith(f"{path}{where}: ")


def test_one_id_may_appear_once_per_strategy(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            {"id": "a", "output": "{}", "strategy": "s1"},
            {"id": "a", "output": "{}", "strategy": "s2"},
        ],
    )
    assert [p.strategy for p in read_predictions(path)] == ["s1", "s2"]


# --- the original LLMStructBench layout --------------------------------------------------------


def original_record(**changes: Any) -> dict[str, Any]:
    doc = SAMPLE[0]
    assert doc.example is not None
    record = {
        "message": doc.input,
        "json_schema": json.dumps(doc.schema),  # a JSON string, as some dumps store it
        "expected_output": doc.ground_truth,
        "example_message": doc.example.input,
        "example_json": json.dumps(doc.example.output),
    }
    return {**record, **changes}


def test_original_layout_maps_onto_documents(tmp_path: Path) -> None:
    path = tmp_path / "orig.json"
    path.write_text(json.dumps([original_record(), original_record(id="b")]), encoding="utf-8")
    documents = read_original(path)
    assert [d.id for d in documents] == ["orig-1", "b"]
    first: Document = documents[0]
    assert first.ground_truth == SAMPLE[0].ground_truth
    assert first.schema == SAMPLE[0].schema
    assert first.example == SAMPLE[0].example
    assert list(flatten(first.ground_truth)) == list(SAMPLE[0].truth_leaves)


def test_original_layout_errors_use_the_original_key(tmp_path: Path) -> None:
    bad = original_record(expected_output={**SAMPLE[0].ground_truth, "total": "12"})
    path = write_lines(tmp_path / "orig.jsonl", [original_record(), bad])
    with pytest.raises(InputError) as caught:
        read_original(path)
    assert "orig.jsonl:2 [expected_output.total]" in str(caught.value)
    path = write_lines(tmp_path / "orig2.jsonl", [{"message": "hi", "json_schema": {}}])
    with pytest.raises(InputError, match=r"orig2\.jsonl:1 \[ground_truth\]: missing"):
        read_original(path)


def test_loading_builds_one_validator_per_schema(tmp_path: Path) -> None:
    cache = ValidatorCache()
    from chatledger.structbench import document_from_dict

    for d in SAMPLE:
        document_from_dict(d.to_dict(), validators=cache)
    assert cache.built == len({d.schema_key for d in SAMPLE}) == 28
