"""Open questions and question/answer pairs.

A question is a sentence of three or more words ending in "?" (possibly "?!"), or opening
like a yes/no question ("have you ...", "is it ..."), that is not a greeting ("how are you?")
and that no other rule has claimed (a request "can you X?" is an action item, an accepted
"shall we X?" a decision). Its text is the sentence without trailing emoji, ending in "?".
Its answer is looked for in the next message by someone else, at most two messages ahead,
unless that reply opens with a question of its own:

* a reply opening with yes / no (or "sure", "of course", ...) answers the message's last
  question; the answer is that word;
* a reply sharing a content word with a question answers it; the answer is the reply's first
  sentence sharing that word;
* a short reply (at most eight words) answers the message's last question.

Answered questions become ``qa_pairs`` (evidence: question and answer messages); the rest stay
``open_questions`` with confidence 0.7 — a "?" is nearly always a question, but whether it stayed
open is a guess.
"""

from __future__ import annotations

import re

from chatledger.core import OpenQuestion, QAPair
from chatledger.extractors._text import content_words, tidy, trim_words, word_count
from chatledger.extractors._view import ChunkView, MessageView, Sentence

OPEN_QUESTION_CONFIDENCE = 0.7
_YES_NO = re.compile(
    r"^(?P<word>yes|yeah|yep|yup|no|nope|nah|sure|definitely|absolutely|of course|certainly)\b",
    re.IGNORECASE,
)
_SHORT_REPLY_WORDS = 8
# Greetings phrased as questions ("Hi, how are you?") ask for nothing.
_PHATIC = re.compile(
    r"\b(?:how (?:are|r) (?:you|u)(?: doing| today)?|how's it going|how have you been|"
    r"what's up)\W*$",
    re.IGNORECASE,
)


def _question_text(question: Sentence) -> str:
    return tidy(question.text) + "?"


def _answers(questions: list[Sentence], reply: MessageView) -> dict[int, str]:
    """Question index → answer text, for the questions ``reply`` answers."""
    found: dict[int, str] = {}
    if not reply.sentences or reply.sentences[0].is_question:
        return found
    # Content word -> the first reply sentence that has it: the first sentence sharing a word
    # with a question is the smallest of these over the question's words.
    first_with: dict[str, int] = {}
    for index, sentence in enumerate(reply.sentences):
        for word in content_words(sentence.text):
            first_with.setdefault(word, index)
    for i, question in enumerate(questions):
        shared = [first_with[w] for w in set(content_words(question.text)) if w in first_with]
        if shared:
            found[i] = trim_words(tidy(reply.sentences[min(shared)].text), 25)
    last = len(questions) - 1
    yes_no = _YES_NO.match(reply.lower)
    if yes_no:
        found[last] = tidy(yes_no.group("word"))
    elif last not in found and word_count(reply.text) <= _SHORT_REPLY_WORDS:
        found[last] = tidy(reply.text)
    return found


def find_questions(
    view: ChunkView, used: set[tuple[int, int]]
) -> tuple[list[OpenQuestion], list[QAPair]]:
    """Open questions and Q/A pairs of the chunk; ``used`` sentences are skipped and extended."""
    open_questions: list[OpenQuestion] = []
    pairs: list[QAPair] = []
    for msg in view.messages:
        questions = [
            s
            for s in msg.sentences
            if s.is_question
            and word_count(s.text) >= 3
            and s.key not in used
            and not _PHATIC.search(s.text)
        ]
        if not questions:
            continue
        reply = view.reply_to(msg.position)
        answers = _answers(questions, reply) if reply is not None else {}
        for i, question in enumerate(questions):
            used.add(question.key)
            answer = answers.get(i)
            if answer and reply is not None:
                pairs.append(
                    QAPair(
                        question=_question_text(question),
                        answer=answer,
                        asked_by=msg.speaker,
                        answered_by=reply.speaker,
                        evidence=[msg.id, reply.id],
                    )
                )
            else:
                open_questions.append(
                    OpenQuestion(
                        text=_question_text(question),
                        asked_by=msg.speaker,
                        evidence=[msg.id],
                        confidence=OPEN_QUESTION_CONFIDENCE,
                    )
                )
    return open_questions, pairs
