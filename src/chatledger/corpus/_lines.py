"""Reading JSON Lines: the one line decoder behind every JSONL loader (DESIGN.md §2).

Chunks, extractions (and human gold, which is extraction lines), structbench datasets and
predictions all read their files through :func:`read_json_lines`. It yields one
:class:`JsonLine` per non-blank line, and never raises for what a line holds: a line that is
not UTF-8, not JSON, or not a JSON object comes back with ``error`` set (and ``field`` when the
problem sits at a known place inside the object). Each loader then decides what a bad line
means: user input (chunks, datasets) raises an :class:`InputError` naming ``file:line``;
model output (extractions, predictions) records the line as invalid and goes on.

What the decoder refuses, and why:

- a UTF-8 byte-order mark is dropped at the very start of the file (Windows exports carry
  one) and nowhere else;
- bytes that are not UTF-8;
- what :func:`json.loads` refuses, plus what it accepts but JSON does not allow: ``NaN``,
  ``Infinity``, numbers too large for a float (``1e999``), and strings holding a lone surrogate
  (``"\\ud800"``, which cannot be written back out as UTF-8);
- integers longer than Python's limit for integer strings (4,300 digits by default) and arrays
  or objects nested deeper than the decoder's stack (about 1,000 levels): both used to escape
  as ``ValueError`` / ``RecursionError``.

A line is blank when it holds only JSON whitespace (space, tab, CR, LF); blank lines are
skipped, every other line is yielded.

Speed: a line is first decoded by msgspec, which gives exactly :func:`json.loads`'s value for
every text it accepts (same numbers, big integers, duplicate keys, key order) and refuses
everything :func:`loads_strict` refuses (NaN, infinities and overflowing numbers, lone
surrogates, more than 4,300 digits, deep nesting); a line it refuses, or one nested deep
enough to come near the recursion limit, goes through :func:`loads_strict`, so every message
is the strict decoder's. tests/test_fast_decode.py holds the two decoders to this.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from chatledger.core import ChatLedgerError, InputError

UTF8_BOM = b"\xef\xbb\xbf"
JSON_WHITESPACE = " \t\r\n"
# A line longer than this is refused (the file is not JSON Lines, or not a file at all): read as
# a line it would take all the memory there is (the longest chunk line measured, a 5 MB
# message, is 1/25 of it).
MAX_LINE_BYTES = 128 * 1024 * 1024
# Above this size the "is the whole file one JSON document?" check is skipped.
_WHOLE_DOCUMENT_LIMIT = 64 * 1024 * 1024
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# Lines with more brackets than this take the strict decoder: the two decoders' depth limits
# are both the recursion limit, but counted from different stack depths.
_FAST_MAX_BRACKETS = 256
_fast_decode = msgspec.json.Decoder().decode


class JsonTextError(ChatLedgerError, ValueError):
    """Text that is not acceptable JSON; ``field`` is the dot path of the bad value when the
    text parsed but holds one (NaN, a lone surrogate), and ``value`` is what was parsed.

    Readers turn it into an :class:`InputError` naming the file and line (or an invalid line of
    model output); it is a ValueError too, as ``json.loads``'s own error is."""

    def __init__(
        self,
        message: str,
        *,
        field: str = "",
        value: Any = None,
        line: int | None = None,
        column: int | None = None,
        reason: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or message
        self.field = field
        self.value = value
        self.line = line
        self.column = column


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One non-blank line of a JSON Lines file.

    ``value`` is the parsed object when ``error`` is None. When ``error`` is set, ``value`` is
    whatever could still be parsed (an object holding a NaN, a list where an object was
    expected) or None, and ``text`` is the line as text (bytes that are not UTF-8 replaced by
    U+FFFD) so that a loader can still look for a chunk id in it.
    """

    number: int
    text: str
    value: Any = None
    error: str | None = None
    field: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


def loads_strict(text: str | bytes) -> Any:
    """:func:`json.loads` that raises only :class:`JsonTextError` (see the module docstring)."""
    non_finite = False

    def constant(name: str) -> float:
        nonlocal non_finite
        non_finite = True
        return float(name.replace("Infinity", "inf"))

    def number(raw: str) -> float:
        nonlocal non_finite
        value = float(raw)
        if math.isinf(value):
            non_finite = True
        return value

    try:
        value = json.loads(text, parse_constant=constant, parse_float=number)
    except json.JSONDecodeError as exc:
        # "Unterminated string starting at" ends in "at" itself: not "… at at column 7".
        problem = exc.msg.removesuffix(" at")
        raise JsonTextError(
            f"not valid JSON ({problem} at column {exc.colno})",
            line=exc.lineno,
            column=exc.colno,
            reason=f"not valid JSON ({problem})",
        ) from None
    except RecursionError:
        raise JsonTextError("not valid JSON (nested too deeply)") from None
    except UnicodeDecodeError as exc:  # bytes given
        raise JsonTextError(f"not UTF-8 ({exc.reason})") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            limit = sys.get_int_max_str_digits()
            raise JsonTextError(
                f"not valid JSON (a number with more than {limit} digits)"
            ) from None
        raise JsonTextError(f"not valid JSON ({exc})") from None
    surrogates = bool(_SURROGATE_ESCAPE.search(text if isinstance(text, str) else ""))
    if non_finite or surrogates:
        found = first_unwritable(value)
        if found is not None:
            where, message = found
            raise JsonTextError(message, field=where, value=value)
    return value


def first_unwritable(value: Any) -> tuple[str, str] | None:
    """(dot path, reason) of the first non-finite number or lone-surrogate string, in file
    order; iterative, so a deeply nested value cannot exhaust the stack."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return where, "not a finite number (NaN and infinity are not allowed)"
        if isinstance(item, str) and not _is_text(item):
            return where, "not valid text (a lone surrogate escape such as \\ud800)"
        if isinstance(item, dict):
            children: list[tuple[str, Any]] = []
            for key, child in item.items():
                path = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and not _is_text(key):  # YAML keys may be None or numbers
                    return where, "not valid text (a key holds a lone surrogate escape)"
                children.append((path, child))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(
                reversed([(f"{where}.{i}" if where else str(i), c) for i, c in enumerate(item)])
            )
    return None


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, bool):
        return "a JSON boolean"
    if value is None:
        return "JSON null"
    return "a JSON number"


