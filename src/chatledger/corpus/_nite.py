"""Minimal reader for NITE XML (NXT) stand-off annotation files, as used by the AMI corpus.

NXT files point into each other with ``href="FILE#id(A)"`` or ``href="FILE#id(A)..id(B)"``; a
range means every element of FILE from A to B in document order. Files declare their own
encoding (AMI uses ISO-8859-1), so they are parsed from bytes and the XML parser decodes them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from chatledger.core import InputError

NITE_NS = "http://nite.sourceforge.net/"
NITE_ID = f"{{{NITE_NS}}}id"
NITE_CHILD = f"{{{NITE_NS}}}child"
NITE_POINTER = f"{{{NITE_NS}}}pointer"

_HREF = re.compile(r"^(?P<file>[^#]+)#id\((?P<start>[^)]+)\)(?:\.\.id\((?P<end>[^)]+)\))?$")


@dataclass(frozen=True)
class Href:
    """A parsed NXT reference: one element (``end is None``) or an inclusive range."""

    file: str
    start: str
    end: str | None = None


def parse_href(href: str, *, path: Path) -> Href:
    match = _HREF.match(href.strip())
    if match is None:
        raise InputError(f"unreadable NXT reference {href!r}", path=path)
    return Href(match["file"], match["start"], match["end"])


def read_root(path: Path) -> ET.Element:
    """Parse one NXT file; a missing or malformed file is an :class:`InputError` naming it."""
    try:
        return ET.fromstring(path.read_bytes())
    except FileNotFoundError:
        raise InputError("file not found", path=path) from None
    except ET.ParseError as exc:
        raise InputError(f"not well-formed XML ({exc})", path=path) from None


def element_id(element: ET.Element) -> str:
    return element.get(NITE_ID, "")


def child_hrefs(element: ET.Element, *, path: Path) -> list[Href]:
    """The ``nite:child`` references directly under ``element``, in order."""
    return [
        parse_href(child.get("href", ""), path=path) for child in element if child.tag == NITE_CHILD
    ]


def pointers(element: ET.Element, *, path: Path) -> dict[str, Href]:
    """The ``nite:pointer`` references directly under ``element``, keyed by role."""
    return {
        child.get("role", ""): parse_href(child.get("href", ""), path=path)
        for child in element
        if child.tag == NITE_POINTER
    }


class OrderedIds:
    """Document order of the ids of one or more files, to expand ``id(A)..id(B)`` ranges."""

    def __init__(self) -> None:
        self._order: dict[str, list[str]] = {}
        self._index: dict[str, dict[str, int]] = {}

    def add(self, file: str, ids: list[str]) -> None:
        self._order[file] = ids
        self._index[file] = {value: i for i, value in enumerate(ids)}

    def expand(self, href: Href) -> list[str]:
        """The ids an href denotes; ids unknown to the file expand to nothing."""
        index = self._index.get(href.file)
        if index is None or href.start not in index:
            return []
        first = index[href.start]
        if href.end is None:
            return [href.start]
        last = index.get(href.end)
        if last is None or last < first:
            return [href.start]
        return self._order[href.file][first : last + 1]
