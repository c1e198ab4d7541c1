"""Bounded fuzzing of the loaders (issue 11): valid lines and configs, mutated the ways real files
go wrong — random bytes, truncation, byte-order marks, deep nesting, 5,000-digit numbers, bad
escapes, lone surrogates, NaN, wrong types, unknown keys, YAML anchors — written to a file and
read back.

- ``read_chunks`` and ``load_run_config`` (user input) either succeed or raise the project's
  :class:`InputError`; nothing else escapes.
- ``read_extractions`` and ``read_predictions`` (model output) never raise, and every non-blank
  line is accounted for: a kept record, or a problem naming that line.

``CHATLEDGER_FUZZ_EXAMPLES`` sets the examples per loader (200 by default, for ``make test``);
e.g. ``CHATLEDGER_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz_loaders.py`` for a longer run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatledger.core import InputError
from chatledger.corpus import read_chunks, read_extractions
from chatledger.runs import load_run_config
from chatledger.structbench import read_predictions

FUZZ = settings(
    max_examples=int(os.environ.get("CHATLEDGER_FUZZ_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
BOM = b"\xef\xbb\xbf"

# Stand-ins put into a value, then swapped for text no json.dumps / yaml.safe_dump would write.
JSON_SPECIALS = {
    "__NAN__": b"NaN",
    "__INF__": b"-Infinity",
    "__BIG_FLOAT__": b"1e999",
    "__HUGE__": b"9" * 5000,
    "__DEEP__": b"[" * 5000 + b"]" * 5000,
    "__NESTED__": b"[" * 400 + b"]" * 400,  # deep but parseable
    "__ESCAPE__": b'"c\\q"',
    "__SURROGATE__": b'"\\ud800"',
    "__CONTROL__": b'"a\x01b"',  # a raw control character inside a string
}
YAML_SPECIALS = {
    "__NAN__": ".nan",
    "__INF__": "-.inf",
    "__HUGE__": "9" * 5000,
    "__DEEP__": "[" * 3000 + "]" * 3000,
    "__ANCHOR__": "&a 0.2",
    "__ALIAS__": "*a",
    "__NUL__": '"a\\0b.jsonl"',
    "__SURROGATE__": '"\\ud800.jsonl"',
    "__TILDE__": "~nosuchuser-chatledger/c.jsonl",
    "__LONG__": "a" * 5000 + ".jsonl",
    "__DATE__": "2026-02-30",
    "__TAG__": "!!python/object:os.system {}",
    "__TAB__": "\t1",
}

MESSAGES = [
    {"id": "m-1", "speaker": "Ness", "timestamp": "2026-02-03T18:04:00Z", "text": "hi"},
    {"id": "m-2", "speaker": "Sam", "text": "the venue is booked"},
]
CHUNK = {
    "chunk_id": "c-1",
    "conversation_id": "trip",
    "title": "t",
    "participants": ["Ness", "Sam"],
    "messages": MESSAGES,
}
EXTRACTION = {
    "chunk_id": "c-1",
    "model": "m",
    "extraction": {
        "topics": ["venue"],
        "claims": [
            {
                "text": "the venue is booked",
                "subject": "venue",
                "polarity": "pro",
                "speaker": "Sam",
                "evidence": ["m-2"],
                "confidence": 0.9,
            }
        ],
        "evidence_message_ids": ["m-2"],
        "emotional_arc": {
            "opening_mood": "joy",
            "closing_mood": "trust",
            "trajectory": "stable",
            "turning_points": [{"message_id": "m-2", "description": "booked"}],
        },
        "conversation_phases": [
            {"phase": "opening", "start_message_id": "m-1", "end_message_id": "m-2"}
        ],
    },
    "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.001, "latency_s": 0.5},
}
PREDICTION = {
    "id": "d-1",
    "output": '{"total": 12}',
    "strategy": "zero_shot",
    "model": "m",
    "usage": {"cost_usd": 0.0},
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
    st.sampled_from(["c-1", "m-1", "m-99", "pro", "v3", "", "sample", "extraction"]),
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside ``value`` (the root excluded) a mutation can replace."""
    found: list[tuple[Any, ...]] = []
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, child in items:
        found.append((*prefix, key))
        found.extend(_paths(child, (*prefix, key)))
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _delete(value: Any, path: tuple[Any, ...]) -> None:
    for key in path[:-1]:
        value = value[key]
    del value[path[-1]]


