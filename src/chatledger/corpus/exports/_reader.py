"""The reader interface, and the registry the import command finds readers in by name.

A reader is registered once under its kind (``@EXPORT_READERS.register("whatsapp")``) and
rebuilt by name. ``sniff`` says whether an export looks like this reader's format (``--kind
auto`` asks every reader, in registration order, and takes the first yes); ``accepts`` is the
check made when the user names the kind; ``conversations`` reads it. ``conversations`` may
be called twice on one export (pseudonymisation first collects every name), so it must not
consume anything it cannot read again.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import ClassVar

from chatledger.core import Registry
from chatledger.corpus.exports._model import Conversation, ReadContext
from chatledger.corpus.exports._source import ExportSource


class ExportReader(ABC):
    """Reads one chat-export format."""

    kind: ClassVar[str]
    # What the format is, in a sentence: "not a Telegram Desktop export (result.json): it looks
    # like a DiscordChatExporter file (Discord)".
    label: ClassVar[str] = ""
    # How the user gets the export out of the app: one line for --help and the docs.
    how_to_export: ClassVar[str] = ""

    @classmethod
    @abstractmethod
    def sniff(cls, source: ExportSource) -> bool:
        """Whether ``source`` looks like this format (cheap: names and the first bytes)."""

    @classmethod
    def accepts(cls, source: ExportSource) -> bool:
        """Whether ``source`` has this format's signature when the user names the kind (the
        check before reading, so another app's file is refused naming what it is); as strict
        as :meth:`sniff` unless a reader says otherwise."""
        return cls.sniff(source)

    @abstractmethod
    def conversations(self, source: ExportSource, context: ReadContext) -> Iterator[Conversation]:
        """The export's conversations, each with its messages in time order. Bad input the
        user must fix raises :class:`InputError` naming file, line and field; an item that is
        not a message (a system line, a service message) is counted in ``context.log``."""


# `corpus import KIND`; other packages add formats through the entry-point group
# ``chatledger.importers`` (docs/plugins.md).
EXPORT_READERS: Registry[type[ExportReader]] = Registry(
    "chat export format", group="chatledger.importers", expects=ExportReader
)
