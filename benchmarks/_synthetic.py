"""Seeded synthetic corpus for the layer-1 benchmark: chunks, a reference and a noisy challenger.

Sizes follow what real extractions of 8–20-message windows look like: 2–8 items per list field,
item texts of 5–15 words drawn from a fixed vocabulary, a 25–50-word summary. The challenger is
an edit of the reference of the kind a cheaper model makes: items kept, paraphrased, rewritten,
dropped or invented; claim polarities flipped; owners and actors renamed (to a first name that
resolves to the same participant, or to somebody else); entity types and emotions changed;
message ids shifted. Everything is JSON-ready (the JSON Lines formats of DESIGN.md §2), so the
same rows feed ChatLedger's readers and the peer tool.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from chatledger.core import DEFAULT_VOCABULARY

Row = dict[str, Any]


def _split(text: str) -> tuple[str, ...]:
    """Whitespace-separated words, each once, in first-seen order."""
    return tuple(dict.fromkeys(text.split()))


# A plain meeting-and-planning vocabulary; sampling is Zipf-like (see _Words) so common words
# recur across items, as they do in real extractions, and fuzzy matching has near-misses to judge.
WORDS: tuple[str, ...] = _split(
    """
    the a to and of we for on in is it that with this be will at by from about next week
    team plan budget meeting report client project deadline review draft schedule launch
    design test release bug fix customer data server cost price contract vendor invoice
    proposal agenda slides demo feedback issue risk scope timeline milestone sprint task
    owner update email call doc document version feature request support ticket account
    campaign market sales target quarter revenue forecast hire interview offer training
    office room booking venue travel flight hotel trip dinner lunch party event guest list
    order delivery shipment stock supplier warehouse package label return refund payment
    bank loan rent lease move house car repair insurance doctor appointment school class
    homework exam grade teacher parent kid weekend holiday summer winter friday monday
    tuesday morning evening tonight tomorrow today early late soon before after until
    agree decide confirm cancel delay postpone approve reject sign send share print book
    check ask answer call buy sell pay order fix test ship write read prepare finish start
    need want think believe worry hope expect prefer suggest propose promise remind
    new old big small cheap expensive quick slow simple hard easy clear urgent important
    final first last second main other same different better worse good bad best worst
    more less enough too very still again also only just already maybe probably
    food water firewood tent camp fire hike lake trail map gear jacket boots blanket
    setlist rehearsal studio encore ballad song band gig stage sound cable amp drum
    remote control button battery screen case colour shape material user market survey
    """
)

FIRST_NAMES = _split(
    "Ness Sam Jordan Mei Theo Ana Ravi Lena Omar Kai Iris Tomas Yuki Noor Bea Felix Ada Leo "
    "Priya Hugo Zara Emil Rosa Idris"
)
LAST_NAMES = _split(
    "Alderton Ruiz Pike Chen Novak Okafor Lindqvist Haddad Moreau Tanaka Brennan Costa Weber "
    "Singh Kowalski Duarte"
)
ENTITY_NAMES: dict[str, tuple[str, ...]] = {
    "organization": ("Acme Corp", "Northwind", "City Council", "Blue Harbor Bank", "Globex"),
    "location": ("studio on Fifth", "Lisbon", "the lake trail", "Room 4B", "Oakland depot"),
    "date": ("Saturday", "next Friday", "March 3", "end of Q2", "tomorrow morning"),
    "event": ("spring launch", "board meeting", "team offsite", "gig at the Roxy", "demo day"),
    "product": ("remote control", "Model X2", "the mobile app", "Pro plan", "tent kit"),
    "other": ("budget line 7", "ticket 4412", "plan B", "the old contract", "setlist v2"),
}
URL_HOSTS = ("example.com", "docs.example.org", "drive.example.net", "tickets.example.io")

EMOTIONS = DEFAULT_VOCABULARY["emotion"]
TRAJECTORIES = DEFAULT_VOCABULARY["trajectory"]
PHASES = DEFAULT_VOCABULARY["phase"]
PATTERNS = DEFAULT_VOCABULARY["negotiation_pattern"]
POLARITIES = DEFAULT_VOCABULARY["polarity"]
SEVERITIES = DEFAULT_VOCABULARY["severity"]
# List fields whose items carry free text (and owners, polarities, …) that the noise edits.
ITEM_FIELDS = (
    "decisions",
    "action_items",
    "open_questions",
    "claims",
    "warnings",
    "implicit_assumptions",
    "negotiation_patterns",
)


class _Words:
    """Zipf-like word sampler: word k has weight 1/(k+1)^0.8."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._weights = [1.0 / (k + 1) ** 0.8 for k in range(len(WORDS))]
        order = list(WORDS)
        rng.shuffle(order)  # which words are common differs by seed
        self._order = order

    def sample(self, n: int) -> list[str]:
        return self._rng.choices(self._order, weights=self._weights, k=n)

    def text(self, lo: int, hi: int) -> str:
        words = self.sample(self._rng.randint(lo, hi))
        return " ".join(words).capitalize()


