"""A two-chunk corpus with a model's prefill, for the annotation tests.

Chunk ``trip-1`` (conversation ``trip``) has two claims, one action item owned by Ana and a
topic in the prefill; chunk ``trip-2`` has one claim. The texts differ enough that no two
items fuzzy-match each other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PEOPLE = ["Ana Ruiz", "Ben Okafor", "Cleo Park"]
# Would set window.__pwned if the page ever turned a message into markup or script.
PAYLOADS = (
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
)


def _messages(prefix: str, texts: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{prefix}-m{i}",
            "speaker": PEOPLE[(i - 1) % 3],
            "timestamp": f"2026-05-0{1 + i // 10}T10:{i:02d}:00Z",
            "text": text,
        }
        for i, text in enumerate(texts, start=1)
    ]


CHUNKS = [
    {
        "chunk_id": "trip-1",
        "conversation_id": "trip",
        "title": "Planning the coast trip",
        "participants": PEOPLE,
        "messages": _messages(
            "t1",
            [
                "Shall we take the train to the coast on Friday?",
                "The train is cheaper than driving, I checked the fares.",
                f"Careful with the hotel site {PAYLOADS[0]} {PAYLOADS[1]}",
                "Ben, can you book the tickets tonight?",
                "Where do we stay on Saturday night?",
                "No idea yet, maybe the hostel by the pier.",
            ],
        ),
    },
    {
        "chunk_id": "trip-2",
        "conversation_id": "trip",
        "title": "Tickets",
        "participants": PEOPLE,
        "messages": _messages(
            "t2",
            ["Tickets booked for the 9:15.", "Great, thanks Ben.", "I'll bring snacks."],
        ),
    },
]

PREFILL = [
    {
        "chunk_id": "trip-1",
        "model": "cheap-model",
        "extraction": {
            "topics": ["coast trip"],
            "claims": [
                {
                    "text": "The train is cheaper than driving",
                    "subject": "train",
                    "polarity": "pro",
                    "speaker": "Ben Okafor",
                    "evidence": ["t1-m2"],
                },
                {
                    "text": "Hotel websites overcharge foreign visitors every summer",
                    "subject": "hotel site",
                    "polarity": "con",
                    "speaker": "Cleo Park",
                    "evidence": ["t1-m3"],
                },
            ],
            "action_items": [
                {
                    "text": "Book the train tickets tonight",
                    "owner": "Ana Ruiz",
                    "status": "open",
                    "evidence": ["t1-m4"],
                }
            ],
        },
    },
    {
        "chunk_id": "trip-2",
        "model": "cheap-model",
        "extraction": {
            "claims": [
                {
                    "text": "The tickets are booked for the 9:15 train",
                    "subject": "tickets",
                    "polarity": "neutral",
                    "speaker": "Ana Ruiz",
                    "evidence": ["t2-m1"],
                }
            ]
        },
    },
]


def write_fixture(folder: Path) -> tuple[Path, Path]:
    """chunks.jsonl and prefill.jsonl in ``folder``."""
    chunks = folder / "chunks.jsonl"
    prefill = folder / "prefill.jsonl"
    chunks.write_text("".join(json.dumps(c) + "\n" for c in CHUNKS), encoding="utf-8")
    prefill.write_text("".join(json.dumps(p) + "\n" for p in PREFILL), encoding="utf-8")
    return chunks, prefill
