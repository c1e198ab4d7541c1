"""Per-field definitions of schema v3 (DESIGN.md §3), as the ``field-guide`` prompt shows them.

The enumerations are filled in from the vocabulary at prompt time, so a vocabulary extended by a
schema file is what the model is told about.
"""

from __future__ import annotations

from chatledger.core import FIELDS_V3, Vocabulary

# field -> (definition, vocabulary kinds whose values the definition lists, in order)
FIELD_GUIDE: dict[str, tuple[str, tuple[str, ...]]] = {
    "topics": ("short noun phrases naming what the conversation is about", ()),
    "entities": (
        "named things mentioned, as {name, type}; write the name as it appears; type is one of {}",
        ("entity_type",),
    ),
    "decisions": (
        "what the participants settled on, as {text, made_by: [participant names], "
        "evidence: [message ids], confidence 0-1}",
        (),
    ),
    "action_items": (
        "tasks someone is to do, as {text, owner (participant name), due (as said, or null), "
        "status one of {}, evidence, confidence 0-1}",
        ("status",),
    ),
    "open_questions": (
        "questions raised and not answered in the chunk, as {text, asked_by, evidence, "
        "confidence 0-1}",
        (),
    ),
    "claims": (
        "statements of opinion or fact a participant commits to, as {text, subject (what it is "
        "about, a short noun phrase; use the same subject for claims about the same thing), "
        "polarity one of {} towards the subject, speaker, evidence, confidence 0-1}",
        ("polarity",),
    ),
    "links": ("URLs in the messages, as {url, context}", ()),
    "warnings": (
        "risks, problems or warnings raised, as {text, severity one of {}, evidence}",
        ("severity",),
    ),
    "evidence_message_ids": (
        "ids of the messages that carry the chunk's substance (decisions, tasks, claims)",
        (),
    ),
    "summary": ("two or three plain sentences saying what happened in the chunk", ()),
    "qa_pairs": (
        "questions that were answered, as {question, answer (null when unanswered), asked_by, "
        "answered_by, evidence}",
        (),
    ),
    "emotional_tone": (
        "each speaker's dominant emotions, as {speaker, emotion one of {}, intensity 0-1, "
        "evidence}",
        ("emotion",),
    ),
    "emotional_arc": (
        "the mood of the chunk, as {opening_mood and closing_mood (emotion values), trajectory "
        "one of {}, turning_points: [{message_id, description}]}",
        ("trajectory",),
    ),
    "conversation_phases": (
        "consecutive phases covering the messages, as {phase one of {}, start_message_id, "
        "end_message_id}",
        ("phase",),
    ),
    "implicit_assumptions": (
        "things a participant takes for granted without saying so, as {text, held_by, evidence}",
        (),
    ),
    "negotiation_patterns": (
        "negotiation moves, as {pattern one of {}, actor, text (the words of the move), evidence}",
        ("negotiation_pattern",),
    ),
}

# ``confidence`` (field 10) is scored from the items' confidences; it has no key of its own.
_SCORED_ONLY = frozenset({"confidence"})


def field_guide(vocabulary: Vocabulary) -> str:
    """One numbered line per extracted field, enumerations written out."""
    lines = []
    for number, name in enumerate((f for f in FIELDS_V3 if f not in _SCORED_ONLY), start=1):
        text, kinds = FIELD_GUIDE[name]
        for kind in kinds:
            values = ", ".join(vocabulary.allowed(kind))
            text = text.replace("{}", f"[{values}]", 1)
        lines.append(f"{number}. {name}: {text}.")
    return "\n".join(lines)
