"""``--names-from-text``: names that appear only in what people wrote, offered for review.

Pseudonymisation replaces the people an export names (speakers, members) and the aliases the
user gives; it never guesses at words, because no offline tool finds every name and a wrong
guess silently rewrites a word. This preview does the guessing *for the user to review*: it
reads the export (writing no chunks) and offers two kinds of candidates —

* **capitalised** words written with a capital in the middle of a sentence and never in lower
  case anywhere in the export (``Priya``, ``Hamza``; a word such as "Will" that also appears as
  "will" is left out), and not a day or month name; at the start of a sentence, where every
  word is capitalised, only those that are not dictionary words either (``Sammy``, ``Priyas``);
  a possessive is its name (``Priya's``, ``Priya’s`` → ``Priya``);
* **not dictionary words**: lower-case words of four letters or more that occur at least twice and
  are not in Webster's dictionary (the ``english-words`` package's web2 list), such as a handle
  written in text (``hfaran``), and any ``@mention``;

— leaving out the names the export already knows. The result is an aliases file (``{candidate:
candidate}``, one per line, each with its count and an example) to edit — delete what is not a
person, map a nickname to the person it means — and pass back with ``--aliases``.
"""

from __future__ import annotations

import calendar
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from chatledger.corpus.exports._pseudonyms import fold

_WORD = re.compile(r"(?P<at>@)?(?P<word>[^\W\d_][\w'’-]*[^\W_]|[^\W\d_])")
_SKIP = re.compile(r"\b(?:https?://|www\.)\S+|[\w.%+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)
_SENTENCE_END = frozenset('.!?:;\n"“”()[]>-–—•*')
_CALENDAR = frozenset(
    w.casefold()
    for w in (*calendar.day_name, *calendar.day_abbr, *calendar.month_name, *calendar.month_abbr)
    if w
)
_POSSESSIVE = re.compile(r"['’]s?$")
_MIN_LOWER = 4
_MIN_COUNT = 2


@dataclass(frozen=True)
class NameCandidate:
    text: str
    count: int
    # "capitalised" | "capitalised, not a dictionary word" | "not a dictionary word" | "@mention"
    why: str
    example: str


@cache
def _dictionary() -> frozenset[str]:
    from english_words import get_english_words_set  # type: ignore[import-untyped]

    return frozenset(w for w in get_english_words_set(["web2"], lower=False) if w.islower())


def name_candidates(
    texts: Iterable[str], known: Iterable[str], limit: int = 200
) -> list[NameCandidate]:
    """Candidates from message ``texts``, leaving out ``known`` names and their parts."""
    known_words: set[str] = set()
    for name in known:
        for part in re.findall(r"[^\W\d_][\w'’-]*", name):
            for piece in (part, *part.split("-")):
                known_words.update({piece.casefold(), fold(piece).casefold()})
    mid_capital: Counter[str] = Counter()
    lower: Counter[str] = Counter()
    mentions: Counter[str] = Counter()
    opening: Counter[str] = Counter()  # capitalised at the start of a sentence
    lower_seen: set[str] = set()
    examples: dict[str, str] = {}
    for text in texts:
        text = _SKIP.sub(" ", text)
        for match in _WORD.finditer(text):
            word = _POSSESSIVE.sub("", match.group("word")) or match.group("word")
            key = word.casefold()
            if key in known_words:
                continue
            if match.group("at"):
                mentions[word] += 1
            elif word.islower():
                lower_seen.add(key)
                if len(word) >= _MIN_LOWER and word.isalpha():
                    lower[word] += 1
            elif word[0].isupper() and not word.isupper():
                (opening if _starts_sentence(text, match) else mid_capital)[word] += 1
            else:
                continue
            examples.setdefault(word, _around(text, match.start(), match.end()))
    found: list[NameCandidate] = []
    for word, count in mentions.items():
        found.append(NameCandidate(word, count, "@mention", examples[word]))
    for word, count in mid_capital.items():
        key = word.casefold()
        if key not in lower_seen and key not in _CALENDAR and word not in mentions:
            count += opening.get(word, 0)
            found.append(NameCandidate(word, count, "capitalised", examples[word]))
    words = _dictionary() if lower or opening else frozenset()
    for word, count in opening.items():
        key = word.casefold()
        if word in mid_capital or word in mentions:
            continue
        if key not in lower_seen and key not in _CALENDAR and key not in words:
            found.append(
                NameCandidate(word, count, "capitalised, not a dictionary word", examples[word])
            )
    if lower:
        for word, count in lower.items():
            if count >= _MIN_COUNT and word not in words and word not in mentions:
                found.append(NameCandidate(word, count, "not a dictionary word", examples[word]))
    found.sort(key=lambda c: (-c.count, c.text.casefold()))
    return found[:limit]


def _starts_sentence(text: str, match: re.Match[str]) -> bool:
    before = text[: match.start()].rstrip(" \t")
    return not before or before[-1] in _SENTENCE_END


def _around(text: str, start: int, end: int) -> str:
    left = text[max(0, start - 30) : start].split("\n")[-1]
    right = text[end : end + 30].split("\n")[0]
    return f"…{left}{text[start:end]}{right}…"


def aliases_file(candidates: list[NameCandidate], export: str, kind: str) -> str:
    """The candidates as an aliases file (YAML; every key and value a JSON string)."""
    lines = [
        f"# Names found in the text of {export} that the export does not list as people",
        f"# ({len(candidates)} candidate(s), most frequent first). Keep the line of each real",
        "# person and delete the others; a nickname may name the person it means",
        '# ("Sammy": "Samuel Ruiz-García"). Then import again with this file:',
        f"#   chatledger corpus import {kind} EXPORT --out DIR --pseudonymise --aliases THIS_FILE",
    ]
    for candidate in candidates:
        name = json.dumps(candidate.text, ensure_ascii=False)
        example = candidate.example.replace("\n", " ")
        lines.append(f"{name}: {name}  # {candidate.why}, {candidate.count}×: {example}")
    return "\n".join(lines) + "\n"
