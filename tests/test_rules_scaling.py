"""offline:rules on long input: every step made linear gives exactly what the old step gave.

Each rewritten step is checked against the step it replaced (kept here as the reference): the
package's own VADER analyser, the fold-one-message-phases loop, the scan of later messages for
a "done" report, the trailing-"?" regular expression. Timing is not asserted here (see
benchmarks/bench_rules.py); the long cases below only show the rules' answers at lengths where
the old steps were quadratic.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaderSentiment.vaderSentiment import BOOSTER_DICT, NEGATE, SentimentIntensityAnalyzer

from chatledger.core import ActionItem, Chunk
from chatledger.corpus import read_chunks
from chatledger.extractors import RuleBasedExtractor, _affect, _commitments
from chatledger.extractors._sentiment import LinearVader
from chatledger.extractors._text import content_words, word_count
from chatledger.extractors._view import ChunkView, _ends_in_question_mark

ROOT = Path(__file__).resolve().parents[1] / "src" / "chatledger" / "data"
CHUNK_FILES = sorted(ROOT.glob("**/*chunks*.jsonl"))
PACKAGE_VADER = SentimentIntensityAnalyzer()
LINEAR_VADER = LinearVader()
EXTRACTOR = RuleBasedExtractor()


def bundled_texts() -> list[str]:
    texts: list[str] = []
    for path in CHUNK_FILES:
        for chunk in read_chunks(path):
            texts.extend(m.text for m in chunk.messages)
    return texts


# --- VADER ------------------------------------------------------------------------------------


def test_linear_vader_scores_every_bundled_message_as_the_package_does() -> None:
    texts = bundled_texts()
    assert len(texts) > 2000
    joined = " ".join(texts[:400])  # one long text: every rule, "but" included, at once
    for text in [*texts, joined]:
        assert LINEAR_VADER.polarity_scores(text) == PACKAGE_VADER.polarity_scores(text), text


# Words that switch on VADER's special rules: contrast, negation (also 3 words back), "kind of",
# "least", boosters, idioms, ALL CAPS, punctuation emphasis, emoji.
_VADER_WORDS = [
    "but",
    "BUT",
    "no",
    "never",
    "so",
    "this",
    "without",
    "doubt",
    "least",
    "at",
    "very",
    "kind",
    "of",
    "good",
    "GOOD",
    "bad",
    "hate",
    "love",
    "the",
    "shit",
    "bomb",
    "bus",
    "stop",
    "or",
    "nor",
    "happy",
    "sad",
    "!",
    "??",
    "???",
    ":)",
    "\U0001f600",
    "\U0001f621",
    *sorted(BOOSTER_DICT)[:12],
    *NEGATE[:8],
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_VADER_WORDS), max_size=16), st.sampled_from([" ", "", ", "]))
def test_linear_vader_equals_the_package_on_generated_texts(words: list[str], sep: str) -> None:
    text = sep.join(words)
    assert LINEAR_VADER.polarity_scores(text) == PACKAGE_VADER.polarity_scores(text)


def test_but_rule_keeps_the_package_quirk() -> None:
    # The package scales, for each position k in turn, the FIRST position holding the value
    # now at k. Before "but" (index 2): k=0 scales 2.0 at 0 → 1.0, so [1.0, 1.0, 0, 3.0]; k=1
    # finds 1.0 first at 0 again → 0.5; k=2 is "but" itself (0 at index 2, unchanged); k=3
    # scales 3.0 → 4.5. Position 1 keeps its 1.0.
    words = ["x", "y", "but", "z"]
    assert SentimentIntensityAnalyzer._but_check(words, [2.0, 1.0, 0, 3.0]) == [0.5, 1.0, 0, 4.5]
    assert LinearVader._but_check(words, [2.0, 1.0, 0, 3.0]) == [0.5, 1.0, 0, 4.5]


# --- phases -----------------------------------------------------------------------------------


def stepwise_fold(runs: list[_affect._Run]) -> list[_affect._Run]:
    """The folding loop as it was: rescan for the first short run after every fold."""

    def exempt(i: int) -> bool:
        label = runs[i].label
        return (label == "opening" and i == 0) or (label == "closing" and i == len(runs) - 1)

    while len(runs) > 1:
        short = [i for i, r in enumerate(runs) if r.start == r.end and not exempt(i)]
        if not short:
            break
        i = short[0]
        into_previous = i > 0 and (not exempt(i - 1) or i + 1 == len(runs) or exempt(i + 1))
        if into_previous:
            runs[i - 1].end = runs[i].end
        else:
            runs[i + 1].start = runs[i].start
        del runs[i]
        runs = _affect._merge_equal(runs)
    return runs


_LABELS = ["opening", "closing", "conflict", "planning", "negotiation"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_LABELS), max_size=14))
def test_one_pass_fold_takes_the_same_steps(labels: list[str]) -> None:
    def runs() -> list[_affect._Run]:
        return _affect._merge_equal([_affect._Run(label, i, i) for i, label in enumerate(labels)])

    expected = [(r.label, r.start, r.end) for r in stepwise_fold(runs())]
    assert [(r.label, r.start, r.end) for r in _affect._fold_short(runs())] == expected


def test_fold_of_alternating_labels_worked_by_hand() -> None:
    # planning, conflict, planning, conflict, planning: all one message long. Step 1 folds run
    # 0 into run 1 (nothing before it): conflict 0-1; merge leaves [conflict 0-1, planning 2,
    # conflict 3, planning 4]. Step 2 folds planning 2 back into conflict 0-2, which merges
    # with conflict 3 → conflict 0-3; step 3 folds planning 4 into it: one phase 0-4.
    labels = ["planning", "conflict", "planning", "conflict", "planning"]
    runs = [_affect._Run(label, i, i) for i, label in enumerate(labels)]
    assert [(r.label, r.start, r.end) for r in _affect._fold_short(runs)] == [("conflict", 0, 4)]


# --- "done" reports ---------------------------------------------------------------------------


class ScanReports:
    """The follow-up rule as it was: scan every later message for each open item."""

    def __init__(self, view: ChunkView, owners: set[str]) -> None:
        self.view = view

    def follow_up(self, item: ActionItem) -> ActionItem:
        if item.status == "done" or item.owner is None:
            return item
        last = max(self.view.position[m] for m in item.evidence)
        task_words = set(content_words(item.text))
        for msg in self.view.messages[last + 1 :]:
            if msg.speaker != item.owner or not _commitments.DONE.search(msg.text):
                continue
            if word_count(msg.text) <= 3 or task_words & set(content_words(msg.text)):
                evidence = [*item.evidence, msg.id]
                return item.model_copy(update={"status": "done", "evidence": evidence})
        return item


_TURNS = [
    "I'll send the report tomorrow.",
    "Can you book the room for Friday?",
    "Sure, will do.",
    "Sent.",
    "I booked the room, done.",
    "I'll fix the printer.",
    "The report is sent now.",
    "Let me check the budget.",
    "Booked",
    "Nothing new here, the weather is fine.",
]
_PEOPLE = ["Ana Silva", "Ben Okafor", "Cal Reyes"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PEOPLE), st.sampled_from(_TURNS)), max_size=24))
def test_indexed_done_reports_equal_the_scan(turns: list[tuple[str, str]]) -> None:
    messages = [{"id": f"m{i}", "speaker": s, "text": t} for i, (s, t) in enumerate(turns)]
    chunk = Chunk.model_validate({"chunk_id": "c", "participants": _PEOPLE, "messages": messages})
    indexed = EXTRACTOR.extract(chunk)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_commitments, "_DoneReports", ScanReports)
        scanned = EXTRACTOR.extract(chunk)
    assert indexed == scanned


def test_a_report_three_thousand_messages_later_closes_the_item() -> None:
    filler = [{"id": f"m{i}", "speaker": "Ben Okafor", "text": "Noted."} for i in range(1, 3000)]
    messages = [
        {"id": "m0", "speaker": "Ana Silva", "text": "I'll send the invoice."},
        *filler,
        {"id": "m3000", "speaker": "Ana Silva", "text": "Invoice sent to the client."},
    ]
    chunk = Chunk.model_validate(
        {"chunk_id": "long", "participants": _PEOPLE[:2], "messages": messages}
    )
    [item] = EXTRACTOR.extract(chunk).action_items
    # "sent" is a done word and "invoice" is shared with the task: done, cited at both ends.
    assert (item.text, item.owner, item.status) == ("Send the invoice", "Ana Silva", "done")
    assert item.evidence == ["m0", "m3000"]


# --- questions --------------------------------------------------------------------------------

_TRAILING = re.compile(r"[^\w?]+$")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab_9?!. \u00e9\u0301\u4e2d\U0001f600\u2014"), max_size=20))
def test_question_mark_rule_equals_the_expression(text: str) -> None:
    assert _ends_in_question_mark(text) == _TRAILING.sub("", text).endswith("?")


def test_a_question_followed_by_a_long_run_of_symbols_is_open() -> None:
    # 200,000 "!" after the "?": still a question (the old expression tried every start in the
    # run — 2·10^10 steps).
    chunk = Chunk.model_validate(
        {
            "chunk_id": "shout",
            "participants": ["Ana Silva"],
            "messages": [
                {"id": "m1", "speaker": "Ana Silva", "text": "Who has the keys?" + "!" * 200_000}
            ],
        }
    )
    [question] = EXTRACTOR.extract(chunk).open_questions
    assert (question.text, question.evidence) == ("Who has the keys?", ["m1"])
