"""Task generation: inspect -> decide -> modify -> summarise, with programs instead of a model.

A `Template` looks at the world with SQL (privileged: only generators may), picks its targets
with a seeded RNG, writes the reference solution as public tool calls and phrases the request.
`generate` runs each draft on a fresh copy, records the diff, and rejects drafts that change
nothing or fewer than 3 rows, whose query states a hidden value, that duplicate an accepted task,
or whose reference solution does not reproduce the same diff on another fresh copy.

Everything is seeded: the same domain, seed and count give the same tasks, byte for byte.
"""

from __future__ import annotations

import importlib
import re
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random
from typing import Any, ClassVar

from ..domains import get_domain
from ..domains.engine.world import ensure_world, scratch_copy
from .diff import Diff
from .grading import grade, signature
from .reference import ReferenceFailed, run_steps
from .spec import CAPABILITIES, Step, Task, diff_stats

MIN_CHANGED_ROWS = 3
_TEMPLATE_MODULES = {name: f"ebench.tasks.templates.{name}" for name in ("music", "meeting", "moba")}


class NoTarget(Exception):
    """The template found nothing suitable with this RNG draw; the generator tries another."""


@dataclass
class Draft:
    actor: int
    query: str
    steps: list[Step]
    # Values the template derived from the database that the query must not state (ids, counts).
    hidden: list[Any] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)  # what the template chose, for the record


class GenContext:
    """What a template sees: privileged read access to the world, a seeded RNG, the frozen clock."""

    def __init__(self, domain_name: str, conn: sqlite3.Connection, rng: Random) -> None:
        self.domain = get_domain(domain_name)
        self.conn = conn
        self.rng = rng
        self.now = self.domain.now

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

    def choice(self, items: list[Any], what: str = "target") -> Any:
        if not items:
            raise NoTarget(f"no {what}")
        return self.rng.choice(items)


class Template:
    """One kind of task. Subclasses set `name`, `capabilities` and `phrasings`, and implement `draft`."""

    name: ClassVar[str]
    capabilities: ClassVar[tuple[str, ...]]
    phrasings: ClassVar[tuple[str, ...]] = ()

    def draft(self, ctx: GenContext) -> Draft:
        raise NotImplementedError

    def phrase(self, ctx: GenContext, **values: Any) -> str:
        """One of the template's phrasings, chosen by the RNG, with the user-given values filled in."""
        return ctx.rng.choice(self.phrasings).format(**values)


def templates_for(domain_name: str) -> list[Template]:
    module = _TEMPLATE_MODULES.get(domain_name)
    if module is None:
        return []
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError:
        return []
    return [cls() for cls in loaded.TEMPLATES]


@dataclass
class GenerationReport:
    tasks: list[Task]
    rejected: Counter = field(default_factory=Counter)
    attempts: int = 0


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# Dates and clock times the user gives ("November 2, 2026", "2026-11-02", "16:00", "4:32") are
# not counts: a hidden 2 is not leaked by "November 2".
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATES_AND_TIMES = re.compile(rf"\b(?:{_MONTHS}) \d{{1,2}}(?:, \d{{4}})?|\d{{4}}-\d{{2}}-\d{{2}}|\b\d{{1,2}}:\d{{2}}(?::\d{{2}})?")


def leaked(query: str, hidden: list[Any]) -> list[Any]:
    """Hidden values that appear in the query (numbers as whole numbers, text case-insensitively)."""
    numbers = set(_NUMBER.findall(_DATES_AND_TIMES.sub(" ", query)))
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


def generate(
    domain_name: str,
    count: int,
    seed: int,
    *,
    templates: list[Template] | None = None,
    id_prefix: str | None = None,
    max_attempts_per_task: int = 30,
    on_task: Callable[[Task], None] | None = None,
) -> GenerationReport:
    """Generate `count` tasks. Templates take turns, so every template (and capability) is covered."""
    domain = get_domain(domain_name)
    templates = templates if templates is not None else templates_for(domain_name)
    if not templates:
        raise ValueError(f"no task templates for the {domain_name} domain")
    world = ensure_world(domain)
    inspect = scratch_copy(world)  # the generator's privileged view; never written
    report = GenerationReport([])
    seen_diffs: set[str] = set()
    seen_queries: set[str] = set()
    prefix = id_prefix or domain_name
    try:
        while len(report.tasks) < count and report.attempts < count * max_attempts_per_task:
            template = templates[report.attempts % len(templates)]
            rng = Random(f"{domain_name}:{seed}:{template.name}:{report.attempts}")
            report.attempts += 1
            try:
                draft = template.draft(GenContext(domain_name, inspect, rng))
            except NoTarget:
                report.rejected["no target"] += 1
                continue
            reason, diff = _vet(domain_name, draft, seen_diffs, seen_queries)
            if reason:
                report.rejected[reason] += 1
                continue
            assert diff is not None
            seen_diffs.add(signature(diff, domain.schema))
            seen_queries.add(f"{draft.actor}:{draft.query.lower()}")  # the same words from another user is another task
            task = Task(
                id=f"{prefix}-{len(report.tasks) + 1:04d}",
                domain=domain_name,
                actor=draft.actor,
                query=draft.query,
                capabilities=[c for c in CAPABILITIES if c in template.capabilities],
                expected_diff=diff,
                reference_solution=draft.steps,
                generator={"template": template.name, "seed": seed, "attempt": report.attempts - 1, "params": draft.params},
                stats=diff_stats(diff),
            )
            report.tasks.append(task)
            if on_task:
                on_task(task)
    finally:
        inspect.close()
    return report


def _vet(domain_name: str, draft: Draft, seen_diffs: set[str], seen_queries: set[str]) -> tuple[str | None, Diff | None]:
    """The rejection rules; returns (reason, None) or (None, diff)."""
    leaks = leaked(draft.query, draft.hidden)
    if leaks:
        return "query leaks a hidden value", None
    if f"{draft.actor}:{draft.query.lower()}" in seen_queries:
        return "duplicate query", None
    try:
        first = run_steps(domain_name, draft.actor, draft.steps)
    except ReferenceFailed:
        return "reference solution refused", None
    if len(first.diff) == 0:
        return "no change", None
    if len(first.diff) < MIN_CHANGED_ROWS:
        return f"fewer than {MIN_CHANGED_ROWS} changed rows", None
    schema = get_domain(domain_name).schema
    if signature(first.diff, schema) in seen_diffs:
        return "duplicate diff", None
    again = run_steps(domain_name, draft.actor, draft.steps)
    if not grade(first.diff, again.diff, schema).passed:
        return "reference solution does not reproduce its diff", None
    return None, first.diff