def parse_json_line(text: str, number: int) -> JsonLine:
    """Decode one line of text into a :class:`JsonLine` (an object, or an error)."""
    try:
        value = loads_strict(text)
    except JsonTextError as exc:
        return JsonLine(number, text, exc.value, exc.message, exc.field)
    if not isinstance(value, dict):
        return JsonLine(number, text, value, f"expected a JSON object, got {_kind(value)}")
    return JsonLine(number, text, value)


def fast_loads(raw: bytes) -> Any:
    """What :func:`loads_strict` returns for ``raw`` (UTF-8, already known to decode), or
    ``None`` when only the strict decoder can say (it refuses the line, or it is too deep to
    decide fast). A JSON ``null`` line also gives ``None``: the strict decoder then says why
    it is not an object."""
    if raw.count(b"[") + raw.count(b"{") > _FAST_MAX_BRACKETS:
        return None
    try:
        return _fast_decode(raw)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None


def _is_blank(text: str) -> bool:
    return not text.strip(JSON_WHITESPACE)


def _open(path: Path) -> Any:
    if not path.exists():
        if path.is_symlink():
            raise InputError("a symbolic link to nothing (or a loop of links)", path=path)
        raise InputError("file not found", path=path)
    if path.is_dir():
        raise InputError("is a directory, expected a .jsonl file", path=path)
    if not path.is_file():
        # /dev/zero would be one endless line; a pipe cannot be read twice, as readers do.
        raise InputError("not a regular file (a device or a pipe): give a .jsonl file", path=path)
    try:
        return path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None


def read_json_lines(path: str | Path) -> Iterator[JsonLine]:
    """Every non-blank line of ``path`` as a :class:`JsonLine`, in file order.

    Raises :class:`InputError` only when the file itself cannot be read (missing, a folder, a
    device or a pipe, no permission, a line longer than :data:`MAX_LINE_BYTES`); what a line
    holds never raises.
    """
    for line, _offset, _size in read_json_lines_at(path):
        yield line