@st.composite
def mutated_value(draw: st.DrawFn, seed: dict[str, Any], specials: list[str]) -> Any:
    """``seed`` with zero to three structural mutations: a value replaced (by any JSON, or a
    stand-in for an unwritable one), a key deleted, an unknown key added."""
    value = json.loads(json.dumps(seed))
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(value)
        action = draw(st.sampled_from(["replace", "special", "delete", "unknown"]))
        if action == "unknown" or not paths:
            target = value
            if paths:
                place = draw(st.sampled_from(paths))
                for key in place:
                    if isinstance(target, dict | list):
                        target = target[key]
            if isinstance(target, dict):
                target[draw(st.text(min_size=1, max_size=6))] = draw(json_values)
            continue
        path = draw(st.sampled_from(paths))
        if action == "delete":
            _delete(value, path)
        elif action == "special":
            _set(value, path, draw(st.sampled_from(specials)))
        else:
            _set(value, path, draw(json_values))
    return value


@st.composite
def byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """Nothing, or a truncation, random bytes inserted or overwritten, a BOM in front."""
    action = draw(st.sampled_from(["none", "none", "truncate", "insert", "overwrite", "bom"]))
    if action == "none" or not data:
        return data
    at = draw(st.integers(0, len(data)))
    if action == "truncate":
        return data[:at]
    if action == "bom":
        return BOM + data
    noise = draw(st.binary(min_size=1, max_size=4))
    if action == "insert":
        return data[:at] + noise + data[at:]
    return data[:at] + noise + data[at + len(noise) :]


def _json_line(value: Any) -> bytes:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    for token, raw in JSON_SPECIALS.items():
        data = data.replace(f'"{token}"'.encode(), raw)
    return data


@st.composite
def jsonl_file(draw: st.DrawFn, seed: dict[str, Any]) -> bytes:
    """One to six lines (some blank), each the seed, mutated or not."""
    lines: list[bytes] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([b"", b"  ", b"\t\r"])))
            continue
        value = draw(mutated_value(seed, list(JSON_SPECIALS)))
        line = draw(byte_mutation(_json_line(value)))
        lines.append(line.replace(b"\n", b" "))  # one line stays one line
    newline = draw(st.sampled_from([b"\n", b"\r\n"]))
    data = newline.join(lines) + draw(st.sampled_from([b"", newline]))
    return BOM + data if draw(st.booleans()) else data


def non_blank_lines(data: bytes) -> set[int]:
    """The line numbers a JSON Lines reader must account for (a BOM dropped on line 1 only; a
    blank line holds nothing but JSON whitespace)."""
    numbers = set()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if number == 1:
            raw = raw.removeprefix(BOM)
        if raw.decode("utf-8", "replace").strip(" \t\r\n"):
            numbers.add(number)
    return numbers


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz")
    (path / "chunks.jsonl").write_text(json.dumps(CHUNK) + "\n", encoding="utf-8")
    for name in ("gold.jsonl", "cheap.jsonl"):
        (path / name).write_text(json.dumps(EXTRACTION) + "\n", encoding="utf-8")
    return path


def _only_input_errors(read: Callable[[], Any]) -> None:
    try:
        read()
    except InputError as exc:
        assert str(exc)  # renders
        assert "\n" not in exc.detail


# --------------------------------------------------------------------------------------------


@FUZZ
@given(data=jsonl_file(CHUNK))
def test_read_chunks_raises_only_input_errors(folder: Path, data: bytes) -> None:
    path = folder / "fuzz-chunks.jsonl"
    path.write_bytes(data)
    _only_input_errors(lambda: read_chunks(path))


