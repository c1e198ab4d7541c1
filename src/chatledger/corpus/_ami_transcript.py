"""AMI meetings as speaker-attributed utterances: one message per dialogue act.

The words files hold one token per element (``w``, plus ``vocalsound``, ``disfmarker`` and
``gap`` markers, which carry no words and are left out). Dialogue acts point at ranges of
words of one channel (A-D); ``corpusResources/meetings.xml`` says which participant and role
sat on each channel and when the meeting took place.
"""

from __future__ import annotations

import html
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from chatledger.core import InputError
from chatledger.corpus._nite import (
    OrderedIds,
    child_hrefs,
    element_id,
    pointers,
    read_root,
)

ROLE_TITLES = {
    "PM": "Project Manager",
    "ME": "Marketing Expert",
    "UI": "User Interface Designer",
    "ID": "Industrial Designer",
}
# When meetings.xml gives no date: a fixed, obviously synthetic day.
FALLBACK_DATE = datetime(2000, 1, 1, tzinfo=UTC)

_PUNCTUATION = frozenset(".,?!;:")
_CLITICS = frozenset({"'s", "'ll", "'re", "'ve", "'d", "'m", "n't"})
# AMI spells letter sequences as "T_V_", "L_C_D_"; read them as "TV", "LCD".
_SPELLED = re.compile(r"(?<![A-Za-z])((?:[A-Za-z]_)+)")
_MEETING_FILE = re.compile(r"^(?P<meeting>[^.]+)\.(?P<agent>[A-Z])\.words\.xml$")


@dataclass(frozen=True)
class Word:
    """One token of a words file (markers such as laughter have ``is_word`` False)."""

    text: str
    start: float | None
    is_word: bool
    punctuation: bool
    truncated: bool


@dataclass
class DialogueAct:
    id: str
    agent: str
    word_ids: list[str]
    da_type: str | None
    text: str = ""
    start: float = 0.0


@dataclass
class Meeting:
    """One meeting's transcript: words by id, dialogue acts in time order, speakers."""

    name: str
    root: Path
    words: dict[str, Word] = field(default_factory=dict)
    word_order: OrderedIds = field(default_factory=OrderedIds)
    acts: dict[str, DialogueAct] = field(default_factory=dict)
    act_order: OrderedIds = field(default_factory=OrderedIds)
    timeline: list[str] = field(default_factory=list)
    speakers: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    start: datetime = FALLBACK_DATE
    empty_acts: int = 0

    def act_of_word(self) -> dict[str, str]:
        return {w: act.id for act in self.acts.values() for w in act.word_ids}

    def timestamp(self, seconds: float) -> str:
        moment = self.start + timedelta(seconds=int(seconds))
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def find_release(path: Path) -> Path:
    """The directory holding ``words/``: ``path`` itself or its single subdirectory that has it."""
    if not path.exists():
        raise InputError("AMI path not found", path=path)
    if not path.is_dir():
        raise InputError("expected the AMI annotation directory (with words/)", path=path)
    if (path / "words").is_dir():
        return path
    candidates = sorted(p for p in path.iterdir() if (p / "words").is_dir())
    if len(candidates) == 1:
        return candidates[0]
    raise InputError(
        "not an AMI manual-annotation release: no words/ directory here or one level down",
        path=path,
    )


def meeting_names(root: Path) -> list[str]:
    names = set()
    for file in (root / "words").glob("*.words.xml"):
        match = _MEETING_FILE.match(file.name)
        if match:
            names.add(match["meeting"])
    if not names:
        raise InputError("no <meeting>.<agent>.words.xml files", path=root / "words")
    return sorted(names)


def join_tokens(words: list[Word]) -> str:
    """Words to text: punctuation and clitics ("'s", "n't") attach to the word before them."""
    parts: list[str] = []
    for word in words:
        if not word.is_word:
            continue
        token = _SPELLED.sub(lambda m: m.group(1).replace("_", ""), word.text)
        if word.truncated:
            token += "-"
        attaches = word.punctuation or token in _PUNCTUATION or token.lower() in _CLITICS
        if attaches and parts:
            parts[-1] += token
        elif not (attaches and token in _PUNCTUATION):
            parts.append(token)
    return " ".join(parts)


# A meeting's times are seconds from its start; a year bounds what a timestamp can add to it.
_MAX_SECONDS = 366 * 86_400


