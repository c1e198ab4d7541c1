"""CaSiNo campsite negotiations → chunks.jsonl + partial v3 human gold.

One dialogue is one chunk. The human strategy labels of annotated utterances become
``negotiation_patterns`` (pattern, actor = the speaker, text = the utterance, evidence = its
message); each participant's pre-negotiation priorities and reasons (``value2issue`` /
``value2reason``) become ``claims`` (subject = the item, polarity pro). See docs/corpora.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chatledger.core import Chunk, ExtractionV3, InputError, Message
from chatledger.corpus._gold import Corpus, GoldRecord

MODEL = "human:casino"

# CaSiNo strategy label → v3 negotiation pattern. "non-strategic" (an utterance with no
# strategy) has no pattern; any other label not listed here is counted as unmapped.
STRATEGY_PATTERNS: dict[str, str | None] = {
    "elicit-pref": "elicit_preference",
    "self-need": "self_need",
    "other-need": "other_need",
    "uv-part": "undervalue_partner",
    "showing-empathy": "showing_empathy",
    "promote-coordination": "promote_coordination",
    "small-talk": "small_talk",
    "no-need": "no_need",
    "vouch-fair": "appeal_to_fairness",
    "non-strategic": None,
}
DEAL_ACTIONS = frozenset({"Submit-Deal", "Accept-Deal", "Reject-Deal", "Walk-Away"})
PRIORITIES = ("High", "Medium", "Low")


def _files(path: Path) -> list[Path]:
    if not path.exists():
        raise InputError("CaSiNo path not found", path=path)
    if path.is_file():
        return [path]
    files = sorted(path.rglob("casino*.json"))
    split = [f for f in files if f.parent.name == "split"]
    # The split files hold the same dialogues as casino.json; reading both would double them.
    chosen = split or files
    if not chosen:
        raise InputError("no casino*.json files here or below", path=path)
    return chosen


def _load(path: Path) -> list[dict[str, Any]]:
    """The file's dialogues, each checked (a JSON list as CaSiNo ships it, or one dialogue per
    line as a datasets export writes it); a bad one is one line naming its place and field."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 (byte 0x{exc.object[exc.start]:02x})", path=path) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if not exc.msg.startswith("Extra data"):
            raise InputError(f"not a JSON file ({exc})", path=path) from None
        return _load_lines(text, path)
    if not isinstance(data, list):
        raise InputError(
            "not CaSiNo data: expected a JSON list of dialogues with dialogue_id and chat_logs "
            f"(or one dialogue per line), got a JSON {_json_kind(data)}",
            path=path,
        )
    for index, dialogue in enumerate(data):
        _check_dialogue(dialogue, path=path, line=None, prefix=f"{index}.")
    return data


def _load_lines(text: str, path: Path) -> list[dict[str, Any]]:
    dialogues = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            dialogue = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, line=number
            ) from None
        _check_dialogue(dialogue, path=path, line=number, prefix="")
        dialogues.append(dialogue)
    return dialogues


