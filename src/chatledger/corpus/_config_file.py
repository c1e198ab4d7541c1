"""Reading the user's configuration files (run configs, weights files): YAML, or JSON by suffix.

:func:`read_config_file` is the one loader for them. YAML is read with a ``yaml.SafeLoader``
subclass that refuses anchors and aliases: an alias bomb (a few lines that expand to gigabytes
once something walks the data) cannot get past loading, and no ChatLedger config needs
repetition that cannot be written out. Every failure is one :class:`InputError` line naming the
file: syntax errors as ``config.yaml:LINE:COL: problem``, a value that cannot be built (a
timestamp such as ``2026-02-30``, an integer of more than 4,300 digits) at its place, nesting
deeper than the parser's stack, bytes that are not UTF-8. A key written twice in one mapping is
refused at its second place (YAML and JSON alike would keep the last silently: a gate rule or a
challenger list written twice would lose the first without a word). A NaN or infinite number,
or a string holding a lone surrogate, is refused anywhere in the file, naming its key path: no
config has a use for them, and they would end up as invalid JSON in ``run.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.reader import ReaderError

from chatledger.core import InputError
from chatledger.corpus._lines import UTF8_BOM, JsonTextError, first_unwritable, loads_strict

ALIASES_REFUSED = "YAML aliases (&anchor/*alias) are not allowed"


class ConfigSyntaxError(InputError):
    """A syntax error at a known line and column: renders as ``file:LINE:COL: message``."""

    def __init__(self, message: str, *, path: str | Path, line: int, column: int) -> None:
        self.column = column
        super().__init__(message, path=path, line=line)

    def _render(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.detail}"


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader without anchors or aliases, whose value errors carry the node's place."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ComposerError(None, None, ALIASES_REFUSED, event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue  # a complex key: the base class refuses the unhashable ones
                key = self.construct_object(key_node)
                if key in first:
                    raise ConstructorError(
                        None,
                        None,
                        f"duplicate key {key!r} (first on line {first[key]})",
                        key_node.start_mark,
                    )
                first[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as exc:  # int() of 5,000 digits, a bad timestamp
            raise ConstructorError(None, None, _value_problem(exc), node.start_mark) from None


def _value_problem(exc: Exception) -> str:
    text = str(exc)
    if "integer string conversion" in text:
        return "a number with more than 4300 digits"
    return f"cannot read this value ({text})"


def _mark_error(exc: yaml.MarkedYAMLError, path: str | Path) -> ConfigSyntaxError | InputError:
    problem = exc.problem or exc.context or "not valid YAML"
    if exc.context and exc.problem and exc.context_mark is not None:
        mark = exc.context_mark
        problem += f" ({exc.context} at {mark.line + 1}:{mark.column + 1})"
    if exc.problem_mark is None:
        return InputError(f"not valid YAML: {problem}", path=path)
    mark = exc.problem_mark
    return ConfigSyntaxError(problem, path=path, line=mark.line + 1, column=mark.column + 1)


def load_yaml(text: str, *, path: str | Path) -> Any:
    """Parse YAML ``text`` (read from ``path``, which errors name) without anchors or aliases.

    Raises :class:`InputError` (a :class:`ConfigSyntaxError` when the place is known), never
    ``yaml.YAMLError``, ``ValueError`` or ``RecursionError``.
    """
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        raise _mark_error(exc, path) from None
    except ReaderError as exc:  # a control character, say NUL
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = (
            exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        )
        raise ConfigSyntaxError(
            f"character #x{code:04x} is not allowed in YAML", path=path, line=line, column=column
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}", path=path) from None
    except RecursionError:
        raise InputError("not valid YAML: nested too deeply", path=path) from None


def read_config_text(path: Path) -> str:
    """The file's text: UTF-8, a leading byte-order mark dropped; errors are one line."""
    try:
        data = path.read_bytes()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read: {reason}", path=_printable(path)) from None
    data = data.removeprefix(UTF8_BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not UTF-8 (byte 0x{data[exc.start]:02x})", path=path, line=line
        ) from None


