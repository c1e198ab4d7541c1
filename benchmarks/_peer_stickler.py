"""AWS stickler (PyPI ``stickler-eval``) configured to score what ChatLedger scores, for timing.

Fair configuration: the comparator is the same RapidFuzz ``token_set_ratio`` with
``utils.default_process`` that ChatLedger's default matcher uses, the threshold is 0.60, and list
items are paired on their text only. Two ways of modelling the item lists are offered:

* ``text_lists``: every field is a ``List[str]`` of item texts. This is stickler's cheapest
  path (its primitive-list Hungarian matcher); the peer does strictly less work than ChatLedger,
  which also scores owners, polarities, subjects and evidence on the matched pairs.
* ``item_objects``: ``topics`` stays a ``List[str]``; the other fields are lists of a
  ``StructuredModel`` item holding just the ``text`` (``match_threshold`` 0.60), the way
  stickler models a list of objects.

stickler is an optional, benchmark-only dependency: :func:`load_peer` returns ``None`` and a reason
when it cannot be imported, and the benchmark carries on without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz, utils

from chatledger.core import ExtractionV3

# The list fields both tools can score as "pair the items by text, then count".
PEER_FIELDS: tuple[str, ...] = (
    "topics",
    "decisions",
    "action_items",
    "open_questions",
    "claims",
    "warnings",
    "implicit_assumptions",
)
THRESHOLD = 0.60
VARIANTS: tuple[str, ...] = ("text_lists", "item_objects")


def item_texts(extraction: ExtractionV3, name: str) -> list[str]:
    """The texts of a list field's items (``topics`` are texts already)."""
    values: Sequence[Any] = getattr(extraction, name)
    return [v if isinstance(v, str) else v.text for v in values]


def row_texts(extraction: dict[str, Any], name: str) -> list[str]:
    """:func:`item_texts` of an extraction still as parsed JSON (the peer's own reading)."""
    values: Sequence[Any] = extraction.get(name) or ()
    return [v if isinstance(v, str) else v["text"] for v in values]


@dataclass(frozen=True)
class Peer:
    """A loaded stickler: builds its documents and compares them."""

    version: str
    build_texts: Callable[[str, dict[str, list[str]]], Any]

    def build(self, variant: str, extraction: ExtractionV3) -> Any:
        """The document of ``variant`` for an extraction."""
        return self.build_texts(variant, {f: item_texts(extraction, f) for f in PEER_FIELDS})

    def compare(self, reference: Any, challenger: Any) -> dict[str, Any]:
        """stickler's per-document comparison with the confusion matrix (needed for F1).

        ``recall_with_fd=True`` makes recall = tp / (tp + fn + fd) = matches / reference items,
        the same definition ChatLedger uses.
        """
        result: dict[str, Any] = reference.compare_with(
            challenger, include_confusion_matrix=True, recall_with_fd=True
        )
        return result

    @staticmethod
    def field_f1(result: dict[str, Any], name: str) -> float:
        """F1 of one field from stickler's confusion matrix; both lists empty → 1.0.

        stickler reports a true negative with F1 0.0 when both lists are empty; ChatLedger (and
        DESIGN.md §3) call that agreement, 1.0, so the convention is aligned here before the two
        are compared. Everything else is stickler's own ``cm_f1``.
        """
        overall = result["confusion_matrix"]["fields"][name]["overall"]
        if overall["tp"] + overall["fp"] + overall["fn"] == 0:
            return 1.0
        return float(overall["derived"]["cm_f1"])


def load_peer() -> tuple[Peer | None, str]:
    """stickler configured as described in the module docstring, or None and why not."""
    try:
        from importlib.metadata import version

        from stickler import ComparableField, StructuredModel
        from stickler.comparators.base import BaseComparator
    except ImportError as exc:  # optional dependency: pip install stickler-eval==1.0.0
        return None, f"stickler-eval is not importable ({exc}); peer comparison skipped"

    class TokenSetComparator(BaseComparator):  # type: ignore[misc]
        """``fuzz.token_set_ratio`` with ``default_process``, on 0–1 (ChatLedger's matcher)."""

        DEFAULT_THRESHOLD = THRESHOLD

        def __init__(self, threshold: float | None = None) -> None:
            super().__init__(threshold=threshold)

        @property
        def name(self) -> str:
            return "token_set_default_process"

        def _compare(self, value1: Any, value2: Any) -> float:
            score = fuzz.token_set_ratio(value1, value2, processor=utils.default_process)
            return float(score) / 100.0

    def text_list() -> Any:
        return ComparableField(comparator=TokenSetComparator(threshold=THRESHOLD))

    class TextItem(StructuredModel):  # type: ignore[misc]
        match_threshold = THRESHOLD
        text: str = ComparableField(comparator=TokenSetComparator(threshold=THRESHOLD))

    class TextLists(StructuredModel):  # type: ignore[misc]
        topics: list[str] = text_list()
        decisions: list[str] = text_list()
        action_items: list[str] = text_list()
        open_questions: list[str] = text_list()
        claims: list[str] = text_list()
        warnings: list[str] = text_list()
        implicit_assumptions: list[str] = text_list()

    class ItemObjects(StructuredModel):  # type: ignore[misc]
        topics: list[str] = text_list()
        decisions: list[TextItem] = ComparableField()
        action_items: list[TextItem] = ComparableField()
        open_questions: list[TextItem] = ComparableField()
        claims: list[TextItem] = ComparableField()
        warnings: list[TextItem] = ComparableField()
        implicit_assumptions: list[TextItem] = ComparableField()

    def build_texts(variant: str, texts: dict[str, list[str]]) -> Any:
        if variant == "text_lists":
            return TextLists(**{f: texts[f] for f in PEER_FIELDS})
        if variant == "item_objects":
            values: dict[str, list[Any]] = {"topics": texts["topics"]}
            for f in PEER_FIELDS[1:]:
                values[f] = [TextItem(text=t) for t in texts[f]]
            return ItemObjects(**values)
        raise ValueError(f"unknown stickler variant {variant!r}")

    return Peer(version=version("stickler-eval"), build_texts=build_texts), ""
