"""The AMI annotation layers of one meeting, resolved to dialogue-act ids.

Every layer is optional (the full release annotates different meetings with different layers):
a missing file yields ``None`` so the adapter can leave that field out of ``covers``. Layers
that point into words (topics, decisions, argument structures, named entities) are resolved
to the dialogue acts that contain those words.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from chatledger.corpus._ami_transcript import Meeting, join_tokens
from chatledger.corpus._nite import (
    NITE_CHILD,
    Href,
    child_hrefs,
    element_id,
    parse_href,
    pointers,
    read_root,
)


def read_ontology(path: Path) -> dict[str, tuple[str, ...]]:
    """Ontology id → names from the root's child down to the entry (e.g. NUMEX, CARDINAL)."""
    names: dict[str, tuple[str, ...]] = {}

    def walk(element: ET.Element, trail: tuple[str, ...]) -> None:
        for child in element:
            here = (*trail, child.get("name", ""))
            names[element_id(child)] = here
            walk(child, here)

    walk(read_root(path), ())
    return names


@dataclass(frozen=True)
class AbstractSentence:
    id: str
    section: str  # abstract, actions, decisions or problems
    text: str


@dataclass(frozen=True)
class ArgumentUnit:
    """One argument structure (ae): a stretch of one speaker's words with a type."""

    id: str
    agent: str
    kind: str  # STA, WST, OIS, AIS, YIS, OTH
    text: str
    acts: tuple[str, ...]
    start: float


@dataclass(frozen=True)
class Relation:
    source: str
    target: str
    kind: str  # POS, NEG, UNC, OPT, ELA, SPE, SUB, EXC, REQ


@dataclass(frozen=True)
class NamedEntity:
    text: str
    type_path: tuple[str, ...]
    acts: tuple[str, ...]


@dataclass(frozen=True)
class AdjacencyPair:
    source: str
    target: str


@dataclass
class TopicSegment:
    """A top-level topic: its label, and the labels of it and its subtopics per word."""

    label: str
    word_labels: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Layers:
    """All annotation layers of a meeting that exist on disk."""

    act_types: dict[str, str]
    topics: list[TopicSegment] | None = None
    abstract: list[AbstractSentence] | None = None
    summary_links: dict[str, list[str]] | None = None
    decision_spans: list[list[str]] | None = None
    arguments: dict[str, ArgumentUnit] | None = None
    relations: list[Relation] | None = None
    entities: list[NamedEntity] | None = None
    adjacency: list[AdjacencyPair] | None = None
    extractive: list[str] | None = None
    skipped_pairs: int = 0


