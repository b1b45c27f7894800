"""Certifying a draft: the public solver reaches the SQL generator's end state, and every stated
condition bites.

`run_public` runs a template's public solver (correct or lazy) on a fresh copy and returns its
diff and its calls. `certify` accepts a draft only if

- the correct public solver's end state equals the one the SQL generator's writes make (two
  independent derivations of the answer agree),
- every condition the template states, got wrong in each of its ways (ignored, one step off),
  ends in a different state,
- every point the wording leaves open (a reading) ends in the same state either way,

and derives the task's capability labels from what bit: see `capabilities_from`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..domains import get_domain
from ..domains.engine.world import scratch_copy
from .diff import ChangeTracker, Diff
from .grading import grade
from .public import CORRECT, FIRST_PAGE, READING, Lazy, NotCertifiable, PublicAPI, PublicSolverFailed
from .spec import CAPABILITIES, Step, references

if TYPE_CHECKING:
    from .generation import Draft, Template


class Rejected(Exception):
    """The draft is not a certified task; the message is the counted reason."""


@dataclass
class PublicRun:
    diff: Diff
    steps: list[Step]
    consulted: set[str] = field(default_factory=set)
    paged: bool = False
    gave_up: str | None = None  # a lazy solver that crashed on a missing result stops there


def run_public(template: Template, domain_name: str, world: Path, actor: int, stated: dict[str, Any], lazy: Lazy = CORRECT) -> PublicRun:
    """Run the template's public solver as `actor` on a fresh copy of `world`. The correct solver
    raises PublicSolverFailed or NotCertifiable; a lazy one never raises (it ends where it stops)."""
    domain = get_domain(domain_name)
    conn: sqlite3.Connection = scratch_copy(world)
    try:
        tracker = ChangeTracker(conn, domain.schema)
        api = PublicAPI(domain, conn, actor, lazy, {c.name: c for c in template.conditions}, tuple(template.readings))
        gave_up = None
        try:
            template.solve(api, dict(stated))
        except (PublicSolverFailed, NotCertifiable):
            if lazy == CORRECT:
                raise
            gave_up = "refused"
        except (TypeError, KeyError, IndexError, ValueError, AttributeError) as exc:
            if lazy == CORRECT:
                raise
            gave_up = f"{type(exc).__name__}: {exc}"
        return PublicRun(tracker.diff(), api.steps, api.consulted, api.paged, gave_up)
    finally:
        conn.close()


def lazy_variants(template: Template) -> list[Lazy]:
    """Every way a sloppy solver gets this template's stated conditions wrong."""
    return [Lazy(c.name, mode) for c in template.conditions for mode in c.modes]


@dataclass
class Certificate:
    diff: Diff
    reference: list[Step]
    capabilities: list[str]
    bites: list[str]  # the lazy variants that end in another state
    first_page_bites: bool


def certify(template: Template, domain_name: str, world: Path, draft: Draft, sql_diff: Diff) -> Certificate:
    """Certify `draft` (see the module docstring) or raise Rejected with the reason."""
    schema = get_domain(domain_name).schema
    try:
        correct = run_public(template, domain_name, world, draft.actor, draft.stated)
    except NotCertifiable as exc:
        raise Rejected(f"not certifiable: {_reason(exc)}") from None
    except PublicSolverFailed:
        raise Rejected("public solver refused") from None
    declared = {c.name for c in template.conditions} | set(template.readings)
    unstated = declared - correct.consulted
    if unstated:
        raise Rejected(f"public solver does not state {', '.join(sorted(unstated))}")
    if not grade(sql_diff, correct.diff, schema).passed:
        raise Rejected("public solver disagrees with the SQL generator")
    bites: list[str] = []
    for lazy in lazy_variants(template):
        run = run_public(template, domain_name, world, draft.actor, draft.stated, lazy)
        if grade(correct.diff, run.diff, schema).passed:
            raise Rejected(f"condition excludes nothing: {lazy.label}")
        bites.append(lazy.label)
    for name in template.readings:
        run = run_public(template, domain_name, world, draft.actor, draft.stated, Lazy(name, READING))
        if not grade(correct.diff, run.diff, schema).passed:
            raise Rejected(f"two readings: {name}")
    first_page_bites = False
    if correct.paged:
        run = run_public(template, domain_name, world, draft.actor, draft.stated, Lazy(FIRST_PAGE))
        first_page_bites = not grade(correct.diff, run.diff, schema).passed
        if first_page_bites:
            bites.append(FIRST_PAGE)
    caps = capabilities_from(template, first_page_bites, correct.steps, correct.diff)
    if not caps:
        raise Rejected("exercises no capability")
    return Certificate(correct.diff, correct.steps, caps, bites, first_page_bites)


def capabilities_from(template: Template, first_page_bites: bool, steps: list[Step], diff: Diff) -> list[str]:
    """A task's capability labels, from what this task's data and solution show (not the template):

    - complete data acquisition: reading only the first page of a listing ends elsewhere, or a
      stated scope ("my whole history") bites;
    - multi-condition filtering: two or more stated filters or boundaries bite;
    - precise boundary judgement: a boundary taken one step wrong ends elsewhere;
    - aggregation and computation: a ranking (top k) or a condition computed over many rows bites;
    - cross-step dependency: a call needs an id an earlier call created;
    - cross-entity cascade: the end state adds or removes rows of two or more tables (a counter
      kept on a row does not count).
    """
    caps: set[str] = set()
    for condition in template.conditions:
        caps.update(condition.exercises)
    if len([c for c in template.conditions if c.kind in ("filter", "boundary")]) >= 2:
        caps.add("multi_condition_filtering")
    if first_page_bites:
        caps.add("complete_data_acquisition")
    if any(list(references(s.args)) for s in steps):
        caps.add("cross_step_dependency")
    if len({c.table for c in diff if c.op in ("insert", "delete")}) >= 2:
        caps.add("cross_entity_cascade")
    return [c for c in CAPABILITIES if c in caps]


def _reason(exc: Exception) -> str:
    """The counted part of a reason: without the numbers of this draw."""
    text = str(exc)
    return text.split(":", 1)[1].strip() if ":" in text else text
