"""Decisions and action items, from proposal, request and commitment cues.

Decisions
    * "let's X", "we'll go with X", "we decided to X", "we agreed on X", "the decision is X":
      a decision by the speaker. When the next message by someone else (at most two messages
      ahead) opens with an acceptance ("deal", "agreed", "sounds good", "ok", ...), that speaker
      joins ``made_by`` and the reply joins the evidence.
    * a proposal ("how about X", "shall we X", "I would give you X if ...") becomes a decision
      only when it is accepted that way.
    * "let's do it / go for it" decides what the other side proposed just before: the text is
      that message's offer sentence (one with a proposal cue, else a quantity, else its last).
    * a reply that opens with a firm acceptance ("deal", "agreed", "it's a deal") to a message
      with neither makes a decision of that message's offer sentence.
    Confidence: 0.7 when accepted, 0.5 for a "let's" nobody took up.

Action items
    * a request "can / could / would / will you X", "please X": X is the task. The owner is a
      participant named in the request, else the next speaker when they accept ("sure",
      "will do", "on it", ...), else the addressee (the other participant of a two-person
      chunk, or the next speaker). Confidence 0.7 accepted, 0.5 otherwise.
    * a commitment "I'll X", "I will X", "I'm going to X", "let me X": owned by the speaker
      (confidence 0.6; 0.5 for "let me"). Not taken from a reply that already accepted a
      request, which would repeat that request.
    * a report "I've sent / booked / paid ... X": an item already done (confidence 0.5).
    ``due`` is the first date phrase of the item's messages; ``status`` turns to done when the
    owner later reports it ("done", "sent", "booked", ...) in a message that shares a content
    word with the task or is at most three words long.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from chatledger.core import ActionItem, Decision
from chatledger.extractors._calendar import due_phrase
from chatledger.extractors._lexicon import wordset
from chatledger.extractors._negotiation import has_quantity
from chatledger.extractors._text import content_words, strip_openers, tidy, word_count, words
from chatledger.extractors._view import ChunkView, MessageView, Sentence

_REST = r"(?P<what>[^.!?]+)"
_ADVERBS = re.compile(
    r"^(?:(?:just|definitely|probably|also|then|maybe|really|gladly|happily|quickly|now|"
    r"first|all|actually|simply|still)\s+)+",
    re.IGNORECASE,
)

_DECISION_CUES = (
    re.compile(r"(?:\blet(?:'s| us)|(?:^|[,;:]\s*)lets) " + _REST, re.IGNORECASE),
    re.compile(
        r"\b(?:we(?:'ll| will| should|'re going to| are going to)|i'll|i will) "
        r"(?P<what>go (?:with|for) [^.!?]+)",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:we|i)(?:'ve| have)? decided (?:to |on |that )?" + _REST, re.IGNORECASE),
    re.compile(r"\b(?:we(?:'ve| have)? )?agreed (?:to|on|that) " + _REST, re.IGNORECASE),
    re.compile(r"\b(?:the )?(?:final )?decision is (?:to |that )?" + _REST, re.IGNORECASE),
)
# "let's do it" points back at a proposal made just before.
_ANAPHORIC = re.compile(
    r"^(?:do|go for|go with|take|accept) (?:it|that|this|those)\b\W*$", re.IGNORECASE
)
# "let's see / say / think ..." steers the talk; it decides nothing.
_NOT_DECIDING = wordset("see say think hope wait talk start begin move recap continue know")
_PROPOSAL_AFTER = re.compile(
    r"\b(?:how about|what about|what if we|shall we|why don't we|we could|we should|"
    r"i propose|i suggest|maybe we) " + _REST,
    re.IGNORECASE,
)
_PROPOSAL_WHOLE = re.compile(
    r"\b(?:if you (?:give|gave|take|let)|i (?:would|will|can|could) give you|you can have|"
    r"you could have|i'll take|i will take|i can take|can i (?:have|take|get))\b",
    re.IGNORECASE,
)
_ACCEPT_WORDS = (
    r"deal|agreed|done deal|it's a deal|that's a deal|you have a deal|i agree|"
    r"sounds (?:good|great|fine|perfect|fair|like a (?:plan|deal))|"
    r"(?:that|this|it) (?:sounds|seems) (?:good|great|fine|perfect|fair|"
    r"like a (?:plan|deal|good (?:plan|idea|deal)))|that works|works for me|perfect|ok|okay|"
    r"sure|yes|yeah|yep|fine|great|alright|all right|absolutely|definitely|of course"
)
# The look-ahead stops "I can't", "I will not" and "fine... not" from reading as a yes.
ACCEPT = re.compile(rf"^(?:{_ACCEPT_WORDS})\b(?!'t| not)", re.IGNORECASE)
_FIRM_ACCEPT = re.compile(
    r"^(?:deal|agreed|done deal|it's a deal|that's a deal|you have a deal|i agree|"
    r"(?:that |it |this )?sounds like a deal)\b",
    re.IGNORECASE,
)
ACCEPT_REQUEST = re.compile(
    rf"^(?:{_ACCEPT_WORDS}|will do|on it|no problem|i will|i'll|i can|you got it|can do|"
    r"happy to|no worries)\b(?!'t| not)",
    re.IGNORECASE,
)

_REQUEST = re.compile(
    r"\b(?:can|could|would|will) you(?: please| maybe| possibly| mind)? " + _REST,
    re.IGNORECASE,
)
_PLEASE = re.compile(r"^please " + _REST, re.IGNORECASE)
_NOT_A_TASK = wordset("believe imagine hear see like be have want think know remember tell if")
_COMMITMENT = re.compile(
    r"\b(?P<cue>i'll|i will|i'm going to|i am going to|i shall|i'm gonna|let me) " + _REST,
    re.IGNORECASE,
)
# Speech acts and hedges ("I'll be honest", "let me know") and negotiation moves ("I'll take
# two") that are not tasks.
_NOT_COMMITTED = wordset(
    "be say admit bet guess think wonder take have need want accept agree know see explain"
)
_DONE_REPORT = re.compile(
    r"\bi(?:'ve| have)?(?: just| already)? (?P<what>(?:sent|booked|finished|paid|ordered|fixed|"
    r"submitted|emailed|bought|printed|uploaded|called|delivered|completed) [^.!?]+)",
    re.IGNORECASE,
)
DONE = re.compile(
    r"\b(?:done|sent|booked|finished|completed|paid|ordered|fixed|submitted|emailed|"
    r"delivered|bought|printed|uploaded|sorted)\b",
    re.IGNORECASE,
)


@dataclass
class Commitments:
    """Decisions and action items of a chunk, and the sentences they were read from."""

    decisions: list[Decision] = field(default_factory=list)
    action_items: list[ActionItem] = field(default_factory=list)
    used: set[tuple[int, int]] = field(default_factory=set)


def _clause(text: str) -> str:
    return tidy(_ADVERBS.sub("", text.strip()))


def _first_word(text: str) -> str:
    tokens = words(text)
    return tokens[0] if tokens else ""


def _decision_text(sentence: Sentence) -> tuple[str, bool] | None:
    """(text, firm) of a decision or proposal in ``sentence``; firm = decided without a reply."""
    for pattern in _DECISION_CUES:
        match = pattern.search(sentence.text)
        if match:
            what = _clause(match.group("what"))
            if _first_word(what) in _NOT_DECIDING or word_count(what) < 2:
                return None
            return what, True
    match = _PROPOSAL_AFTER.search(sentence.text)
    if match and word_count(match.group("what")) >= 2:
        return _clause(match.group("what")), False
    if _PROPOSAL_WHOLE.search(sentence.text):
        return tidy(strip_openers(sentence.text)), False
    return None


def _stated_offer(msg: MessageView) -> Sentence | None:
    """The sentence of ``msg`` that says what is proposed: one with a proposal cue, else one
    with a quantity, else the last."""
    for sentence in msg.sentences:
        if _decision_text(sentence) is not None:
            return sentence
    for sentence in msg.sentences:
        if has_quantity(sentence.text):
            return sentence
    return msg.sentences[-1] if msg.sentences else None


def _unique(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def find_decisions(view: ChunkView, result: Commitments) -> None:
    """Add the chunk's decisions to ``result`` (see the module docstring for the rules)."""
    decided: set[int] = set()
    for msg in view.messages:
        reply = view.reply_to(msg.position)
        accepted = reply is not None and ACCEPT.match(reply.lower) is not None
        referent = view.previous_from_other(msg.position)
        # The referent's offer is read once per message, not once per decision sentence.
        offer: Sentence | None = None
        offer_read = False
        for sentence in msg.sentences:
            found = _decision_text(sentence)
            if found is None or not (found[1] or accepted):
                continue
            text = found[0]
            made_by, evidence = [msg.speaker], [msg.id]
            if not offer_read:
                offer = _stated_offer(referent) if referent is not None else None
                offer_read = True
            if _ANAPHORIC.match(text) and referent is not None and offer is not None:
                # "let's do it" decides what the other side just proposed.
                text = tidy(strip_openers(offer.text))
                made_by.insert(0, referent.speaker)
                evidence.insert(0, referent.id)
                result.used.add(offer.key)
            if not text:  # nothing left once openers are stripped ("I like that deal.")
                continue
            if accepted and reply is not None:
                made_by.append(reply.speaker)
                evidence.append(reply.id)
            result.decisions.append(
                Decision(
                    text=text,
                    made_by=_unique(made_by),
                    evidence=_unique(evidence),
                    confidence=0.7 if accepted else 0.5,
                )
            )
            result.used.add(sentence.key)
            decided.update(view.position[m] for m in evidence)
    for msg in view.messages:
        if not _FIRM_ACCEPT.match(msg.lower):
            continue
        before = view.previous_from_other(msg.position, within=1)
        offer = _stated_offer(before) if before is not None else None
        if before is None or offer is None or before.position in decided:
            continue
        text = tidy(strip_openers(offer.text))
        if not text:
            continue
        result.decisions.append(
            Decision(
                text=text,
                made_by=[before.speaker, msg.speaker],
                evidence=[before.id, msg.id],
                confidence=0.6,
            )
        )
        result.used.add(offer.key)
        decided.update((before.position, msg.position))


