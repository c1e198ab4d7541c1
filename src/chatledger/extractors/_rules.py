"""The offline rule- and lexicon-based extractor ("offline:rules").

It needs no network and no model weights, always returns a valid schema v3 extraction, and is
deterministic: the same chunk gives the same extraction. Each field's rule is documented in the
module that implements it (``_commitments``, ``_questions``, ``_opinions``, ``_mentions``,
``_negotiation``, ``_affect``); the chunk-level fields are assembled here:

* ``evidence_message_ids`` — every message cited by a decision, action item, open question,
  claim, warning, Q/A pair, implicit assumption or negotiation move, in message order (tone
  readings are left out: they cite nearly every message and would say nothing about salience);
* ``summary`` — the first decision, action item and open question joined as sentences; without
  any, the longest message trimmed to 40 words. Never empty when the chunk has messages.

Confidences are fixed per rule (0.5 to 0.7), set from how often each cue means what the rule
says, not fitted to any gold data.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import ValidationError

from chatledger.core import Chunk, ExtractionV3, InputError, atomic_writer, first_validation_error
from chatledger.extractors._affect import find_arc, find_phases, find_tone
from chatledger.extractors._commitments import Commitments, find_action_items, find_decisions
from chatledger.extractors._mentions import find_entities, find_links, find_topics
from chatledger.extractors._negotiation import find_negotiation_moves
from chatledger.extractors._opinions import find_assumptions, find_claims, find_warnings
from chatledger.extractors._questions import find_questions
from chatledger.extractors._registry import EXTRACTORS
from chatledger.extractors._text import trim_words
from chatledger.extractors._view import ChunkView

_SUMMARY_WORDS = 40


class RuleBasedExtractor:
    """Cue phrases, small word lists and VADER sentiment; no network, no weights."""

    name = "offline:rules"

    def extract(self, chunk: Chunk) -> ExtractionV3:
        """The schema v3 extraction of ``chunk``."""
        view = ChunkView.build(chunk)
        found = Commitments()
        find_decisions(view, found)
        find_action_items(view, found)
        open_questions, qa_pairs = find_questions(view, found.used)
        claims = find_claims(view, found.used)
        warnings = find_warnings(view)
        assumptions = find_assumptions(view)
        moves = find_negotiation_moves(view)
        cited = {
            message_id
            for group in (
                found.decisions,
                found.action_items,
                open_questions,
                claims,
                warnings,
                qa_pairs,
                assumptions,
                moves,
            )
            for item in group
            for message_id in item.evidence
        }
        summary_parts = [
            *(d.text for d in found.decisions[:1]),
            *(a.text for a in found.action_items[:1]),
            *(q.text for q in open_questions[:1]),
        ]
        return ExtractionV3(
            topics=find_topics(view),
            entities=find_entities(view),
            decisions=found.decisions,
            action_items=found.action_items,
            open_questions=open_questions,
            claims=claims,
            links=find_links(view),
            warnings=warnings,
            evidence_message_ids=[m.id for m in view.messages if m.id in cited],
            summary=_summary(view, summary_parts),
            qa_pairs=qa_pairs,
            emotional_tone=find_tone(view),
            emotional_arc=find_arc(view),
            conversation_phases=find_phases(view),
            implicit_assumptions=assumptions,
            negotiation_patterns=moves,
        )

    def extract_file(self, chunks_path: str | Path, out_path: str | Path) -> int:
        """Write one extraction line per chunk of ``chunks_path``; returns the number written.

        ``usage`` has zero tokens and cost; ``latency_s`` is the measured extraction time.
        """
        chunks = _read_chunks(Path(chunks_path))
        with atomic_writer(out_path) as handle:
            for chunk in chunks:
                started = time.perf_counter()
                extraction = self.extract(chunk)
                latency = time.perf_counter() - started
                line = {
                    "chunk_id": chunk.chunk_id,
                    "model": self.name,
                    "extraction": extraction.model_dump(mode="json"),
                    "usage": {
                        "input_tokens": 0,
                        "output_tokens": 0,
                        "cost_usd": 0.0,
                        "latency_s": round(latency, 6),
                    },
                }
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        return len(chunks)


EXTRACTORS.register(RuleBasedExtractor.name)(RuleBasedExtractor)


def _summary(view: ChunkView, parts: list[str]) -> str:
    if parts:
        return " ".join(p if p[-1] in ".!?" else f"{p}." for p in parts)
    if not view.messages:
        return ""
    longest = max(view.messages, key=lambda m: (len(m.text), -m.position))
    if longest.text:
        return trim_words(longest.text, _SUMMARY_WORDS)
    return f"Conversation between {', '.join(view.speakers)}."


def _read_chunks(path: Path) -> list[Chunk]:
    """Chunks of a ``chunks.jsonl``; a bad line raises :class:`InputError` naming it."""
    if not path.is_file():
        raise InputError("file not found", path=path)
    chunks: list[Chunk] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 ({exc.reason})", path=path, line=number) from None
            if not text.strip():
                continue
            try:
                chunks.append(Chunk.model_validate_json(text))
            except ValidationError as exc:
                where, msg = first_validation_error(exc)
                raise InputError(msg, path=path, line=number, field=where) from None
    return chunks
