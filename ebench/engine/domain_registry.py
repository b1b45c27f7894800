"""The domain registry: every domain by name, built in or a plug-in.

The built-in domains are registered here by dotted path; a package outside ebench adds one by
declaring an entry point in the "ebench.domains" group that names its `Domain`:

    [project.entry-points."ebench.domains"]
    loans = "ebench_loans:DOMAIN"

Domains are imported on first use, so listing names costs nothing. The registry sits with the
engine (below the tasks): tasks and sessions reach a domain through it, never by importing a
domain package (those sit above the tasks: their templates are written with them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..registry import PluginError, Registry, UnknownName

if TYPE_CHECKING:
    from ..engine.domain import Domain

GROUP = "ebench.domains"


class UnknownDomain(UnknownName):
    """A domain name no built-in or plug-in answers to (a LookupError, as before the registry)."""

    def __init__(self, name: str, known: list[str] | None = None) -> None:
        super().__init__("domain", name, domain_names() if known is None else known)


def _checked(value: object) -> Domain:
    from ..engine.domain import Domain

    if not isinstance(value, Domain):
        raise PluginError(f"a domain entry point must name a Domain object, got {type(value).__name__}")
    return value


DOMAINS: Registry[Domain] = Registry("domain", GROUP, _checked, unknown=UnknownDomain)
DOMAINS.register("music", "ebench.domains.music:DOMAIN")
DOMAINS.register("meeting", "ebench.domains.meeting:DOMAIN")
DOMAINS.register("moba", "ebench.domains.moba:DOMAIN")


def domain_names() -> list[str]:
    """The built-in domains in their shipped order, then the plug-ins by name."""
    return DOMAINS.names()


def builtin_domain_names() -> list[str]:
    """The domains ebench ships (and its task suite covers)."""
    return DOMAINS.builtin_names()


def get_domain(name: str) -> Domain:
    """The domain called `name`; UnknownDomain when none is, PluginError when a plug-in is broken."""
    domain = DOMAINS.get(name)
    if domain.name != name:  # tasks and worlds are filed under the name: the two must agree
        raise PluginError(f"the domain {name!r} names a Domain called {domain.name!r}")
    return domain


def loaded_domains() -> list[Domain]:
    """Every domain that loads, in `domain_names()` order: a plug-in that cannot be loaded is a
    PluginWarning and left out, so that listing or building all domains goes on without it."""
    return DOMAINS.loaded(get_domain)


__all__ = ["GROUP", "PluginError", "UnknownDomain", "builtin_domain_names", "domain_names", "get_domain", "loaded_domains"]
