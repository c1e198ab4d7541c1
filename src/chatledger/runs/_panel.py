"""The judge panel of a run config, each judge rebuilt by name (or model id) from its spec."""

from __future__ import annotations

from typing import Any

from chatledger.core import InputError
from chatledger.judge import JUDGES, MODEL_JUDGES, Judge
from chatledger.providers import Provider
from chatledger.record import JudgeInfo
from chatledger.runs._config import LoadedRunConfig


def judge_entry(judge: Judge) -> JudgeInfo:
    """A judge's spec, and for a model judge what it cost."""
    entry: dict[str, Any] = dict(judge.describe())
    usage = getattr(judge, "usage", None)
    if callable(usage):
        entry["usage"] = usage()
    return JudgeInfo.model_validate(entry)


def build_judges(loaded: LoadedRunConfig, hub: Provider | None = None) -> list[Judge]:
    """The panel of the config, each judge rebuilt by name from its spec; a spec with a
    ``model`` becomes a model judge (``options.kind``, default ``llm``) calling through ``hub``."""
    judges: list[Judge] = []
    for index, spec in enumerate(loaded.config.judges):
        if spec.model is not None:
            options = dict(spec.options)
            kind = str(options.pop("kind", "llm"))
            try:
                factory = MODEL_JUDGES.get(kind)
            except InputError as exc:
                raise InputError(
                    exc.detail, path=loaded.path, field=f"judges.{index}.options.kind"
                ) from None
            try:
                judges.append(factory(spec.name, spec.model, options, hub))
            except ValueError as exc:
                raise InputError(str(exc), path=loaded.path, field=f"judges.{index}") from None
            continue
        try:
            judge = JUDGES.get(spec.name)
        except InputError as exc:
            raise InputError(exc.detail, path=loaded.path, field=f"judges.{index}.name") from None
        judges.append(judge())
    return judges