@dataclass(frozen=True)
class SyntheticCorpus:
    """JSON-ready rows: chunks, the reference's and the challenger's extraction lines."""

    chunks: list[Row]
    reference: list[Row]
    challenger: list[Row]

    def write(self, directory: Path) -> tuple[Path, Path, Path]:
        """Write chunks.jsonl, reference.jsonl, challenger.jsonl into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        paths = (
            directory / "chunks.jsonl",
            directory / "reference.jsonl",
            directory / "challenger.jsonl",
        )
        for path, rows in zip(paths, (self.chunks, self.reference, self.challenger), strict=True):
            with path.open("w", encoding="utf-8") as handle:
                for row in rows:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        return paths


def generate(n_chunks: int, seed: int = 0) -> SyntheticCorpus:
    """``n_chunks`` chunks with a reference extraction and a noisy challenger edit of it."""
    chunks: list[Row] = []
    reference: list[Row] = []
    challenger: list[Row] = []
    for chunk, ref, pred in rows(n_chunks, seed):
        chunks.append(chunk)
        reference.append(ref)
        challenger.append(pred)
    return SyntheticCorpus(chunks, reference, challenger)


def rows(n_chunks: int, seed: int = 0) -> Iterator[tuple[Row, Row, Row]]:
    """(chunk, reference line, challenger line) of :func:`generate`, one chunk at a time."""
    rng = random.Random(seed)
    words = _Words(rng)
    for index in range(n_chunks):
        chunk = _chunk(index, rng, words)
        ref = _reference_extraction(chunk, rng, words)
        pred = _Noise(chunk, rng, words).edit(ref)
        yield (
            chunk,
            _line(chunk["chunk_id"], "synthetic:reference", ref),
            _line(chunk["chunk_id"], "synthetic:challenger", pred),
        )


def write_corpus(n_chunks: int, seed: int, directory: Path) -> tuple[Path, Path, Path]:
    """The files ``generate(n_chunks, seed).write(directory)`` writes, written as generated
    (100,000 chunks are 2 GB of JSON; nothing is held)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = (
        directory / "chunks.jsonl",
        directory / "reference.jsonl",
        directory / "challenger.jsonl",
    )
    with ExitStack() as stack:
        handles = [stack.enter_context(p.open("w", encoding="utf-8")) for p in paths]
        for triple in rows(n_chunks, seed):
            for handle, row in zip(handles, triple, strict=True):
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return paths


def _line(chunk_id: str, model: str, extraction: Row) -> Row:
    usage = {"input_tokens": 1800, "output_tokens": 900, "cost_usd": 0.0, "latency_s": 0.0}
    return {"chunk_id": chunk_id, "model": model, "extraction": extraction, "usage": usage}


def _chunk(index: int, rng: random.Random, words: _Words) -> Row:
    chunk_id = f"c{index:05d}"
    people = [
        f"{first} {rng.choice(LAST_NAMES)}" for first in rng.sample(FIRST_NAMES, rng.randint(2, 4))
    ]
    messages = [
        {
            "id": f"{chunk_id}-m{k + 1}",
            "speaker": rng.choice(people),
            "timestamp": f"2026-03-{1 + index % 28:02d}T{9 + k // 6:02d}:{(k * 7) % 60:02d}:00Z",
            "text": words.text(6, 25),
        }
        for k in range(rng.randint(8, 20))
    ]
    return {
        "chunk_id": chunk_id,
        "conversation_id": f"conv-{index // 10:04d}",
        "participants": people,
        "messages": messages,
    }


