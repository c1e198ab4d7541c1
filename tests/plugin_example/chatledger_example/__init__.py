"""Four ChatLedger components from outside ChatLedger, each declared as an entry point in this
package's pyproject.toml and used by name from a run config or the command line.

- ``exact`` (``chatledger.scorers``): texts are similar only when equal after preprocessing.
- ``evidence`` (``chatledger.judges``): grades the message ids an extraction cites.
- ``assignees`` (``chatledger.consumers``): who was given work, per conversation.
- ``irc`` (``chatledger.importers``): an IRC log, ``[2026-01-05 09:12] <ness> text`` a line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from chatledger.core import Chunk, ExtractionV3, InputError
from chatledger.corpus.exports import (
    Conversation,
    ExportMessage,
    ExportReader,
    ExportSource,
    ReadContext,
)
from chatledger.downstream import (
    Consumer,
    ConsumerAgreement,
    ConsumerOutput,
    ConversationView,
    Counts,
    DownstreamEvent,
    f1_agreement,
)
from chatledger.judge import Judge, Verdict
from chatledger.matching import FloatMatrix, TextMatcher


class ExactMatcher(TextMatcher):
    """100 for texts equal after preprocessing (case, punctuation), else 0."""

    name = "exact"

    def matrix(self, a: Sequence[str], b: Sequence[str]) -> FloatMatrix:
        scores: FloatMatrix = np.array(
            [[100.0 if x == y else 0.0 for y in b] for x in a], dtype=np.float64
        ).reshape(len(a), len(b))
        return scores


class EvidenceJudge(Judge):
    """Reads only ``evidence_message_ids``: of the ids cited, the share the chunk holds
    (content accuracy, and hallucination, where 100 means none), and the share of the chunk's
    messages cited (completeness). No id cited: 100 for accuracy and hallucination."""

    name = "evidence"
    family = "example"

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        verdicts: list[Verdict | None] = []
        for chunk, extraction in pairs:
            held = {m.id for m in chunk.messages}
            cited = set(extraction.evidence_message_ids)
            found = len(cited & held)
            accuracy = 100.0 * found / len(cited) if cited else 100.0
            completeness = 100.0 * found / len(held) if held else 100.0
            verdicts.append(
                Verdict(
                    content_accuracy=accuracy, completeness=completeness, hallucination=accuracy
                )
            )
        return verdicts


@dataclass(frozen=True)
class Assignee(DownstreamEvent):
    """Someone in the conversation was given an action item."""

    owner: str

    def describe(self) -> str:
        return f"work for {self.owner}"


class AssigneesConsumer(Consumer[Assignee]):
    """The set of (conversation, owner) of the action items; agreement is the F1 of the sets."""

    name: ClassVar[str] = "assignees"
    reads: ClassVar[tuple[str, ...]] = ("action_items",)
    count_names: ClassVar[tuple[str, ...]] = ("matched", "n_reference", "n_challenger")

    @staticmethod
    def agreement_from_counts(counts: Counts) -> npt.NDArray[np.float64]:
        return f1_agreement(counts)

    def build(self, conversations: Sequence[ConversationView]) -> ConsumerOutput[Assignee]:
        found = {
            Assignee(conversation.conversation_id, view.speaker(item.owner))
            for conversation in conversations
            for view in conversation.chunks
            for item in view.extraction.action_items
            if item.owner
        }
        ordered = sorted(found, key=lambda e: (e.conversation_id, e.owner))
        return self.output(ordered, conversations)

    def agreement(
        self, reference: ConsumerOutput[Assignee], challenger: ConsumerOutput[Assignee]
    ) -> ConsumerAgreement:
        ref, chal = set(reference.events), set(challenger.events)
        counts = {"matched": len(ref & chal), "n_reference": len(ref), "n_challenger": len(chal)}
        return self.counted(
            counts, {}, [e for e in reference.events if e not in chal], sorted(chal - ref, key=str)
        )


_LINE = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d)\] <([^>]+)> (.*)")
_ACTION = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d\] \* ")


class IrcLogReader(ExportReader):
    """One IRC log file (``.log``): ``[YYYY-MM-DD HH:MM] <nick> text`` per message; ``* nick
    does something`` lines are actions, skipped and counted; any other line is an error."""

    kind: ClassVar[str] = "irc"
    how_to_export = "your IRC client's log file of one channel"

    @classmethod
    def sniff(cls, source: ExportSource) -> bool:
        names = source.names()
        if len(names) != 1 or not names[0].endswith(".log"):
            return False
        first = source.read_text(names[0]).lstrip().split("\n", 1)[0]
        return _LINE.match(first) is not None

    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        (name,) = source.names()[:1]
        messages: list[ExportMessage] = []
        for number, line in enumerate(source.read_text(name).splitlines(), start=1):
            if not line.strip():
                continue
            if _ACTION.match(line):
                context.log.skip("action")
                continue
            match = _LINE.fullmatch(line)
            if match is None:
                raise InputError(
                    "not an IRC log line ([YYYY-MM-DD HH:MM] <nick> text)",
                    path=source.describe(name),
                    line=number,
                )
            moment = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M")
            messages.append(ExportMessage(moment, match.group(2), match.group(3)))
            context.log.kept("text")
        context.note("IRC times have no time zone")
        yield Conversation(key=PurePath(name).stem, title=None, messages=messages)
