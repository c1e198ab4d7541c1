"""``import_chat_export``: an app's export in, ``chunks.jsonl`` (and the pseudonym map) out.

One pass over the export (two with pseudonymisation: the first only collects names), one
conversation at a time, each chunk written as soon as it closes: memory holds the chunk being
built (and whatever a reader must hold to sort one conversation), not the export.

A kind the user names is checked against the export's signature before anything is read: another
app's file is refused in one line naming what it looks like. An import that keeps no message at
all is refused too (with what it skipped), never an empty ``chunks.jsonl`` and exit 0.

The pseudonym map is the key that undoes the pseudonyms, so it is written (mode 0600) **outside**
the import folder by default — ``--key FILE``, else a per-user folder keyed by the import
folder's path — so that sharing the folder with ``chunks.jsonl`` never shares the key; beside the
chunks only when asked (``--key-beside-chunks``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chatledger.core import InputError, atomic_writer, dumps_json, require_extra
from chatledger.corpus.exports._chunking import ChunkingOptions, ChunkMessage, chunk_conversation
from chatledger.corpus.exports._ids import ConversationIds, MessageIds, slug
from chatledger.corpus.exports._model import (
    Conversation,
    CsvMapping,
    DateOrder,
    ExportMessage,
    ReadContext,
    SkipLog,
)
from chatledger.corpus.exports._names import NameCandidate, name_candidates
from chatledger.corpus.exports._pseudonyms import MAP_FILE, Pseudonymiser, PseudonymMap
from chatledger.corpus.exports._reader import EXPORT_READERS, ExportReader
from chatledger.corpus.exports._source import Decoding, ExportSource

CHUNKS_FILE = "chunks.jsonl"


@dataclass(frozen=True)
class ImportOptions:
    kind: str = "auto"
    chunking: ChunkingOptions = field(default_factory=ChunkingOptions)
    # Name as written in the export → the one name the person is shown under.
    aliases: Mapping[str, str] = field(default_factory=dict)
    pseudonymise: bool = False
    phone_region: str | None = None
    date_order: DateOrder = "auto"
    me: str = "me"
    timezone: tzinfo | None = None
    csv: CsvMapping = field(default_factory=CsvMapping)
    # The text's encoding (None: UTF-8, or UTF-16 by its BOM or NULs); strict: stop at a byte
    # that does not decode instead of counting it.
    encoding: str | None = None
    strict: bool = False
    # Where the pseudonym map goes: this file, else beside the chunks when asked, else the
    # per-user default (default_key_path).
    key: Path | None = None
    key_beside_chunks: bool = False

    def context(self) -> ReadContext:
        return ReadContext(
            date_order=self.date_order, me=self.me, timezone=self.timezone, csv=self.csv
        )


class ExportSummary(BaseModel):
    """What an import read, kept and skipped (``--format json`` prints this)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    source: str
    chunks_path: str
    conversations: int
    messages: int
    participants: int
    chunks: int
    skipped: dict[str, int] = Field(default_factory=dict)
    kinds: dict[str, int] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    # Problems met and survived, by kind ("lines with bytes that do not decode": 3).
    problems: dict[str, int] = Field(default_factory=dict)
    pseudonyms_path: str | None = None
    first_message: str | None = None
    last_message: str | None = None


def detect_kind(source: ExportSource) -> str:
    """The first registered format whose reader recognises ``source``."""
    for name in EXPORT_READERS:
        if EXPORT_READERS.get(name).sniff(source):
            return name
    known = ", ".join(EXPORT_READERS.names())
    raise InputError(
        f"cannot tell which app this export comes from (known: {known}); give the kind, "
        "e.g. chatledger corpus import whatsapp PATH (annotated corpora are named too: "
        "chatledger corpus import ami|casino PATH)",
        path=source.path,
    )


def check_kind(kind: str, source: ExportSource) -> None:
    """Refuse ``source`` for the kind the user named when it has another format's signature
    (and not this one's), in one line naming what it looks like."""
    reader = EXPORT_READERS.get(kind)
    if reader.accepts(source):
        return
    for other in EXPORT_READERS:
        if other != kind and EXPORT_READERS.get(other).sniff(source):
            looks = EXPORT_READERS.get(other).label
            raise InputError(
                f"not {reader.label}: it looks like {looks}; import it with: chatledger corpus "
                f"import {other} PATH",
                path=source.path,
            )
    # Nothing else recognises it either: the reader reads it and says what is wrong, if
    # anything (a WhatsApp chat with a line of text before its first message is still one).


def reader_for(kind: str) -> ExportReader:
    try:
        return EXPORT_READERS.get(kind)()
    except InputError as exc:
        raise InputError(exc.detail, field="kind") from None


