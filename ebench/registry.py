"""Named extension points (domains, solvers) that other packages can add to through entry points.

A registry maps a name to a loader: a dotted path ("package.module:attribute", imported on first
use, so listing names costs nothing) or the object itself. Built-in entries are registered by
ebench; a package outside ebench adds its own by declaring an entry point in the registry's group:

    [project.entry-points."ebench.domains"]
    loans = "ebench_loans:DOMAIN"

Entry points are read once, the first time a registry is asked for its names; `refresh()` reads
them again (after installing a package into the running process, as the tests do).

Plug-ins fail soft: an entry point that takes a built-in's name (or another plug-in's) is refused
with a `PluginWarning`, and `loaded()` skips a plug-in that cannot be loaded with one, so that
listing what is installed goes on; asking for a broken plug-in by name is a `PluginError`.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Generic, TypeVar

from .errors import InputError

T = TypeVar("T")


class UnknownName(InputError, LookupError):
    """A name no registry entry answers to; the message is one line naming the known ones."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        super().__init__(f"unknown {kind} {name!r}; available: {', '.join(known) or 'none'}")
        self.kind = kind
        self.name = name


class PluginError(InputError, RuntimeError):
    """An entry point that cannot be loaded, or does not give what its group expects."""


class PluginWarning(UserWarning):
    """A plug-in left out: it takes a name already taken, or (when listing) it cannot be loaded.
    The command line shows each as one line on stderr."""


def load_dotted(path: str) -> object:
    module, _, attribute = path.partition(":")
    value: object = importlib.import_module(module)
    for part in filter(None, attribute.split(".")):
        value = getattr(value, part)
    return value


class Registry(Generic[T]):
    def __init__(
        self,
        kind: str,
        group: str,
        check: Callable[[object], T] | None = None,
        unknown: Callable[[str, list[str]], UnknownName] | None = None,
    ) -> None:
        self.kind = kind  # "domain", "solver": used in messages
        self.group = group  # the entry-point group other packages declare
        self._check = check  # validates (and may convert) what a loader gives
        # The error for a name nobody answers to: a subclass of UnknownName that callers catch by name.
        self._unknown = unknown or (lambda name, known: UnknownName(self.kind, name, known))
        self._builtin: dict[str, str | T] = {}
        self._plugins: dict[str, str] | None = None
        self._loaded: dict[str, T] = {}

    def register(self, name: str, target: str | T) -> None:
        """A built-in entry: `target` is a dotted path loaded on first use, or the object."""
        self._builtin[name] = target
        self._loaded.pop(name, None)

    def refresh(self) -> None:
        """Read the entry points again and forget what was loaded from them."""
        for name in self._plugins or {}:
            self._loaded.pop(name, None)
        self._plugins = None

    def _entry_points(self) -> dict[str, str]:
        if self._plugins is None:
            from importlib.metadata import entry_points

            plugins: dict[str, str] = {}
            for ep in entry_points(group=self.group):
                if ep.name in self._builtin:  # never replaced: the shipped suite's meaning stays fixed
                    _warn(f"the {self.kind} plug-in {ep.name!r} ({ep.value}) is ignored: {ep.name!r} is a built-in {self.kind}")
                elif ep.name in plugins:  # the first found on the path wins, as for an import
                    if ep.value != plugins[ep.name]:
                        _warn(f"the {self.kind} plug-in {ep.name!r} ({ep.value}) is ignored: {plugins[ep.name]} has the name already")
                else:
                    plugins[ep.name] = ep.value
            self._plugins = plugins
        return self._plugins

    def names(self) -> list[str]:
        """Built-in names in registration order, then plug-ins sorted by name."""
        return [*self._builtin, *sorted(self._entry_points())]

    def builtin_names(self) -> list[str]:
        """The names ebench registers itself, in registration order (no plug-ins)."""
        return list(self._builtin)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def is_plugin(self, name: str) -> bool:
        return name not in self._builtin and name in self._entry_points()

    def loaded(self, get: Callable[[str], T] | None = None) -> list[T]:
        """Every entry, loaded (by `get`, default `self.get`), in `names()` order; a plug-in that
        cannot be loaded is a PluginWarning and left out (a broken built-in still raises)."""
        out = []
        for name in self.names():
            try:
                out.append((get or self.get)(name))
            except PluginError as exc:
                if not self.is_plugin(name):
                    raise
                _warn(f"{exc}; left out")
        return out

    def get(self, name: str) -> T:
        if name in self._loaded:
            return self._loaded[name]
        target: str | T
        if name in self._builtin:
            target = self._builtin[name]
        elif name in self._entry_points():
            target = self._entry_points()[name]
        else:
            raise self._unknown(name, self.names())
        if isinstance(target, str):
            try:
                value: object = load_dotted(target)
            except Exception as exc:  # a broken plug-in is reported, never a traceback at the user
                raise PluginError(f"the {self.kind} {name!r} ({target}) cannot be loaded: {type(exc).__name__}: {exc}") from exc
        else:
            value = target
        try:
            loaded = self._check(value) if self._check else value
        except PluginError as exc:
            raise PluginError(f"the {self.kind} {name!r} ({target if isinstance(target, str) else 'built in'}): {exc}") from None
        self._loaded[name] = loaded  # type: ignore[assignment]
        return loaded  # type: ignore[return-value]


def _warn(message: str) -> None:
    warnings.warn(message, PluginWarning, stacklevel=3)