def _json_kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _check_dialogue(dialogue: Any, *, path: Path, line: int | None, prefix: str) -> None:
    """Refuse what the reader would otherwise turn into wrong text: a message whose text is
    null would read "None", a speaker who is not a participant would be a third party."""

    def fail(message: str, field: str) -> InputError:
        return InputError(message, path=path, line=line, field=f"{prefix}{field}".rstrip("."))

    if not isinstance(dialogue, dict):
        raise fail(f"expected a dialogue (a JSON object), got a JSON {_json_kind(dialogue)}", "")
    for key in ("dialogue_id", "chat_logs"):
        if key not in dialogue:
            raise fail("missing (a CaSiNo dialogue has dialogue_id and chat_logs)", key)
    if not isinstance(dialogue["dialogue_id"], (str, int)) or isinstance(
        dialogue["dialogue_id"], bool
    ):
        raise fail("expected a string or an integer", "dialogue_id")
    logs = dialogue["chat_logs"]
    if not isinstance(logs, list):
        raise fail(f"expected a list of messages, got a JSON {_json_kind(logs)}", "chat_logs")
    info = dialogue.get("participant_info")
    if info is not None and not isinstance(info, dict):
        raise fail(f"expected an object, got a JSON {_json_kind(info)}", "participant_info")
    participants = sorted(info or {})
    for name, about in (info or {}).items():
        if not isinstance(about, dict):
            raise fail(
                f"expected an object, got a JSON {_json_kind(about)}", f"participant_info.{name}"
            )
        for key in ("value2issue", "value2reason"):
            value = about.get(key)
            if value is not None and not isinstance(value, dict):
                raise fail(
                    f"expected an object, got a JSON {_json_kind(value)}",
                    f"participant_info.{name}.{key}",
                )
    annotations = dialogue.get("annotations")
    if annotations is not None and not isinstance(annotations, list):
        raise fail(f"expected a list, got a JSON {_json_kind(annotations)}", "annotations")
    for number, entry in enumerate(logs):
        where = f"chat_logs.{number}"
        if not isinstance(entry, dict):
            raise fail(f"expected a message (a JSON object), got a JSON {_json_kind(entry)}", where)
        for key in ("text", "id"):
            value = entry.get(key)
            if not isinstance(value, str):
                got = "missing" if key not in entry else f"a JSON {_json_kind(value)}"
                raise fail(f"expected a string, got {got}", f"{where}.{key}")
        task = entry.get("task_data")
        if task is not None and not isinstance(task, dict):
            raise fail(f"expected an object, got a JSON {_json_kind(task)}", f"{where}.task_data")
        if participants and entry["id"] not in participants:
            raise fail(
                f"speaker {entry['id']!r} is not one of the dialogue's participants "
                f"({', '.join(participants)})",
                f"{where}.id",
            )


def _deal_text(entry: dict[str, Any]) -> str:
    """Deal actions carry their offer in task_data; spell it out so the chunk reads fully."""
    action = str(entry.get("text", ""))
    task = entry.get("task_data") or {}
    mine, theirs = task.get("issue2youget"), task.get("issue2theyget")
    if isinstance(mine, dict) and isinstance(theirs, dict):

        def items(split: dict[str, Any]) -> str:
            return ", ".join(f"{count} {item}" for item, count in split.items())

        return f"[{action}] I get {items(mine)}; you get {items(theirs)}"
    return f"[{action}]"


def _messages(dialogue: dict[str, Any], chunk_id: str) -> list[Message]:
    messages = []
    for index, entry in enumerate(dialogue["chat_logs"], start=1):
        text = entry["text"]  # a string: _check_dialogue refused anything else
        messages.append(
            Message(
                id=f"{chunk_id}-u{index:02d}",
                speaker=entry["id"],
                timestamp=None,
                text=_deal_text(entry) if text in DEAL_ACTIONS else text,
            )
        )
    return messages


def _patterns(
    dialogue: dict[str, Any], messages: list[Message], corpus: Corpus
) -> list[dict[str, Any]]:
    """Annotations are (utterance, labels) in dialogue order; align them to messages in order."""
    moves: list[dict[str, Any]] = []
    position = 0
    for entry in dialogue["annotations"]:
        if not (isinstance(entry, list) and len(entry) == 2):
            corpus.dropped["annotations that are not [utterance, labels]"] += 1
            continue
        utterance, labels = entry
        found = next(
            (i for i in range(position, len(messages)) if messages[i].text == utterance), None
        )
        if found is None:
            corpus.dropped["annotated utterances not found in the chat log"] += 1
            continue
        message = messages[found]
        position = found + 1
        corpus.sources["annotated utterances"] += 1
        for label in (part.strip() for part in str(labels).split(",")):
            if label not in STRATEGY_PATTERNS:
                corpus.dropped[f"unmapped strategy label {label!r}"] += 1
                continue
            pattern = STRATEGY_PATTERNS[label]
            if pattern is None:
                corpus.dropped[f"strategy label {label!r} (no pattern)"] += 1
                continue
            moves.append(
                {
                    "pattern": pattern,
                    "actor": message.speaker,
                    "text": message.text,
                    "evidence": [message.id],
                }
            )
            corpus.sources[f"strategy {label} → {pattern}"] += 1
    return moves


