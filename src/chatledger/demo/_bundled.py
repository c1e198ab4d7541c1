"""The data that ships inside the package: the text-message corpus and human-gold samples."""

from __future__ import annotations

from contextlib import ExitStack
from importlib import resources
from pathlib import Path

from chatledger.core import atomic_write_text, prepare_output_dir

PARTS = ("part1", "part2")
HUMAN_SAMPLES = ("ami", "casino")


def _data_dir(stack: ExitStack) -> Path:
    return stack.enter_context(resources.as_file(resources.files("chatledger") / "data"))


def write_bundled_corpus(out_dir: Path) -> tuple[Path, Path]:
    """Write the bundled corpus as one ``chunks.jsonl`` and one ``gold.jsonl`` under out_dir."""
    prepare_output_dir(out_dir)
    chunks_out, gold_out = out_dir / "chunks.jsonl", out_dir / "gold.jsonl"
    with ExitStack() as stack:
        parts = _data_dir(stack) / "corpus" / "parts"
        for kind, target in (("chunks", chunks_out), ("gold", gold_out)):
            text = "".join(
                (parts / f"{part}_{kind}.jsonl").read_text(encoding="utf-8") for part in PARTS
            )
            atomic_write_text(target, text)
    return chunks_out, gold_out


def human_sample(name: str, out_dir: Path) -> tuple[Path, Path]:
    """Copy a bundled human-gold sample (``ami`` or ``casino``) to out_dir/name/."""
    target = prepare_output_dir(out_dir / name)
    with ExitStack() as stack:
        source = _data_dir(stack) / "human" / name
        for file in ("chunks.jsonl", "gold.jsonl"):
            atomic_write_text(target / file, (source / file).read_text(encoding="utf-8"))
    return target / "chunks.jsonl", target / "gold.jsonl"
