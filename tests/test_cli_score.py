"""Layer 1 over a run (score_records, DESIGN.md §3 run rules) and the ``chatledger score`` /
``chatledger schema`` commands (DESIGN.md §6 JSON contract)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from chatledger.cli._app import main
from chatledger.core import (
    FIELDS_V1,
    FIELDS_V3,
    WEIGHTS_V1,
    WEIGHTS_V3,
    ExtractionRecord,
    ExtractionV3,
    InputError,
    RecordStatus,
)
from chatledger.scoring import ScoreReport, ScoringConfig, load_scoring_config, score_records
from conftest import (
    EXAMPLES,
    claim,
    example_chunk,
    example_reference,
    ext,
    make_chunk,
    ok_record,
    records,
    with_certain_confidences,
    write_jsonl,
)

# --------------------------------------------------------------------------------------------
# Run-level rules


def _composite(report: ScoreReport) -> float:
    return sum(s.weight * s.score for s in report.fields.values())


def _flipped_claims() -> tuple[ExtractionV3, ExtractionV3]:
    """The example with certain confidences, and the same with every claim polarity flipped.

    Only ``claims`` differs: text F1 1, polarity 0, subject consistency 1 -> 0.60 + 0.15 = 0.75.
    Confidence: every item matched at 1.0 -> ECE 0 -> 1.0.
    """
    reference = with_certain_confidences(example_reference())
    flip = {"pro": "con", "con": "pro", "neutral": "neutral"}
    claims = [c.model_copy(update={"polarity": flip[c.polarity]}) for c in reference.claims]
    return reference, reference.model_copy(update={"claims": claims})


def test_macro_average_over_chunks() -> None:
    chunks = [make_chunk(chunk_id="c-1"), make_chunk(chunk_id="c-2")]
    ref = records(
        [
            ("c-1", ext(topics=["setlist"])),
            ("c-2", ext(topics=["budget", "venue booking", "catering menu", "parking"])),
        ]
    )
    chal = records([("c-1", ext(topics=["setlist"])), ("c-2", ext(topics=["budget"]))])
    report = score_records(ref, chal, chunks)
    # c-1: F1 1. c-2: P = 1/1, R = 1/4, F1 = 2·1·0.25/1.25 = 0.4. Macro mean = 0.7
    # (pooling the items instead would give 2·2/(2+5) = 0.571).
    assert [c.fields["topics"].score for c in report.chunks] == pytest.approx([1.0, 0.4])
    assert report.fields["topics"].score == pytest.approx(0.7)
    assert report.fields["topics"].components["recall"] == pytest.approx((1 + 0.25) / 2)


def test_invalid_and_missing_chunks_count_zero_on_every_field() -> None:
    extraction = ext(
        topics=["setlist"],
        summary="the band drops the ballad",
        claims=[claim("the ballad kills the energy", "ballad", "con", confidence=0.8)],
        decisions=[{"text": "drop the ballad on saturday", "confidence": 0.6}],
    )
    chunks = [make_chunk(chunk_id=c) for c in ("c-1", "c-2", "c-3")]
    ref = records((c.chunk_id, extraction) for c in chunks)
    chal = {
        "c-1": ok_record("c-1", extraction),
        "c-2": ExtractionRecord(chunk_id="c-2", model="m", status=RecordStatus.INVALID),
        # c-3 absent: missing
    }
    report = score_records(ref, chal, chunks)
    assert (report.invalid, report.missing) == (1, 1)
    assert report.validity_rate == pytest.approx(1 / 3)
    assert [c.status for c in report.chunks] == [
        RecordStatus.OK,
        RecordStatus.INVALID,
        RecordStatus.MISSING,
    ]
    for name in FIELDS_V3:
        assert report.chunks[1].fields[name].score == 0.0
        assert report.chunks[2].fields[name].score == 0.0
        if name != "confidence":
            # (1 + 0 + 0)/3
            assert report.fields[name].score == pytest.approx(1 / 3), name
    # Pooled confidence over the usable chunk: 0.8 and 0.6, both correct ->
    # ECE = (0.2 + 0.4)/2 = 0.3 -> 0.7, times the usable share 1/3 = 0.2333.
    confidence = report.fields["confidence"]
    assert confidence.components["ece"] == pytest.approx(0.3)
    assert confidence.components["usable_share"] == pytest.approx(1 / 3)
    assert confidence.score == pytest.approx(0.7 / 3)
    # composite = 0.958·(1/3) + 0.042·(0.7/3) = (0.958 + 0.0294)/3 = 0.329133
    assert report.extraction_composite == pytest.approx(0.9874 / 3)


def test_confidence_pools_items_across_chunks() -> None:
    chunks = [make_chunk(chunk_id="c-1"), make_chunk(chunk_id="c-2")]
    ref = records(
        [
            ("c-1", ext(claims=[claim("the ballad kills the energy")])),
            ("c-2", ext(claims=[claim("the studio on fifth is cheap")])),
        ]
    )
    chal = records(
        [
            ("c-1", ext(claims=[claim("the ballad kills the energy", confidence=0.25)])),  # ✓
            ("c-2", ext(claims=[claim("weather forecast", confidence=0.25)])),  # ✗
        ]
    )
    report = score_records(ref, chal, chunks)
    # Per chunk: 1 − 0.75 = 0.25 and 1 − 0.25 = 0.75 (their mean would be 0.5).
    assert [c.fields["confidence"].score for c in report.chunks] == pytest.approx([0.25, 0.75])
    # Pooled: both in (0.2, 0.3], accuracy 1/2, mean conf 0.25 -> ECE 0.25 -> 0.75.
    confidence = report.fields["confidence"]
    assert confidence.score == pytest.approx(0.75)
    assert confidence.components["n_items"] == 2
    assert confidence.components["accuracy"] == 0.5


def test_composite_is_weighted_sum_v3() -> None:
    reference, challenger = _flipped_claims()
    report = score_records(
        {"ex-1": ok_record("ex-1", reference)},
        {"ex-1": ok_record("ex-1", challenger)},
        [example_chunk()],
    )
    assert report.fields["claims"].score == pytest.approx(0.75)
    assert all(s.score == 1.0 for n, s in report.fields.items() if n != "claims")
    assert {n: s.weight for n, s in report.fields.items()} == dict(WEIGHTS_V3)
    # 1 − 0.150·(1 − 0.75) = 0.9625
    assert report.extraction_composite == pytest.approx(0.9625)
    assert report.extraction_composite == pytest.approx(_composite(report))


def test_v1_fields_and_weights() -> None:
    reference, challenger = _flipped_claims()
    report = score_records(
        {"ex-1": ok_record("ex-1", reference)},
        {"ex-1": ok_record("ex-1", challenger)},
        [example_chunk()],
        ScoringConfig.default("v1"),
    )
    assert tuple(report.fields) == FIELDS_V1
    assert {n: s.weight for n, s in report.fields.items()} == dict(WEIGHTS_V1)
    # 1 − 0.25·(1 − 0.75) = 0.9375
    assert report.extraction_composite == pytest.approx(0.9375)
    assert report.to_dict()["schema"] == "v1"


def test_reference_gaps_are_excluded_and_extra_chunks_reported() -> None:
    chunks = [make_chunk(chunk_id="c-1"), make_chunk(chunk_id="c-2")]
    one = ext(topics=["setlist"])
    report = score_records(
        records([("c-1", one)]), records([("c-1", one), ("c-2", one), ("c-9", one)]), chunks
    )
    assert report.excluded_chunks == ["c-2"]
    assert [c.chunk_id for c in report.chunks] == ["c-1"]
    assert any("c-9" in str(p) for p in report.problems)
    with pytest.raises(InputError):
        score_records({}, records([("c-1", one)]), chunks)


# --------------------------------------------------------------------------------------------
# Weight overrides from a file


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "weights.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_weight_override_from_yaml(tmp_path: Path) -> None:
    # Move 0.05 from claims to summary: the total stays 1.
    path = _yaml(tmp_path, "weights:\n  claims: 0.10\n  summary: 0.13\nmatcher: guarded\n")
    config = load_scoring_config(path)
    assert config.weights["claims"] == 0.10
    assert config.weights["summary"] == 0.13
    assert config.weights["topics"] == WEIGHTS_V3["topics"]
    assert config.matcher == "guarded"
    reference, challenger = _flipped_claims()
    report = score_records(
        {"ex-1": ok_record("ex-1", reference)},
        {"ex-1": ok_record("ex-1", challenger)},
        [example_chunk()],
        load_scoring_config(path, matcher="token_set"),
    )
    # 1 − 0.10·0.25 = 0.975
    assert report.extraction_composite == pytest.approx(0.975)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "weights:\n  claims: 0.5\n",
            "field weights sum to 1.350 after merging with the defaults (topics 0.042, ",
        ),
        ("weights:\n  claims: -0.1\n", "weights.claims]: weight of 'claims' must be a finite"),
        ("weights:\n  claims: yes\n", "weight of 'claims' must be a number, got True"),
        ("weights:\n  colour: 0.0\n", "unknown field(s) for schema v3: colour"),
        ("wieghts:\n  claims: 0.15\n", "unknown key(s): wieghts"),
        ("weights: [1, 2]\n", "weights must be a mapping"),
        ("- just\n- a list\n", "expected a mapping"),
        ("weights: {claims: 0.15\n", "weights.yaml:2:1: expected ',' or '}', but got"),
        ("base: &b 0.1\nweights: {claims: *b}\n", "weights.yaml:1:7: YAML aliases"),
        ("weights:\n  claims: .nan\n", "weights.yaml [weights.claims]: not a finite number"),
        ("weights:\n  claims: -.inf\n", "weights.yaml [weights.claims]: not a finite number"),
    ],
)
def test_bad_weight_files_are_input_errors(tmp_path: Path, text: str, message: str) -> None:
    path = _yaml(tmp_path, text)
    with pytest.raises(InputError) as info:
        load_scoring_config(path)
    assert info.value.path == str(path)
    assert message in str(info.value)


def test_replace_weights_starts_from_zeros(tmp_path: Path) -> None:
    path = _yaml(tmp_path, "replace_weights: true\nweights: {claims: 0.5, summary: 0.5}\n")
    config = load_scoring_config(path)
    assert config.weights == {f: (0.5 if f in ("claims", "summary") else 0.0) for f in FIELDS_V3}
    reference, challenger = _flipped_claims()
    report = score_records(
        {"ex-1": ok_record("ex-1", reference)},
        {"ex-1": ok_record("ex-1", challenger)},
        [example_chunk()],
        config,
    )
    # claims 0.75 (polarities flipped), summary 1 → 0.5·0.75 + 0.5·1 = 0.875
    assert report.extraction_composite == pytest.approx(0.875)
    path = _yaml(tmp_path, "replace_weights: true\nweights: {claims: 0.5}\n")
    with pytest.raises(InputError, match=r"sum to 0\.500 after merging with zeros"):
        load_scoring_config(path)


def test_json_weights_file_is_strict_json(tmp_path: Path) -> None:
    path = tmp_path / "weights.json"
    path.write_text('{"weights": {"summary": 0.08, "claims": NaN}}', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_scoring_config(path)
    assert str(info.value) == (
        f"{path} [weights.claims]: not a finite number (NaN and infinity are not allowed)"
    )
    path.write_text('{"weights":\n  {"claims": 0.15,}}', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_scoring_config(path)
    assert str(info.value).startswith(f"{path}:2:19: not valid JSON (Expecting property name")


def test_v1_weights_file_rejects_v3_field(tmp_path: Path) -> None:
    path = _yaml(tmp_path, "weights:\n  summary: 0.0\n")
    with pytest.raises(InputError, match="unknown field"):
        load_scoring_config(path, schema_version="v1")


# --------------------------------------------------------------------------------------------
# CLI


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _score(
    capsys: pytest.CaptureFixture[str], reference: object, challenger: object, *extra: str
) -> tuple[int, str, str]:
    """``chatledger score --reference R --challenger C [extra…]``."""
    argv = ["score", "--reference", str(reference), "--challenger", str(challenger)]
    return _run(capsys, *argv, *extra)


def test_schema_v3_prints_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "schema", "v3")
    assert (code, err) == (0, "")
    schema = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # 16 properties: the 17th field, confidence, is read from the items.
    assert len(schema["properties"]) == 16
    assert set(schema["properties"]) == set(FIELDS_V3) - {"confidence"}
    defs = schema["$defs"]
    assert defs["Claim"]["properties"]["polarity"]["enum"] == ["pro", "con", "neutral"]
    assert defs["ActionItem"]["properties"]["status"]["enum"] == ["open", "done"]
    assert len(defs["NegotiationMove"]["properties"]["pattern"]["enum"]) == 14
    assert len(defs["Phase"]["properties"]["phase"]["enum"]) == 10
    # The bundled reference extraction is valid under it; a bad polarity is not.
    example = example_reference().model_dump(mode="json")
    jsonschema.validate(example, schema)
    example["claims"][0]["polarity"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(example, schema)


def test_schema_v1_has_nine_properties(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "schema", "v1")
    assert code == 0
    assert len(json.loads(out)["properties"]) == 9


def test_score_json_contract_on_bundled_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _score(
        capsys,
        str(EXAMPLES / "reference.jsonl"),
        str(EXAMPLES / "challenger.jsonl"),
        "--chunks",
        str(EXAMPLES / "chunks.jsonl"),
        "--format",
        "json",
    )
    assert (code, err) == (0, "")
    data = json.loads(out)  # stdout is nothing but JSON
    assert {"schema", "chunks", "invalid", "missing", "fields", "extraction_composite"} <= set(data)
    assert (data["schema"], data["chunks"], data["invalid"], data["missing"]) == ("v3", 1, 0, 0)
    assert list(data["fields"]) == list(FIELDS_V3)
    for name, field in data["fields"].items():
        assert {"score", "weight", "components"} <= set(field)
        assert field["weight"] == WEIGHTS_V3[name]
    scores = {name: field["score"] for name, field in data["fields"].items()}
    expected = {
        # Jordan (fuzzy 0.5) + Mei Chen (exact 1) + "Fifth Street studio" ~ "studio on Fifth"
        # (88.9, fuzzy 0.5) = 2 credits: P = 2/3, R = 2/5, F1 = (8/15)/(16/15) = 0.5
        "entities": 0.5,
        # owner "Mei" -> Mei Chen ≠ Jordan Pike: 0.70·1 + 0.30·0
        "action_items": 0.7,
        "open_questions": 0.0,  # the challenger missed the only one
        # one of two polarities wrong: 0.60 + 0.25·0.5 + 0.15 = 0.875
        "claims": 0.875,
        # conf 0.9, 0.85 in (0.8, 0.9]: 2/4·0.125; 0.8: 1/4·0.2; 0.6: 1/4·0.4 -> ECE 0.2125
        "confidence": 0.7875,
        "emotional_arc": 0.75,  # trajectory stable ≠ improving
        # negotiation ex1-m2..m4 vs ex1-m3..m4: IoU 2/3; mean IoU (1 + 2/3 + 1)/3 = 8/9
        # -> 0.5·1 + 0.5·8/9 = 17/18
        "conversation_phases": 17 / 18,
    }
    for name, value in expected.items():
        assert scores[name] == pytest.approx(value), name
    unchanged = set(FIELDS_V3) - set(expected) - {"summary"}
    assert all(scores[name] == 1.0 for name in unchanged)
    assert 0.0 < scores["summary"] < 1.0
    composite = sum(f["score"] * f["weight"] for f in data["fields"].values())
    assert data["extraction_composite"] == pytest.approx(composite)


def _run_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    chunks = write_jsonl(
        tmp_path / "chunks.jsonl",
        [make_chunk(chunk_id=c).model_dump(mode="json") for c in ("c-1", "c-2", "c-3")],
    )
    extraction: dict[str, Any] = {"topics": ["setlist"], "summary": "the ballad goes"}

    def line(cid: str) -> dict[str, Any]:
        return {"chunk_id": cid, "model": "ref", "extraction": extraction}

    reference = write_jsonl(tmp_path / "ref.jsonl", [line(c) for c in ("c-1", "c-2", "c-3")])
    challenger = write_jsonl(
        tmp_path / "chal.jsonl", [line("c-1"), '{"chunk_id": "c-2", "extraction": {']
    )
    return chunks, reference, challenger


def test_score_json_counts_invalid_and_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunks, reference, challenger = _run_files(tmp_path)
    code, out, err = _score(
        capsys, str(reference), str(challenger), "--chunks", str(chunks), "--format", "json"
    )
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert (data["chunks"], data["invalid"], data["missing"]) == (3, 1, 1)
    # c-1 identical, c-2 invalid, c-3 missing -> every field 1/3 (confidence: no items on
    # either side of c-1 -> 1, times the usable share 1/3).
    for name, field in data["fields"].items():
        assert field["score"] == pytest.approx(1 / 3), name
    assert data["extraction_composite"] == pytest.approx(1 / 3)


def test_score_v1_schema_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, reference, _ = _run_files(tmp_path)
    code, out, _ = _score(
        capsys, str(reference), str(reference), "--schema", "v1", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == "v1"
    assert list(data["fields"]) == list(FIELDS_V1)
    assert data["extraction_composite"] == pytest.approx(1.0)


def test_score_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _score(
        capsys, str(EXAMPLES / "reference.jsonl"), str(EXAMPLES / "challenger.jsonl")
    )
    assert code == 0
    assert "extraction composite" in out
    assert "claims" in out


def test_missing_file_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / ("long-directory-name-" * 4) / "nope.jsonl"
    code, out, err = _score(
        capsys, str(missing), str(EXAMPLES / "challenger.jsonl"), "--format", "json"
    )
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1  # one line, not wrapped
    assert str(missing) in err
    assert "file not found" in err
    assert "Traceback" not in err


def test_bad_weights_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    weights = _yaml(tmp_path, "weights:\n  claims: 0.5\n")
    code, out, err = _score(
        capsys,
        str(EXAMPLES / "reference.jsonl"),
        str(EXAMPLES / "challenger.jsonl"),
        "--weights",
        str(weights),
    )
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert str(weights) in err
    assert "sum to" in err


def test_bad_chunk_line_error_keeps_field_in_brackets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chunk = make_chunk().model_dump(mode="json")
    del chunk["messages"][0]["speaker"]
    chunks = write_jsonl(tmp_path / "chunks.jsonl", [chunk])
    code, _, err = _score(
        capsys,
        str(EXAMPLES / "reference.jsonl"),
        str(EXAMPLES / "challenger.jsonl"),
        "--chunks",
        str(chunks),
    )
    assert code == 2
    assert f"{chunks}:1 [messages.0.speaker]" in err