def _claims(dialogue: dict[str, Any], corpus: Corpus) -> list[dict[str, Any]]:
    claims = []
    for participant, info in sorted((dialogue.get("participant_info") or {}).items()):
        issues = info.get("value2issue") or {}
        reasons = info.get("value2reason") or {}
        for priority in PRIORITIES:
            item, reason = issues.get(priority), str(reasons.get(priority) or "").strip()
            if not item or not reason:
                corpus.dropped["priorities without a stated reason"] += 1
                continue
            claims.append(
                {"text": reason, "subject": item, "polarity": "pro", "speaker": participant}
            )
            corpus.sources["stated reasons → claims"] += 1
    return claims


def _dialogue(dialogue: dict[str, Any], corpus: Corpus) -> None:
    chunk_id = f"casino-{dialogue['dialogue_id']}"
    messages = _messages(dialogue, chunk_id)
    participants = sorted((dialogue.get("participant_info") or {}).keys())
    chunk = Chunk(
        chunk_id=chunk_id,
        conversation_id=chunk_id,
        title=f"CaSiNo dialogue {dialogue['dialogue_id']}",
        participants=participants or list(dict.fromkeys(m.speaker for m in messages)),
        messages=messages,
    )
    unstated = corpus.dropped["priorities without a stated reason"]
    claims = _claims(dialogue, corpus)
    data: dict[str, Any] = {}
    covers: list[str] = []
    # Reasons that were all missing leave claims uncovered (no annotation, not "no claim").
    if claims or corpus.dropped["priorities without a stated reason"] == unstated:
        data["claims"] = claims
        covers.append("claims")
    else:
        corpus.dropped["dialogues without any stated reason (claims not covered)"] += 1
    if dialogue.get("annotations"):
        lost = corpus.dropped["annotated utterances not found in the chat log"]
        moves = _patterns(dialogue, messages, corpus)
        lost = corpus.dropped["annotated utterances not found in the chat log"] - lost
        # Annotations that were all lost on import cover nothing: an empty gold would say the
        # annotators saw no strategy where they saw some.
        if moves or not lost:
            data["negotiation_patterns"] = moves
            covers.append("negotiation_patterns")
        else:
            corpus.dropped["dialogues with every annotated utterance lost (not covered)"] += 1
    corpus.chunks.append(chunk)
    corpus.gold.append(
        GoldRecord(chunk_id, MODEL, tuple(covers), ExtractionV3.model_validate(data))
    )


def read_casino(
    path: str | Path, *, annotated_only: bool = False, limit: int | None = None
) -> Corpus:
    """Chunks and human gold of the CaSiNo dialogues in ``path`` (a JSON file or a directory).

    ``annotated_only`` keeps only dialogues with strategy labels; ``limit`` reads at most that
    many dialogues per file (in file order), for quick looks and tests.
    """
    corpus = Corpus()
    seen: set[str] = set()
    for file in _files(Path(path)):
        dialogues: Iterable[dict[str, Any]] = _load(file)
        taken = 0
        for dialogue in dialogues:
            if limit is not None and taken >= limit:
                break
            if annotated_only and not dialogue.get("annotations"):
                continue
            key = str(dialogue["dialogue_id"])
            if key in seen:
                corpus.dropped["dialogues whose dialogue_id was seen before"] += 1
                continue
            seen.add(key)
            taken += 1
            _dialogue(dialogue, corpus)
    return corpus
