"""Corruption operators: turn a reference extraction into a *simulated* challenger.

Every operator takes a severity in [0, 1] and a seed. Each item gets one uniform draw that does
not depend on the severity, and an item is corrupted when its draw falls below the severity, so
the items corrupted at a higher severity are a superset of those at a lower one: scores fall
monotonically as severity rises, which is what the metric audit (DESIGN.md §7) checks.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from chatledger.core import FIELDS_V3, Chunk, ExtractionV3, Registry
from chatledger.simulate._truth import Effect

TEXT_FIELDS: dict[str, str] = {
    "decisions": "text",
    "action_items": "text",
    "open_questions": "text",
    "claims": "text",
    "warnings": "text",
    "qa_pairs": "question",
    "implicit_assumptions": "text",
}
# Every field that holds a list of items (the rest: confidence, summary, emotional_arc).
LIST_FIELDS: tuple[str, ...] = tuple(
    f for f in FIELDS_V3 if f not in ("confidence", "summary", "emotional_arc")
)


def item_draw(
    seed: int, operator: str, chunk_id: str, field: str, index: int, part: int = 0
) -> float:
    """A uniform draw in [0, 1) fixed by (seed, operator, chunk, field, item, part) alone."""
    key = f"{seed}|{operator}|{chunk_id}|{field}|{index}|{part}".encode()
    digest = hashlib.blake2b(key, digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class CorruptionOperator(ABC):
    """Rewrites an extraction; ``targets`` are the layer-1 fields whose score it should lower."""

    name: str = ""
    targets: tuple[str, ...] = ()
    # What an item this operator changes has undergone (the known truth of the judge audit).
    effect: Effect | None = None

    def apply(
        self, extraction: ExtractionV3, chunk: Chunk, severity: float, seed: int
    ) -> ExtractionV3:
        """The corrupted copy (the input is never modified): :meth:`edit` on a dump of it."""
        data = extraction.model_dump(mode="python")
        self.edit(data, chunk, severity, seed)
        # Values came from a valid extraction and are only rearranged: no need to re-validate.
        return ExtractionV3.model_validate(data)

    @abstractmethod
    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:
        """Corrupt ``data``, a dump of the extraction, in place."""

    def hit(self, seed: int, chunk: Chunk, field: str, index: int, severity: float) -> bool:
        return item_draw(seed, self.name, chunk.chunk_id, field, index) < severity

    def hits(
        self, data: dict[str, Any], field: str, chunk: Chunk, severity: float, seed: int
    ) -> Iterator[dict[str, Any]]:
        """The items of ``field`` in ``data`` that this operator corrupts at ``severity``."""
        for i, item in enumerate(data[field]):
            if self.hit(seed, chunk, field, i, severity):
                yield item

    def origins(
        self, field: str, before: int, after: int, chunk: Chunk, severity: float, seed: int
    ) -> list[int | None]:
        """For each item of ``field`` after :meth:`apply`, its index before (None: added).

        Operators that keep every item in place need not override it."""
        if before != after:
            raise AssertionError(f"{self.name} changed the length of {field}")
        return list(range(before))

    def changed(self, field: str, before: Any, after: Any) -> bool:
        """Whether this operator really changed an item (not only reordered a list in it)."""
        return bool(before != after)

    def apply_traced(
        self, extraction: ExtractionV3, chunk: Chunk, severity: float, seed: int
    ) -> tuple[ExtractionV3, dict[str, list[tuple[int | None, bool]]]]:
        """:meth:`apply`, and per list field, for each item after it: (index before or None,
        whether this operator changed it). An index before that is not listed was dropped."""
        out = self.apply(extraction, chunk, severity, seed)
        trace: dict[str, list[tuple[int | None, bool]]] = {}
        for field in LIST_FIELDS:
            old, new = getattr(extraction, field), getattr(out, field)
            steps: list[tuple[int | None, bool]] = []
            for j, origin in enumerate(
                self.origins(field, len(old), len(new), chunk, severity, seed)
            ):
                steps.append((origin, origin is None or self.changed(field, old[origin], new[j])))
            trace[field] = steps
        return out, trace


OPERATORS: Registry[type[CorruptionOperator]] = Registry("corruption operator")


@OPERATORS.register("drop")
class DropItems(CorruptionOperator):
    """Drop list items (every list field, the summary shortened to its first half)."""

    name = "drop"
    targets = LIST_FIELDS
    effect: Effect | None = "dropped"

    def origins(
        self, field: str, before: int, after: int, chunk: Chunk, severity: float, seed: int
    ) -> list[int | None]:
        return [i for i in range(before) if not self.hit(seed, chunk, field, i, severity)]

    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:
        for field in LIST_FIELDS:
            data[field] = [
                item
                for i, item in enumerate(data[field])
                if not self.hit(seed, chunk, field, i, severity)
            ]


_FLIP = {"pro": "con", "con": "pro", "neutral": "con"}


@OPERATORS.register("flip_polarity")
class FlipPolarity(CorruptionOperator):
    """Claims change sides: pro ↔ con, neutral → con."""

    name = "flip_polarity"
    targets = ("claims",)
    effect: Effect | None = "polarity_flipped"

    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:
        for claim in self.hits(data, "claims", chunk, severity, seed):
            claim["polarity"] = _FLIP[claim["polarity"]]


def _other_person(name: str | None, people: Sequence[str]) -> str | None:
    """The next participant after ``name`` (or an outsider when the chunk has only one)."""
    if not people:
        return "Someone Else" if name else name
    folded = [p.casefold() for p in people]
    current = (name or "").casefold()
    matches = [i for i, p in enumerate(folded) if current and (current in p or p in current)]
    start = matches[0] if matches else -1
    choice = people[(start + 1) % len(people)]
    if choice.casefold() == current or len(people) == 1:
        return "Someone Else"
    return choice


@OPERATORS.register("swap_speaker")
class SwapSpeaker(CorruptionOperator):
    """Attribute items to the wrong participant (owners, speakers, actors, askers)."""

    name = "swap_speaker"
    targets = ("action_items", "emotional_tone", "negotiation_patterns")
    effect: Effect | None = "speaker_swapped"
    _ROLES: tuple[tuple[str, str], ...] = (
        ("action_items", "owner"),
        ("claims", "speaker"),
        ("open_questions", "asked_by"),
        ("qa_pairs", "asked_by"),
        ("emotional_tone", "speaker"),
        ("negotiation_patterns", "actor"),
        ("implicit_assumptions", "held_by"),
    )

    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:
        people = chunk.speakers()
        for field, role in self._ROLES:
            for item in self.hits(data, field, chunk, severity, seed):
                item[role] = _other_person(item.get(role), people)
        for decision in self.hits(data, "decisions", chunk, severity, seed):
            decision["made_by"] = [_other_person(p, people) for p in decision["made_by"]]

    def changed(self, field: str, before: Any, after: Any) -> bool:
        # Everyone's name moved one along: the same deciders in another order is no swap.
        if field == "decisions":
            same = {p.casefold() for p in before.made_by} == {p.casefold() for p in after.made_by}
            return not same
        return bool(before != after)


_INVENTED = (
    "Order forty folding chairs from the hardware catalogue",
    "Renew the parking permit at the municipal office",
    "Quarterly tax paperwork needs a notary stamp",
    "Switch the broadband contract to a fibre provider",
    "Repaint the garden shed in dark olive green",
    "Book a piano tuner for the community hall",
    "Migrate the mailing list to a new newsletter platform",
    "Submit expense receipts for the conference hotel",
)


@OPERATORS.register("invent_item")
class InventItems(CorruptionOperator):
    """Add fabricated items, unrelated to the conversation, to the text fields."""

    name = "invent_item"
    targets = tuple(TEXT_FIELDS)
    effect: Effect | None = "invented"

    def origins(
        self, field: str, before: int, after: int, chunk: Chunk, severity: float, seed: int
    ) -> list[int | None]:
        return [*range(before), *([None] * (after - before))]

    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:
        speaker = chunk.speakers()[0] if chunk.speakers() else None
        evidence = [chunk.messages[0].id] if chunk.messages else []
        for field, key in TEXT_FIELDS.items():
            # Up to max(2, n) slots; slot k is filled when its draw is below the severity.
            slots = max(2, len(data[field]))
            for k in range(slots):
                if not self.hit(seed, chunk, field, 1000 + k, severity):
                    continue
                text = _INVENTED[(k + len(field)) % len(_INVENTED)]
                data[field].append(_invented_item(field, key, text, speaker, evidence))


def _invented_item(
    field: str, key: str, text: str, speaker: str | None, evidence: list[str]
) -> dict[str, Any]:
    item: dict[str, Any] = {key: text, "evidence": evidence}
    if field in ("decisions", "action_items", "open_questions", "claims"):
        item["confidence"] = 0.7
    if field == "claims":
        item.update(subject="invented", polarity="pro", speaker=speaker)
    if field == "action_items":
        item["owner"] = speaker
    if field == "qa_pairs":
        item["answer"] = "Probably next week"
    return item


_SYNONYMS = {
    "buy": "purchase",
    "get": "obtain",
    "send": "forward",
    "call": "phone",
    "book": "reserve",
    "fix": "repair",
    "need": "require",
    "want": "wish",
    "think": "reckon",
    "good": "fine",
    "bad": "poor",
    "big": "large",
    "small": "little",
    "car": "vehicle",
    "house": "home",
    "price": "cost",
    "money": "cash",
    "meeting": "catch-up",
    "tomorrow": "next-day",
    "friday": "end-of-week",
    "cheap": "inexpensive",
    "fast": "quick",
    "late": "delayed",
    "start": "begin",
    "finish": "complete",
    "help": "assist",
    "ask": "enquire",
    "pay": "settle",
}
_FILLERS = ("thing", "matter", "bit", "item", "stuff", "point")


def _paraphrase(text: str, draw: Callable[[int], float], severity: float) -> str:
    words = text.split()
    out = []
    for j, word in enumerate(words):
        if draw(j) < severity:
            bare = word.strip(".,!?;:").lower()
            out.append(_SYNONYMS.get(bare, _FILLERS[j % len(_FILLERS)] + str(j)))
        else:
            out.append(word)
    return " ".join(out) if out else text


@OPERATORS.register("paraphrase")
class Paraphrase(CorruptionOperator):
    """Reword texts: each word is replaced (synonym or filler) with probability = severity."""

    name = "paraphrase"
    targets = (*TEXT_FIELDS, "summary", "topics")
    effect: Effect | None = "paraphrased"

    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:

        def drawer(field: str, i: int) -> Callable[[int], float]:
            return lambda j: item_draw(seed, self.name, chunk.chunk_id, field, i, j)

        for field, key in TEXT_FIELDS.items():
            for i, item in enumerate(data[field]):
                item[key] = _paraphrase(item[key], drawer(field, i), severity)
        data["topics"] = [
            _paraphrase(t, drawer("topics", i), severity) for i, t in enumerate(data["topics"])
        ]
        data["summary"] = _paraphrase(data["summary"], drawer("summary", 0), severity)


@OPERATORS.register("keywords")
class CollapseToKeywords(CorruptionOperator):
    """Collapse a text to its longest word — the one-keyword pitfall of token_set_ratio."""

    name = "keywords"
    targets = tuple(TEXT_FIELDS)
    effect: Effect | None = "keywords"

    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:
        for field, key in TEXT_FIELDS.items():
            for item in self.hits(data, field, chunk, severity, seed):
                words = [w.strip(".,!?;:'\"") for w in item[key].split()]
                item[key] = max(words, key=len) or item[key]


@OPERATORS.register("shift_phases")
class ShiftPhases(CorruptionOperator):
    """Move phase boundaries and turning points later by up to ``severity × 4`` messages."""

    name = "shift_phases"
    targets = ("conversation_phases", "emotional_arc")
    effect: Effect | None = "phases_shifted"
    max_shift = 4

    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:
        ids = [m.id for m in chunk.messages]
        position = {m: i for i, m in enumerate(ids)}
        shift = round(severity * self.max_shift)

        def moved(message_id: str, by: int) -> str:
            if message_id not in position or not ids:
                return message_id
            return ids[min(position[message_id] + by, len(ids) - 1)]

        for phase in data["conversation_phases"]:
            phase["start_message_id"] = moved(phase["start_message_id"], shift)
            phase["end_message_id"] = moved(phase["end_message_id"], 2 * shift)
        arc = data.get("emotional_arc")
        if arc:
            for point in arc["turning_points"]:
                point["message_id"] = moved(point["message_id"], shift + (shift > 0))


# Operators that only the judge audit applies (not part of the demo's simulated models or the
# metric audit, whose figures stay as they were).
PROBES: Registry[type[CorruptionOperator]] = Registry("judge probe operator")
EVIDENCE_FIELDS: tuple[str, ...] = (
    "decisions",
    "action_items",
    "open_questions",
    "claims",
    "warnings",
    "qa_pairs",
    "implicit_assumptions",
    "negotiation_patterns",
)


@PROBES.register("shift_evidence")
class ShiftEvidence(CorruptionOperator):
    """Cite the wrong messages: every cited id moves half the chunk away (wrapping round)."""

    name = "shift_evidence"
    targets = ("evidence_message_ids",)
    effect: Effect | None = "evidence_shifted"

    def edit(self, data: dict[str, Any], chunk: Chunk, severity: float, seed: int) -> None:
        ids = [m.id for m in chunk.messages]
        position = {m: i for i, m in enumerate(ids)}
        if len(ids) < 2:
            return
        half = len(ids) // 2

        def moved(message_id: str) -> str:
            if message_id not in position:
                return message_id
            return ids[(position[message_id] + half) % len(ids)]

        for field in EVIDENCE_FIELDS:
            for item in self.hits(data, field, chunk, severity, seed):
                if item["evidence"]:
                    item["evidence"] = list(dict.fromkeys(moved(e) for e in item["evidence"]))


def operator_class(name: str) -> type[CorruptionOperator]:
    """A registered operator or judge probe by name."""
    if name in PROBES and name not in OPERATORS:
        return PROBES.get(name)
    return OPERATORS.get(name)


def corrupt(
    extraction: ExtractionV3, chunk: Chunk, operator: str, severity: float, seed: int = 0
) -> ExtractionV3:
    """Apply one registered operator at ``severity`` ∈ [0, 1]."""
    return corrupt_traced(extraction, chunk, operator, severity, seed)[0]


def corrupt_traced(
    extraction: ExtractionV3, chunk: Chunk, operator: str, severity: float, seed: int = 0
) -> tuple[ExtractionV3, dict[str, list[tuple[int | None, bool]]]]:
    """:func:`corrupt` with the operator's trace (:meth:`CorruptionOperator.apply_traced`)."""
    if not 0.0 <= severity <= 1.0:
        raise ValueError(f"severity must lie in [0, 1], got {severity}")
    return operator_class(operator)().apply_traced(extraction, chunk, severity, seed)