def _addressee(view: ChunkView, sentence: Sentence, reply: MessageView | None) -> str | None:
    for name in view.others(sentence.speaker):
        first = _first_word(name)
        if first and re.search(rf"\b{re.escape(first)}\b", sentence.lower):
            return name
    others = view.others(sentence.speaker)
    if len(others) == 1:
        return others[0]
    return reply.speaker if reply is not None else None


def _request_task(sentence: Sentence) -> str | None:
    match = _REQUEST.search(sentence.text) or _PLEASE.search(sentence.text)
    if match is None:
        return None
    task = _clause(match.group("what"))
    if _first_word(task) in _NOT_A_TASK or word_count(task) < 2:
        return None
    return task


def find_action_items(view: ChunkView, result: Commitments) -> None:
    """Add the chunk's action items to ``result`` (see the module docstring for the rules)."""
    accepted_replies: set[int] = set()
    replies = _Replies()
    for msg in view.messages:
        for sentence in msg.sentences:
            if sentence.key in result.used:
                continue
            item = _request_item(view, msg, sentence, accepted_replies, replies)
            if item is None and msg.position not in accepted_replies:
                item = _own_item(msg, sentence)
            if item is not None:
                result.action_items.append(item)
                result.used.add(sentence.key)
    if any(item.status != "done" and item.owner is not None for item in result.action_items):
        owners = {item.owner for item in result.action_items if item.owner is not None}
        reports = _DoneReports(view, owners)
        result.action_items[:] = [reports.follow_up(item) for item in result.action_items]


