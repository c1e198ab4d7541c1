"""Emotional tone, emotional arc and conversation phases.

Emotion words are counted per message from the small lists in ``_lexicon`` (a word preceded by
a negator within two words is not counted); VADER compound scores give strength and direction.

Emotional tone
    One reading per speaker: the emotion with most word hits over their messages (ties to the
    more strongly worded, by summed |compound|), evidence = their messages with such hits,
    intensity = mean |compound| of those messages. A speaker with no hit reads ``neutral`` at
    intensity 0.

Emotional arc
    Opening and closing mood: the dominant emotion of the first and last third of the messages
    (``neutral`` without hits). Trajectory from a least-squares line through the compound scores
    (positions scaled to 0..1): residual standard deviation >= 0.4 with four or more messages →
    volatile; else a rise of the line >= 0.2 → improving, <= -0.2 → worsening, else stable.
    Turning points: the (at most two) largest jumps of >= 0.5 between consecutive messages, at
    the message after the jump.

Conversation phases
    Each message gets one label, by priority: opening (a greeting in the first fifth, at least
    the first two messages), closing (goodbye or thanks in the last fifth, at least the last
    two), conflict (compound <= -0.4 in a run of two or more such messages, or an anger word),
    negotiation (bargaining cues), planning (time and date cues), else information_exchange.
    Runs of equal labels are phases; a one-message phase is folded into its neighbour (an opening
    at the start and a closing at the end may stay one message long). Phases cover every message
    once, in order.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from chatledger.core import DEFAULT_VOCABULARY, EmotionalArc, Phase, ToneReading, TurningPoint
from chatledger.extractors._calendar import TIME_CUE
from chatledger.extractors._lexicon import EMOTION_WORDS, NEGATORS
from chatledger.extractors._negotiation import is_bargaining
from chatledger.extractors._view import ChunkView, MessageView

_EMOTION_ORDER = [e for e in DEFAULT_VOCABULARY["emotion"] if e != "neutral"]
_VOLATILE_SD = 0.4
_TREND = 0.2
_JUMP = 0.5
_MAX_TURNING_POINTS = 2
_CONFLICT_COMPOUND = -0.4
_GREETING = re.compile(
    r"\b(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|how are you|how's it going|"
    r"nice to meet)\b",
    re.IGNORECASE,
)
_FAREWELL = re.compile(
    r"\b(?:bye|goodbye|see you|thanks|thank you|talk (?:to you )?(?:later|soon)|cheers|"
    r"good night|take care|have a (?:good|great|nice))\b",
    re.IGNORECASE,
)


# word -> the emotions whose lists hold it (one each today), looked up once per token.
_EMOTIONS_OF: dict[str, tuple[str, ...]] = {}
for _emotion in _EMOTION_ORDER:
    for _word in EMOTION_WORDS[_emotion]:
        _EMOTIONS_OF[_word] = (*_EMOTIONS_OF.get(_word, ()), _emotion)


def emotion_hits(msg: MessageView) -> Counter[str]:
    """Emotion word counts of one message, skipping negated words ("not happy")."""
    hits: Counter[str] = Counter()
    tokens = msg.words
    for i, token in enumerate(tokens):
        emotions = _EMOTIONS_OF.get(token)
        if emotions is None or NEGATORS & set(tokens[max(0, i - 2) : i]):
            continue
        for emotion in emotions:
            hits[emotion] += 1
    return hits


def _dominant(messages: Sequence[MessageView]) -> tuple[str, list[MessageView]]:
    """The emotion with most hits over ``messages`` and the messages that show it.

    Ties go to the emotion whose messages have the larger summed |compound| (the more strongly
    worded), then to the schema's order of emotions. No hit at all reads ``neutral``.
    """
    per_message = [(m, emotion_hits(m)) for m in messages]
    total: Counter[str] = Counter()
    strength: dict[str, float] = dict.fromkeys(_EMOTION_ORDER, 0.0)
    for msg, hits in per_message:
        total.update(hits)
        for emotion in hits:
            strength[emotion] += abs(msg.compound)
    if not total:
        return "neutral", []
    emotion = max(_EMOTION_ORDER, key=lambda e: (total[e], strength[e], -_EMOTION_ORDER.index(e)))
    return emotion, [m for m, hits in per_message if hits[emotion]]


def find_tone(view: ChunkView) -> list[ToneReading]:
    """One reading per speaker who wrote something (see the module docstring)."""
    readings: list[ToneReading] = []
    by_speaker: dict[str, list[MessageView]] = {}
    for msg in view.messages:
        by_speaker.setdefault(msg.speaker, []).append(msg)
    for speaker in view.speakers:
        mine = by_speaker.get(speaker, [])
        if not mine:
            continue
        emotion, evidence = _dominant(mine)
        if emotion == "neutral":
            reading = ToneReading(speaker=speaker, emotion="neutral", intensity=0.0, evidence=[])
            readings.append(reading)
            continue
        intensity = statistics.fmean(abs(m.compound) for m in evidence)
        readings.append(
            ToneReading(
                speaker=speaker,
                emotion=emotion,
                intensity=round(min(1.0, intensity), 2),
                evidence=[m.id for m in evidence],
            )
        )
    return readings


def _mood(messages: Sequence[MessageView]) -> str:
    return _dominant(messages)[0]


def _trajectory(scores: list[float]) -> str:
    n = len(scores)
    if n < 2:
        return "stable"
    xs = [i / (n - 1) for i in range(n)]
    slope, intercept = statistics.linear_regression(xs, scores)
    residuals = [y - (slope * x + intercept) for x, y in zip(xs, scores, strict=True)]
    spread = math.sqrt(statistics.fmean(r * r for r in residuals))
    if n >= 4 and spread >= _VOLATILE_SD:
        return "volatile"
    if slope >= _TREND:
        return "improving"
    if slope <= -_TREND:
        return "worsening"
    return "stable"


def _turning_points(messages: Sequence[MessageView]) -> list[TurningPoint]:
    jumps = [
        (abs(b.compound - a.compound), b.position, a.compound, b.compound)
        for a, b in itertools.pairwise(messages)
        if abs(b.compound - a.compound) >= _JUMP
    ]
    biggest = sorted(jumps, key=lambda j: (-j[0], j[1]))[:_MAX_TURNING_POINTS]
    points: list[TurningPoint] = []
    for _, position, before, after in sorted(biggest, key=lambda j: j[1]):
        direction = "up" if after > before else "down"
        points.append(
            TurningPoint(
                message_id=messages[position].id,
                description=f"mood turns {direction} (sentiment {before:+.2f} -> {after:+.2f})",
            )
        )
    return points


def find_arc(view: ChunkView) -> EmotionalArc | None:
    """Mood at both ends, trajectory and turning points; None for a chunk without messages."""
    messages = view.messages
    if not messages:
        return None
    third = max(1, math.ceil(len(messages) / 3))
    return EmotionalArc(
        opening_mood=_mood(messages[:third]),
        closing_mood=_mood(messages[-third:]),
        trajectory=_trajectory([m.compound for m in messages]),
        turning_points=_turning_points(messages),
    )


def _labels(view: ChunkView) -> list[str]:
    messages = view.messages
    n = len(messages)
    edge = max(2, n // 5)
    negative = [m.compound <= _CONFLICT_COMPOUND for m in messages]
    labels: list[str] = []
    for i, msg in enumerate(messages):
        angry = bool(set(msg.words) & EMOTION_WORDS["anger"])
        in_run = negative[i] and ((i > 0 and negative[i - 1]) or (i + 1 < n and negative[i + 1]))
        if i < edge and _GREETING.search(msg.text):
            labels.append("opening")
        elif i >= n - edge and _FAREWELL.search(msg.text):
            labels.append("closing")
        elif in_run or angry:
            labels.append("conflict")
        elif is_bargaining(msg.text):
            labels.append("negotiation")
        elif TIME_CUE.search(msg.text):
            labels.append("planning")
        else:
            labels.append("information_exchange")
    return labels


@dataclass
class _Run:
    label: str
    start: int
    end: int


def _merge_equal(runs: list[_Run]) -> list[_Run]:
    merged: list[_Run] = []
    for run in runs:
        if merged and merged[-1].label == run.label:
            merged[-1].end = run.end
        else:
            merged.append(run)
    return merged


def _fold_short(runs: list[_Run]) -> list[_Run]:
    """Fold one-message runs into a neighbour, then merge equal neighbours, until stable.

    The rule, one step at a time: take the first one-message run that is not pinned (an
    opening that comes first, a closing that comes last); fold it into the previous run unless
    that one is pinned and the next one is not (the first run goes into the next); merge equal
    neighbours; repeat. A fold only lengthens runs, so no run before the one folded can become
    short again: one pass from left to right, keeping the finished runs on a stack, takes the
    same steps in linear time (rescanning the list after every fold was quadratic).
    """
    done: list[_Run] = []  # finished: never short again (or a pinned opening first)
    j = 0  # runs[j:] are still to look at
    n = len(runs)

    def pinned(run: _Run, index: int, last: bool) -> bool:
        return (run.label == "opening" and index == 0) or (run.label == "closing" and last)

    while j < n:
        run = runs[j]
        index, last = len(done), j == n - 1
        if run.start != run.end or pinned(run, index, last) or index + (n - j) <= 1:
            done.append(run)
            j += 1
            continue
        previous_pinned = index > 0 and pinned(done[-1], index - 1, False)
        next_pinned = not last and pinned(runs[j + 1], index + 1, j + 1 == n - 1)
        if index > 0 and (not previous_pinned or last or next_pinned):
            done[-1].end = run.end
            j += 1
            if j < n and runs[j].label == done[-1].label:
                done[-1].end = runs[j].end
                j += 1
        else:
            following = runs[j + 1]
            following.start = run.start
            j += 1
            if done and done[-1].label == following.label:
                done[-1].end = following.end
                j += 1
    return done


def find_phases(view: ChunkView) -> list[Phase]:
    """Consecutive phases covering every message (see the module docstring)."""
    runs = _merge_equal([_Run(label, i, i) for i, label in enumerate(_labels(view))])
    ids = [m.id for m in view.messages]
    return [
        Phase(phase=r.label, start_message_id=ids[r.start], end_message_id=ids[r.end])
        for r in _fold_short(runs)
    ]
