"""``import_corpus``: turn a human-annotated corpus into chunks.jsonl + gold.jsonl."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from chatledger.core import InputError, atomic_writer, prepare_output_dir
from chatledger.corpus._ami import read_ami
from chatledger.corpus._casino import read_casino
from chatledger.corpus._gold import Corpus, gold_item_counts

CorpusKind = Literal["ami", "casino"]
CORPUS_KINDS: tuple[str, ...] = ("ami", "casino")


@dataclass(frozen=True)
class ImportSummary:
    """What an import wrote: counts of chunks, messages and gold items, and what was dropped."""

    kind: str
    chunks: int
    messages: int
    gold_records: int
    gold_items: dict[str, int]
    sources: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    chunks_path: str = ""
    gold_path: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "chunks": self.chunks,
            "messages": self.messages,
            "gold_records": self.gold_records,
            "gold_items": dict(self.gold_items),
            "sources": dict(self.sources),
            "dropped": dict(self.dropped),
            "chunks_path": self.chunks_path,
            "gold_path": self.gold_path,
        }


_READERS: dict[str, Callable[..., Corpus]] = {"ami": read_ami, "casino": read_casino}


def read_corpus(kind: str, path: str | Path, **options: Any) -> Corpus:
    """Chunks and gold of a corpus in memory (``import_corpus`` without writing)."""
    reader = _READERS.get(kind)
    if reader is None:
        raise InputError(f"unknown corpus kind {kind!r}; expected one of {', '.join(CORPUS_KINDS)}")
    try:
        inspect.signature(reader).bind(path, **options)
    except TypeError as exc:
        raise InputError(f"bad option for the {kind} reader: {exc}") from None
    return reader(path, **options)


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with atomic_writer(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def import_corpus(
    kind: CorpusKind | str, path: str | Path, out_dir: str | Path, **options: Any
) -> ImportSummary:
    """Write ``out_dir/chunks.jsonl`` and ``out_dir/gold.jsonl`` for an AMI or CaSiNo corpus.

    Options go to the reader: AMI takes ``meetings``, ``max_messages``,
    ``unanswered_questions`` and ``min_words``; CaSiNo takes ``annotated_only`` and ``limit``.
    A wrong path or a file in the wrong format raises :class:`InputError` naming the path.
    """
    if Path(out_dir).exists() and not Path(out_dir).is_dir():
        # Before reading: a big corpus is not parsed only to find the output cannot be written.
        raise InputError("is a file, expected a folder", path=out_dir, field="--out")
    corpus = read_corpus(kind, path, **options)
    if not corpus.chunks:
        raise InputError(f"no {kind} conversations found", path=path)
    out = prepare_output_dir(out_dir)
    chunks_path, gold_path = out / "chunks.jsonl", out / "gold.jsonl"
    _write_jsonl(chunks_path, [c.model_dump(mode="json") for c in corpus.chunks])
    _write_jsonl(gold_path, [g.to_json() for g in corpus.gold])
    return ImportSummary(
        kind=kind,
        chunks=len(corpus.chunks),
        messages=sum(len(c.messages) for c in corpus.chunks),
        gold_records=len(corpus.gold),
        gold_items=gold_item_counts(corpus.gold),
        sources={k: v for k, v in sorted(corpus.sources.items()) if v},
        dropped={k: v for k, v in sorted(corpus.dropped.items()) if v},
        chunks_path=str(chunks_path),
        gold_path=str(gold_path),
    )
