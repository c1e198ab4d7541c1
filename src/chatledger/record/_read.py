"""Reading ``run.json`` back into its record class, whichever task and version wrote it.

Version 1 is what ChatLedger wrote before the record classes: the same keys with no
``schema_version``, empty objects where version 2 has ``null``, and the configured input paths
only inside ``config``. It is upgraded on reading (one function, here), so every reader sees
version 2; a file that is neither is refused with one line naming the file and field.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from chatledger.core import InputError, first_validation_error
from chatledger.record._common import RUN_FILE, SCHEMA_VERSION
from chatledger.record._conversation import ConversationRun

if TYPE_CHECKING:
    from chatledger.record._structbench import StructbenchRun

    RunRecord = Annotated[ConversationRun | StructbenchRun, Field(discriminator="task")]


def __getattr__(name: str) -> Any:
    if name == "RunRecord":  # the union names the structbench record: built on first use
        from chatledger.record._structbench import StructbenchRun

        return Annotated[ConversationRun | StructbenchRun, Field(discriminator="task")]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _any_record() -> TypeAdapter[ConversationRun | StructbenchRun]:
    """Either record, told apart by ``task`` (the structbench classes built on first use)."""
    from chatledger.record._structbench import StructbenchRun

    return TypeAdapter(Annotated[ConversationRun | StructbenchRun, Field(discriminator="task")])


def _upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 → 2: only shapes change, never a number."""
    data = dict(data)
    data["schema_version"] = SCHEMA_VERSION
    data.setdefault("task", "conversation")
    if data["task"] != "conversation":
        return data
    if not data.get("stats"):
        data["stats"] = None
    config = data.get("config")
    config = config if isinstance(config, dict) else {}
    chunks = config.get("chunks")
    data.setdefault("chunks_configured", chunks if isinstance(chunks, str) else None)
    reference = dict(data.get("reference") or {})
    ref_config = config.get("reference")
    if isinstance(ref_config, dict) and isinstance(ref_config.get("file"), str):
        reference.setdefault("configured_file", ref_config["file"])
    data["reference"] = reference
    if "judges" not in data:  # written before the judges' specs were kept: their names only
        data["judges"] = [
            {"name": j["name"], "family": "unknown"}
            for j in config.get("judges") or []
            if isinstance(j, dict) and isinstance(j.get("name"), str)
        ]
    configured = {
        c.get("name"): c.get("file")
        for c in config.get("challengers") or []
        if isinstance(c, dict) and isinstance(c.get("file"), str)
    }
    models = []
    for model in data.get("models") or []:
        if not isinstance(model, dict):
            models.append(model)
            continue
        model = dict(model)
        for key in ("judge", "degenerate"):
            if model.get(key) == {}:
                model[key] = None
        if model.get("name") in configured:
            model.setdefault("configured_file", configured[model["name"]])
        models.append(model)
    data["models"] = models
    return data


def parse_run_record(data: object, path: Path) -> ConversationRun | StructbenchRun:
    """The record in ``data`` (a parsed run.json); ``path`` names the file in errors."""
    if not isinstance(data, dict):
        raise InputError("run.json is not a JSON object", path=path)
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise InputError("schema_version must be an integer", path=path, field="schema_version")
    if version > SCHEMA_VERSION:
        raise InputError(
            f"written by a newer ChatLedger (schema_version {version}); this one reads "
            f"versions 1 to {SCHEMA_VERSION}: upgrade chatledger",
            path=path,
            field="schema_version",
        )
    if version < 1:
        raise InputError(f"unknown schema_version {version}", path=path, field="schema_version")
    if "models" not in data:
        raise InputError("run.json has no 'models'", path=path)
    if version == 1:
        data = _upgrade_v1(data)
    # A conversation run (what gate, stats and report read) is validated as its own class, so
    # reading one builds no structbench class; its errors name the same place the union's
    # did (the tag first: conversation.models.0.name).
    conversation = data.get("task") == "conversation"
    try:
        if conversation:
            return ConversationRun.model_validate(data)
        return _any_record().validate_python(data)
    except ValidationError as exc:
        where, msg = first_validation_error(exc, "conversation" if conversation else "")
        raise InputError(
            f"not a run record this ChatLedger can read (schema_version {version}): {msg}",
            path=path,
            field=where or None,
        ) from None


def read_run_record(run_dir: str | Path) -> ConversationRun | StructbenchRun:
    """The record of a run directory (or of a ``run.json`` path)."""
    given = Path(run_dir)
    path = given if given.name == RUN_FILE and given.is_file() else given / RUN_FILE
    if not path.is_file():
        raise InputError("not a run directory (no run.json)", path=run_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"not a readable run.json ({type(exc).__name__})", path=path) from None
    return parse_run_record(data, path)