def _reference_extraction(chunk: Row, rng: random.Random, words: _Words) -> Row:
    people: list[str] = chunk["participants"]
    ids = [m["id"] for m in chunk["messages"]]

    def n_items() -> int:
        return rng.randint(2, 8)

    def evidence() -> list[str]:
        return sorted(rng.sample(ids, rng.randint(1, 3)), key=ids.index)

    def confidence() -> float:
        return round(rng.uniform(0.5, 1.0), 2)

    entity_types = list(ENTITY_NAMES)
    entities = []
    for _ in range(n_items()):
        if rng.random() < 0.4:
            entities.append({"name": rng.choice(people), "type": "person"})
        else:
            kind = rng.choice(entity_types)
            entities.append({"name": rng.choice(ENTITY_NAMES[kind]), "type": kind})
    claims = []
    for _ in range(n_items()):
        claims.append(
            {
                "text": words.text(5, 15),
                "subject": " ".join(words.sample(rng.randint(1, 2))),
                "polarity": rng.choice(POLARITIES),
                "speaker": rng.choice(people),
                "evidence": evidence(),
                "confidence": confidence(),
            }
        )
    phase_bounds = sorted(rng.sample(range(1, len(ids)), min(len(ids) - 1, rng.randint(1, 4))))
    starts = [0, *phase_bounds]
    ends = [*(b - 1 for b in phase_bounds), len(ids) - 1]
    return {
        "summary": words.text(25, 50),
        "topics": [words.text(2, 5) for _ in range(n_items())],
        "entities": entities,
        "decisions": [
            {
                "text": words.text(5, 15),
                "made_by": rng.sample(people, rng.randint(1, min(2, len(people)))),
                "evidence": evidence(),
                "confidence": confidence(),
            }
            for _ in range(n_items())
        ],
        "action_items": [
            {
                "text": words.text(5, 15),
                "owner": rng.choice(people),
                "due": rng.choice([None, "Friday", "next week", "tomorrow"]),
                "status": rng.choice(["open", "open", "done"]),
                "evidence": evidence(),
                "confidence": confidence(),
            }
            for _ in range(n_items())
        ],
        "open_questions": [
            {
                "text": words.text(5, 15) + "?",
                "asked_by": rng.choice(people),
                "evidence": evidence(),
                "confidence": confidence(),
            }
            for _ in range(n_items())
        ],
        "claims": claims,
        "links": [
            {
                "url": f"https://{rng.choice(URL_HOSTS)}/{'-'.join(words.sample(2))}",
                "context": words.text(3, 6),
            }
            for _ in range(rng.randint(0, 3))
        ],
        "warnings": [
            {"text": words.text(5, 15), "severity": rng.choice(SEVERITIES), "evidence": evidence()}
            for _ in range(n_items())
        ],
        "evidence_message_ids": sorted(rng.sample(ids, rng.randint(2, 6)), key=ids.index),
        "qa_pairs": [
            {
                "question": words.text(5, 15) + "?",
                "answer": words.text(3, 10) if rng.random() < 0.85 else None,
                "asked_by": rng.choice(people),
                "answered_by": rng.choice(people),
                "evidence": evidence(),
            }
            for _ in range(n_items())
        ],
        "emotional_tone": [
            {
                "speaker": rng.choice(people),
                "emotion": rng.choice(EMOTIONS),
                "intensity": round(rng.uniform(0.1, 1.0), 2),
                "evidence": evidence(),
            }
            for _ in range(n_items())
        ],
        "emotional_arc": {
            "opening_mood": rng.choice(EMOTIONS),
            "closing_mood": rng.choice(EMOTIONS),
            "trajectory": rng.choice(TRAJECTORIES),
            "turning_points": [
                {"message_id": mid, "description": words.text(4, 10)}
                for mid in sorted(rng.sample(ids, rng.randint(0, 3)), key=ids.index)
            ],
        },
        "conversation_phases": [
            {"phase": rng.choice(PHASES), "start_message_id": ids[s], "end_message_id": ids[e]}
            for s, e in zip(starts, ends, strict=True)
        ],
        "implicit_assumptions": [
            {"text": words.text(5, 15), "held_by": rng.choice(people), "evidence": evidence()}
            for _ in range(n_items())
        ],
        "negotiation_patterns": [
            {
                "pattern": rng.choice(PATTERNS),
                "actor": rng.choice(people),
                "text": words.text(5, 15),
                "evidence": evidence(),
            }
            for _ in range(n_items())
        ],
    }


