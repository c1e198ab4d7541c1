"""The grounding judge (DESIGN.md §4): offline, deterministic, free — and audited (issue 28).

It reads an item the way a careful person with no language model would: which of its content
words the conversation holds (word stems, numbers without their currency, day and month names
without their abbreviations), which the messages it cites hold, who said those messages, and
whether the words around the item's claim read for or against. Per item, in order:

- ``fabricated``: fewer than :data:`FABRICATED` of its content words occur anywhere in the
  chunk (an entity: not a participant and not in the text; a link: not in the text);
- ``partially_supported`` (no credit): a text item of one content word (states nothing), or a
  copy of one whole message (repeats rather than states);
- ``weak_support``: the messages it cites hold under :data:`WEAK` of its words while another
  message holds clearly more;
- ``misattributed``: the person it is attributed to did not say the messages that carry it
  (claims, questions, Q/A: the speaker of the cited message that supports it best; owners,
  holders, actors, deciders: someone who speaks in, or is named by, the cited messages — and,
  where those messages have one clear author, that author or the person addressed);
- ``partially_supported``: a claim whose polarity the cited words contradict (pro on words that
  read against, con on words that read for), or an item under :data:`SUPPORTED` of whose words
  the chunk holds;
- ``none``: otherwise.

Scores: content accuracy = mean item credit (none 1; fabricated, copies and single words 0;
other labels 0.5) × 100; hallucination = share of items not fabricated × 100; completeness =
share of the chunk's content messages (≥ 4 words, ≥ 2 content words) whose content some item
states — shares ≥ 2 content words with it (all of them if it has 2), items that are copies,
single words or fabricated excepted — × 100. No item at all: completeness 0 when the chunk
has content (accuracy the same: nothing was stated), hallucination 100.

It does not use the offline rule extractor's cue lists (that would make the audit circular).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chatledger.core import Chunk, ExtractionV3, Registry
from chatledger.judge._base import Judge
from chatledger.judge._items import JudgedItem, judged_items
from chatledger.judge._verdict import ItemVerdict, Verdict
from chatledger.scoring import ChunkContext

UNCITED_FIELDS = frozenset({"entities", "links"})  # items of these fields cite no messages
TEXT_ITEM_FIELDS = frozenset(
    {
        "decisions",
        "action_items",
        "open_questions",
        "claims",
        "warnings",
        "qa_pairs",
        "implicit_assumptions",
    }
)
# Fields whose items state what was said (a question or a negotiation move may quote it).
STATING_FIELDS = frozenset(
    {"decisions", "action_items", "claims", "warnings", "implicit_assumptions"}
)
SPEAKER_FIELDS = frozenset({"claims", "open_questions", "qa_pairs"})  # attributed = who said it
FABRICATED = 0.25  # share of content words the chunk must hold for an item not to be invented
SUPPORTED = 0.50  # … for it to be fully supported
WEAK = 0.25  # share the cited messages must hold before another message is preferred
CONTENT_WORDS = 4
COPY = 0.90
_CREDIT = {"none": 1.0, "fabricated": 0.0}

_STOP = frozenset(
    """a an the and or but to of in on at for with is are was were be been being it its this that
    these those i you he she we they me him her us them my your his our their mine yours will
    would can could should shall may might must do does did done not no yes so if as by from up
    about just than then there here what which who whom whose when where why how all any each
    some such very too also only own same other into over out off again once more most much
    many ok okay oh ah um uh yeah yep yup lol haha hey hi hello thanks thank please im ive
    ill id dont doesnt didnt cant wont isnt arent wasnt its thats theres whats lets get got
    go going gonna wanna like really just still even ever now has have had having am get""".split()
)
_DAYS = {
    "monday": "mon",
    "mon": "mon",
    "tuesday": "tue",
    "tues": "tue",
    "tue": "tue",
    "wednesday": "wed",
    "wed": "wed",
    "thursday": "thu",
    "thurs": "thu",
    "thu": "thu",
    "friday": "fri",
    "fri": "fri",
    "saturday": "sat",
    "sat": "sat",
    "sunday": "sun",
    "sun": "sun",
    "january": "jan",
    "february": "feb",
    "march": "mar",
    "april": "apr",
    "june": "jun",
    "july": "jul",
    "august": "aug",
    "september": "sep",
    "sept": "sep",
    "october": "oct",
    "november": "nov",
    "december": "dec",
}
_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "twenty": "20",
    "thirty": "30",
    "hundred": "100",
    "half": "half",
}
# Words that read for or against what a claim is about (the judge's own short list).
_AGAINST = frozenset(
    """bad worse worst poor wrong broken broke fail fails failed failing failure problem problems
    issue issues risk risky worried worry worrying concern concerned expensive overpriced pricey
    costly steep high loud noisy noise grinding screech screeched late delay delayed slow never
    refuse refused refusing reject rejected unfair unnecessary overkill fantasy gone worn crash
    crashes crashed crashing leak leaking hate hated annoying annoyed angry upset waste wasted
    dangerous unsafe scam dodgy dodged weird knackered dead cold missing lost impossible
    unrealistic tired sick nope mess messy dirty filthy disgusting awful terrible horrible
    rubbish useless pointless disaster overflowing zoo fiction tight nasty drain expired basic
    illegal unreasonable mould mouldy stained stain scuffs damage damaged demoted dispute
    threat threatening upsell drama blow conflict conflicts eat too dropped""".split()
)
_FOR = frozenset(
    """good great better best fine fun love loved lovely perfect solid reliable worth cheap
    cheaper affordable smooth easy happy glad excellent amazing awesome brilliant safe agree
    agreed keen prefer recommend recommended honest fantastic helpful iconic decent drivable
    massive elite cute fits helps sense reasonable back whole point moot less doable knows
    carried priced fair working supports fixed functional acceptable""".split()
)
_NEGATION = frozenset(
    "not no never dont don't doesn't didn't isn't wasn't aren't can't cannot won't nt n't".split()
)
_ASKING = frozenset("you your you're youre u ur please pls".split())
_COMMITTING = frozenset("i'll ill will i'm im doing i'd gonna".split())
_ORDINAL = re.compile(r"[stndrh]+$")  # 21st, 2nd, 23rd, 4th -> the number
_TOKEN = re.compile(r"[a-z0-9£$€%+.'’/-]+")


def _stem(word: str) -> str:
    word = word.strip(".,!?;:'\"’()[]{}-/")
    if not word:
        return ""
    if word in _DAYS:
        return _DAYS[word]
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    number = word.strip("£$€+%~")
    if number and number[0].isdigit():
        return _ORDINAL.sub("", number.replace(",", "")) or number
    for suffix in ("ies", "ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:6]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold().replace("’", "'"))


def content_stems(text: str) -> list[str]:
    """The content words of ``text`` as stems (stop words, emoji and punctuation left out)."""
    out = []
    for token in _tokens(text):
        bare = token.strip(".,!?;:'\"()-/").replace("'", "")
        if not bare or bare in _STOP or (len(bare) < 2 and not bare.isdigit()):
            continue
        stem = _stem(bare)
        if stem and stem not in _STOP:
            out.append(stem)
    return out


def _stance(text: str) -> int:
    """+1 reads for, -1 against, 0 neither or both (a negation turns the next cue round)."""
    tokens = [t.strip(".,!?;:'\"()") for t in _tokens(text)]
    score = 0
    pending = False  # a negation waiting for a cue to turn round
    for token in tokens:
        if token in _NEGATION or token.endswith("n't") or token in ("nothing", "without"):
            if pending:
                score -= 1
            pending = True
            continue
        sign = 1 if token in _FOR else -1 if token in _AGAINST else 0
        if sign:
            score += -sign if pending else sign
            pending = False
    if pending:  # a negation with nothing to turn round reads against
        score -= 1
    return (score > 0) - (score < 0)


@dataclass
class _Message:
    speaker: str
    stems: frozenset[str]
    words: tuple[str, ...]
    text: str


class GroundingJudge(Judge):
    """Deterministic judge from a different 'family' than any language model."""

    name = "grounding"
    family = "offline-grounding"

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        return [self.judge(chunk, extraction) for chunk, extraction in pairs]

    def judge(self, chunk: Chunk, extraction: ExtractionV3) -> Verdict:
        people = ChunkContext.from_chunk(chunk)
        messages = [
            _Message(
                speaker=people.resolve(m.speaker),
                stems=frozenset(content_stems(m.text)),
                words=tuple(t.strip(".,!?;:'\"()") for t in _tokens(m.text)),
                text=m.text,
            )
            for m in chunk.messages
        ]
        names = {p: frozenset(content_stems(p)) for p in {m.speaker for m in messages}}
        vocab: set[str] = set().union(*(m.stems for m in messages)) if messages else set()
        for stems in names.values():
            vocab |= stems
        position = {m.id: i for i, m in enumerate(chunk.messages)}
        items = judged_items(extraction)
        verdicts: list[ItemVerdict] = []
        stated: list[frozenset[str]] = []
        credits: list[float] = []
        for item in items:
            label, reason, credit, states = self._label(
                item, extraction, messages, position, vocab, names, people, chunk
            )
            verdicts.append(ItemVerdict(item_id=item.item_id, label=label, reason=reason))
            credits.append(credit)
            if states:
                stated.append(frozenset(_item_stems(item)))
        content = [m for m in messages if len(m.words) >= CONTENT_WORDS and len(m.stems) >= 2]
        covered = sum(
            1 for m in content if any(len(m.stems & s) >= min(2, len(m.stems)) for s in stated)
        )
        completeness = 100.0 * covered / len(content) if content else 100.0
        if verdicts:
            accuracy = 100.0 * sum(credits) / len(credits)
            hallucination = 100.0 * sum(v.label != "fabricated" for v in verdicts) / len(verdicts)
        else:
            accuracy, hallucination = completeness, 100.0
        return Verdict(
            content_accuracy=round(accuracy, 6),
            completeness=round(completeness, 6),
            hallucination=round(hallucination, 6),
            items=verdicts,
        )

    def _label(
        self,
        item: JudgedItem,
        extraction: ExtractionV3,
        messages: list[_Message],
        position: dict[str, int],
        vocab: set[str],
        names: dict[str, frozenset[str]],
        people: ChunkContext,
        chunk: Chunk,
    ) -> tuple[str, str, float, bool]:
        """(label, reason, credit, whether the item states content for completeness)."""
        if not messages:
            return "fabricated", "the chunk has no messages", 0.0, False
        if item.field == "links":
            found = any(item.text.casefold() in m.text.casefold() for m in messages)
            if found:
                return "none", "the link is in the text", 1.0, False
            return "fabricated", "the link is nowhere in the text", 0.0, False
        stems = _item_stems(item)
        if item.field == "entities":
            if people.resolve(item.text) in names:
                return "none", "a participant", 1.0, False
            share = _share(stems, vocab)
            if share >= SUPPORTED:
                return "none", "named in the text", 1.0, False
            return "fabricated", f"not in the text ({share:.0%} of its words)", 0.0, False
        if not stems:
            return "none", "nothing to check", 1.0, False
        in_chunk = _share(stems, vocab)
        if in_chunk < FABRICATED:
            return (
                "fabricated",
                f"the conversation holds {in_chunk:.0%} of its content words",
                0.0,
                False,
            )
        if item.field in TEXT_ITEM_FIELDS and len(item.text.split()) < 2:
            return "partially_supported", "one word states nothing", 0.0, False
        copied = _copied(item.text, messages) if item.field in STATING_FIELDS else None
        if copied is not None:
            where = chunk.messages[copied].id
            return "partially_supported", f"repeats message {where} whole", 0.0, False
        cited = [position[e] for e in item.evidence if e in position]
        best, best_share = _best(stems, messages, range(len(messages)))
        if item.field not in UNCITED_FIELDS and cited:
            cited_stems = frozenset().union(*(messages[c].stems for c in cited))
            cited_share = _share(stems, cited_stems)
            if cited_share < WEAK and best_share >= cited_share + WEAK:
                where = chunk.messages[best].id
                return (
                    "weak_support",
                    f"cited messages hold {cited_share:.0%} of it; {where} holds {best_share:.0%}",
                    0.5,
                    True,
                )
        misattributed = self._attribution(item, stems, cited, messages, names, people)
        if misattributed is not None:
            return "misattributed", misattributed, 0.5, True
        if item.field == "claims":
            flipped = _polarity_problem(item, extraction, cited, messages)
            if flipped is not None:
                return "partially_supported", flipped, 0.5, True
        return "none", "supported by the cited messages", 1.0, True

    def _attribution(
        self,
        item: JudgedItem,
        stems: list[str],
        cited: list[int],
        messages: list[_Message],
        names: dict[str, frozenset[str]],
        people: ChunkContext,
    ) -> str | None:
        if not item.attributed_to:
            return None
        claimed = [people.resolve(n.strip()) for n in item.attributed_to.split(",") if n.strip()]
        if not claimed:
            return None
        pool = list(cited) or list(range(len(messages)))
        if item.field in SPEAKER_FIELDS:
            if item.field != "claims":
                asked = [c for c in pool if "?" in messages[c].text]
                pool = asked or pool
            best, best_share = _best(stems, messages, pool)
            carriers = {
                messages[c].speaker
                for c in pool
                if _share(stems, messages[c].stems) >= 0.5 * best_share
            }
            if claimed[0] not in carriers:
                return f"said by {messages[best].speaker}, not {item.attributed_to}"
            return None
        # Owners, holders, actors, deciders: someone who speaks in, or is named by, the cited
        # messages. An action item's owner is who takes it on: a speaker who commits ("I'll",
        # "will do") if one does; never one who only asks others ("can you", "please"), but
        # the one asked — named, or answering next to the request — may be.
        allowed = {p for p, s in names.items() if s and any(s & messages[c].stems for c in pool)}
        if item.field == "action_items":
            committers = {messages[c].speaker for c in pool if _COMMITTING & set(messages[c].words)}
            askers = {
                messages[c].speaker
                for c in pool
                if _ASKING & set(messages[c].words) and not _COMMITTING & set(messages[c].words)
            }
            for c in pool:
                if messages[c].speaker in askers:
                    allowed |= {
                        messages[n].speaker
                        for n in (c - 1, c + 1)
                        if 0 <= n < len(messages) and messages[n].speaker not in askers
                    }
            speakers = {messages[c].speaker for c in pool}
            allowed |= committers or (speakers - askers)
        else:
            allowed |= {messages[c].speaker for c in pool}
        outside = [p for p in claimed if p not in allowed]
        # A group's decision may list someone who agreed without a word in the cited messages.
        if outside and (len(claimed) < 3 or len(outside) * 2 > len(claimed)):
            return f"{', '.join(outside)} neither speaks in nor is named by the cited messages"
        return None


def _item_stems(item: JudgedItem) -> list[str]:
    text = item.text
    if item.field == "negotiation_patterns" and ": " in text:
        text = text.split(": ", 1)[1]
    return content_stems(text)


def _share(stems: Sequence[str], pool: set[str] | frozenset[str]) -> float:
    unique = set(stems)
    return len(unique & pool) / len(unique) if unique else 0.0


def _best(
    stems: Sequence[str], messages: list[_Message], pool: Sequence[int] | range
) -> tuple[int, float]:
    best, best_share = next(iter(pool), 0), -1.0
    for i in pool:
        share = _share(stems, messages[i].stems)
        if share > best_share:
            best, best_share = i, share
    return best, max(best_share, 0.0)


def _copied(text: str, messages: list[_Message]) -> int | None:
    """The message ``text`` repeats whole (≥ 4 words, ≥ 90 % of the words both ways)."""
    words = [w for w in (t.strip(".,!?;:'\"()") for t in _tokens(text)) if w]
    if len(words) < CONTENT_WORDS:
        return None
    mine = set(words)
    for i, m in enumerate(messages):
        theirs = {w for w in m.words if w}
        if len(m.words) < CONTENT_WORDS or not theirs:
            continue
        shared = len(mine & theirs)
        if shared >= COPY * len(theirs) and shared >= COPY * len(mine):
            return i
    return None


def _polarity_problem(
    item: JudgedItem, extraction: ExtractionV3, cited: list[int], messages: list[_Message]
) -> str | None:
    index = int(item.item_id.partition("#")[2])
    polarity = extraction.claims[index].polarity
    stance = _stance(item.text)
    if stance == 0 and cited:
        stance = _stance(" ".join(messages[c].text for c in cited))
    if polarity == "pro" and stance < 0:
        return "labelled pro, but its words read against"
    if polarity == "con" and stance > 0:
        return "labelled con, but its words read for"
    return None


# Offline judges a run config's ``judges:`` names; other packages add theirs through the
# entry-point group ``chatledger.judges`` (docs/plugins.md).
JUDGES: Registry[type[Judge]] = Registry("judge", group="chatledger.judges", expects=Judge)
JUDGES.register("grounding")(GroundingJudge)
