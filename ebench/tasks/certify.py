"""Certifying a draft: the public solver reaches the SQL generator's end state, and every stated
condition bites.

`run_public` runs a template's public solver (correct or lazy) on a fresh copy and returns its
diff and its calls. `certify` accepts a draft only if

- the correct public solver's end state equals the one the SQL generator's writes make (two
  independent derivations of the answer agree),
- every condition the template states, got wrong in each of its ways (ignored, one step off),
  ends in a different state,
- every careful variant ends in the same state as the correct solver: the filtered plan (the
  tools' own filters and sort), the other reading of every point the wording does not decide,
  independent writes in another order, reads repeated, harmless reads added (careful.py),
- every clause the template declares (`Template.clauses`) maps to a condition that bit or to a
  value the task writes,
- at least two stated conditions bite, or a call needs an id an earlier call created (no trivial
  tasks),

and derives the task's capability labels from what bit: see `capabilities_from`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.domain_registry import get_domain
from ..engine.world import scratch_copy
from .careful import CarefulRun, reference_variants
from .diff import ChangeTracker, Diff
from .grading import grade
from .public import (
    CORRECT,
    FILTERED,
    FIRST_PAGE,
    KIND_CAPABILITY,
    PLAIN,
    READING,
    WRITTEN,
    Lazy,
    NotCertifiable,
    PublicAPI,
    PublicSolverFailed,
    as_reading,
    biting_conditions,
)
from .spec import CAPABILITIES, Step, references

if TYPE_CHECKING:
    from .template_api import Draft, Template


class Rejected(Exception):
    """The draft is not a certified task; the message is the counted reason."""


@dataclass
class PublicRun:
    diff: Diff
    steps: list[Step]
    consulted: set[str] = field(default_factory=set)
    paged: bool = False
    gave_up: str | None = None  # a lazy solver that crashed on a missing result stops there
    narrowed: bool = False  # the solver offered server-side filters (it has a FILTERED plan)


def run_public(
    template: Template, domain_name: str, world: Path, actor: int, stated: dict[str, Any], lazy: Lazy = CORRECT, *, plan: str = PLAIN
) -> PublicRun:
    """Run the template's public solver as `actor` on a fresh copy of `world`, following `plan`.
    The correct solver on the plain plan raises PublicSolverFailed or NotCertifiable; any other
    run never raises (it ends where it stops, and says why in `gave_up`)."""
    domain = get_domain(domain_name)
    conn: sqlite3.Connection = scratch_copy(world)
    strict = lazy == CORRECT and plan == PLAIN
    try:
        tracker = ChangeTracker(conn, domain.schema)
        readings = tuple(as_reading(r).name for r in template.readings)
        api = PublicAPI(domain, conn, actor, lazy, {c.name: c for c in template.conditions}, readings, plan)
        gave_up = None
        try:
            template.solve(api, dict(stated))
        except (PublicSolverFailed, NotCertifiable):
            if strict:
                raise
            gave_up = "refused"
        except (TypeError, KeyError, IndexError, ValueError, AttributeError) as exc:
            if strict:
                raise
            gave_up = f"{type(exc).__name__}: {exc}"
        return PublicRun(tracker.diff(), api.steps, api.consulted, api.paged, gave_up, api.narrowed)
    finally:
        conn.close()


def first_page_plan(narrowed: bool) -> str:
    """The plan whose first page decides "complete data acquisition": the filtered one where the
    solver has it (a careful agent filters on the server before it pages)."""
    return FILTERED if narrowed else PLAIN


def template_variants(
    template: Template, domain_name: str, world: Path, actor: int, stated: dict[str, Any], query: str
) -> list[CarefulRun]:
    """The careful variants of a template's public solver (careful.py): the filtered plan, where
    the solver offers one, and the other reading of every point the wording does not decide."""
    out: list[CarefulRun] = []
    filtered = run_public(template, domain_name, world, actor, stated, plan=FILTERED)
    if filtered.narrowed:
        out.append(CarefulRun("server_filters", "server_filters", filtered.diff))
    for reading in map(as_reading, template.readings):
        if reading.decided(query):
            continue
        run = run_public(template, domain_name, world, actor, stated, Lazy(reading.name, READING))
        out.append(CarefulRun("reading", f"reading:{reading.name}", run.diff))
    return out


def clause_problems(template: Template, stated: dict[str, Any], bites: list[str], diff: Diff) -> list[str]:
    """The clauses of a draft's wording that bite nothing. `Template.clauses` names every clause:
    each stated value (by its key in `stated`) and each clause that states no value ("accept
    their request if they asked first", "skip anyone on leave"), with the condition that uses it,
    or WRITTEN for a value the task writes. A clause bites when its condition is among `bites`, or
    when its written value is in the expected diff. Templates that declare no clauses are not
    checked here (the audit lists them)."""
    clauses = template.clauses
    if clauses is None:
        return []
    bit = {label.split(":")[0] for label in bites}
    written = _written_values(diff)
    problems = [f"{key}: no declared clause" for key in stated if key not in clauses]
    for key, role in clauses.items():
        if role == WRITTEN:
            if key in stated and not _appears(stated[key], written):
                problems.append(f"{key}: declared written, but the task does not write it")
        elif role not in bit:
            problems.append(f"{key}: its condition {role} does not bite")
    return problems


def _written_values(diff: Diff) -> list[Any]:
    values: list[Any] = []
    for change in diff:
        for source in (change.new or {}, change.old or {}):
            values.extend(source.values())
    return values


def _appears(value: Any, written: list[Any]) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_appears(v, written) for v in value)
    if isinstance(value, str):
        return any(isinstance(w, str) and value in w for w in written)
    return value in written


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
    careful: list[CarefulRun] = field(default_factory=list)  # every careful variant tried (all passed)


def certify(template: Template, domain_name: str, world: Path, draft: Draft, sql_diff: Diff) -> Certificate:
    """Certify `draft` (see the module docstring) or raise Rejected with the reason."""
    schema = get_domain(domain_name).schema
    try:
        correct = run_public(template, domain_name, world, draft.actor, draft.stated)
    except NotCertifiable as exc:
        raise Rejected(f"not certifiable: {_reason(exc)}") from None
    except PublicSolverFailed:
        raise Rejected("public solver refused") from None
    declared = {c.name for c in template.conditions} | {as_reading(r).name for r in template.readings}
    unstated = declared - correct.consulted
    if unstated:
        raise Rejected(f"public solver does not state {', '.join(sorted(unstated))}")
    if not grade(sql_diff, correct.diff, schema).passed:
        raise Rejected("public solver disagrees with the SQL generator")
    bites: list[str] = []
    for lazy in lazy_variants(template):
        run = run_public(template, domain_name, world, draft.actor, draft.stated, lazy)
        if not grade(correct.diff, run.diff, schema).passed:
            bites.append(lazy.label)
        elif not optional_bite(template, lazy):
            raise Rejected(f"condition excludes nothing: {lazy.label}")
    careful = template_variants(template, domain_name, world, draft.actor, draft.stated, draft.query)
    for variant in careful:
        if variant.diff is not None and not grade(correct.diff, variant.diff, schema).passed:
            raise Rejected(
                f"two readings: {variant.label.split(':', 1)[1]}"
                if variant.family == "reading"
                else f"careful variant fails: {variant.label}"
            )
    first_page_bites = False
    if correct.paged:
        plan = first_page_plan(correct.narrowed)
        run = run_public(template, domain_name, world, draft.actor, draft.stated, Lazy(FIRST_PAGE), plan=plan)
        first_page_bites = not grade(correct.diff, run.diff, schema).passed
        if first_page_bites:
            bites.append(FIRST_PAGE)
    for variant in reference_variants(domain_name, world, draft.actor, correct.steps):
        careful.append(variant)
        if variant.diff is not None and not grade(correct.diff, variant.diff, schema).passed:
            raise Rejected(f"careful variant fails: {variant.label}")
    problems = clause_problems(template, draft.stated, bites, correct.diff)
    if problems:
        raise Rejected(f"a clause bites nothing: {problems[0].split(':')[1].strip()}")
    caps = capabilities_from(template, first_page_bites, correct.steps, correct.diff, bites)
    if not caps:
        raise Rejected("exercises no capability")
    if biting_conditions(bites) < 2 and "cross_step_dependency" not in caps:
        raise Rejected("trivial: fewer than two conditions bite and no cross-step dependency")
    return Certificate(correct.diff, correct.steps, caps, bites, first_page_bites, careful)


def optional_bite(template: Template, lazy: Lazy) -> bool:
    """A boundary's inclusivity needs to bite only where a candidate lands on the boundary: the
    values are natural (a round duration, a whole number of coins), so mostly none does, and then
    both inclusivities are right."""
    kinds = {c.name: c.kind for c in template.conditions}
    return kinds.get(lazy.condition or "") == "boundary" and lazy.mode == "off_by_one"


def capabilities_from(
    template: Template, first_page_bites: bool, steps: list[Step], diff: Diff, bites: list[str] | None = None
) -> list[str]:
    """A task's capability labels, from what this task's data and solution show (not the template):

    - complete data acquisition: even with the tools' own filters, reading only the first page of
      a listing ends elsewhere; or a stated scope ("my whole history") bites;
    - multi-condition filtering: two or more stated filters or boundaries bite;
    - precise boundary judgement: a boundary taken one step wrong ends elsewhere;
    - aggregation and computation: a ranking (top k) or a condition computed over many rows bites;
    - cross-step dependency: a call needs an id an earlier call created;
    - cross-entity cascade: the end state adds or removes rows of two or more tables (a counter
      kept on a row does not count).

    `bites`: the lazy variants that ended elsewhere (every declared one, when not given).
    """
    bit = set(bites) if bites is not None else {lazy.label for lazy in lazy_variants(template)}
    caps: set[str] = set()
    filtering = 0
    for condition in template.conditions:
        mine = {mode for mode in condition.modes if f"{condition.name}:{mode}" in bit}
        if not mine:
            continue
        own = KIND_CAPABILITY[condition.kind]
        # a boundary exercises precision only where its inclusivity bites (a candidate on it)
        if own and (condition.kind != "boundary" or "off_by_one" in mine):
            caps.add(own)
        if condition.capability:
            caps.add(condition.capability)
        filtering += condition.kind in ("filter", "boundary")
    if filtering >= 2:
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