class _Replies:
    """What a reply says, read once however many requests of the message before it it answers
    (a long reply to a message with many requests would otherwise be searched once each)."""

    def __init__(self) -> None:
        self._due: dict[int, str | None] = {}
        self._done: dict[int, bool] = {}

    def due(self, msg: MessageView) -> str | None:
        if msg.position not in self._due:
            self._due[msg.position] = due_phrase(msg.text)
        return self._due[msg.position]

    def reports_done(self, msg: MessageView) -> bool:
        if msg.position not in self._done:
            self._done[msg.position] = DONE.search(msg.text) is not None
        return self._done[msg.position]


def _request_item(
    view: ChunkView,
    msg: MessageView,
    sentence: Sentence,
    accepted_replies: set[int],
    replies: _Replies,
) -> ActionItem | None:
    task = _request_task(sentence)
    if task is None:
        return None
    reply = view.reply_to(msg.position)
    if reply is not None and ACCEPT_REQUEST.match(reply.lower):
        accepted_replies.add(reply.position)
        named = _addressee(view, sentence, None) if len(view.speakers) > 2 else None
        return ActionItem(
            text=task,
            owner=named or reply.speaker,
            due=due_phrase(sentence.text) or replies.due(reply),
            status="done" if replies.reports_done(reply) else "open",
            evidence=[msg.id, reply.id],
            confidence=0.7,
        )
    return ActionItem(
        text=task,
        owner=_addressee(view, sentence, reply),
        due=due_phrase(sentence.text),
        evidence=[msg.id],
        confidence=0.5,
    )