def default_key_path(out_dir: str | Path) -> Path:
    """Where the pseudonym map of an import into ``out_dir`` goes unless told otherwise: the
    user's data folder (``~/.local/share/chatledger/keys`` on Linux), one file per import
    folder, named by the folder and a hash of its absolute path."""
    import platformdirs

    folder = Path(out_dir).resolve()
    digest = hashlib.sha256(str(folder).encode("utf-8")).hexdigest()[:12]
    base = Path(platformdirs.user_data_dir("chatledger", appauthor=False)) / "keys"
    return base / f"{slug(folder.name, fallback='import')}-{digest}.{MAP_FILE}"


def key_path(out_dir: str | Path, options: ImportOptions) -> Path:
    if options.key is not None:
        return Path(options.key)
    if options.key_beside_chunks:
        return Path(out_dir) / MAP_FILE
    return default_key_path(out_dir)


def import_chat_export(
    path: str | Path, out_dir: str | Path, options: ImportOptions | None = None
) -> ExportSummary:
    """Write ``out_dir/chunks.jsonl`` (and, with ``pseudonymise``, the pseudonym map at
    :func:`key_path`)."""
    options = options or ImportOptions()
    if options.pseudonymise:
        require_extra("pseudonymise", "--pseudonymise")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError("is a file, expected a folder", path=out, field="--out")
    decoding = Decoding(options.encoding, options.strict)
    with ExportSource.open_path(path, decoding) as source:
        if options.kind == "auto":
            kind = detect_kind(source)
        else:
            reader_for(options.kind)
            check_kind(options.kind, source)
            kind = options.kind
        reader = reader_for(kind)
        context = options.context()
        pseudonymiser: Pseudonymiser | None = None
        map_path = key_path(out, options)
        legacy = out / MAP_FILE
        moved = False
        if options.pseudonymise:
            names = _collect_names(reader, source, options)
            if map_path.exists():
                mapping = PseudonymMap.load(map_path)
            elif legacy.exists() and legacy != map_path:
                mapping, moved = PseudonymMap.load(legacy), True
            else:
                mapping = PseudonymMap()
            pseudonymiser = Pseudonymiser(
                mapping, names, phone_region=options.phone_region, aliases=options.aliases
            )
        out.mkdir(parents=True, exist_ok=True)
        writer = _Writer(options, pseudonymiser, context)
        with atomic_writer(out / CHUNKS_FILE) as handle:
            for conversation in reader.conversations(source, context):
                for chunk in writer.chunks(conversation):
                    handle.write(dumps_json(chunk, indent=None) + "\n")
            if writer.messages == 0:
                skipped = ", ".join(f"{r} {n}" for r, n in sorted(context.log.skipped.items()))
                raise InputError(
                    f"no message to import in this {kind} export"
                    + (f" (skipped: {skipped})" if skipped else "")
                    + "; nothing was written",
                    path=source.path,
                )
        if pseudonymiser is not None:
            pseudonymiser.map.save(map_path)
            if moved:
                legacy.unlink()
                context.note(
                    f"the pseudonym map an earlier import left beside the chunks was moved to "
                    f"{map_path}, so sharing {out} does not share it"
                )
            elif map_path.resolve().is_relative_to(out.resolve()):
                context.note(
                    f"the pseudonym map is beside the chunks ({map_path}): do not share {out} "
                    "as it is — the map undoes every pseudonym"
                )
        if writer.naive_times and options.timezone is None:
            context.note(
                "the export gives local times without a time zone: timestamps are written "
                "without one (pass --timezone, e.g. Europe/Berlin, to state it)"
            )
        problems = _decoding_notes(source, context)
        return ExportSummary(
            kind=kind,
            source=str(source.path),
            chunks_path=str(out / CHUNKS_FILE),
            conversations=writer.conversations,
            messages=writer.messages,
            participants=len(writer.speakers),
            chunks=writer.chunks_written,
            skipped=dict(sorted(context.log.skipped.items())),
            kinds=dict(sorted(context.log.kinds.items())),
            notes=context.notes,
            problems=problems,
            pseudonyms_path=str(map_path) if pseudonymiser is not None else None,
            first_message=writer.first,
            last_message=writer.last,
        )


