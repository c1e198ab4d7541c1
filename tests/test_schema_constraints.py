"""The schema constraints a local model's grammar gets: lists bounded by the bundled gold, texts
bounded, message ids restricted to the chunk's own (issue 29).

The bounds are read off the bundled gold's item counts per chunk. Worked out from the 36 gold
lines (numpy's linear percentile): ``entities`` has counts whose 99th percentile is 14.3 (max
15) → 15; ``decisions`` 3.65 → 4; ``open_questions`` 2.0 → 2, lifted to the floor of 3; ``links``
2 → 3; ``negotiation_patterns`` 8.3 → 9. Texts: the 99th percentile of item texts is 90
characters → 1.5 × 90 = 135 → 150 (rounded up to 50).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from chatledger.core import ExtractionV3
from chatledger.corpus import read_chunks
from chatledger.demo import write_bundled_corpus
from chatledger.extraction import (
    SchemaConstraints,
    extraction_output_schema,
    get_prompt_style,
    gold_list_bounds,
    list_bounds_from,
    schema_constraints_for,
)
from chatledger.extraction._constraints import MIN_ITEMS


def test_gold_bounds_are_the_99th_percentile_with_a_floor() -> None:
    bounds = gold_list_bounds()
    assert bounds.fields["entities"] == 15
    assert bounds.fields["decisions"] == 4
    assert bounds.fields["open_questions"] == MIN_ITEMS == 3
    assert bounds.fields["links"] == 3
    assert bounds.fields["negotiation_patterns"] == 9
    assert bounds.fields["claims"] == 8
    assert bounds.text_chars == 150
    assert "36 chunks" in bounds.source


def test_bounds_from_hand_made_extractions() -> None:
    # Counts of topics 0, 1, 10: the 99th percentile (linear) is 1 + 0.98·9 = 9.82 → 10.
    rows = [
        ExtractionV3(topics=[]),
        ExtractionV3(topics=["a"]),
        ExtractionV3(topics=[f"t{i}" for i in range(10)]),
    ]
    bounds = list_bounds_from(rows, source="test")
    assert bounds.fields["topics"] == 10
    assert bounds.fields["claims"] == MIN_ITEMS  # none anywhere: the floor
    # One summary of 0 characters: the floor of one step (50).
    assert bounds.summary_chars == 50


def _walk(node: object, found: list[dict[str, object]]) -> None:
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            _walk(value, found)
    elif isinstance(node, list):
        for value in node:
            _walk(value, found)


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_bundled_corpus(tmp_path_factory.mktemp("bundled"))


def test_every_list_and_free_string_of_the_asked_schema_is_bounded(
    bundled: tuple[Path, Path],
) -> None:
    chunk = read_chunks(bundled[0])[0]
    style = get_prompt_style("example", constraints=schema_constraints_for("local:x"))
    schema = style.output_schema(chunk).schema_
    nodes: list[dict[str, object]] = []
    _walk(schema, nodes)
    arrays = [n for n in nodes if n.get("type") == "array"]
    assert len(arrays) == 14 + 9 + 1 + 1  # top-level lists, evidence lists, made_by, turns
    assert all("maxItems" in n for n in arrays)
    free = [n for n in nodes if n.get("type") in ("string", ["string", "null"]) and "enum" not in n]
    assert free and all("maxLength" in n for n in free)
    ids = [m.id for m in chunk.messages]
    enums = [n["enum"] for n in nodes if n.get("type") == "string" and "enum" in n]
    assert enums.count(ids) == 13  # 9 evidence lists, evidence ids, a turn, phase start/end
    assert "x-message-id" not in json.dumps(schema)  # annotations are not sent


def test_the_gold_mostly_fits_its_own_bounds_and_ids(bundled: tuple[Path, Path]) -> None:
    """The bounds are the gold's 99th percentile: most gold lines fit the constrained schema,
    and every gold message id is one of its chunk's (the restriction takes nothing real)."""
    chunks = {c.chunk_id: c for c in read_chunks(bundled[0])}
    constraints = schema_constraints_for("local:x")
    fits = 0
    lines = bundled[1].read_text(encoding="utf-8").splitlines()
    for line in lines:
        row = json.loads(line)
        chunk = chunks[row["chunk_id"]]
        schema = extraction_output_schema(constraints=constraints, chunk=chunk).schema_
        document = ExtractionV3.model_validate(row["extraction"]).model_dump(mode="json")
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(document))
        assert not [e for e in errors if e.validator == "enum" and "evidence" in e.json_path]
        fits += not errors
    assert len(lines) == 36
    assert fits >= 30


def test_no_messages_no_restriction() -> None:
    from chatledger.extraction._constraints import restrict_message_ids

    schema = {"type": "string", "x-message-id": True}
    assert restrict_message_ids(schema, []) == schema
    assert restrict_message_ids(schema, ["a"])["enum"] == ["a"]


def test_defaults_for_local_and_hosted_models() -> None:
    local = schema_constraints_for("local:qwen2.5-coder-1.5b")
    assert local.strict and local.chunk_ids and local.list_bounds == gold_list_bounds()
    hosted = schema_constraints_for("openai:gpt-5.2")
    assert hosted == SchemaConstraints()
    assert hosted.fingerprint() is None  # old lines keep their fingerprint
    off = schema_constraints_for("local:x", bounded=False, chunk_ids=False)
    assert off == SchemaConstraints(strict=True)
    recorded = local.fingerprint()
    assert recorded is not None and recorded["evidence_ids"] == "chunk"


def test_the_docs_table_of_bounds_is_the_code_s() -> None:
    from generated_docs import check_block

    bounds = gold_list_bounds()
    rows = ["| list | maxItems |", "|---|---|"]
    rows += [f"| `{name}` | {limit} |" for name, limit in bounds.fields.items()]
    rows += [
        f"| evidence and `made_by` (per item) | {bounds.evidence} |",
        f"| `emotional_arc.turning_points` | {bounds.turning_points} |",
        "",
        f"Free strings: `maxLength` {bounds.text_chars}; the summary: {bounds.summary_chars}. "
        f"Source: {bounds.source}.",
    ]
    check_block("docs/local-models.md", "list-bounds", "\n".join(rows))


def test_a_style_builds_the_same_schema_per_chunk_as_from_scratch(
    bundled: tuple[Path, Path],
) -> None:
    """The style checks its shaped schema once and only puts each chunk's ids in: the result is
    the schema built (and checked) from scratch for that chunk."""
    constraints = schema_constraints_for("local:x")
    style = get_prompt_style("plain", constraints=constraints)
    for chunk in read_chunks(bundled[0])[:4]:
        fresh = extraction_output_schema(constraints=constraints, chunk=chunk)
        assert style.output_schema(chunk) == fresh
