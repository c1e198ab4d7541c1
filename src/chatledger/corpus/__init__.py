"""Reading conversations and extractions from disk."""

from chatledger.corpus._ami import read_ami
from chatledger.corpus._casino import read_casino
from chatledger.corpus._gold import Corpus, GoldRecord
from chatledger.corpus._import import CORPUS_KINDS, ImportSummary, import_corpus, read_corpus
from chatledger.corpus._jsonl import (
    ExtractionFile,
    parse_extraction_line,
    read_chunks,
    read_extractions,
)

__all__ = [
    "CORPUS_KINDS",
    "Corpus",
    "ExtractionFile",
    "GoldRecord",
    "ImportSummary",
    "import_corpus",
    "parse_extraction_line",
    "read_ami",
    "read_casino",
    "read_chunks",
    "read_corpus",
    "read_extractions",
]
