"""Package attributes imported on first use (PEP 562's module ``__getattr__``).

``chatledger.core`` and ``chatledger.stats`` name many classes and functions whose modules are
costly to import (pydantic models, scipy); a command that uses none of them should not pay for
them. Each package maps a public name to its private module, and this builds the module-level
``__getattr__`` that imports that module when the name is first read and keeps the value in the
package's namespace (so the second read is a plain lookup). Static tools see the names through
the package's ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from typing import Any


def lazy_attributes(
    package: str, where: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: name → ``package.<where[name]>``'s attribute."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{where[name]}"), name)
        namespace[name] = value
        return value

    return __getattr__
