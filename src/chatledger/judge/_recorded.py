"""Recorded verdicts: a judge's answers kept in a file and replayed offline, deterministically.

A live model judge (``local:qwen2.5-coder-1.5b``) is too slow for ``make test``; its verdicts
are recorded once (``chatledger judges audit --judge local:NAME --record FILE``) and replayed
by :class:`ReplayJudge` (``--judge recorded:FILE``). Each line is a :class:`RecordedVerdict`
keyed by the SHA-256 of what the judge read (:func:`verdict_key`: the system prompt, the
conversation and the extraction as shown), so a replay answers exactly the pairs that were
recorded and says which it does not have (unscored, counted — never a guess).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chatledger.core import Chunk, ExtractionV3, InputError, atomic_writer, first_validation_error
from chatledger.corpus import read_json_lines
from chatledger.judge._base import Judge
from chatledger.judge._llm import JUDGE_SYSTEM, judge_prompt
from chatledger.judge._verdict import Verdict

RECORDED_JUDGE_PREFIX = "recorded:"


def verdict_key(chunk: Chunk, extraction: ExtractionV3) -> str:
    """What a model judge reads for one pair, hashed: the same prompt, the same key."""
    text = JUDGE_SYSTEM + "\n\n" + judge_prompt(chunk, extraction)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RecordedVerdict(BaseModel):
    """One line of a recorded-verdicts file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    judge: str  # the judge that answered, e.g. local:qwen2.5-coder-1.5b
    family: str = ""
    key: str = Field(min_length=64, max_length=64)
    chunk_id: str
    label: str = ""  # what was graded (the audit's set name), for a reader
    verdict: Verdict | None  # None: the judge's answer could not be used (unscored)


def write_recorded(lines: Iterable[RecordedVerdict], path: str | Path) -> None:
    with atomic_writer(path) as handle:
        for line in lines:
            handle.write(json.dumps(line.model_dump(mode="json"), ensure_ascii=False) + "\n")


def read_recorded(path: str | Path) -> list[RecordedVerdict]:
    """Every line; a bad one is an InputError naming the file, line and field."""
    out: list[RecordedVerdict] = []
    for line in read_json_lines(path):
        if line.error is not None:
            raise InputError(line.error, path=path, line=line.number, field=line.field or None)
        try:
            out.append(RecordedVerdict.model_validate(line.value))
        except ValidationError as exc:
            where, msg = first_validation_error(exc)
            raise InputError(msg, path=path, line=line.number, field=where or None) from None
    if not out:
        raise InputError("no recorded verdict in the file", path=path)
    return out


class ReplayJudge(Judge):
    """Answers from a recorded-verdicts file; a pair it has no line for is unscored."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        lines = read_recorded(self.path)
        judges = sorted({line.judge for line in lines})
        if len(judges) != 1:
            raise InputError(
                f"the file holds verdicts of several judges ({', '.join(judges)})", path=path
            )
        self.recorded_judge = judges[0]
        self.name = f"{RECORDED_JUDGE_PREFIX}{judges[0]}"
        self.family = lines[0].family
        self._verdicts = {line.key: line.verdict for line in lines}
        self.missing = 0
        # What was recorded: the chunks (in file order) and the audit sets (labels) graded.
        self.chunk_ids = list(dict.fromkeys(line.chunk_id for line in lines))
        self.labels = list(dict.fromkeys(line.label for line in lines if line.label))

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        out: list[Verdict | None] = []
        for chunk, extraction in pairs:
            key = verdict_key(chunk, extraction)
            if key not in self._verdicts:
                self.missing += 1
            out.append(self._verdicts.get(key))
        return out

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "family": self.family, "recording": str(self.path)}


class RecordingJudge(Judge):
    """Passes every pair to ``inner`` and keeps what it answered, for :func:`write_recorded`."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.name = inner.name
        self.family = inner.family
        self.lines: list[RecordedVerdict] = []
        self.labels: list[str] = []  # set before a call: what each pair is (optional)

    def judge_many(self, pairs: Sequence[tuple[Chunk, ExtractionV3]]) -> list[Verdict | None]:
        verdicts = self.inner.judge_many(pairs)
        labels = self.labels if len(self.labels) == len(pairs) else [""] * len(pairs)
        for (chunk, extraction), verdict, label in zip(pairs, verdicts, labels, strict=True):
            self.lines.append(
                RecordedVerdict(
                    judge=self.inner.name,
                    family=self.inner.family,
                    key=verdict_key(chunk, extraction),
                    chunk_id=chunk.chunk_id,
                    label=label,
                    verdict=verdict,
                )
            )
        return verdicts

    def describe(self) -> dict[str, str]:
        return self.inner.describe()


def bundled_recording(name: str) -> Path:
    """``data/recorded/judges/<name>.jsonl``, shipped with the package."""
    from importlib import resources

    path = Path(str(resources.files("chatledger") / "data" / "recorded" / "judges")) / (
        f"{name}.jsonl"
    )
    if not path.is_file():
        raise InputError(
            f"no recorded judge {name!r}: give a recorded-verdicts file (recorded:FILE.jsonl)",
            field="--judge",
        )
    return path
