"""Where an annotation session lives on disk, beside ``GOLD.jsonl``.

- ``GOLD.jsonl``: the gold lines, rewritten atomically (a temporary file renamed over it) after
  every change, so it is always a whole, valid file that runs can read.
- ``GOLD.jsonl.journal``: every saved :class:`ChunkState`, appended and flushed to disk before
  the rewrite — what a resumed session reads (a killed server, a closed tab: nothing is lost).
  A torn last line (a kill mid-append) is ignored; the journal is compacted to one line per
  chunk when a session starts.
- ``GOLD.jsonl.session.json``: which chunks, fields and prefill the session is about, so a
  resumed session cannot silently switch to another sample.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from chatledger.annotate._gold import Annotation, GoldLine
from chatledger.annotate._state import ChunkState
from chatledger.core import InputError, atomic_write_text, first_validation_error

SESSION_VERSION = 1


class SessionInfo(BaseModel):
    """What a session annotates (``GOLD.jsonl.session.json``)."""

    model_config = ConfigDict(extra="forbid")

    version: int = SESSION_VERSION
    chunks_file: str
    chunks_sha256: str
    chunk_ids: list[str]
    fields: list[str]
    prefill_file: str | None = None
    annotator: str
    sample: int | None = None
    seed: int | None = None


class AnnotationStore:
    """The files of one session (see the module doc)."""

    def __init__(self, gold: Path) -> None:
        self.gold = gold
        self.journal = gold.with_name(gold.name + ".journal")
        self.session = gold.with_name(gold.name + ".session.json")

    def remove_stale_parts(self) -> list[Path]:
        """Delete the temporary files a killed save left beside the session's files
        (``.GOLD.jsonl.*.part`` and the journal's and session's); returns what was removed."""
        removed: list[Path] = []
        folder = self.gold.parent
        if not folder.is_dir():
            return removed
        for target in (self.gold, self.journal, self.session):
            for part in folder.glob(f".{glob.escape(target.name)}.*.part"):
                try:
                    part.unlink()
                except OSError:
                    continue
                removed.append(part)
        return removed

    # ---- the session ---------------------------------------------------------------------

    def check_session(self, info: SessionInfo) -> None:
        """Record ``info``, or refuse when the files belong to a session on other chunks."""
        if self.session.is_file():
            try:
                before = SessionInfo.model_validate_json(self.session.read_bytes())
            except ValidationError as exc:
                where, message = first_validation_error(exc)
                raise InputError(message, path=self.session, field=where) from None
            if before.chunk_ids != info.chunk_ids:
                raise InputError(
                    f"this gold file belongs to a session on {len(before.chunk_ids)} other chunks "
                    f"(sample {before.sample}, seed {before.seed}): give the same --sample and "
                    "--seed to resume it, or another --out",
                    path=self.gold,
                )
            if before.fields != info.fields:
                info = info.model_copy(
                    update={"fields": list(dict.fromkeys(before.fields + info.fields))}
                )
        self.gold.parent.mkdir(parents=True, exist_ok=True)
        self.remove_stale_parts()
        atomic_write_text(self.session, info.model_dump_json(indent=2) + "\n")

    # ---- reading back ----------------------------------------------------------------------

    def read_gold(self) -> list[tuple[dict[str, object], Annotation | None]]:
        """The raw lines of ``GOLD.jsonl`` with their annotation blocks (None: a line without
        one, e.g. gold written by hand)."""
        if not self.gold.is_file():
            return []
        out: list[tuple[dict[str, object], Annotation | None]] = []
        for number, text in enumerate(self.gold.read_text(encoding="utf-8-sig").splitlines(), 1):
            if not text.strip():
                continue
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"not valid JSON ({exc.msg})", path=self.gold, line=number
                ) from None
            if not isinstance(data, dict):
                raise InputError("expected a JSON object", path=self.gold, line=number)
            annotation = None
            if "annotation" in data:
                try:
                    annotation = GoldLine.model_validate(data).annotation
                except ValidationError as exc:
                    where, message = first_validation_error(exc)
                    raise InputError(message, path=self.gold, line=number, field=where) from None
            out.append((data, annotation))
        return out

    def read_journal(self) -> dict[str, ChunkState]:
        """The last saved state of each chunk; a torn last line is ignored, any other bad
        line is an error naming it."""
        if not self.journal.is_file():
            return {}
        lines = self.journal.read_text(encoding="utf-8").split("\n")
        states: dict[str, ChunkState] = {}
        complete = lines[:-1]  # the text after the last newline is a torn write, if any
        for number, text in enumerate(complete, 1):
            if not text.strip():
                continue
            try:
                state = ChunkState.model_validate_json(text)
            except ValidationError as exc:
                where, message = first_validation_error(exc)
                raise InputError(message, path=self.journal, line=number, field=where) from None
            states[state.chunk_id] = state
        return states

    def compact(self, states: Iterable[ChunkState]) -> None:
        """One line per chunk (rewritten atomically)."""
        text = "".join(s.model_dump_json() + "\n" for s in states)
        atomic_write_text(self.journal, text)

    # ---- saving ----------------------------------------------------------------------------

    def save(
        self,
        state: ChunkState,
        gold_lines: Sequence[GoldLine],
        foreign: Sequence[Mapping[str, object]] = (),
    ) -> None:
        """Append ``state`` to the journal (on disk before anything else), then rewrite the
        gold file with ``gold_lines``."""
        with self.journal.open("a", encoding="utf-8") as handle:
            handle.write(state.model_dump_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self.write_gold(gold_lines, foreign)

    def write_gold(
        self, gold_lines: Sequence[GoldLine], foreign: Sequence[Mapping[str, object]] = ()
    ) -> None:
        """The gold file: lines of chunks outside the session first, as they were, then the
        session's lines in its chunk order."""
        kept = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in foreign)
        text = kept + "".join(line.model_dump_json() + "\n" for line in gold_lines)
        atomic_write_text(self.gold, text)
