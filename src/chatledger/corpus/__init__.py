"""Reading conversations and extractions from disk."""

from chatledger.corpus._ami import read_ami
from chatledger.corpus._casino import read_casino
from chatledger.corpus._config_file import (
    ALIASES_REFUSED,
    ConfigSyntaxError,
    load_yaml,
    read_config_file,
)
from chatledger.corpus._gold import Corpus, GoldRecord
from chatledger.corpus._import import CORPUS_KINDS, ImportSummary, import_corpus, read_corpus
from chatledger.corpus._jsonl import (
    ExtractionFile,
    RecordMap,
    parse_extraction_line,
    read_chunks,
    read_extractions,
)
from chatledger.corpus._lines import (
    JsonLine,
    JsonTextError,
    loads_strict,
    parse_json_line,
    read_json_lines,
)

__all__ = [
    "ALIASES_REFUSED",
    "CORPUS_KINDS",
    "ConfigSyntaxError",
    "Corpus",
    "ExtractionFile",
    "GoldRecord",
    "ImportSummary",
    "JsonLine",
    "JsonTextError",
    "RecordMap",
    "import_corpus",
    "load_yaml",
    "loads_strict",
    "parse_extraction_line",
    "parse_json_line",
    "read_ami",
    "read_casino",
    "read_chunks",
    "read_config_file",
    "read_corpus",
    "read_extractions",
    "read_json_lines",
]
