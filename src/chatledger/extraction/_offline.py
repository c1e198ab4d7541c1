"""Offline extractors as models: ``offline:<name>`` wherever a model id is accepted.

An offline extractor (registered in :data:`chatledger.extractors.EXTRACTORS`, e.g.
``offline:rules``) is a model that needs no provider: no key, no network, no call cache, no
price. :func:`validate_model_id` is the one check of a model id for extraction and run configs:
an ``offline:`` id must name a registered extractor, anything else must be a provider's model id
(:func:`chatledger.providers.parse_model_id`, which knows nothing of extractors — providers sit
below them).

An offline extractor reads no prompt and takes no request parameters: its lines record
``"prompt_style": "none"``, and a prompt style other than the default ``plain``, a
``max_tokens`` other than the default, a ``temperature`` or ``options`` are refused rather than
silently ignored.
"""

from __future__ import annotations

from chatledger.extractors import EXTRACTORS, Extractor, get_extractor
from chatledger.providers import ModelIdError, parse_model_id, redact_model_id

OFFLINE_PREFIX = "offline:"
# What an offline extractor's lines record as their prompt style: it reads no prompt.
OFFLINE_PROMPT_STYLE = "none"


def is_offline_model(model_id: str) -> bool:
    """Whether ``model_id`` names an offline extractor (``offline:…``), known or not."""
    return model_id.startswith(OFFLINE_PREFIX)


def offline_extractors() -> list[str]:
    """The registered offline extractors' ids, sorted."""
    return sorted(name for name in EXTRACTORS.names() if is_offline_model(name))


def validate_model_id(text: str) -> str:
    """``text`` if it is a usable model id for extraction; else a :class:`ModelIdError` (a
    ``ValueError`` too, so a pydantic validator reports it) saying what is wrong.

    ``offline:<name>`` must be a registered extractor; any other id is checked by
    :func:`parse_model_id` (provider prefix, model name, URL form).
    """
    if is_offline_model(text):
        if text not in EXTRACTORS:
            known = ", ".join(offline_extractors()) or "none"
            raise ModelIdError(
                f"unknown offline extractor {redact_model_id(text)!r} (known: {known})"
            )
        return text
    parse_model_id(text)
    return text


def offline_parameter_message(model_id: str, key: str) -> str:
    """The refusal of a request parameter given to an offline extractor."""
    return (
        f"{model_id} is an offline extractor: it reads no prompt, so {key} does not apply "
        "(leave it unset)"
    )


def offline_extractor(model_id: str) -> Extractor:
    """The registered extractor ``model_id`` (checked by :func:`validate_model_id`)."""
    validate_model_id(model_id)
    return get_extractor(model_id)
