"""Negotiation moves from cue phrases, one item per (pattern, actor).

Moves that make a conversation a negotiation are found anywhere:

* anchoring — an offer ("I'll take", "can I have", "I'll pay", "how about") with a number
  ("2", "two", "all", "half") or a money amount ("$450");
* compromise — "how about", "meet in the middle", "split the difference", "halfway";
* concession — "fine, I'll", "ok lower", "I can go lower", "you can have", "I'm willing to";
* ultimatum — "take it or leave it", "or I'll", "final offer", "or else", "walk away".

The softer moves below are everyday phrases ("I need", "hello", "fair") that only count as
negotiation moves inside a negotiation, so they are kept only when the chunk has one of the moves
above, a bargaining word ("deal", "offer", "trade", "swap", "price", "in exchange") or a money
amount:
elicit_preference ("what do you need", "what matters to you"), no_need ("I don't need"),
undervalue_partner ("you don't need"), other_need ("my kids need"), self_need ("I need",
"we need"), appeal_to_fairness ("fair", "evenly"), showing_empathy ("sorry to hear",
"I understand"), promote_coordination ("work together", "both of us", "split"), small_talk
(greetings, "how are you", "excited"), deflection ("anyway", "moving on").

Each item's text is the first sentence that showed the move; its evidence lists every message
where the actor made it.
"""

from __future__ import annotations

import re

from chatledger.core import NegotiationMove
from chatledger.extractors._text import tidy
from chatledger.extractors._view import ChunkView, Sentence

MONEY = re.compile(
    r"[£$€]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand)\b)?"
    r"|\b\d[\d,]*(?:\.\d+)?\s?(?:dollars|pounds|euros|bucks|quid)\b",
    re.IGNORECASE,
)
_OFFER = re.compile(
    r"\b(?:i(?:'ll| will| would|'d| can| could) (?:take|get|have|offer|give you|pay|do|"
    r"accept|sell)|i (?:take|offer|pay|give you)|can i (?:have|get|take)|(?:give|offer) "
    r"(?:you|me)|you (?:can|could) have|how about|what about)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|all|both|half)\b", re.IGNORECASE
)


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE)


_HARD_MOVES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "ultimatum",
        _cue(
            r"take it or leave it|or i'll|or i will|final offer|last offer|or else|"
            r"non-negotiable|walk away"
        ),
    ),
    (
        "compromise",
        _cue(
            r"how about|meet (?:you )?in the middle|split the difference|halfway|compromise|"
            r"middle ground|what if we"
        ),
    ),
    (
        "concession",
        _cue(
            r"fine,? i'll|ok(?:ay)?,? (?:i'll|lower)|i can go (?:lower|higher|down|up)|"
            r"i can give (?:you|up)|you can have|i'll settle|i can live with|"
            r"i'm willing to|i am willing to"
        ),
    ),
)
_SOFT_MOVES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "elicit_preference",
        _cue(
            r"what do you (?:need|want|prefer)|what (?:matters|is important|'s important) "
            r"(?:most )?to you|what(?: is|'s) (?:most )?important (?:to|for) you|"
            r"what are you looking for|which (?:do|would) you (?:prefer|need|want|like)|"
            r"what would you like|what about you"
        ),
    ),
    ("no_need", _cue(r"(?:i|we) (?:don't|do not|dont) (?:really )?need|i have plenty")),
    (
        "undervalue_partner",
        _cue(r"you (?:don't|do not|dont|won't|probably don't) (?:really )?need"),
    ),
    (
        "other_need",
        _cue(
            r"my (?:kids|children|family|wife|husband|son|daughter|friends|group|partner|dog|"
            r"mother|father|mom|dad|baby|brother|sister)\b[^.!?]*\bneeds?"
        ),
    ),
    ("self_need", _cue(r"(?:i|we) (?:really |definitely |also |especially |do )?need")),
    ("appeal_to_fairness", _cue(r"fair|fairly|even split|evenly|fifty.fifty|50/50")),
    (
        "showing_empathy",
        _cue(
            r"sorry to hear|i understand|that must be|i can imagine|i'm sorry|"
            r"that sounds (?:hard|tough|rough|difficult)"
        ),
    ),
    (
        "promote_coordination",
        _cue(r"work together|win.win|both of us|works for both|we can both|split|divide"),
    ),
    (
        "small_talk",
        _cue(r"hi|hello|hey|how are you|how's it going|nice to meet|good morning|excited"),
    ),
    ("deflection", _cue(r"let's not talk about|anyway|moving on|changing the subject")),
)
# "deal with" is about handling something, not a bargain.
_BARGAINING = _cue(r"deal(?! with)|deals|offer|trade|swap|price|counter ?offer|in exchange")


def has_quantity(text: str) -> bool:
    """A number, a number word or "all / both / half"."""
    return bool(_NUMBER.search(text))


def is_anchoring(text: str) -> bool:
    """An offer verb together with a quantity or a money amount."""
    return bool(_OFFER.search(text) and (_NUMBER.search(text) or MONEY.search(text)))


def hard_moves(text: str) -> list[str]:
    """The negotiation-defining moves present in ``text``."""
    moves = ["anchoring"] if is_anchoring(text) else []
    moves.extend(name for name, pattern in _HARD_MOVES if pattern.search(text))
    return moves


def is_bargaining(text: str) -> bool:
    """Any cue that the text is about a deal: a hard move, a bargaining word or a price."""
    return bool(hard_moves(text) or _BARGAINING.search(text) or MONEY.search(text))


def find_negotiation_moves(view: ChunkView) -> list[NegotiationMove]:
    """Negotiation patterns of the chunk (see the module docstring)."""
    sentences = view.sentences()
    negotiating = any(is_bargaining(m.text) for m in view.messages)
    # (pattern, actor) -> first sentence, and the messages in order (a dict keeps them unique).
    found: dict[tuple[str, str], tuple[Sentence, dict[str, None]]] = {}
    for sentence in sentences:
        names = hard_moves(sentence.text)
        if negotiating:
            names.extend(n for n, pattern in _SOFT_MOVES if pattern.search(sentence.text))
        for name in names:
            key = (name, sentence.speaker)
            if key not in found:
                found[key] = (sentence, {})
            found[key][1][sentence.message_id] = None
    return [
        NegotiationMove(
            pattern=pattern, actor=actor, text=tidy(first.text), evidence=list(evidence)
        )
        for (pattern, actor), (first, evidence) in found.items()
    ]
