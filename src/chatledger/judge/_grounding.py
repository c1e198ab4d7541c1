"""The grounding judge (DESIGN.md §4): offline, deterministic, free.

For every item it looks for support in the messages the item cites and in the whole chunk
(token-set similarity of the item text against each message), checks attribution against the
speaker of the best supporting message, and labels it:

- ``fabricated``: no message supports it (best similarity < 40 anywhere);
- ``weak_support``: the cited messages do not support it (< 60) but another message does;
- ``partially_supported``: the best support is between 40 and 60;
- ``over_interpreted``: supported, but more than half of its content words appear nowhere in
  the chunk (the item says more than the text);
- ``misattributed``: supported, but attributed to someone other than the supporting speaker;
- ``none``: supported by the cited messages and correctly attributed.

Scores: content accuracy = mean item credit (none 1, fabricated 0, others 0.5) × 100;
hallucination = share of items not fabricated × 100; completeness = share of content-bearing
messages (≥ 4 words) that some item cites or is supported by × 100.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chatledger.core import Chunk, ExtractionV3, Registry
from chatledger.judge._base import Judge
from chatledger.judge._items import JudgedItem, judged_items
from chatledger.judge._verdict import ItemVerdict, Verdict
from chatledger.matching import preprocess, token_set_matrix
from chatledger.scoring import ChunkContext

UNCITED_FIELDS = frozenset({"entities", "links"})  # items of these fields cite no messages
SUPPORTED = 60.0
PARTIAL = 40.0
CONTENT_WORDS = 4
_CREDIT = {"none": 1.0, "fabricated": 0.0}
_STOP = frozenset(
    "a an the and or but to of in on at for with is are was were be been it this that i you he"
    " she we they me my your our their will would can could should do does did not no yes so if"
    " as by from up about just".split()
)


def _content(text: str) -> str:
    """Preprocessed text without stop words (kept whole when nothing else is left)."""
    words = [w for w in text.split() if w not in _STOP]
    return " ".join(words) if words else text


class GroundingJudge(Judge):
    """Deterministic judge from a different 'family' than any language model."""

    name = "grounding"
    family = "offline-grounding"

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        return [self.judge(chunk, extraction) for chunk, extraction in pairs]

    def judge(self, chunk: Chunk, extraction: ExtractionV3) -> Verdict:
        items = judged_items(extraction)
        messages = chunk.messages
        processed_msgs = preprocess([m.text for m in messages])
        chunk_vocab = {w for text in processed_msgs for w in text.split()}
        chunk_vocab.update(w for name in chunk.speakers() for w in preprocess([name])[0].split())
        content_msgs = [_content(t) for t in processed_msgs]
        position = {m.id: i for i, m in enumerate(messages)}
        people = ChunkContext.from_chunk(chunk)
        people_folded = {p.casefold() for p in chunk.speakers()}
        if items and messages:
            item_texts = [_content(t) for t in preprocess([i.text for i in items])]
            sims = token_set_matrix(item_texts, content_msgs)
            # Without a shared word, token_set_ratio falls back to character similarity of
            # unrelated strings (often 40-50): that is no support at all.
            item_sets = [set(t.split()) for t in item_texts]
            msg_sets = [set(t.split()) for t in content_msgs]
            shared = np.array([[bool(a & b) for b in msg_sets] for a in item_sets], dtype=bool)
            sims = np.where(shared, sims, 0.0)
            # A participant's name is supported by the chunk itself (they are speaking in it).
            for row, item in enumerate(items):
                if item.field == "entities" and people.resolve(item.text) in people_folded:
                    sims[row, :] = np.maximum(sims[row, :], 100.0)
        else:
            sims = np.zeros((len(items), len(messages)))
        verdicts: list[ItemVerdict] = []
        covered: set[int] = set()
        for row, item in enumerate(items):
            cited = [position[e] for e in item.evidence if e in position]
            covered.update(cited)
            label, reason, best = self._label(item, sims[row], cited, chunk_vocab, people, chunk)
            if best is not None and sims[row, best] >= SUPPORTED:
                covered.add(best)
            verdicts.append(ItemVerdict(item_id=item.item_id, label=label, reason=reason))
        content = [i for i, text in enumerate(processed_msgs) if len(text.split()) >= CONTENT_WORDS]
        if content:
            completeness = 100.0 * len(covered.intersection(content)) / len(content)
        else:
            completeness = 100.0
        if verdicts:
            credit = [_CREDIT.get(v.label, 0.5) for v in verdicts]
            accuracy = 100.0 * float(np.mean(credit))
            hallucination = 100.0 * sum(v.label != "fabricated" for v in verdicts) / len(verdicts)
        else:
            accuracy = hallucination = 100.0
            if content:
                completeness = 0.0
        return Verdict(
            content_accuracy=round(accuracy, 6),
            completeness=round(completeness, 6),
            hallucination=round(hallucination, 6),
            items=verdicts,
        )

    def _label(
        self,
        item: JudgedItem,
        sims: np.ndarray,
        cited: list[int],
        chunk_vocab: set[str],
        people: ChunkContext,
        chunk: Chunk,
    ) -> tuple[str, str, int | None]:
        if sims.size == 0:
            return "fabricated", "the chunk has no messages", None
        best = int(np.argmax(sims))
        best_sim = float(sims[best])
        cited_best = max((float(sims[c]) for c in cited), default=0.0)
        if best_sim < PARTIAL:
            return "fabricated", f"no message supports it (best {best_sim:.0f})", best
        if best_sim < SUPPORTED:
            return "partially_supported", f"only partial support (best {best_sim:.0f})", best
        if item.field not in UNCITED_FIELDS and cited_best < SUPPORTED:
            where = chunk.messages[best].id
            return "weak_support", f"cited messages do not support it; {where} does", best
        words = [w for w in preprocess([item.text])[0].split() if w not in _STOP]
        novel = [w for w in words if w not in chunk_vocab]
        if len(words) >= 3 and len(novel) / len(words) > 0.5:
            return (
                "over_interpreted",
                f"{len(novel)} of {len(words)} content words not in text",
                best,
            )
        if item.attributed_to:
            support_row = (
                max(cited, key=lambda c: float(sims[c])) if cited_best >= SUPPORTED else best
            )
            speaker = chunk.messages[support_row].speaker
            if people.resolve(item.attributed_to) != people.resolve(speaker) and item.field in (
                "claims",
                "open_questions",
                "qa_pairs",
            ):
                return "misattributed", f"said by {speaker}, not {item.attributed_to}", best
        return "none", "supported by the cited messages", best


# Offline judges a run config's ``judges:`` names; other packages add theirs through the
# entry-point group ``chatledger.judges`` (docs/plugins.md).
JUDGES: Registry[type[Judge]] = Registry("judge", group="chatledger.judges", expects=Judge)
JUDGES.register("grounding")(GroundingJudge)
