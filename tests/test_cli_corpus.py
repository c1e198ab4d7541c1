"""``chatledger corpus import`` names the kinds it can read without importing the readers
(``--help`` stays instant): the list it prints is the registry's."""

from __future__ import annotations

from chatledger.cli._corpus_cmd import ANNOTATED_KINDS, CHAT_KINDS
from chatledger.corpus import CORPUS_KINDS
from chatledger.corpus.exports import EXPORT_READERS


def test_the_kinds_the_cli_names_are_the_registered_readers() -> None:
    assert sorted(CHAT_KINDS) == sorted(EXPORT_READERS.names())
    assert sorted(ANNOTATED_KINDS) == sorted(CORPUS_KINDS)


def test_every_reader_says_how_to_export() -> None:
    for name in EXPORT_READERS:
        assert EXPORT_READERS.get(name).how_to_export, name
