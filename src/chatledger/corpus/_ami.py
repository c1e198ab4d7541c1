"""AMI Meeting Corpus manual annotations → chunks.jsonl + partial v3 human gold.

Messages are dialogue acts (id = the act's ``nite:id``), chunks are topic segments (split into
parts of at most ``max_messages`` acts), and each human layer becomes one or more v3 fields.
The mapping, and what it loses, is written down in docs/corpora.md.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chatledger.core import FIELDS_V3, ExtractionV3, InputError
from chatledger.corpus._ami_chunks import ChunkGold, MeetingChunks, chunk_meeting
from chatledger.corpus._ami_layers import Layers, NamedEntity, read_layers
from chatledger.corpus._ami_transcript import (
    Meeting,
    find_release,
    has_dialogue_acts,
    meeting_names,
    read_meeting,
)
from chatledger.corpus._gold import Corpus, GoldRecord

MODEL = "human:ami"
DEFAULT_MAX_MESSAGES = 120
# Shorter question acts and statements are tags and backchannels ("Is it?", "Yeah."): they
# carry a stance or a turn, not something an extractor could list.
DEFAULT_MIN_WORDS = 4

# Dialogue-act types that ask something (DA ontology class "Elicit"). Elicit-Comment-
# Understanding ("you know?", "right?") checks the channel rather than asking, so it is left out.
QUESTION_ACTS = frozenset({"el.inf", "el.sug", "el.ass"})
CLAIM_UNITS = frozenset({"STA", "WST"})  # Statement, Weak statement
STANCE = {"POS": "pro", "NEG": "con"}
UNLABELLED_UNIT = "OTH"  # argument unit type "Other (unlabeled)"
# Abstractive summary sections → the field their sentences become.
_ABSTRACT_FIELDS = {
    "abstract": "summary",
    "actions": "action_items",
    "decisions": "decisions",
    "problems": "open_questions",
}

# Named-entity type → v3 entity type, looked up from the most specific ontology name upwards;
# None drops the entity (bare numbers are not what an extractor is asked to list).
ENTITY_TYPES: dict[str, str | None] = {
    "PERSON": "person",
    "LOCATION": "location",
    "ORGANIZATION": "organization",
    "TIMEX": "date",
    "CARDINAL": None,
    "NUMEX": "other",
    "DRAWING": "other",
    "ARTEFACT": "product",
    "COLOUR": "other",
    "SHAPE": "other",
    "MATERIALS": "other",
}

# How abstractive sentences name the participant an action item is for.
_ROLE_MENTIONS = {
    "PM": re.compile(r"\bproject manager\b", re.I),
    "ME": re.compile(r"\bmarketing\b", re.I),
    "UI": re.compile(r"\b(?:user interface|interface (?:designer|specialist))\b", re.I),
    "ID": re.compile(r"\bindustrial designer\b", re.I),
}


def _action_owner(text: str, meeting: Meeting) -> str | None:
    """The participant whose role the sentence names, when it names exactly one."""
    named = {role for role, pattern in _ROLE_MENTIONS.items() if pattern.search(text)}
    if len(named) != 1:
        return None
    role = named.pop()
    owners = [meeting.speakers[a] for a, r in meeting.roles.items() if r == role]
    return owners[0] if len(owners) == 1 else None


def _add_abstractive(mc: MeetingChunks, layers: Layers, corpus: Corpus) -> set[str]:
    """Summary, action items, decisions and problems; returns the acts decisions link to."""
    assert layers.abstract is not None and layers.summary_links is not None
    decision_acts: set[str] = set()
    for sentence in layers.abstract:
        mc.offered[_ABSTRACT_FIELDS.get(sentence.section, "summary")] += 1
        linked = layers.summary_links.get(sentence.id, [])
        placed = mc.placement.place(linked)
        if placed is None:
            corpus.dropped[f"abstractive {sentence.section} without linked acts"] += 1
            continue
        index, evidence = placed
        entry = mc.gold[index]
        if sentence.section == "abstract":
            entry.summary.append(sentence.text)
        elif sentence.section == "actions":
            owner = _action_owner(sentence.text, mc.meeting)
            entry.lists["action_items"].append(
                {"text": sentence.text, "owner": owner, "status": "open", "evidence": evidence}
            )
        elif sentence.section == "decisions":
            decision_acts.update(linked)
            entry.lists["decisions"].append(
                {"text": sentence.text, "made_by": mc.speakers(evidence), "evidence": evidence}
            )
        elif sentence.section == "problems":
            entry.lists["open_questions"].append(
                {"text": sentence.text, "asked_by": mc.speaker(evidence[0]), "evidence": evidence}
            )
        corpus.sources[f"abstractive {sentence.section}"] += 1
    return decision_acts


def _add_decision_spans(
    mc: MeetingChunks, spans: list[list[str]], linked: set[str], corpus: Corpus
) -> None:
    """A decision span that holds no act an abstractive decision links to is a decision of its
    own, worded as its transcript; the others are the same decisions, already counted."""
    for span in spans:
        mc.offered["decisions"] += 1
        if linked.intersection(span):
            corpus.sources["decision spans matching an abstractive decision"] += 1
            continue
        placed = mc.placement.place(span)
        if placed is None:
            corpus.dropped["decision spans without acts"] += 1
            continue
        index, evidence = placed
        text = " ".join(mc.meeting.acts[a].text for a in evidence)
        mc.gold[index].lists["decisions"].append(
            {"text": text, "made_by": mc.speakers(evidence), "evidence": evidence}
        )
        corpus.sources["decision spans (transcript wording)"] += 1


def _word_count(text: str) -> int:
    return sum(1 for token in text.split() if any(ch.isalnum() for ch in token))


def _is_open_question(text: str, min_words: int) -> bool:
    """Transcribed as a question (ends in "?") and long enough to be about something."""
    return text.endswith("?") and _word_count(text) >= min_words


def _add_questions(
    mc: MeetingChunks, layers: Layers, corpus: Corpus, *, unanswered: bool, min_words: int
) -> None:
    """Q/A pairs from adjacency pairs whose first part asks; unanswered asks → open questions."""
    assert layers.adjacency is not None
    responses: dict[str, list[str]] = defaultdict(list)
    for pair in layers.adjacency:
        if pair.source in mc.meeting.acts and pair.target in mc.meeting.acts:
            responses[pair.source].append(pair.target)
    for act_id in mc.meeting.timeline:
        if layers.act_types.get(act_id) not in QUESTION_ACTS:
            continue
        index = mc.placement.chunk_of(act_id)
        answers = [a for a in responses.get(act_id, []) if a in mc.placement]
        if answers:
            mc.offered["qa_pairs"] += 1
            here = sorted(
                (a for a in answers if mc.placement.chunk_of(a) == index),
                key=lambda a: mc.meeting.acts[a].start,
            )
            if not here:
                corpus.dropped["qa pairs answered in another chunk"] += 1
                continue
            mc.gold[index].lists["qa_pairs"].append(
                {
                    "question": mc.meeting.acts[act_id].text,
                    "answer": mc.meeting.acts[here[0]].text,
                    "asked_by": mc.speaker(act_id),
                    "answered_by": mc.speaker(here[0]),
                    "evidence": [act_id, *here],
                }
            )
            corpus.sources["answered question acts → qa pairs"] += 1
        elif not unanswered:
            continue
        elif not _is_open_question(mc.meeting.acts[act_id].text, min_words):
            corpus.dropped["unanswered question acts: no '?' or under min_words"] += 1
        else:
            mc.offered["open_questions"] += 1
            mc.gold[index].lists["open_questions"].append(
                {
                    "text": mc.meeting.acts[act_id].text,
                    "asked_by": mc.speaker(act_id),
                    "evidence": [act_id],
                }
            )
            corpus.sources["unanswered question acts"] += 1


def _root(unit: str, sources_of: dict[str, list[str]], start: dict[str, float]) -> str:
    """Follow the earliest source of each relation back to the unit that started the thread."""
    seen = {unit}
    while sources_of.get(unit):
        earlier = min(sources_of[unit], key=lambda u: start.get(u, 0.0))
        if earlier in seen:
            break
        seen.add(earlier)
        unit = earlier
    return unit


def _add_claims(mc: MeetingChunks, layers: Layers, corpus: Corpus, min_words: int) -> None:
    """Statements → claims; a POS/NEG relation onto a statement gives its polarity (the target
    of a relation is the later unit reacting to the source), the thread's first unit its subject.
    """
    assert layers.arguments is not None and layers.relations is not None
    units = layers.arguments
    sources_of: dict[str, list[str]] = defaultdict(list)
    stances: dict[str, set[str]] = defaultdict(set)
    for relation in layers.relations:
        if relation.source in units and relation.target in units:
            sources_of[relation.target].append(relation.source)
            if relation.kind in STANCE:
                stances[relation.target].add(STANCE[relation.kind])
    start = {u.id: u.start for u in units.values()}
    for unit in sorted(units.values(), key=lambda u: u.start):
        if unit.kind not in CLAIM_UNITS:
            continue
        if _word_count(unit.text) < min_words:
            corpus.dropped["statements shorter than min_words"] += 1
            continue
        mc.offered["claims"] += 1
        placed = mc.placement.place(unit.acts)
        if placed is None:
            corpus.dropped["argument units without acts"] += 1
            continue
        index, evidence = placed
        stance = stances.get(unit.id, set())
        polarity = stance.pop() if len(stance) == 1 else "neutral"
        mc.gold[index].lists["claims"].append(
            {
                "text": unit.text,
                "subject": units[_root(unit.id, sources_of, start)].text,
                "polarity": polarity,
                "speaker": mc.meeting.speakers.get(unit.agent, unit.agent),
                "evidence": evidence,
            }
        )
        corpus.sources[f"argument units → claims ({polarity})"] += 1


def _entity_type(entity: NamedEntity) -> str | None:
    for name in reversed(entity.type_path):
        if name in ENTITY_TYPES:
            return ENTITY_TYPES[name]
    return "other"


def _add_entities(mc: MeetingChunks, entities: list[NamedEntity], corpus: Corpus) -> None:
    """Entities are a set per chunk: a name said again in the same chunk is listed once."""
    seen: set[tuple[int, str, str]] = set()
    for entity in entities:
        kind = _entity_type(entity)
        name = re.sub(r"'s$", "", entity.text).strip()
        placed = mc.placement.place(entity.acts)
        if kind is None:
            corpus.dropped["named entities: bare numbers (CARDINAL)"] += 1
            continue
        mc.offered["entities"] += 1
        if not name or placed is None:
            corpus.dropped["named entities without words in a message"] += 1
            continue
        key = (placed[0], name.casefold(), kind)
        if key in seen:
            corpus.dropped["named entities repeating one already in the chunk"] += 1
            continue
        seen.add(key)
        mc.gold[placed[0]].lists["entities"].append({"name": name, "type": kind})
        corpus.sources["named entities (distinct per chunk)"] += 1


def _add_extractive(mc: MeetingChunks, acts: list[str], corpus: Corpus) -> None:
    mc.offered["evidence_message_ids"] += len(acts)
    for act_id in sorted(
        (a for a in acts if a in mc.placement), key=lambda a: mc.meeting.acts[a].start
    ):
        mc.gold[mc.placement.chunk_of(act_id)].lists["evidence_message_ids"].append(act_id)
        corpus.sources["extractive summary acts"] += 1


def _annotated(layers: Layers, unanswered: bool) -> dict[str, bool]:
    """The fields whose annotation layers exist on disk for the meeting."""
    abstractive = layers.abstract is not None and layers.summary_links is not None
    units = layers.arguments or {}
    return {
        "topics": layers.topics is not None,
        "entities": layers.entities is not None,
        "decisions": abstractive or layers.decision_spans is not None,
        "action_items": abstractive,
        "open_questions": abstractive or (unanswered and layers.adjacency is not None),
        # Argument files whose units are all "Other (unlabelled)" annotate no argument at all.
        "claims": any(unit.kind != UNLABELLED_UNIT for unit in units.values()),
        "evidence_message_ids": layers.extractive is not None,
        "qa_pairs": layers.adjacency is not None,
    }


def _meeting_covers(
    mc: MeetingChunks, layers: Layers, unanswered: bool, corpus: Corpus
) -> set[str]:
    """The fields the meeting's gold covers after import: the annotation exists, and when it
    held items for the field, at least one of them survived (a layer whose items were all
    dropped would make the gold say "none" where the annotators saw some)."""
    covered: set[str] = set()
    for name, present in _annotated(layers, unanswered).items():
        if not present:
            if name == "claims" and layers.arguments:
                corpus.dropped["meetings whose argument units are all unlabelled (no claims)"] += 1
            continue
        if mc.offered[name] and not mc.kept(name):
            corpus.dropped[f"meetings with every {name} item dropped (not covered)"] += 1
            continue
        covered.add(name)
    return covered


def _covers(meeting_covers: set[str], entry: ChunkGold) -> list[str]:
    covered = {*meeting_covers, *(("summary",) if entry.summary else ())}
    return [name for name in FIELDS_V3 if name in covered]


def _meeting_corpus(
    meeting: Meeting, *, max_messages: int, unanswered_questions: bool, min_words: int
) -> Corpus:
    corpus = Corpus()
    layers = read_layers(meeting)
    mc = chunk_meeting(meeting, layers, max_messages)
    corpus.dropped["dialogue acts without words"] += meeting.empty_acts
    corpus.dropped["adjacency pairs missing an end"] += layers.skipped_pairs
    decision_acts: set[str] = set()
    if layers.abstract is not None and layers.summary_links is not None:
        decision_acts = _add_abstractive(mc, layers, corpus)
    if layers.decision_spans is not None:
        _add_decision_spans(mc, layers.decision_spans, decision_acts, corpus)
    if layers.adjacency is not None:
        _add_questions(mc, layers, corpus, unanswered=unanswered_questions, min_words=min_words)
    if layers.arguments is not None:
        _add_claims(mc, layers, corpus, min_words)
    if layers.entities is not None:
        _add_entities(mc, layers.entities, corpus)
    if layers.extractive is not None:
        _add_extractive(mc, layers.extractive, corpus)
    meeting_covers = _meeting_covers(mc, layers, unanswered_questions, corpus)
    for chunk, entry in zip(mc.chunks, mc.gold, strict=True):
        covers = _covers(meeting_covers, entry)
        data: dict[str, Any] = {name: entry.lists[name] for name in covers if name in entry.lists}
        if "topics" in covers:
            data["topics"] = entry.topics
        if "summary" in covers:
            data["summary"] = " ".join(entry.summary)
        extraction = ExtractionV3.model_validate(data)
        corpus.gold.append(GoldRecord(chunk.chunk_id, MODEL, tuple(covers), extraction))
    corpus.chunks.extend(mc.chunks)
    return corpus


def read_ami(
    path: str | Path,
    *,
    meetings: Iterable[str] | str | None = None,
    max_messages: int = DEFAULT_MAX_MESSAGES,
    unanswered_questions: bool = True,
    min_words: int = DEFAULT_MIN_WORDS,
) -> Corpus:
    """Chunks and human gold of the AMI meetings under ``path`` (the release directory).

    ``meetings`` restricts the import (names, or one comma-separated string; default: every
    meeting with words files and dialogue acts);
    ``max_messages`` caps a chunk's size (a longer topic is split into equal parts);
    ``unanswered_questions`` adds question acts that got no response to ``open_questions``;
    ``min_words`` is the fewest words such a question, or a statement kept as a claim, has.
    """
    if max_messages < 1:
        raise InputError(f"max_messages must be at least 1, got {max_messages}")
    root = find_release(Path(path))
    available = meeting_names(root)
    if isinstance(meetings, str):
        meetings = [m.strip() for m in meetings.split(",") if m.strip()]
    wanted = list(meetings) if meetings is not None else available
    unknown = [m for m in wanted if m not in available]
    if unknown:
        raise InputError(f"no words files for meeting(s) {', '.join(unknown)}", path=root)
    corpus = Corpus()
    for name in wanted:
        # The full release has words for more meetings than it has dialogue acts for; those
        # are skipped when importing everything, an error when asked for by name.
        if meetings is None and not has_dialogue_acts(root, name):
            corpus.dropped["meetings without dialogue acts"] += 1
            continue
        meeting = read_meeting(root, name)
        corpus.extend(
            _meeting_corpus(
                meeting,
                max_messages=max_messages,
                unanswered_questions=unanswered_questions,
                min_words=min_words,
            )
        )
    return corpus
