"""The seeded stochastic simulated extractor of schema selection: offline, and with a known
right answer (issue 16). Never a real model: everything it writes is labelled
:data:`SIMULATED_LABEL`.

**Truth.** For the 17 v3 candidates, a chunk's reference extraction. For the 8 others (no
reference holds them), values read off the chunk and its reference by fixed rules, so that each
has the character the registry gives it: topic shifts are consecutive reference topics and
commitments the action items with a due date (both near-copies of a proven field: they must
fail on redundancy); requests, agreements and humour come from the messages' own wording;
sentiment per speaker from the reference's emotional tone; turn-taking and politeness from the
message counts and wording per speaker.

**Noise.** One extraction keeps each item of a list field with probability 1 − p (p: the
field's noise, :data:`FIELD_NOISE`) and drops it otherwise; a value that is not a list is kept
or emptied alike. A prompt variant (Phase 1.5) multiplies p by its factor
(:data:`VARIANT_FACTORS`: the explicit definition halves it), a prompt style (Phase 2) by its
factor (:data:`STYLE_FACTORS`), and each field a schema asks for beyond the six proven ones
adds :data:`CROWDING` to every field's p (a longer prompt, less attention per field). Every
(chunk, sample, prompt) draws from its own seeded generator, so an extraction never depends on
which others ran.

The known right answer on the bundled corpus (asserted by the tests, shown by the demo): Q/A
pairs screen highest; implicit assumptions pass with the lowest consistency and Phase 1.5 raises
it; topic shifts and commitments fail on redundancy; humour/sarcasm (next to nothing to find)
fails; the tournament's winner holds the proven fields and the v3 survivors, none of the
fields no reference holds (they only crowd the prompt).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from chatledger.core import Chunk, ExtractionV3

SIMULATED_LABEL = "simulated:screen"  # never a real model: reports must say so

FIELD_NOISE: dict[str, float] = {
    # proven: what the screen compares with; low noise
    "claims": 0.08,
    "action_items": 0.05,
    "open_questions": 0.06,
    "decisions": 0.05,
    "entities": 0.04,
    "topics": 0.05,
    # latent
    "implicit_assumptions": 0.55,  # the inconsistent one: passes, and Phase 1.5 raises it
    "emotional_tone": 0.25,
    "emotional_arc": 0.20,
    "sentiment_per_speaker": 0.20,
    "humour_sarcasm": 0.60,
    # structural
    "conversation_phases": 0.60,  # inconsistent but informative: Phase 1.5 raises it
    "qa_pairs": 0.02,  # the steadiest: screens highest
    "negotiation_patterns": 0.15,
    "links": 0.05,
    "warnings": 0.15,
    "evidence_message_ids": 0.30,
    "topic_shifts": 0.05,
    "turn_taking": 0.05,
    # derived
    "summary": 0.05,
    "confidence": 0.30,
    "commitments": 0.05,
    "requests": 0.25,
    "agreements": 0.30,
    "politeness": 0.15,
}
VARIANT_FACTORS: dict[str, float] = {
    "base": 1.0,
    "explicit": 0.5,
    "example": 0.75,
    "constrained": 0.85,
}
STYLE_FACTORS: dict[str, float] = {
    "plain": 1.0,
    "explicit": 0.6,
    "example": 0.8,
    "constrained": 0.9,
    "field-guide": 0.7,
}
CROWDING = 0.012
PROVEN_COUNT = 6

_SENTIMENT = {
    "joy": "positive",
    "trust": "positive",
    "anticipation": "positive",
    "surprise": "mixed",
    "fear": "negative",
    "sadness": "negative",
    "disgust": "negative",
    "anger": "negative",
    "neutral": "neutral",
}
_REQUEST = re.compile(r"\b(can|could|would|will) you\b|\bplease\b", re.IGNORECASE)
_AGREE = re.compile(r"^\s*(yes|yeah|yep|agreed|sure|exactly|right|ok(ay)?|sounds good)\b", re.I)
_DISAGREE = re.compile(r"^\s*(no|nope|i disagree|not really|i don'?t think)\b", re.IGNORECASE)
_HUMOUR = re.compile(r"\b(haha+|lol|joke|kidding)\b|:\)|😂", re.IGNORECASE)
_POLITE = re.compile(r"\b(please|thanks|thank you|sorry)\b", re.IGNORECASE)


def _short(text: str, words: int = 14) -> str:
    return " ".join(text.split()[:words])


def simulated_truth(chunk: Chunk, reference: ExtractionV3) -> dict[str, Any]:
    """Every candidate's true value for one chunk (JSON values), by the rules of the module doc."""
    truth: dict[str, Any] = reference.model_dump(mode="json", exclude={"schema_version"})
    truth.pop("confidence", None)
    confidences = [
        float(item.confidence)
        for name in ("decisions", "action_items", "open_questions", "claims")
        for item in getattr(reference, name)
        if item.confidence is not None
    ]
    truth["confidence"] = round(float(np.mean(confidences)), 2) if confidences else None
    topics = list(reference.topics)
    truth["topic_shifts"] = [
        {"from_topic": a, "to_topic": b, "message_id": None} for a, b in itertools.pairwise(topics)
    ]
    truth["commitments"] = [
        {"text": a.text, "owner": a.owner, "deadline": a.due}
        for a in reference.action_items
        if a.due
    ]
    messages = chunk.messages
    truth["requests"] = [
        {"text": _short(m.text), "requested_by": m.speaker, "addressee": None}
        for m in messages
        if _REQUEST.search(m.text)
    ]
    truth["agreements"] = [
        {
            "text": _short(m.text),
            "kind": "agree" if _AGREE.search(m.text) else "disagree",
            "between": [m.speaker],
        }
        for m in messages
        if _AGREE.search(m.text) or _DISAGREE.search(m.text)
    ]
    by_speaker: dict[str, str] = {}
    for tone in reference.emotional_tone:
        by_speaker.setdefault(tone.speaker, _SENTIMENT.get(tone.emotion, "mixed"))
    truth["sentiment_per_speaker"] = [{"speaker": s, "sentiment": v} for s, v in by_speaker.items()]
    truth["humour_sarcasm"] = [
        {"text": _short(m.text), "kind": "humour", "speaker": m.speaker}
        for m in messages
        if _HUMOUR.search(m.text)
    ]
    counts: dict[str, int] = {}
    polite: dict[str, bool] = {}
    for m in messages:
        counts[m.speaker] = counts.get(m.speaker, 0) + 1
        polite[m.speaker] = polite.get(m.speaker, False) or bool(_POLITE.search(m.text))
    total = sum(counts.values())
    top = max(counts.values(), default=0)
    truth["turn_taking"] = [
        {"speaker": s, "share": round(n / total, 2), "dominant": n == top and n / total >= 0.4}
        for s, n in counts.items()
    ]
    truth["politeness"] = [
        {"speaker": s, "level": "polite" if polite[s] else "neutral"} for s in counts
    ]
    return truth