class _Noise:
    """The edits a cheaper model makes to the reference, with fixed rates."""

    KEEP, PARAPHRASE, REWRITE = 0.35, 0.35, 0.10  # the remaining 0.20: dropped
    INVENT_MAX = 2

    def __init__(self, chunk: Row, rng: random.Random, words: _Words) -> None:
        self.rng = rng
        self.words = words
        self.people: list[str] = chunk["participants"]
        self.ids: list[str] = [m["id"] for m in chunk["messages"]]

    def edit(self, ref: Row) -> Row:
        rng = self.rng
        out: Row = {"summary": self.paraphrase(ref["summary"], 0.3)}
        out["topics"] = self.edit_list(
            ref["topics"], lambda t: self.paraphrase(t, 0.3), lambda: self.words.text(2, 5)
        )
        out["entities"] = self.edit_list(ref["entities"], self.entity, None)
        for name in ITEM_FIELDS:
            items: list[Row] = ref[name]
            out[name] = self.edit_list(items, self.item, partial(self.invent, items))
        out["qa_pairs"] = self.edit_list(ref["qa_pairs"], self.qa_pair, None)
        out["emotional_tone"] = self.edit_list(ref["emotional_tone"], self.tone, None)
        out["links"] = [link for link in ref["links"] if rng.random() > 0.2]
        out["evidence_message_ids"] = sorted(
            {self.shift_id(m) for m in ref["evidence_message_ids"]}, key=self.ids.index
        )
        out["emotional_arc"] = self.arc(ref["emotional_arc"])
        out["conversation_phases"] = [
            {
                **p,
                "phase": p["phase"] if rng.random() > 0.2 else rng.choice(PHASES),
                "end_message_id": self.shift_id(p["end_message_id"]),
            }
            for p in ref["conversation_phases"]
        ]
        return out

    def edit_list(
        self,
        items: Sequence[Any],
        change: Callable[[Any], Any],
        invent: Callable[[], Any] | None,
    ) -> list[Any]:
        rng = self.rng
        out: list[Any] = []
        for item in items:
            roll = rng.random()
            if roll < self.KEEP:
                out.append(item)
            elif roll < self.KEEP + self.PARAPHRASE:
                out.append(change(item))
            elif roll < self.KEEP + self.PARAPHRASE + self.REWRITE:
                out.append(self.rewrite(item))
            # else: dropped
        if invent is not None:
            for _ in range(rng.randint(0, self.INVENT_MAX)):
                out.append(invent())
        rng.shuffle(out)
        return out

    def paraphrase(self, text: str, rate: float) -> str:
        """Replace, drop or insert about ``rate`` of the words; keep the rest in order."""
        rng = self.rng
        out: list[str] = []
        for word in text.rstrip("?").split():
            roll = rng.random()
            if roll < rate / 2:
                out.append(self.words.sample(1)[0])
            elif roll < rate * 3 / 4:
                continue
            elif roll < rate:
                out.extend((word, self.words.sample(1)[0]))
            else:
                out.append(word)
        return " ".join(out or self.words.sample(3)).capitalize() + ("?" if "?" in text else "")

    def rename(self, name: str | None) -> str | None:
        """First name only (resolves to the same person), or a different participant."""
        roll = self.rng.random()
        if name is None or roll < 0.7:
            return name
        if roll < 0.9:
            return name.split()[0]
        return self.rng.choice(self.people)

    def shift_id(self, message_id: str) -> str:
        if self.rng.random() < 0.7:
            return message_id
        k = self.ids.index(message_id) + self.rng.choice((-1, 1))
        return self.ids[min(max(k, 0), len(self.ids) - 1)]

    def item(self, item: Row) -> Row:
        rng = self.rng
        out = dict(item)
        if "text" in out:
            out["text"] = self.paraphrase(out["text"], 0.3)
        if "polarity" in out and rng.random() < 0.25:
            out["polarity"] = rng.choice([p for p in POLARITIES if p != out["polarity"]])
        if "subject" in out and rng.random() < 0.15:
            out["subject"] = " ".join(self.words.sample(1))
        for key in ("owner", "speaker", "asked_by", "held_by", "actor"):
            if key in out:
                out[key] = self.rename(out[key])
        if "pattern" in out and rng.random() < 0.2:
            out["pattern"] = rng.choice(PATTERNS)
        if "evidence" in out:
            shifted = {self.shift_id(m) for m in out["evidence"]}
            out["evidence"] = sorted(shifted, key=self.ids.index)
        if "confidence" in out:
            out["confidence"] = round(rng.uniform(0.3, 1.0), 2)
        return out

    def rewrite(self, item: Any) -> Any:
        """The same slot said with mostly different words (usually no longer a match)."""
        if isinstance(item, str):
            return self.paraphrase(item, 0.9)
        out = dict(item)
        for key in ("text", "question", "name"):
            if key in out and isinstance(out[key], str):
                out[key] = self.paraphrase(out[key], 0.9)
        return out

    def invent(self, like: Sequence[Row]) -> Row:
        """An item the reference does not have, shaped like the field's items."""
        template = like[0] if like else {"text": ""}
        out = self.item(dict(template))
        if "text" in out:
            out["text"] = self.words.text(5, 15)
        return out

    def entity(self, entity: Row) -> Row:
        rng = self.rng
        out = dict(entity)
        if rng.random() < 0.5:
            out["name"] = entity["name"].split()[0]  # partial name: lenient credit 0.5
        if rng.random() < 0.2:
            out["type"] = rng.choice(list(DEFAULT_VOCABULARY["entity_type"]))
        return out

    def qa_pair(self, qa: Row) -> Row:
        out = dict(qa)
        out["question"] = self.paraphrase(qa["question"], 0.3)
        if qa["answer"] is not None and self.rng.random() < 0.5:
            out["answer"] = self.paraphrase(qa["answer"], 0.5)
        out["asked_by"] = self.rename(qa["asked_by"])
        return out

    def tone(self, tone: Row) -> Row:
        out = dict(tone)
        if self.rng.random() < 0.3:
            out["emotion"] = self.rng.choice(EMOTIONS)
        out["speaker"] = self.rename(tone["speaker"])
        return out

    def arc(self, arc: Row) -> Row:
        rng = self.rng
        return {
            "opening_mood": arc["opening_mood"] if rng.random() > 0.3 else rng.choice(EMOTIONS),
            "closing_mood": arc["closing_mood"] if rng.random() > 0.3 else rng.choice(EMOTIONS),
            "trajectory": arc["trajectory"] if rng.random() > 0.3 else rng.choice(TRAJECTORIES),
            "turning_points": [
                {**t, "message_id": self.shift_id(t["message_id"])}
                for t in arc["turning_points"]
                if rng.random() > 0.2
            ],
        }


