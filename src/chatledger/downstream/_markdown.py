"""A person's view of one model's pipeline output: drift, loops, escalation, arcs, daily report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from chatledger.downstream._arcs import conversation_arc
from chatledger.downstream._conversation import ConversationView, build_conversations
from chatledger.downstream._daily import conversation_report
from chatledger.downstream._drift import conversation_drifts
from chatledger.downstream._escalation import conversation_flags
from chatledger.downstream._loops import conversation_loops

if TYPE_CHECKING:
    from chatledger.core import Chunk, ExtractionRecord


def _inline(text: str) -> str:
    """One line of Markdown: no line breaks; table pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text.replace('`', '')}`"


def _conversation_markdown(conversation: ConversationView) -> list[str]:
    title = conversation.conversation_id or "(no conversation id)"
    chunk_list = ", ".join(f"{_code(v.chunk_id)} ({v.ref.day})" for v in conversation.chunks)
    out = [f"## Conversation {_inline(title)}", "", f"Chunks in time order: {chunk_list}", ""]

    out += ["### Drift", ""]
    drifts = conversation_drifts(conversation)
    out += [f"- {_code(d.chunk_id)} {_inline(d.describe())}" for d in drifts] or ["_No drift._"]

    out += ["", "### Open loops", ""]
    loops = conversation_loops(conversation)
    out += [
        f"- {_inline(loop.text)} — chunks {', '.join(_code(c) for c in loop.chunk_ids)}"
        for loop in loops
    ] or ["_No open loops._"]

    out += ["", "### Escalation", ""]
    flags = conversation_flags(conversation)
    out += [f"- {_code(f.chunk_id)} {_inline(f.describe())}" for f in flags] or ["_No escalation._"]

    out += ["", "### Mood arc", ""]
    arc = conversation_arc(conversation)
    if arc:
        out += ["| chunk | closing mood | valence | trajectory |", "|---|---|---|---|"]
        out += [
            f"| {_code(p.chunk_id)} | {p.closing_mood} | {p.valence} | {p.trajectory} |"
            for p in arc
        ]
        out += ["", "Arc: " + " → ".join(f"{p.valence} ({p.trajectory})" for p in arc)]
    else:
        out.append("_No emotional arc extracted._")

    out += ["", "### Daily report"]
    report = conversation_report(conversation)
    if not report:
        out += ["", "_Nothing to report._"]
    day = None
    for highlight in report:
        if highlight.day != day:
            day = highlight.day
            out += ["", f"#### {day}", ""]
        out.append(f"- {_inline(highlight.line)}")
    return out


def render_pipeline_markdown(
    chunks: Sequence[Chunk], records: Mapping[str, ExtractionRecord]
) -> str:
    """Markdown of every consumer's output for one model's extractions, per conversation."""
    conversations = build_conversations(chunks, records)
    usable = sum(1 for c in chunks if (r := records.get(c.chunk_id)) and r.extraction is not None)
    lines = [
        "# Downstream pipeline",
        "",
        f"{len(conversations)} conversation(s), {len(chunks)} chunk(s), "
        f"{usable} with a usable extraction (the others are read as empty).",
    ]
    for conversation in conversations:
        lines += ["", *_conversation_markdown(conversation)]
    return "\n".join(lines) + "\n"
