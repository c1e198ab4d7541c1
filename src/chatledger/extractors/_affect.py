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


def emotion_hits(msg: MessageView) -> Counter[str]:
    """Emotion word counts of one message, skipping negated words ("not happy")."""
    hits: Counter[str] = Counter()
    tokens = msg.words
    for i, token in enumerate(tokens):
        if NEGATORS & set(tokens[max(0, i - 2) : i]):
            continue
        for emotion in _EMOTION_ORDER:
            if token in EMOTION_WORDS[emotion]:
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
    for speaker in view.speakers:
        mine = [m for m in view.messages if m.speaker == speaker]
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
    """Fold one-message runs into a neighbour, then merge equal neighbours, until stable."""

    def exempt(i: int) -> bool:
        label = runs[i].label
        return (label == "opening" and i == 0) or (label == "closing" and i == len(runs) - 1)

    while len(runs) > 1:
        short = [i for i, r in enumerate(runs) if r.start == r.end and not exempt(i)]
        if not short:
            break
        i = short[0]
        # Prefer a neighbour that is not a pinned opening/closing; the earlier one first.
        into_previous = i > 0 and (not exempt(i - 1) or i + 1 == len(runs) or exempt(i + 1))
        if into_previous:
            runs[i - 1].end = runs[i].end
        else:
            runs[i + 1].start = runs[i].start
        del runs[i]
        runs = _merge_equal(runs)
    return runs


def find_phases(view: ChunkView) -> list[Phase]:
    """Consecutive phases covering every message (see the module docstring)."""
    runs = _merge_equal([_Run(label, i, i) for i, label in enumerate(_labels(view))])
    ids = [m.id for m in view.messages]
    return [
        Phase(phase=r.label, start_message_id=ids[r.start], end_message_id=ids[r.end])
        for r in _fold_short(runs)
    ]