def write_run_corpus(directory: Path, n_chunks: int, name: str) -> Path:
    """A whole-run benchmark's inputs: the corpus, two simulated challengers beside the synthetic
    one (b: 20 % of items dropped; c: paraphrased and polarities flipped), and the run config
    with all three layers and the grounding judge; returns the config's path.

    Every file is written as it is generated, one chunk at a time (the bytes ``generate(...)
    .write`` and ``simulate_records`` over whole files would give; each chunk's corruption is
    seeded by the chunk alone): memory stays flat whatever ``n_chunks``."""
    from chatledger.corpus import ExtractionStream, iter_chunks
    from chatledger.simulate import record_lines, simulate_records

    chunks_path, _reference_path, challenger_path = write_corpus(n_chunks, 0, directory)
    edits = (("b", [("drop", 0.2)]), ("c", [("paraphrase", 0.3), ("flip_polarity", 0.3)]))
    challenger = ExtractionStream(challenger_path)
    with ExitStack() as stack:
        outputs = [
            stack.enter_context(
                (directory / f"challenger_{label}.jsonl").open("w", encoding="utf-8")
            )
            for label, _ in edits
        ]
        for chunk in iter_chunks(chunks_path):
            record = challenger.take(chunk.chunk_id)
            if record is None:
                continue
            for handle, (label, ops) in zip(outputs, edits, strict=True):
                simulated = simulate_records(
                    {chunk.chunk_id: record}, [chunk], ops, seed=1, label=label
                )
                handle.writelines(record_lines(simulated))
    files = ["challenger.jsonl", "challenger_b.jsonl", "challenger_c.jsonl"]
    config = {
        "name": name,
        "chunks": "chunks.jsonl",
        "reference": "reference.jsonl",
        "challengers": [{"file": f, "name": f.removesuffix(".jsonl")} for f in files],
        "layers": ["extraction", "judge", "downstream"],
        "judges": ["grounding"],
    }
    path = directory / "run.yaml"
    path.write_text(json.dumps(config))
    return path
