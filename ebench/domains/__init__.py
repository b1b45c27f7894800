"""The built-in domains: synthetic products, each a package exposing a `Domain` object
(music, meeting, moba). They sit above the tasks (their templates and task grammars are written
with ebench.tasks) and are found by name through the registry (ebench/engine/domain_registry.py).

The names below are the registry's, kept here for plug-ins written against `ebench.domains`;
new code imports them from `ebench.api`.
"""

from __future__ import annotations

from ..engine.domain_registry import GROUP, PluginError, UnknownDomain, builtin_domain_names, domain_names, get_domain, loaded_domains

__all__ = ["GROUP", "PluginError", "UnknownDomain", "builtin_domain_names", "domain_names", "get_domain", "loaded_domains"]
