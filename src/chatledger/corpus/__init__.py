"""Reading conversations and extractions from disk.

The names below are loaded on first use: ``chatledger score`` needs the JSON Lines readers,
not the AMI/CaSiNo readers or the YAML loader, and pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chatledger._lazy import lazy_attributes

if TYPE_CHECKING:
    from chatledger.corpus._ami import read_ami
    from chatledger.corpus._casino import read_casino
    from chatledger.corpus._config_file import (
        ALIASES_REFUSED,
        ConfigSyntaxError,
        load_yaml,
        locate_config_field,
        parse_config_text,
        read_config_file,
        read_config_mapping,
        read_config_text,
    )
    from chatledger.corpus._gold import Corpus, GoldRecord
    from chatledger.corpus._import import (
        CORPUS_KINDS,
        ImportSummary,
        import_corpus,
        read_corpus,
    )
    from chatledger.corpus._jsonl import (
        ChunkOutline,
        ExtractionFile,
        ExtractionStream,
        LineIndex,
        RecordMap,
        extraction_model,
        index_chunk_lines,
        index_extraction_lines,
        iter_chunks,
        parse_extraction_line,
        read_chunk_outlines,
        read_chunks,
        read_extractions,
        read_indexed_chunks,
        read_indexed_records,
    )
    from chatledger.corpus._lines import (
        JsonLine,
        JsonTextError,
        loads_strict,
        parse_json_line,
        read_json_lines,
    )

# name → the module that defines it
_WHERE: dict[str, str] = {
    "read_ami": "_ami",
    "read_casino": "_casino",
    "ALIASES_REFUSED": "_config_file",
    "ConfigSyntaxError": "_config_file",
    "load_yaml": "_config_file",
    "locate_config_field": "_config_file",
    "parse_config_text": "_config_file",
    "read_config_file": "_config_file",
    "read_config_mapping": "_config_file",
    "read_config_text": "_config_file",
    "Corpus": "_gold",
    "GoldRecord": "_gold",
    "CORPUS_KINDS": "_import",
    "ImportSummary": "_import",
    "import_corpus": "_import",
    "read_corpus": "_import",
    "ChunkOutline": "_jsonl",
    "ExtractionFile": "_jsonl",
    "ExtractionStream": "_jsonl",
    "LineIndex": "_jsonl",
    "extraction_model": "_jsonl",
    "index_chunk_lines": "_jsonl",
    "index_extraction_lines": "_jsonl",
    "read_indexed_chunks": "_jsonl",
    "read_indexed_records": "_jsonl",
    "iter_chunks": "_jsonl",
    "read_chunk_outlines": "_jsonl",
    "RecordMap": "_jsonl",
    "parse_extraction_line": "_jsonl",
    "read_chunks": "_jsonl",
    "read_extractions": "_jsonl",
    "JsonLine": "_lines",
    "JsonTextError": "_lines",
    "loads_strict": "_lines",
    "parse_json_line": "_lines",
    "read_json_lines": "_lines",
}

__all__ = [
    "ALIASES_REFUSED",
    "CORPUS_KINDS",
    "ChunkOutline",
    "ConfigSyntaxError",
    "Corpus",
    "ExtractionFile",
    "ExtractionStream",
    "GoldRecord",
    "ImportSummary",
    "JsonLine",
    "JsonTextError",
    "LineIndex",
    "RecordMap",
    "extraction_model",
    "import_corpus",
    "index_chunk_lines",
    "index_extraction_lines",
    "iter_chunks",
    "load_yaml",
    "loads_strict",
    "locate_config_field",
    "parse_config_text",
    "parse_extraction_line",
    "parse_json_line",
    "read_ami",
    "read_casino",
    "read_chunk_outlines",
    "read_chunks",
    "read_config_file",
    "read_config_mapping",
    "read_config_text",
    "read_corpus",
    "read_extractions",
    "read_indexed_chunks",
    "read_indexed_records",
    "read_json_lines",
]


__getattr__ = lazy_attributes(__name__, _WHERE, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