def _acts_of_words(meeting: Meeting, words: list[str], act_of: dict[str, str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(act_of[w] for w in words if w in act_of and w in meeting.words))


def _words_of(meeting: Meeting, hrefs: list[Href]) -> list[str]:
    return [w for href in hrefs for w in meeting.word_order.expand(href)]


def _acts_of(meeting: Meeting, href: Href) -> list[str]:
    return meeting.act_order.expand(href)


def _read_topics(meeting: Meeting, ontology_dir: Path) -> list[TopicSegment] | None:
    path = meeting.root / "topics" / f"{meeting.name}.topic.xml"
    if not path.exists():
        return None
    defaults = read_ontology(ontology_dir / "default-topics.xml")
    segments: list[TopicSegment] = []

    def label_of(element: ET.Element) -> str:
        described = (element.get("other_description") or "").strip()
        if described:
            return html.unescape(described)
        kind = pointers(element, path=path).get("scenario_topic_type")
        name = defaults.get(kind.start, ("",))[-1] if kind is not None else ""
        return "" if name == "other" else name

    def walk(element: ET.Element, segment: TopicSegment | None, trail: list[str]) -> None:
        for child in element:
            if child.tag == "topic":
                label = label_of(child)
                here = segment
                if here is None:
                    here = TopicSegment(label=label or "untitled topic")
                    segments.append(here)
                walk(child, here, [*trail, label] if label else trail)
            elif child.tag == NITE_CHILD and segment is not None:
                for word in _words_of(meeting, [parse_href(child.get("href", ""), path=path)]):
                    segment.word_labels[word] = trail

    walk(read_root(path), None, [])
    return segments


def _read_abstract(meeting: Meeting) -> list[AbstractSentence] | None:
    path = meeting.root / "abstractive" / f"{meeting.name}.abssumm.xml"
    if not path.exists():
        return None
    sentences = []
    for section in read_root(path):
        for sentence in section.iter("sentence"):
            text = " ".join(html.unescape(sentence.text or "").split())
            # "*NA*" marks an empty section (e.g. a meeting with no action items).
            if text and text != "*NA*":
                sentences.append(AbstractSentence(element_id(sentence), section.tag, text))
    return sentences


def _read_summary_links(meeting: Meeting) -> dict[str, list[str]] | None:
    path = meeting.root / "extractive" / f"{meeting.name}.summlink.xml"
    if not path.exists():
        return None
    links: dict[str, list[str]] = defaultdict(list)
    for element in read_root(path):
        refs = pointers(element, path=path)
        if "abstractive" in refs and "extractive" in refs:
            links[refs["abstractive"].start].extend(_acts_of(meeting, refs["extractive"]))
    return dict(links)


def _read_extractive(meeting: Meeting) -> list[str] | None:
    path = meeting.root / "extractive" / f"{meeting.name}.extsumm.xml"
    if not path.exists():
        return None
    acts: list[str] = []
    for summary in read_root(path):
        for href in child_hrefs(summary, path=path):
            acts.extend(_acts_of(meeting, href))
    return list(dict.fromkeys(acts))


def _read_decisions(meeting: Meeting, act_of: dict[str, str]) -> list[list[str]] | None:
    path = meeting.root / "decision" / "manual" / f"{meeting.name}.decision.xml"
    if not path.exists():
        return None
    spans = []
    for element in read_root(path):
        words = _words_of(meeting, child_hrefs(element, path=path))
        spans.append(list(_acts_of_words(meeting, words, act_of)))
    return spans


def _read_arguments(
    meeting: Meeting, act_of: dict[str, str], ontology_dir: Path
) -> tuple[dict[str, ArgumentUnit], list[Relation]] | None:
    folder = meeting.root / "argumentation"
    files = sorted((folder / "ae").glob(f"{meeting.name}.?.argumentstructs.xml"))
    if not files:
        return None
    unit_types = read_ontology(ontology_dir / "ae-types.xml")
    relation_types = read_ontology(ontology_dir / "ar-types.xml")
    units: dict[str, ArgumentUnit] = {}
    for path in files:
        agent = path.name.split(".")[1]
        for element in read_root(path):
            words = _words_of(meeting, child_hrefs(element, path=path))
            kind = pointers(element, path=path).get("type")
            times = [meeting.words[w].start for w in words if meeting.words[w].start is not None]
            units[element_id(element)] = ArgumentUnit(
                id=element_id(element),
                agent=agent,
                kind=unit_types.get(kind.start, ("OTH",))[-1] if kind is not None else "OTH",
                text=join_tokens([meeting.words[w] for w in words]),
                acts=_acts_of_words(meeting, words, act_of),
                start=min(t for t in times if t is not None) if times else 0.0,
            )
    relations = []
    path = folder / "ar" / f"{meeting.name}.argumentationrels.xml"
    if path.exists():
        for element in read_root(path):
            refs = pointers(element, path=path)
            if {"source", "target", "type"} <= refs.keys():
                relation = relation_types.get(refs["type"].start, ("",))[-1]
                relations.append(Relation(refs["source"].start, refs["target"].start, relation))
    return units, relations


def _read_entities(
    meeting: Meeting, act_of: dict[str, str], ontology_dir: Path
) -> list[NamedEntity] | None:
    files = sorted((meeting.root / "namedEntities").glob(f"{meeting.name}.?.ne.xml"))
    if not files:
        return None
    types = read_ontology(ontology_dir / "ne-types.xml")
    entities = []
    for path in files:
        for element in read_root(path):
            words = _words_of(meeting, child_hrefs(element, path=path))
            kind = pointers(element, path=path).get("type")
            entities.append(
                NamedEntity(
                    text=join_tokens([meeting.words[w] for w in words]),
                    type_path=types.get(kind.start, ()) if kind is not None else (),
                    acts=_acts_of_words(meeting, words, act_of),
                )
            )
    return entities


def _read_adjacency(meeting: Meeting) -> tuple[list[AdjacencyPair], int] | None:
    path = meeting.root / "dialogueActs" / f"{meeting.name}.adjacency-pairs.xml"
    if not path.exists():
        return None
    pairs, skipped = [], 0
    for element in read_root(path):
        refs = pointers(element, path=path)
        # A few pairs lack their source or target (annotation slips); they cannot be used.
        if "source" in refs and "target" in refs:
            pairs.append(AdjacencyPair(refs["source"].start, refs["target"].start))
        else:
            skipped += 1
    return pairs, skipped


def read_layers(meeting: Meeting) -> Layers:
    ontology_dir = meeting.root / "ontologies"
    act_of = meeting.act_of_word()
    # Without the dialogue-act ontology no act is known to ask something: no Q/A gold.
    da_path = ontology_dir / "da-types.xml"
    da_types = read_ontology(da_path) if da_path.exists() else {}
    layers = Layers(
        act_types={
            act.id: da_types.get(act.da_type, ("",))[-1]
            for act in meeting.acts.values()
            if act.da_type is not None
        }
    )
    layers.topics = _read_topics(meeting, ontology_dir)
    layers.abstract = _read_abstract(meeting)
    layers.summary_links = _read_summary_links(meeting)
    layers.extractive = _read_extractive(meeting)
    layers.decision_spans = _read_decisions(meeting, act_of)
    arguments = _read_arguments(meeting, act_of, ontology_dir)
    if arguments is not None:
        layers.arguments, layers.relations = arguments
    layers.entities = _read_entities(meeting, act_of, ontology_dir)
    adjacency = _read_adjacency(meeting) if da_types else None
    if adjacency is not None:
        layers.adjacency, layers.skipped_pairs = adjacency
    return layers
