"""structbench parsing: MK/MV/WV are read from the first *complete* JSON object in the text
(DESIGN §8), found by scanning past object starts that do not decode — without ever salvaging
a piece of a broken answer.

One flat document throughout: schema {name: string, total: number}, both required, no extra
keys; ground truth {"name": "Bo", "total": 2}, so T = {name, total} (2 leaf paths). With P the
predicted paths, MK = 2·|T∩P| / (|T| + |P|) and MV = matched values / 2. An object found in
prose always has DOC 0 (only a single JSON value can pass DOC).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from chatledger.structbench import Document, ValidatorCache, parse_output, score_document

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "total": {"type": "number"}},
    "required": ["name", "total"],
    "additionalProperties": False,
}
DOCUMENT = Document(id="d", input="(email)", schema=SCHEMA, ground_truth={"name": "Bo", "total": 2})
GOOD = '{"name": "Bo", "total": 2}'


def scores(output: str) -> tuple[float, float, float, tuple[str, ...]]:
    s = score_document(DOCUMENT, output, ValidatorCache())
    return s.doc, s.mk, s.mv, s.kinds


# (output, DOC, MK, MV, kinds), each worked out by hand.
CASES = [
    # A truncated array holds the rest of the text: nothing after it is an answer, and the
    # complete object inside it is a piece of a broken answer — unparseable, 0 on all four.
    (f'[{GOOD}, {{"name": "Al"', 0.0, 0.0, 0.0, ("truncated",)),
    # A malformed array is skipped as far as the decoder read (to `oops`); the object after it
    # is scored: T = P, MK = MV = 1.
    (f"[{GOOD}, oops] then {GOOD}", 0.0, 1.0, 1.0, ("surrounding_prose",)),
    # The only object start is `{"name"…`: `{not json}` is not one (`{` + `n`). T = P: MK = MV = 1.
    (f"Note {{not json}} then {GOOD}", 0.0, 1.0, 1.0, ("surrounding_prose",)),
    # First start `{"a": "x" then…` fails at `then` (a ',' was expected); the search resumes
    # there and finds the real one.
    (f'Use {{"a": "x" then the real one {GOOD}', 0.0, 1.0, 1.0, ("surrounding_prose",)),
    # A broken first answer, then a correction that is itself only half right: the correction
    # is scored. P = {name, total} = T: MK = 1; "bo" = "Bo" (case-folded), 3 ≠ 2: MV = 1/2.
    (
        '{"name": "Bo" "total": 2} sorry, corrected: {"name": "bo", "total": 3}',
        0.0,
        1.0,
        0.5,
        ("surrounding_prose",),
    ),
    # The first value holds NaN (not JSON, refused); it ends at its `}`, the next one is scored.
    (f'{{"name": "Bo", "total": NaN}} I mean {GOOD}', 0.0, 1.0, 1.0, ("surrounding_prose",)),
    # A broken fenced answer and a good one in the prose after it: the fence lines are removed,
    # `{"name": "Bo",, …` fails at the second comma, the second object is scored.
    (
        f'```json\n{{"name": "Bo",, "total": 2}}\n```\nSorry, here it is: {GOOD}',
        0.0,
        1.0,
        1.0,
        ("fenced", "surrounding_prose"),
    ),
    # An extra key in the found object: P = {name, total, note}: MK = 2·2/(2+3) = 0.8, MV = 1.
    (
        '{"name" "Bo"} → {"name": "Bo", "total": 2, "note": "rush"}',
        0.0,
        0.8,
        1.0,
        ("surrounding_prose",),
    ),
    # --- nothing is repaired: no object start inside a broken value is tried ---------------
    # `{"wrapper": {…GOOD…} oops` fails at `oops`; GOOD lies inside what the decoder read, so it
    # is part of the broken answer, not a separate object: unparseable, 0 on all four.
    (f'{{"wrapper": {GOOD} oops', 0.0, 0.0, 0.0, ("malformed",)),
    # Truncated after a complete inner object: all the rest of the text is inside the broken
    # value, so the search ends there, whatever follows.
    (f'Here: {{"wrapper": {GOOD}, "x": [1, 2', 0.0, 0.0, 0.0, ("truncated",)),
    # `{}` inside a string of a broken value is not an object start of its own.
    ('{"note": "fill in {}" "name": "Bo"}', 0.0, 0.0, 0.0, ("malformed",)),
    # The inner GOOD of a value holding Infinity is inside that value.
    (f'{{"total": Infinity, "x": {GOOD}}} done', 0.0, 0.0, 0.0, ("malformed",)),
    # No start decodes: the kind is the first failure's (malformed), not the last (truncated).
    ('{"name" "Bo"} and {"name": "Bo", "total": ', 0.0, 0.0, 0.0, ("malformed",)),
    ('{"name": "Bo", "total": ', 0.0, 0.0, 0.0, ("truncated",)),
    # A think block is removed before the search: its complete object is never found.
    (
        f'<think>maybe {GOOD}</think>{{"name": "Al" oops',
        0.0,
        0.0,
        0.0,
        ("think_block", "malformed"),
    ),
    # --- unchanged: a single value still decides DOC by the schema ---------------------------
    (GOOD, 1.0, 1.0, 1.0, ("clean",)),
    (f"```json\n{GOOD}\n```", 1.0, 1.0, 1.0, ("fenced",)),
    (f'{GOOD}\n{{"name": "Al"}}', 0.0, 1.0, 1.0, ("surrounding_prose",)),
]


@pytest.mark.parametrize(("output", "doc", "mk", "mv", "kinds"), CASES)
def test_first_complete_object_is_scored(
    output: str, doc: float, mk: float, mv: float, kinds: tuple[str, ...]
) -> None:
    got_doc, got_mk, got_mv, got_kinds = scores(output)
    assert (got_doc, got_mk, got_mv) == (doc, pytest.approx(mk), pytest.approx(mv))
    assert got_kinds == kinds


def test_the_found_object_is_the_value_and_never_a_single_value() -> None:
    parsed = parse_output('Use {"a": "x" then the real one {"a": 1}')
    assert (parsed.value, parsed.parsed, parsed.single_value) == ({"a": 1}, True, False)
    assert parse_output('Note {not json} then {"a": 1}').value == {"a": 1}
    broken = parse_output('{"a": {"b": 1} oops')
    assert (broken.value, broken.parsed) == (None, False)


def test_many_broken_starts_are_scanned_in_linear_time() -> None:
    # 60,000 starts that fail after a few characters each, then the answer (300 kB). Each start
    # is decoded in place and skipped with what the decoder read: one pass over the text, about
    # 0.5 s (≈ 7 µs for each failed decode's exception). The bound catches work per start that
    # grows with the text: the decoder's error counts the newlines before its position from the
    # start of the string it was given, so decoding every start within the whole text costs
    # 60,000 × 150 kB on average (≈ 7 s here).
    output = '{"k" ' * 60_000 + GOOD
    started = time.perf_counter()
    assert scores(output) == (0.0, 1.0, 1.0, ("surrounding_prose",))
    assert time.perf_counter() - started < 3.0
