"""What a task template is written with: `Template` (its SQL generator `draft` and its public
solver `solve`), the `Draft` it returns, the `GenContext` it draws from, `NoTarget` when a draw
finds nothing, and the wording checks a template's phrasing must pass (`leaked`, `query_key`).

generation.py runs templates (certifies their drafts); template_catalog.py finds them by name.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from random import Random
from typing import Any, ClassVar, TypeVar

from ..engine.domain_registry import get_domain
from .public import Condition, PublicAPI, Reading
from .spec import Step


class NoTarget(Exception):
    """The template found nothing suitable with this RNG draw; the generator tries another."""


@dataclass
class Draft:
    actor: int
    query: str
    steps: list[Step]  # the SQL generator's writes, with the ids it found
    # What the query states (names, dates, thresholds the user gives): the public solver's only input.
    stated: dict[str, Any] = field(default_factory=dict)
    # Values the template derived from the database that the query must not state (ids, counts).
    hidden: list[Any] = field(default_factory=list)
    # The entities the task is about ("song", 42): at most MAX_PER_TARGET tasks of a template share one.
    targets: tuple[Any, ...] = ()


T = TypeVar("T")


class GenContext:
    """What a template sees: privileged read access to the world, a seeded RNG, the frozen clock,
    and which phrasing skeletons are used up."""

    def __init__(self, domain_name: str, conn: sqlite3.Connection, rng: Random, used_up: Iterable[int] = ()) -> None:
        self.domain = get_domain(domain_name)
        self.conn = conn
        self.rng = rng
        self.now = self.domain.now
        self.used_up = set(used_up)
        self.phrasing: int | None = None  # the skeleton the draft was phrased with

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        cur = self.conn.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]

    def one(self, sql: str, *params: Any) -> dict[str, Any] | None:
        rows = self.rows(sql, *params)
        return rows[0] if rows else None

    def column(self, sql: str, *params: Any) -> list[Any]:
        return [r[0] for r in self.conn.execute(sql, params)]

    def value(self, sql: str, *params: Any) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def choice(self, items: list[T], what: str = "target") -> T:
        if not items:
            raise NoTarget(f"no {what}")
        return self.rng.choice(items)


class Template:
    """One kind of task: `draft` (the SQL generator) and `solve` (the public solver).

    Subclasses set `name`, `phrasings` (at least three skeletons, see docs/wording.md),
    `conditions` (every condition the query states, each of which must bite), `readings`
    (points the product's vocabulary leaves open: the wording decides each, or both readings end
    in the same state) and `clauses` (for every stated value, the condition that uses it or
    `WRITTEN` when the task writes it: every clause of the wording must bite)."""

    name: ClassVar[str]
    phrasings: ClassVar[tuple[str, ...]] = ()
    conditions: ClassVar[tuple[Condition, ...]] = ()
    readings: ClassVar[tuple[str | Reading, ...]] = ()
    clauses: ClassVar[dict[str, str] | None] = None  # None: not declared yet (the audit lists such templates)

    def draft(self, ctx: GenContext) -> Draft:
        raise NotImplementedError

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        raise NotImplementedError

    def phrase(self, ctx: GenContext, **values: Any) -> str:
        """A phrasing skeleton not yet used up, chosen by the RNG, with the user's values filled in."""
        free = [i for i in range(len(self.phrasings)) if i not in ctx.used_up]
        if not free:
            raise NoTarget("every phrasing is used up")
        ctx.phrasing = ctx.rng.choice(free)
        return self.phrasings[ctx.phrasing].format(**values)


NUMBER = re.compile(r"\d+(?:\.\d+)?")
# Dates and clock times the user gives ("November 2, 2026", "2026-11-02", "16:00", "4:32") are
# not counts: a hidden 2 is not leaked by "November 2".
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
DATES_AND_TIMES = re.compile(rf"\b(?:{MONTHS}) \d{{1,2}}(?:, \d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}}|\b\d{{1,2}}:\d{{2}}(?::\d{{2}})?")


def leaked(query: str, hidden: list[Any]) -> list[Any]:
    """Hidden values that appear in the query (numbers as whole numbers, text case-insensitively)."""
    numbers = set(NUMBER.findall(DATES_AND_TIMES.sub(" ", query)))
    lowered = query.lower()
    out: list[Any] = []
    for value in hidden:
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            if str(value) in numbers:
                out.append(value)
        elif isinstance(value, str) and value and value.lower() in lowered:
            out.append(value)
    return out


def query_key(query: str) -> str:
    return " ".join(query.lower().split())


def templates_for(domain_name: str) -> list[Template]:
    """Fresh instances of the domain's templates (its `templates_module`; none when it has none)."""
    return [cls() for cls in get_domain(domain_name).template_classes()]
