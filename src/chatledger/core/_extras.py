"""Optional extras: what each one brings, and the one-line error when a command needs one.

``pip install chatledger`` gives scoring, runs, reports and the gate; the packages that serve a
single command are extras (pyproject.toml, ``[project.optional-dependencies]``). A command
checks for its extra before it starts work, so a selection does not screen for an hour and then
stop at the tournament for want of optuna.
"""

from __future__ import annotations

from importlib.util import find_spec

from chatledger.core._errors import ChatLedgerError

# extra → the top-level modules it brings (tests/test_install.py holds this to pyproject.toml).
EXTRAS: dict[str, tuple[str, ...]] = {
    "annotate": ("starlette", "uvicorn"),
    "select": ("sklearn", "optuna"),
    "pseudonymise": ("phonenumbers", "schwifty", "english_words"),
    "anthropic": ("anthropic",),
    "openai": ("openai",),
    "dask": ("distributed",),
    "inspect": ("inspect_ai",),
    "embeddings": ("sentence_transformers",),
}


class MissingExtraError(ChatLedgerError):
    """``what`` needs an optional extra that is not installed (a user mistake: exit 2)."""

    def __init__(self, extra: str, what: str, missing: list[str]) -> None:
        self.extra = extra
        self.missing = missing
        super().__init__(
            f"{what} needs the optional extra {extra!r} ({', '.join(missing)} not installed): "
            f"pip install 'chatledger[{extra}]'"
        )


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (found without importing them)."""
    return [module for module in EXTRAS[extra] if find_spec(module) is None]


def require_extra(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``extra`` is installed."""
    missing = missing_modules(extra)
    if missing:
        raise MissingExtraError(extra, what, missing)
