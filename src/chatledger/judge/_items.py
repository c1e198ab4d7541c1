"""What a judge looks at: a chunk's messages and the extraction's items, never the model name."""

from __future__ import annotations

from dataclasses import dataclass

from chatledger.core import Chunk, ExtractionV3

# field -> (text attribute, attribution attribute or None)
JUDGED_FIELDS: dict[str, tuple[str, str | None]] = {
    "decisions": ("text", "made_by"),
    "action_items": ("text", "owner"),
    "open_questions": ("text", "asked_by"),
    "claims": ("text", "speaker"),
    "warnings": ("text", None),
    "qa_pairs": ("question", "asked_by"),
    "implicit_assumptions": ("text", "held_by"),
    "negotiation_patterns": ("text", "actor"),
    "entities": ("name", None),
    "links": ("url", None),
}


@dataclass(frozen=True)
class JudgedItem:
    """One extracted item as shown to a judge."""

    item_id: str
    field: str
    text: str
    attributed_to: str | None
    evidence: tuple[str, ...]
    # What else the item asserts that a judge must see (a claim's stance, a Q/A's answer).
    detail: str | None = None

    def render(self) -> str:
        said = f" [{self.detail}]" if self.detail else ""
        who = f" (attributed to {self.attributed_to})" if self.attributed_to else ""
        cites = f" [evidence: {', '.join(self.evidence)}]" if self.evidence else ""
        return f"{self.item_id}: {self.text}{said}{who}{cites}"


def judged_items(extraction: ExtractionV3) -> list[JudgedItem]:
    """Every judged item with a stable id ``field#index``."""
    items: list[JudgedItem] = []
    for field, (text_attr, who_attr) in JUDGED_FIELDS.items():
        for index, item in enumerate(getattr(extraction, field)):
            text = getattr(item, text_attr) or ""
            if field == "negotiation_patterns" and not text:
                text = item.pattern
            if field == "negotiation_patterns":
                text = f"{item.pattern}: {text}" if text != item.pattern else text
            who = getattr(item, who_attr) if who_attr else None
            if isinstance(who, list):  # a decision's deciders
                who = ", ".join(who) or None
            evidence = tuple(getattr(item, "evidence", ()) or ())
            detail = None
            if field == "claims":
                about = f" on {item.subject}" if item.subject else ""
                detail = f"stance: {item.polarity}{about}"
            elif field == "qa_pairs" and item.answer:
                detail = f"answer: {item.answer}"
            items.append(JudgedItem(f"{field}#{index}", field, text, who, evidence, detail))
    return items


def render_conversation(chunk: Chunk) -> str:
    lines = [f"[{m.id}] {m.speaker}: {m.text}" for m in chunk.messages]
    return "\n".join(lines)
