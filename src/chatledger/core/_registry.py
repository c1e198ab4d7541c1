"""Name → factory registries, so any component can be rebuilt by name from a logged spec.

A registry with an entry-point ``group`` also holds the components other packages declare
(``[project.entry-points."chatledger.judges"]`` ``length = "my_package:LengthJudge"``): they
are loaded the first time a name is looked up that the built-in ones lack, or the names are
listed, so a command that only uses built-in components never reads the installed packages'
metadata (docs/plugins.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from chatledger.core._errors import ChatLedgerError, InputError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")


class PluginError(ChatLedgerError):
    """An installed package declares a component that cannot be used: it does not load, it is
    not what its group holds, or it takes a name that is already taken."""


class Registry(Generic[T]):
    """A decorator registry of one kind of component (matchers, field scorers, consumers, …).

    ``group`` is the entry-point group other packages add components through; ``expects`` the
    class every component of it must subclass (checked for those packages' components).
    """

    def __init__(self, kind: str, *, group: str | None = None, expects: type | None = None):
        self.kind = kind
        self.group = group
        self.expects = expects
        self._items: dict[str, T] = {}
        self._plugins: dict[str, str] = {}  # name → the package that added it
        self._loaded = group is None

    def register(self, name: str) -> Callable[[T], T]:
        def decorate(item: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._items[name] = item
            return item

        return decorate

    def get(self, name: str) -> T:
        """The component ``name``; an :class:`InputError` listing the known names if none."""
        if name not in self._items:
            self._load_plugins()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise InputError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def names(self) -> list[str]:
        self._load_plugins()
        return list(self._items)

    def plugin_package(self, name: str) -> str | None:
        """The package that added ``name`` through the entry-point group (None: built in)."""
        return self._plugins.get(name)

    def __contains__(self, name: object) -> bool:
        if name not in self._items:
            self._load_plugins()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _load_plugins(self) -> None:
        if self._loaded or self.group is None:
            return
        self._loaded = True
        from importlib.metadata import entry_points

        for entry in sorted(entry_points(group=self.group), key=lambda e: e.name):
            package = entry.dist.name if entry.dist is not None else "an unknown package"
            where = f"the {self.group} entry point {entry.name!r} of {package} ({entry.value})"
            if entry.name in self._items:
                taken = self._plugins.get(entry.name)
                by = f"by {taken}" if taken else "by a built-in one"
                raise PluginError(f"{where}: the {self.kind} name is already taken {by}")
            item = _load(entry, where)
            if self.expects is not None and not (
                isinstance(item, type) and issubclass(item, self.expects)
            ):
                raise PluginError(f"{where}: not a {self.kind} (a {self.expects.__name__} class)")
            self._items[entry.name] = item
            self._plugins[entry.name] = package


def _load(entry: EntryPoint, where: str) -> Any:
    try:
        return entry.load()
    except Exception as exc:  # a broken package: say which, never a traceback
        raise PluginError(f"{where} does not load: {type(exc).__name__}: {exc}") from None
