"""The data that ships inside the package: the text-message corpus and human-gold samples."""

from __future__ import annotations

from contextlib import ExitStack
from importlib import resources
from pathlib import Path

PARTS = ("part1", "part2")
HUMAN_SAMPLES = ("ami", "casino")


def _data_dir(stack: ExitStack) -> Path:
    return stack.enter_context(resources.as_file(resources.files("chatledger") / "data"))


def write_bundled_corpus(out_dir: Path) -> tuple[Path, Path]:
    """Write the bundled corpus as one ``chunks.jsonl`` and one ``gold.jsonl`` under out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    chunks_out, gold_out = out_dir / "chunks.jsonl", out_dir / "gold.jsonl"
    with ExitStack() as stack:
        parts = _data_dir(stack) / "corpus" / "parts"
        for kind, target in (("chunks", chunks_out), ("gold", gold_out)):
            text = "".join(
                (parts / f"{part}_{kind}.jsonl").read_text(encoding="utf-8") for part in PARTS
            )
            target.write_text(text, encoding="utf-8")
    return chunks_out, gold_out


def human_sample(name: str, out_dir: Path) -> tuple[Path, Path]:
    """Copy a bundled human-gold sample (``ami`` or ``casino``) to out_dir/name/."""
    target = out_dir / name
    target.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        source = _data_dir(stack) / "human" / name
        for file in ("chunks.jsonl", "gold.jsonl"):
            (target / file).write_text((source / file).read_text(encoding="utf-8"), "utf-8")
    return target / "chunks.jsonl", target / "gold.jsonl"
