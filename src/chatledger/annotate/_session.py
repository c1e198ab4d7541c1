"""An annotation session: the chunks, the prefill, the person's state per chunk, and saving.

The server asks the session for what a page needs and hands it what the page sends; the
session checks every change against the chunk (message ids, prefill indices, the fields of the
session) before it is saved, so a page — or anything else holding the token — cannot write a
gold line the schema or the chunk would refuse.
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from chatledger.annotate._form import form_spec
from chatledger.annotate._gold import GoldLine
from chatledger.annotate._sample import stratified_sample
from chatledger.annotate._state import (
    ANNOTATED_FIELDS,
    ChunkState,
    FieldProblem,
    field_values,
    gold_line,
    initial_state,
    now,
    state_from_gold,
)
from chatledger.annotate._store import AnnotationStore, SessionInfo
from chatledger.core import (
    Chunk,
    ExtractionRecord,
    ExtractionV3,
    InputError,
    file_sha256,
    first_validation_error,
)


class StaleSaveError(InputError):
    """The page edited an older revision of the chunk than the one saved: refused (409), with
    the saved state, so the page can show both and let the person choose."""

    def __init__(self, message: str, current: ChunkState) -> None:
        super().__init__(message)
        self.current = current


@dataclass
class SaveResult:
    state: ChunkState
    covers: list[str]
    problems: list[FieldProblem]
    done: int
    total: int


@dataclass
class AnnotationSession:
    chunks: list[Chunk]
    fields: list[str]
    annotator: str
    store: AnnotationStore
    prefill: dict[str, ExtractionRecord] = field(default_factory=dict)
    prefill_model: str | None = None
    states: dict[str, ChunkState] = field(default_factory=dict)
    gold: dict[str, GoldLine] = field(default_factory=dict)
    # Lines of the gold file for chunks outside this session: kept as they were.
    foreign: list[dict[str, Any]] = field(default_factory=list)

    # ---- opening ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        chunks_path: Path,
        out: Path,
        *,
        prefill_path: Path | None = None,
        fields: Sequence[str] | None = None,
        sample: int | None = None,
        seed: int = 0,
        annotator: str | None = None,
    ) -> AnnotationSession:
        from chatledger.corpus import read_chunks, read_extractions

        chosen = list(fields) if fields else list(ANNOTATED_FIELDS)
        unknown = [f for f in chosen if f not in ANNOTATED_FIELDS]
        if unknown:
            raise InputError(
                f"unknown field {unknown[0]!r} (fields: {', '.join(ANNOTATED_FIELDS)})",
                field="--fields",
            )
        if not chunks_path.is_file():
            raise InputError("chunks file not found", path=chunks_path)
        chunks = read_chunks(chunks_path)
        if not chunks:
            raise InputError("no chunks to annotate", path=chunks_path)
        if sample is not None:
            if sample < 1:
                raise InputError("--sample must be at least 1", field="--sample")
            chunks = stratified_sample(chunks, sample, seed)
        prefill: dict[str, ExtractionRecord] = {}
        prefill_model = None
        if prefill_path is not None:
            if not prefill_path.is_file():
                raise InputError("prefill extraction file not found", path=prefill_path)
            read = read_extractions(prefill_path)
            prefill = dict(read.records)
            prefill_model = read.model or prefill_path.stem
        name = annotator or _user()
        store = AnnotationStore(out)
        store.check_session(
            SessionInfo(
                chunks_file=str(chunks_path),
                chunks_sha256=file_sha256(chunks_path),
                chunk_ids=[c.chunk_id for c in chunks],
                fields=chosen,
                prefill_file=str(prefill_path) if prefill_path else None,
                annotator=name,
                sample=sample,
                seed=seed if sample is not None else None,
            )
        )
        session = cls(chunks, chosen, name, store, prefill, prefill_model)
        session._resume()
        return session

    def _resume(self) -> None:
        """States from the gold file, then the journal's later ones; the journal compacted."""
        from chatledger.corpus import parse_extraction_line

        by_id = {c.chunk_id for c in self.chunks}
        for data, annotation in self.store.read_gold():
            chunk_id = data.get("chunk_id")
            if not isinstance(chunk_id, str) or chunk_id not in by_id:
                self.foreign.append(data)
                continue
            record, problem = parse_extraction_line(
                json.dumps(data), path=str(self.store.gold), line=0
            )
            if record is None or record.extraction is None:
                raise InputError(
                    f"a gold line that does not validate: {problem}", path=self.store.gold
                )
            self.states[chunk_id] = state_from_gold(
                record, annotation, self.fields, self._prefill_of(chunk_id)
            )
        for chunk_id, state in self.store.read_journal().items():
            if chunk_id in by_id:
                self.states[chunk_id] = state
        for chunk in self.chunks:
            state = self.states.setdefault(
                chunk.chunk_id,
                initial_state(chunk.chunk_id, self.fields, self._prefill_of(chunk.chunk_id)),
            )
            for f in self.fields:  # a field added to the session since the state was saved
                if f not in state.fields:
                    state.fields[f] = initial_state(
                        chunk.chunk_id, [f], self._prefill_of(chunk.chunk_id)
                    ).fields[f]
            line, _ = self._gold_line(state)
            if line is not None:
                self.gold[chunk.chunk_id] = line
        self.store.compact(self.states[c.chunk_id] for c in self.chunks)
        self.store.write_gold(self._gold_lines(), self.foreign)

    # ---- what the page reads ---------------------------------------------------------------

    def _prefill_of(self, chunk_id: str) -> ExtractionV3 | None:
        record = self.prefill.get(chunk_id)
        return record.extraction if record is not None else None

    @property
    def done(self) -> int:
        return sum(1 for c in self.chunks if self.states[c.chunk_id].done)

    def overview(self) -> dict[str, Any]:
        return {
            "annotator": self.annotator,
            "prefill": self.prefill_model,
            "gold": str(self.store.gold),
            "fields": [spec.model_dump(mode="json") for spec in form_spec(self.fields)],
            "chunks": [
                {
                    "index": i,
                    "chunk_id": c.chunk_id,
                    "conversation_id": c.conversation_id,
                    "title": c.title,
                    "done": self.states[c.chunk_id].done,
                }
                for i, c in enumerate(self.chunks)
            ],
            "done": self.done,
            "total": len(self.chunks),
        }

    def chunk_view(self, index: int) -> dict[str, Any]:
        chunk = self._chunk(index)
        prefill = self._prefill_of(chunk.chunk_id)
        gold = self.gold.get(chunk.chunk_id)
        _, problems = self._gold_line(self.states[chunk.chunk_id])
        return {
            "index": index,
            "chunk": chunk.model_dump(mode="json"),
            "speakers": chunk.speakers(),
            "prefill": {f: field_values(prefill, f) for f in self.fields},
            "state": self.states[chunk.chunk_id].model_dump(mode="json"),
            "covers": gold.covers if gold else [],
            "problems": [p.model_dump(mode="json") for p in problems],
        }

    def _chunk(self, index: int) -> Chunk:
        if not 0 <= index < len(self.chunks):
            raise InputError(f"no chunk {index} (the session has {len(self.chunks)})")
        return self.chunks[index]

    # ---- saving ----------------------------------------------------------------------------

    def save(self, index: int, data: object) -> SaveResult:
        """Check and save what the page sent for chunk ``index``."""
        chunk = self._chunk(index)
        try:
            state = ChunkState.model_validate(data)
        except ValidationError as exc:
            where, message = first_validation_error(exc)
            raise InputError(message, field=where) from None
        if state.chunk_id != chunk.chunk_id:
            raise InputError(f"chunk {index} is {chunk.chunk_id!r}, not {state.chunk_id!r}")
        self._check(state, chunk)
        current = self.states[chunk.chunk_id]
        if state.revision != current.revision:
            raise StaleSaveError(
                f"chunk {index + 1} was saved elsewhere (another tab or window) at "
                f"{current.updated_at or 'an earlier time'}, after this page loaded it: "
                "keep your version, take theirs, or merge",
                current,
            )
        state.revision = current.revision + 1
        state.updated_at = now()
        self.states[chunk.chunk_id] = state
        line, problems = self._gold_line(state)
        if line is None:
            self.gold.pop(chunk.chunk_id, None)
        else:
            self.gold[chunk.chunk_id] = line
        self.store.save(state, self._gold_lines(), self.foreign)
        return SaveResult(state, line.covers if line else [], problems, self.done, len(self.chunks))

    def _check(self, state: ChunkState, chunk: Chunk) -> None:
        prefill = self._prefill_of(chunk.chunk_id)
        # What the chunk holds, and what the prefill already named (a model may cite a name or
        # id the chunk lacks; the person may keep that item as it was).
        named = _references(prefill.model_dump(mode="json")) if prefill is not None else []
        ids = {m.id for m in chunk.messages} | {v for k, v in named if k == "message"}
        ids |= set(prefill.evidence_message_ids) if prefill is not None else set()
        speakers = set(chunk.speakers()) | {v for k, v in named if k == "speaker"}
        for name, fstate in state.fields.items():
            if name not in self.fields:
                raise InputError(f"{name!r} is not a field of this session", field=name)
            n = len(field_values(prefill, name))
            origins = [i.prefill for i in fstate.items if i.prefill is not None]
            bad = [p for p in [*origins, *fstate.deleted] if not 0 <= p < n]
            twice = len(set(origins)) != len(origins) or len(set(fstate.deleted)) != len(
                fstate.deleted
            )
            if bad or twice or set(origins) & set(fstate.deleted):
                raise InputError("prefill indices out of place", field=name)
            for position, item in enumerate(fstate.items):
                found = _references(item.value)
                if name == "evidence_message_ids" and isinstance(item.value, str):
                    found = [("message", item.value)]
                for where, value in found:
                    if where == "message" and value not in ids:
                        raise InputError(
                            f"message {value!r} is not in chunk {chunk.chunk_id}",
                            field=f"{name}.{position}",
                        )
                    if where == "speaker" and value not in speakers:
                        raise InputError(
                            f"{value!r} is not a participant of chunk {chunk.chunk_id}",
                            field=f"{name}.{position}",
                        )

    def _gold_line(self, state: ChunkState) -> tuple[GoldLine | None, list[FieldProblem]]:
        return gold_line(
            state,
            self._prefill_of(state.chunk_id),
            annotator=self.annotator,
            prefill_model=self.prefill_model,
        )

    def _gold_lines(self) -> list[GoldLine]:
        return [self.gold[c.chunk_id] for c in self.chunks if c.chunk_id in self.gold]


_MESSAGE_KEYS = frozenset({"evidence", "start_message_id", "end_message_id", "message_id"})
_SPEAKER_KEYS = frozenset(
    {"owner", "speaker", "asked_by", "answered_by", "held_by", "actor", "made_by"}
)


def _references(value: object) -> list[tuple[str, str]]:
    """The message ids and speakers an item names (recursively, turning points included)."""
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            kind = (
                "message" if key in _MESSAGE_KEYS else "speaker" if key in _SPEAKER_KEYS else None
            )
            if kind is not None:
                values = inner if isinstance(inner, list) else [inner]
                out += [(kind, v) for v in values if isinstance(v, str)]
            elif isinstance(inner, list | dict):
                out += _references(inner)
    elif isinstance(value, list):
        for inner in value:
            out += _references(inner)
    return out


def _user() -> str:
    try:
        return getpass.getuser() or "annotator"
    except (OSError, KeyError):
        return "annotator"