def _seconds(raw: str, file: Path, word_id: str) -> float:
    """A word's ``starttime`` in seconds, or one line naming the file, word and attribute."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= _MAX_SECONDS):
        raise InputError(
            f"starttime {raw!r} is not a number of seconds from the meeting's start "
            f"(0 to {_MAX_SECONDS:,})",
            path=file,
            field=f"{word_id}.starttime",
        )
    return value


def _read_words(meeting: Meeting) -> None:
    for file in sorted((meeting.root / "words").glob(f"{meeting.name}.*.words.xml")):
        ids = []
        for element in read_root(file):
            word_id = element_id(element)
            if not word_id:
                continue
            ids.append(word_id)
            start = element.get("starttime")
            meeting.words[word_id] = Word(
                text=html.unescape((element.text or "").strip()),
                start=_seconds(start, file, word_id) if start not in (None, "") else None,
                is_word=element.tag == "w" and bool((element.text or "").strip()),
                punctuation=element.get("punc") == "true",
                truncated=element.get("trunc") == "true",
            )
        meeting.word_order.add(file.name, ids)


def _act_files(root: Path, name: str) -> list[Path]:
    return sorted((root / "dialogueActs").glob(f"{name}.?.dialog-act.xml"))


def has_dialogue_acts(root: Path, name: str) -> bool:
    return bool(_act_files(root, name))


def _read_acts(meeting: Meeting) -> None:
    files = _act_files(meeting.root, meeting.name)
    if not files:
        raise InputError(
            f"no dialogue acts for meeting {meeting.name}", path=meeting.root / "dialogueActs"
        )
    for file in files:
        agent = file.name.split(".")[1]
        ids = []
        for element in read_root(file):
            act_id = element_id(element)
            if not act_id:
                continue
            ids.append(act_id)
            hrefs = child_hrefs(element, path=file)
            word_ids = [w for href in hrefs for w in meeting.word_order.expand(href)]
            kind = pointers(element, path=file).get("da-aspect")
            meeting.acts[act_id] = DialogueAct(
                act_id, agent, word_ids, kind.start if kind is not None else None
            )
        meeting.act_order.add(file.name, ids)


def _place_in_time(meeting: Meeting) -> None:
    """Text and start time of each act; acts with no words are dropped (counted)."""
    previous: dict[str, float] = {}
    ordered: list[tuple[float, str, int, str]] = []
    for index, act in enumerate(meeting.acts.values()):
        words = [meeting.words[w] for w in act.word_ids]
        act.text = join_tokens(words)
        times = [w.start for w in words if w.start is not None]
        # A few words have no forced-alignment time; such an act follows its channel's last act.
        act.start = min(times) if times else previous.get(act.agent, 0.0)
        previous[act.agent] = act.start
        if not act.text:
            meeting.empty_acts += 1
            continue
        ordered.append((act.start, act.agent, index, act.id))
    meeting.timeline = [act_id for *_, act_id in sorted(ordered)]


def _meeting_date(element: ET.Element) -> datetime:
    raw = element.get("dateOnly", "")
    clock = element.get("startTime", "")
    for pattern in ("%d-%m-%y", "%d-%m-%Y"):
        try:
            day = datetime.strptime(raw, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
        match = re.fullmatch(r"(\d{1,2})h(\d{2})", clock)
        if match and int(match[1]) < 24 and int(match[2]) < 60:  # else: the day alone
            day = day.replace(hour=int(match[1]), minute=int(match[2]))
        return day
    return FALLBACK_DATE


def _read_speakers(meeting: Meeting, agents: list[str]) -> None:
    """Channel → a readable participant name: the role title, else ``<meeting>.<agent>``."""
    resources = meeting.root / "corpusResources" / "meetings.xml"
    roles: dict[str, str] = {}
    if resources.exists():
        for element in read_root(resources).iter("meeting"):
            if element.get("observation") != meeting.name:
                continue
            meeting.start = _meeting_date(element)
            for speaker in element.iter("speaker"):
                agent = speaker.get("nxt_agent")
                if agent:
                    roles[agent] = speaker.get("role", "")
    titles = {a: ROLE_TITLES.get(roles.get(a, ""), "") for a in agents}
    counts = {t: list(titles.values()).count(t) for t in titles.values()}
    for agent in agents:
        title = titles[agent]
        if not title:
            meeting.speakers[agent] = f"{meeting.name}.{agent}"
        elif counts[title] > 1:
            meeting.speakers[agent] = f"{title} ({agent})"
        else:
            meeting.speakers[agent] = title
        meeting.roles[agent] = roles.get(agent, "")


def read_meeting(root: Path, name: str) -> Meeting:
    meeting = Meeting(name=name, root=root)
    _read_words(meeting)
    _read_acts(meeting)
    agents = sorted({act.agent for act in meeting.acts.values()})
    _read_speakers(meeting, agents)
    _place_in_time(meeting)
    return meeting