@FUZZ
@given(data=jsonl_file(EXTRACTION))
def test_read_extractions_never_raises_and_counts_every_line(folder: Path, data: bytes) -> None:
    path = folder / "fuzz-extractions.jsonl"
    path.write_bytes(data)
    result = read_extractions(path)
    expected = non_blank_lines(data)
    assert result.lines_read == len(expected)
    kept = [*result.records.values()]
    kept += [r for sample in result.samples.values() for r in sample.values()]
    problem_lines = {p.line for p in result.problems}
    # Every line is a kept record or has a problem; each kept record sits on its own line.
    assert {r.line for r in kept} | problem_lines == expected
    assert len({r.line for r in kept}) == len(kept)
    # An invalid record carries its problem; a line without one became a record.
    for record in kept:
        assert (record.status.value == "invalid") == bool(record.problems)
    json.dumps([str(p) for p in result.problems])  # problems print


@FUZZ
@given(data=jsonl_file(PREDICTION))
def test_read_predictions_never_raises_and_counts_every_line(folder: Path, data: bytes) -> None:
    path = folder / "fuzz-predictions.jsonl"
    path.write_bytes(data)
    predictions = read_predictions(path)
    expected = non_blank_lines(data)
    assert predictions.lines_read == len(expected)
    # Each non-blank line is exactly one prediction or one problem.
    read = [p.line for p in predictions if p.line is not None]
    assert len(read) == len(predictions)
    assert sorted(read + [p.line for p in predictions.problems]) == sorted(expected)
    assert all(isinstance(p.output, str) and isinstance(p.id, str) for p in predictions)


RUN_CONFIG: dict[str, Any] = {
    "name": "fuzz",
    "chunks": "chunks.jsonl",
    "reference": {"file": "gold.jsonl", "name": "gold"},
    "challengers": [{"file": "cheap.jsonl"}, {"model": "offline:rules", "samples": 1}],
    "layers": ["extraction", "judge", "downstream"],
    "judges": [{"name": "grounding", "options": {"threshold": 0.5}}],
    "weights": {
        "layers": {"extraction": 0.6, "judge": 0.25, "downstream": 0.15},
        "fields": {"claims": 0.15},
        "consumers": {"drift": 0.2},
    },
    "thresholds": {"text": 0.6},
    "stats": {"bootstrap_resamples": 100},
    "seed": 0,
}


@st.composite
def run_config_text(draw: st.DrawFn) -> bytes:
    value = draw(mutated_value(RUN_CONFIG, list(YAML_SPECIALS)))
    text = yaml.safe_dump(value, sort_keys=False, allow_unicode=True)
    for token, raw in YAML_SPECIALS.items():
        text = text.replace(token, raw)
    return draw(byte_mutation(text.encode("utf-8", "surrogatepass")))


@FUZZ
@given(data=run_config_text())
def test_load_run_config_raises_only_input_errors(folder: Path, data: bytes) -> None:
    path = folder / "fuzz-run.yaml"
    path.write_bytes(data)
    _only_input_errors(lambda: load_run_config(path))


def test_the_seeds_themselves_are_valid(folder: Path) -> None:
    """The fuzzing starts from valid input (else it would only test the first error)."""
    for name, seed in (("c.jsonl", CHUNK), ("x.jsonl", EXTRACTION), ("p.jsonl", PREDICTION)):
        (folder / name).write_bytes(_json_line(seed) + b"\n")
    assert [c.chunk_id for c in read_chunks(folder / "c.jsonl")] == ["c-1"]
    extractions = read_extractions(folder / "x.jsonl")
    assert extractions.problems == [] and extractions.records["c-1"].status.value == "ok"
    predictions = read_predictions(folder / "p.jsonl")
    assert [p.id for p in predictions] == ["d-1"] and predictions.problems == []
    config = folder / "seed-run.yaml"
    config.write_text(yaml.safe_dump(RUN_CONFIG, sort_keys=False), encoding="utf-8")
    assert load_run_config(config).config.weights.consumers == {
        "drift": 0.2,
        "loops": 0.2,
        "escalation": 0.2,
        "arcs": 0.2,
        "daily_report": 0.2,
    }
