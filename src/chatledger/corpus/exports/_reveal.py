"""``chatledger corpus reveal``: an extraction of pseudonymised chunks with the real names,
numbers and addresses put back, from the map the import wrote beside the chunks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chatledger.core import InputError, atomic_writer, dumps_json
from chatledger.corpus.exports._pseudonyms import PseudonymMap, reveal_value


@dataclass(frozen=True)
class RevealSummary:
    lines: int
    revealed: int  # lines in which something was put back
    unreadable: int  # lines that are not JSON objects, copied unchanged

    def to_dict(self) -> dict[str, int]:
        return {"lines": self.lines, "revealed": self.revealed, "unreadable": self.unreadable}


def reveal_file(source: str | Path, map_path: str | Path, out: str | Path) -> RevealSummary:
    """Write ``out``: every line of ``source`` with pseudonyms and placeholders replaced.
    A line that is not a JSON object is copied as it is (and counted)."""
    from chatledger.corpus._lines import read_json_lines

    source, out = Path(source), Path(out)
    if out.resolve() == source.resolve():
        raise InputError("--out must differ from the file revealed", path=out, field="--out")
    reverse = PseudonymMap.load(map_path).reverse()
    lines = revealed = unreadable = 0
    with atomic_writer(out) as handle:
        for line in read_json_lines(source):
            lines += 1
            if line.error is not None or not isinstance(line.value, dict):
                unreadable += 1
                handle.write(line.text.rstrip("\r\n") + "\n")
                continue
            value = reveal_value(line.value, reverse)
            revealed += value != line.value
            handle.write(dumps_json(value, indent=None) + "\n")
    return RevealSummary(lines, revealed, unreadable)