def read_json_lines_at(path: str | Path) -> Generator[tuple[JsonLine, int, int], None, None]:
    """:func:`read_json_lines` with where each line sits: (line, byte offset, byte length),
    so that a reader can come back to one line (:func:`reread_json_line`,
    :func:`read_json_lines_located`)."""
    path = Path(path)
    handle = _open(path)
    first_content = True
    offset = 0
    with handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(raw) > MAX_LINE_BYTES:
                raise InputError(
                    f"line {number} is longer than {MAX_LINE_BYTES // 2**20} MB: not a JSON "
                    "Lines file",
                    path=path,
                )
            start, size = offset, len(raw)
            offset += size
            line = _decode_line(raw, number, path, first_content)
            if line is None:
                continue
            first_content = False
            yield line, start, size


def _decode_line(raw: bytes, number: int, path: Path, first_content: bool) -> JsonLine | None:
    """One line's bytes as :func:`read_json_lines_at` gives them (None: a blank line);
    ``first_content``: no non-blank line comes before it (a whole-document file is named)."""
    if number == 1 and raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        if _is_blank(text):
            return None
        byte = raw[exc.start]
        return JsonLine(
            number, text, None, f"not UTF-8 (byte 0x{byte:02x} at byte {exc.start + 1})"
        )
    if _is_blank(text):
        return None
    value = fast_loads(raw)
    if type(value) is dict:
        return JsonLine(number, text, value)
    line = parse_json_line(text, number)
    if first_content and not line.ok and not line.field:
        whole = whole_document(path)
        if whole is not None:
            line = JsonLine(number, text, line.value, whole)
    return line


def read_json_lines_located(
    path: str | Path, places: Sequence[tuple[int, int, int]], first_line: int
) -> Iterator[JsonLine]:
    """The lines :func:`read_json_lines_at` gave at ``places`` — (line number, byte offset,
    byte length) each, in any order — decoded again exactly as it decoded them; ``first_line``
    is the number of the file's first non-blank line. A file that changed since (a place
    that is now blank) fails in one line naming it."""
    path = Path(path)
    handle = _open(path)
    with handle:
        for number, offset, size in places:
            handle.seek(offset)
            line = _decode_line(handle.read(size), number, path, number == first_line)
            if line is None:
                raise InputError("the file changed while the run read it", path=path, line=number)
            yield line


def reread_json_line(handle: Any, number: int, offset: int, size: int) -> JsonLine:
    """The line that :func:`read_json_lines_at` gave at ``offset`` (``handle``: the same file,
    opened in binary), decoded again the same way; for a line that decoded the first time."""
    handle.seek(offset)
    raw = handle.read(size)
    if number == 1 and raw.startswith(UTF8_BOM):
        raw = raw[len(UTF8_BOM) :]
    value = fast_loads(raw)
    text = raw.decode("utf-8")
    return JsonLine(number, text, value) if type(value) is dict else parse_json_line(text, number)


def whole_document(path: Path) -> str | None:
    """Why a file is not JSON Lines when it is one JSON array or one pretty-printed object
    (the usual mistake: a file written with ``json.dump`` instead of one object per line)."""
    try:
        if path.stat().st_size > _WHOLE_DOCUMENT_LIMIT:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    data = data.removeprefix(UTF8_BOM)
    try:
        text = data.decode("utf-8")
        value = loads_strict(text)
    except (UnicodeDecodeError, JsonTextError):
        return None
    lines = sum(1 for line in text.splitlines() if not _is_blank(line))
    if isinstance(value, list):
        spread = f" spread over {lines} lines" if lines > 1 else ""
        return f"the file is a JSON array{spread}, expected JSON Lines: one object per line"
    if isinstance(value, dict) and lines > 1:
        return (
            f"the file is one JSON object spread over {lines} lines (pretty-printed), "
            "expected JSON Lines: one object per line"
        )
    return None