def parse_config_text(text: str, *, path: str | Path) -> Any:
    """YAML, or strict JSON when ``path`` ends in ``.json``; non-finite numbers and lone
    surrogates are refused wherever they are, naming their key path."""
    if str(path).endswith(".json"):
        try:
            data = loads_strict(text)
        except JsonTextError as exc:
            if exc.field:
                raise InputError(exc.message, path=path, field=exc.field) from None
            if exc.line is not None and exc.column is not None:
                raise ConfigSyntaxError(
                    exc.reason, path=path, line=exc.line, column=exc.column
                ) from None
            raise InputError(exc.message, path=path) from None
        duplicate = _first_duplicate_key(text)
        if duplicate is not None:
            where, key = duplicate
            raise InputError(f"duplicate key {key!r}", path=path, field=where or None)
        return data
    data = load_yaml(text, path=path)
    found = first_unwritable(data)
    if found is not None:
        where, message = found
        raise InputError(message, path=path, field=where or None)
    return data


def _first_duplicate_key(text: str) -> tuple[str, str] | None:
    """(dot path of the object, key) of the first key written twice in one JSON object of
    ``text`` (already parsed once, so it is valid JSON), or None."""
    found: list[tuple[str, str]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and not found:
                found.append(("", key))
            seen.add(key)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return found[0] if found else None


def read_config_file(path: str | Path) -> Any:
    """Read and parse a config file (YAML, or JSON for ``.json``): the data, or one
    :class:`InputError` line. The caller checks the shape (usually a mapping)."""
    path = Path(path)
    return parse_config_text(read_config_text(path), path=path)


def read_config_mapping(
    path: str | Path, *, what: str, allow_empty: bool = False
) -> dict[str, Any]:
    """A config file that must exist and hold a mapping at its top level (a run, selection or
    weights config): the mapping, or one :class:`InputError` line naming the file (``what``
    says which kind of config was not found). ``allow_empty``: an empty file is ``{}``."""
    path = Path(path)
    try:
        found = path.is_file()
    except OSError as exc:  # a name too long
        raise InputError(f"cannot use path: {exc.strerror or exc}", path=path) from None
    if not found:
        there = path.is_dir()
        raise InputError(
            f"is a directory, expected a {what}" if there else f"{what} not found", path=path
        )
    data = read_config_file(path)
    if data is None and allow_empty:
        return {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping at the top level", path=path)
    return data


# Configs are small; a large file named in an error (a run.json) is not parsed again for a line.
_LOCATE_MAX_BYTES = 1_000_000


def locate_config_field(path: str | Path, field: str) -> int | None:
    """The line of ``field`` (a dot path such as ``challengers.0.samples`` or a gate rule
    ``fields.claims.max_drop``, whose figure name holds a dot) in the YAML or JSON config at
    ``path``; for a key that is missing, the line of the deepest mapping found on the way.
    None when the file cannot be read or parsed. Only called once an error is being shown."""
    file = Path(path)
    try:
        if file.suffix.lower() not in (".yaml", ".yml", ".json") or not file.is_file():
            return None
        if file.stat().st_size > _LOCATE_MAX_BYTES:
            return None
        node = yaml.compose(read_config_text(file), Loader=_StrictLoader)
    except (OSError, InputError, yaml.YAMLError, RecursionError):
        return None
    if node is None:
        return None
    line: int | None = None
    rest = field
    while rest:
        if isinstance(node, yaml.MappingNode):
            found = None
            for key_node, value_node in node.value:
                key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else None
                matches = key is not None and (rest == key or rest.startswith(key + "."))
                if matches and (found is None or len(str(key)) > len(found[0])):
                    found = (str(key), key_node, value_node)
            if found is None:
                return line if line is not None else node.start_mark.line + 1
            key, key_node, node = found
            line = key_node.start_mark.line + 1
            rest = rest[len(key) + 1 :]
        elif isinstance(node, yaml.SequenceNode):
            head, _, rest = rest.partition(".")
            if not head.isdigit() or int(head) >= len(node.value):
                return line
            node = node.value[int(head)]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _printable(path: Path) -> str:
    """A path as text that can be printed (a lone surrogate or NUL shown escaped)."""
    text = str(path)
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\0", "\\0")