def _own_item(msg: MessageView, sentence: Sentence) -> ActionItem | None:
    match = _COMMITMENT.search(sentence.text)
    if match is not None:
        task = _clause(match.group("what"))
        if _first_word(task) in _NOT_COMMITTED or word_count(task) < 2:
            return None
        confidence = 0.5 if match.group("cue").lower() == "let me" else 0.6
        return ActionItem(
            text=task,
            owner=msg.speaker,
            due=due_phrase(sentence.text),
            evidence=[msg.id],
            confidence=confidence,
        )
    match = _DONE_REPORT.search(sentence.text)
    if match is not None:
        return ActionItem(
            text=_clause(match.group("what")),
            owner=msg.speaker,
            due=due_phrase(sentence.text),
            status="done",
            evidence=[msg.id],
            confidence=0.5,
        )
    return None


class _DoneReports:
    """Each speaker's "done" messages, indexed so an item finds its report in log time.

    An open item is done by the first later message of its owner that reports something done
    and is at most three words long or shares a content word with the task. Scanning the later
    messages for every item is quadratic in a long chunk; here the positions of each speaker's
    short reports, and of their reports per content word, are sorted lists, and the answer is
    the smallest position after the item's last message over the task's words.
    """

    def __init__(self, view: ChunkView, owners: set[str]) -> None:
        self.view = view
        self.short: dict[str, list[int]] = {}
        self.by_word: dict[tuple[str, str], list[int]] = {}
        for msg in view.messages:
            if msg.speaker not in owners or not DONE.search(msg.text):
                continue
            if word_count(msg.text) <= 3:
                self.short.setdefault(msg.speaker, []).append(msg.position)
            for word in set(content_words(msg.text)):
                self.by_word.setdefault((msg.speaker, word), []).append(msg.position)

    @staticmethod
    def _after(positions: list[int] | None, last: int) -> int | None:
        if not positions:
            return None
        index = bisect.bisect_right(positions, last)
        return positions[index] if index < len(positions) else None

    def follow_up(self, item: ActionItem) -> ActionItem:
        """``item`` marked done (its report joining the evidence) when its owner reports it."""
        if item.status == "done" or item.owner is None:
            return item
        last = max(self.view.position[m] for m in item.evidence)
        owner = item.owner
        found = [self._after(self.short.get(owner), last)]
        found += [
            self._after(self.by_word.get((owner, w)), last) for w in set(content_words(item.text))
        ]
        positions = [p for p in found if p is not None]
        if not positions:
            return item
        report = self.view.messages[min(positions)]
        evidence = [*item.evidence, report.id]
        return item.model_copy(update={"status": "done", "evidence": evidence})
