"""Terms the product's own vocabulary leaves open, and whether a request decides them.

A request is read by an agent that knows the product: if `list_genres` shows Cantopop under Pop,
"Pop songs" may or may not include Cantopop; if VIP-only songs cannot be played without VIP,
"songs that can still be played" may or may not leave them out. Such a term is an `OpenTerm` of
its domain (declared as `OPEN_TERMS` in the domain's templates module): a request that uses it
must also say which reading it means (`decided_by`), or a certified task could mark a natural
reading wrong. `open_terms` lists the undecided terms of a request; the generator rejects such
drafts and `ebench tasks audit` counts them over a suite.
"""

from __future__ import annotations

import importlib
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from ..engine.domain_registry import get_domain
from ..engine.world import open_world_readonly


@dataclass(frozen=True)
class OpenTerm:
    """A term whose reading the product leaves open. The term is `pattern` (a regular expression),
    or each word `words_sql` returns from the world (genre names that have sub-genres or a
    parent), as a whole word. `decided_by`: a regular expression that, found in the same request,
    says which reading is meant."""

    name: str
    why: str
    decided_by: str
    pattern: str = ""
    words_sql: str = ""


_WORDS: dict[tuple[str, str, str], tuple[str, ...]] = {}
_LOCK = threading.Lock()


def domain_open_terms(domain_name: str) -> tuple[OpenTerm, ...]:
    """The domain's declared open terms (none when its templates module declares none)."""
    module = get_domain(domain_name).templates_module
    if module is None:
        return ()
    return tuple(getattr(importlib.import_module(module), "OPEN_TERMS", ()))


def _words(domain_name: str, term: OpenTerm, world: Path) -> tuple[str, ...]:
    key = (domain_name, term.name, str(world))
    with _LOCK:
        if key in _WORDS:
            return _WORDS[key]
    conn = open_world_readonly(world)
    try:
        words = tuple(str(row[0]) for row in conn.execute(term.words_sql) if row[0])
    finally:
        conn.close()
    with _LOCK:
        _WORDS[key] = words
    return words


def term_found(term: OpenTerm, query: str, words: tuple[str, ...] = ()) -> bool:
    if term.pattern and re.search(term.pattern, query, re.IGNORECASE):
        return True
    return any(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", query) for word in words)


def open_terms(domain_name: str, query: str, world: Path) -> list[str]:
    """The names of the open terms `query` uses without deciding them."""
    out = []
    for term in domain_open_terms(domain_name):
        words = _words(domain_name, term, world) if term.words_sql else ()
        if term_found(term, query, words) and not re.search(term.decided_by, query, re.IGNORECASE):
            out.append(term.name)
    return out


__all__ = ["OpenTerm", "domain_open_terms", "open_terms", "term_found"]