def preview_names(
    path: str | Path, options: ImportOptions | None = None
) -> tuple[str, list[NameCandidate]]:
    """``--names-from-text``: the export's kind and the names its text holds that it does not
    list as people (nothing is written)."""
    options = options or ImportOptions()
    with ExportSource.open_path(path, Decoding(options.encoding, options.strict)) as source:
        if options.kind == "auto":
            kind = detect_kind(source)
        else:
            reader_for(options.kind)
            check_kind(options.kind, source)
            kind = options.kind
        reader = reader_for(kind)
        known = [*_collect_names(reader, source, options), *options.aliases]
        context = options.context()

        def texts() -> Iterator[str]:
            for conversation in reader.conversations(source, context):
                for message in conversation.messages:
                    yield message.text

        return kind, name_candidates(texts(), known)


def _decoding_notes(source: ExportSource, context: ReadContext) -> dict[str, int]:
    """Notes for the lines whose bytes did not decode (the first few named), and their count."""
    bad = source.bad_bytes
    if not bad:
        return {}
    shown = "; ".join(b.describe() for b in bad[:3]) + (" …" if len(bad) > 3 else "")
    hint = (
        " — if the file is Latin-1 or CP-1252, import it again with --encoding cp1252"
        if source.decoding.encoding is None and any(b.as_utf8 for b in bad)
        else ""
    )
    context.note(
        f"{len(bad)} line(s) held bytes that do not decode, kept with U+FFFD in their place "
        f"({shown}){hint}; --strict stops at the first"
    )
    return {"lines with bytes that do not decode": len(bad)}


def _collect_names(reader: ExportReader, source: ExportSource, options: ImportOptions) -> list[str]:
    """Every participant name the export gives (speakers and listed members), aliased, in
    order of first appearance: the names pseudonymisation replaces."""
    seen: dict[str, None] = {}
    scratch = replace(options, pseudonymise=False).context()
    scratch.log = SkipLog()
    for conversation in reader.conversations(source, scratch):
        for member in conversation.members:
            seen.setdefault(options.aliases.get(member, member), None)
        for message in conversation.messages:
            seen.setdefault(options.aliases.get(message.speaker, message.speaker), None)
    return list(seen)


class _Writer:
    """Turns conversations into chunks, counting as it goes."""

    def __init__(
        self, options: ImportOptions, pseudonymiser: Pseudonymiser | None, context: ReadContext
    ) -> None:
        self.options = options
        self.pseudonymiser = pseudonymiser
        self.context = context
        self.ids = ConversationIds()
        self.conversations = 0
        self.messages = 0
        self.chunks_written = 0
        self.speakers: set[str] = set()
        self.naive_times = False
        self.first: str | None = None
        self.last: str | None = None
        self._first_at: float | None = None
        self._last_at: float | None = None

    def chunks(self, conversation: Conversation) -> Iterator[dict[str, Any]]:
        key, title = conversation.key, conversation.title
        if self.pseudonymiser is not None:
            key = self.pseudonymiser.text(key)
            title = self.pseudonymiser.text(title) if title else title
        conversation_id = self.ids.next(key)
        messages = self._messages(conversation_id, conversation.messages)
        produced = False
        for chunk in chunk_conversation(conversation_id, title, messages, self.options.chunking):
            produced = True
            self.chunks_written += 1
            yield chunk
        if produced:
            self.conversations += 1
        else:
            self.context.log.skip("conversation with no messages")

    def _messages(
        self, conversation_id: str, messages: Iterator[ExportMessage] | Any
    ) -> Iterator[ChunkMessage]:
        ids = MessageIds(conversation_id)
        for message in messages:
            speaker = self.options.aliases.get(message.speaker, message.speaker)
            text = message.text
            if self.pseudonymiser is not None:
                speaker = self.pseudonymiser.name(speaker)
                text = self.pseudonymiser.text(text)
            moment = message.timestamp
            if moment.tzinfo is None:
                if self.options.timezone is not None:
                    moment = moment.replace(tzinfo=self.options.timezone)
                else:
                    self.naive_times = True
            stamp = iso_timestamp(moment)
            self.messages += 1
            self.speakers.add(speaker)
            # By the moment, not the text: "…T00:30:00+02:00" is before "…T23:00:00Z" the day
            # before it. A naive time is ordered as if it were UTC.
            when = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
            if self._first_at is None or when < self._first_at:
                self._first_at, self.first = when, stamp
            if self._last_at is None or when > self._last_at:
                self._last_at, self.last = when, stamp
            self.context.log.kept(message.kind)
            yield ChunkMessage(ids.next(stamp, speaker, text), speaker, moment, stamp, text)


def iso_timestamp(moment: datetime) -> str:
    """ISO 8601 to the second (``Z`` for UTC); naive times stay naive."""
    moment = moment.replace(microsecond=0)
    if moment.tzinfo is None:
        return moment.isoformat()
    if moment.utcoffset() == timedelta(0):
        return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return moment.isoformat()