def noise_for(
    name: str,
    *,
    variant: str = "base",
    style: str = "plain",
    n_fields: int = 0,
    noise: Mapping[str, float] | None = None,
) -> float:
    """The drop probability of a field under a prompt variant and style, in a schema of
    ``n_fields`` fields (clipped to [0, 1])."""
    base = (noise if noise is not None else FIELD_NOISE).get(name, 0.0)
    p = base * VARIANT_FACTORS.get(variant, 1.0) * STYLE_FACTORS.get(style, 1.0)
    p += CROWDING * max(0, n_fields - PROVEN_COUNT)
    return min(1.0, max(0.0, p))


def _generator(seed: int, *parts: str | int) -> np.random.Generator:
    """A generator of its own for one (chunk, sample, prompt): a hash of them, so that the
    draws never depend on what else ran or in which order."""
    text = "\x1f".join(str(p) for p in (seed, *parts))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def simulate_extraction(
    truth: Mapping[str, Any],
    fields: Sequence[str],
    *,
    chunk_id: str,
    sample: int,
    variants: Mapping[str, str] | None = None,
    style: str = "plain",
    n_fields: int = 0,
    noise: Mapping[str, float] | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """One noisy extraction of ``fields`` from a chunk's ``truth`` (see the module doc).
    ``n_fields``: the size of the schema asked for, which crowds the prompt (0: no crowding,
    as in the screen, whose repeated runs measure each field on its own terms)."""
    variants = variants or {}
    size = n_fields
    out: dict[str, Any] = {}
    for name in fields:
        variant = variants.get(name, "base")
        p = noise_for(name, variant=variant, style=style, n_fields=size, noise=noise)
        rng = _generator(seed, chunk_id, sample, name, variant, style, size)
        value = truth.get(name)
        if isinstance(value, list):
            out[name] = [item for item in value if rng.random() >= p]
        elif rng.random() < p:
            out[name] = "" if isinstance(value, str) else None
        else:
            out[name] = value
    return out
