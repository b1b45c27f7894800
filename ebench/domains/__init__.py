"""The domains: synthetic products, each a package exposing `DOMAIN`.

Domains are imported on first use, so listing names costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine.domain import Domain

# name -> module; a new domain is one line here and one package beside this file.
_MODULES = {
    "music": "ebench.domains.music",
    "meeting": "ebench.domains.meeting",
    "moba": "ebench.domains.moba",
}


class UnknownDomain(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown domain {name!r}; available: {', '.join(_MODULES)}")
        self.name = name


def domain_names() -> list[str]:
    return list(_MODULES)


def get_domain(name: str) -> Domain:
    try:
        module = _MODULES[name]
    except KeyError:
        raise UnknownDomain(name) from None
    return importlib.import_module(module).DOMAIN
