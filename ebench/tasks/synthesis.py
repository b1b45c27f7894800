"""Tasks a model writes (the paper's generator): its privileged workspace, and the checks every
draft must pass before verifiers see it.

The generator works on a private copy of the world with what a solver never gets: read-only SQL
over the whole database (`query_sql`, confined by tasks/readonly_sql.py), beside the public tools.
It inspects, decides a target, makes the changes through the public tools, then states the
request. The copy's diff is the expected diff; its successful write calls, with ids created along
the way turned into `$from` references, are the reference solution. `vet_draft` applies the
rejection rules, cheapest first, each with a counted reason, and returns the task. The model loop
and the verifiers' votes build on this (issue 17); everything here is deterministic and needs no model.

A draft has no template, so it gets the checks that need none, the ones `ebench tasks audit` runs
on any task (audit.py): the lazy shortcuts built from its reference (without its last write, as
another actor) must fail, and the careful variants (careful.py: writes reordered, reads repeated,
harmless reads first) must pass. Its capability labels are derived as certify.capabilities_from
derives a template's, from what needs no stated condition: a created id a later call uses
(dependency), rows added or removed in two tables (cascade). The checks that need a template's
public solver (its conditions biting, the first page of a filtered listing, the other reading of an
open point, its clauses) do not apply; a capability only they could show is kept as asked, unchecked.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..engine.domain_registry import get_domain
from ..engine.tools import ToolKind, ToolResult
from ..engine.world import ensure_world, scratch_copy, world_id
from .careful import reference_variants
from .certify import capabilities_from
from .diff import ChangeTracker, Diff
from .generation import MIN_CHANGED_ROWS, SeenTasks, budget_for, solution_signature
from .grading import grade, signature
from .readonly_sql import ROW_LIMIT, SqlBudget, run_readonly
from .reference import ReferenceFailed, leaks, run_steps
from .shortcuts import reference_shortcuts
from .spec import CAPABILITIES, Step, Task, diff_stats
from .template_api import Template, leaked, query_key

MAX_REFERENCE_CALLS = 80  # a draft that needs more calls than this is not a task a person would ask
# What capabilities_from can show without a template's conditions: the others (filtering, boundary,
# aggregation, complete acquisition) need a public solver's lazy runs, which a draft has none of.
DERIVABLE_CAPABILITIES = ("cross_step_dependency", "cross_entity_cascade")


class Rejection(StrEnum):
    """Why a synthesized draft is not a task (counted per run)."""

    NO_CHANGE = "no change"
    TOO_SMALL = f"fewer than {MIN_CHANGED_ROWS} changed rows"
    TOO_MANY_CALLS = f"more than {MAX_REFERENCE_CALLS} calls"
    LEAKS_ID = "the request states an id"
    LEAKS_COUNT = "the request states a count the data decides"
    DUPLICATE = "a duplicate of an existing task"
    NOT_REPRODUCIBLE = "the calls do not reproduce the diff on a fresh copy"
    SHORTCUT = "a lazy solver passes"
    CAREFUL_FAILS = "a careful solver fails"
    MISSES_CAPABILITY = "the task does not show the capability asked for"
    WEAK_MODEL = "a weak model passes"  # `--weak-model`: checked by the model loop (sessions/synthesize.py)


class DraftRejected(Exception):
    def __init__(self, reason: Rejection, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else str(reason))
        self.reason = reason
        self.detail = detail


@dataclass
class SynthesisDraft:
    """What a generator hands in: who asks, the request, the capability it aimed at, and what it did."""

    domain: str
    actor: int
    query: str
    capability: str
    steps: list[Step]  # the successful write calls, as made (literal ids)
    results: list[Any]  # each step's result
    diff: Diff
    world_seed: int
    notes: dict[str, Any] = field(default_factory=dict)  # the generator's own record (model, cost, votes)


def query_sql(conn: sqlite3.Connection, sql: Any, limit: int = ROW_LIMIT) -> dict[str, Any]:
    """One read-only statement on `conn`, confined as tasks/readonly_sql.py says; an error (a refusal,
    a budget, a write, not a string) is answered, not raised. `conn` ends as it began."""
    return run_readonly(conn, sql, SqlBudget(rows=limit))


class GeneratorWorkspace:
    """A private copy of the world for one draft: read-only SQL and the public tools, as `actor`."""

    def __init__(self, domain_name: str, actor: int, *, seed: int | None = None) -> None:
        self.domain = get_domain(domain_name)
        self.seed = self.domain.default_seed if seed is None else seed
        self.actor = actor
        self.conn = scratch_copy(ensure_world(self.domain, self.seed))
        # Before the tracker's temporary tables: query_sql keeps temporary storage in memory, a
        # setting SQLite cannot change once a connection has some (tasks/readonly_sql.py).
        self.conn.execute("PRAGMA temp_store=MEMORY")
        self.tracker = ChangeTracker(self.conn, self.domain.schema)
        self.env = self.domain.env(self.conn, actor)
        self.steps: list[Step] = []
        self.results: list[Any] = []

    def query_sql(self, sql: str, limit: int = ROW_LIMIT) -> dict[str, Any]:
        return query_sql(self.conn, sql, limit)

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        """A public tool call; a successful write becomes a reference step."""
        result = self.domain.tools.call(self.env, tool, args)
        if result.ok and self.domain.tools.get(tool).kind == ToolKind.WRITE:  # ok: the tool exists
            self.steps.append(Step(tool, dict(args)))
            self.results.append(result.value)
        return result

    def draft(self, query: str, capability: str, **notes: Any) -> SynthesisDraft:
        return SynthesisDraft(
            self.domain.name,
            self.actor,
            query,
            capability,
            list(self.steps),
            list(self.results),
            self.tracker.diff(),
            self.seed,
            dict(notes),
        )

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> GeneratorWorkspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def link_created_ids(steps: list[Step], results: list[Any]) -> list[Step]:
    """Steps whose arguments name an id an earlier step's result introduced (a row it created)
    refer to that result (`{"$from": i, "path": key}`), as template solutions do: a solver's copy may
    number new rows differently."""
    linked: list[Step] = []
    for index, step in enumerate(steps):
        args = {name: _linked(value, results[:index]) for name, value in step.args.items()}
        linked.append(Step(step.tool, args))
    return linked


def _linked(value: Any, earlier: list[Any]) -> Any:
    if isinstance(value, list):
        return [_linked(v, earlier) for v in value]
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    # The first result that names the id is the one that introduced it: a later result that repeats
    # it (an invitation's room_id) did not create it, and linking there would chain calls that are
    # independent (the careful variants could not reorder them, the fewest-turns path would grow).
    for index, result in enumerate(earlier):
        if isinstance(result, dict):
            for key, found in result.items():
                if (key == "id" or key.endswith("_id")) and found == value and not isinstance(found, bool):
                    return {"$from": index, "path": key}
    return value


def counts_stated(query: str, diff: Diff) -> list[int]:
    """Numbers in the request that the data decided: how many rows change, of any kind or table.
    A request may state what the user chooses (a capacity, a date); the size of the answer it may not."""
    sizes = {len(diff)}
    for kind in ("insert", "update", "delete"):
        sizes.add(sum(1 for c in diff if c.op == kind))
    for table in {c.table for c in diff}:
        sizes.add(sum(1 for c in diff if c.table == table))
    sizes.discard(0)
    sizes.discard(1)
    return sorted(leaked(query, sorted(sizes)))  # dates and clock times are not counts


def is_seen(task: Task, seen: SeenTasks, schema: Any) -> bool:
    """The task repeats the request, the diff or the solution of one already seen."""
    return (
        query_key(task.query) in seen.queries
        or signature(task.expected_diff, schema) in seen.diffs
        or solution_signature(task.reference_solution) in seen.solutions
    )


def derived_capabilities(reference: list[Step], diff: Diff) -> list[str]:
    """The capability labels a template-free task shows (certify.capabilities_from with no stated
    condition: only the reference's created-id dependencies and the diff's tables count)."""
    return capabilities_from(Template(), False, reference, diff, bites=[])


def capability_labels(asked: str, derived: list[str]) -> list[str]:
    """A synthesized task's labels: what it was shown to exercise, and the capability it was asked
    for when no template-free check can show it (kept unchecked)."""
    labels = set(derived) | ({asked} if asked not in DERIVABLE_CAPABILITIES else set())
    return [c for c in CAPABILITIES if c in labels]


def vet_draft(draft: SynthesisDraft, seen: SeenTasks, *, task_id: str) -> Task:
    """The draft as a task, or DraftRejected with its reason (cheapest checks first)."""
    domain = get_domain(draft.domain)
    schema = domain.schema
    diff = draft.diff
    if len(diff) == 0:
        raise DraftRejected(Rejection.NO_CHANGE)
    if len(diff) < MIN_CHANGED_ROWS:
        raise DraftRejected(Rejection.TOO_SMALL, f"{len(diff)} changed")
    if len(draft.steps) > MAX_REFERENCE_CALLS:
        raise DraftRejected(Rejection.TOO_MANY_CALLS, f"{len(draft.steps)} calls")
    reference = link_created_ids(draft.steps, draft.results)
    world = ensure_world(domain, draft.world_seed)
    derived = derived_capabilities(reference, diff)
    task = Task(
        id=task_id,
        domain=draft.domain,
        actor=draft.actor,
        query=draft.query,
        capabilities=capability_labels(draft.capability, derived),
        expected_diff=diff,
        reference_solution=reference,
        generator={"kind": "model", **draft.notes, "derived_capabilities": derived},
        stats=diff_stats(diff),
        world={"seed": draft.world_seed, "fingerprint": world_id(domain, draft.world_seed)},
        budget=budget_for(reference),
    )
    if found := leaks(task):
        raise DraftRejected(Rejection.LEAKS_ID, found[0])
    if found_counts := counts_stated(draft.query, diff):
        raise DraftRejected(Rejection.LEAKS_COUNT, f"states {found_counts[0]}")
    if is_seen(task, seen, schema):
        raise DraftRejected(Rejection.DUPLICATE)
    if draft.capability in DERIVABLE_CAPABILITIES and draft.capability not in derived:
        raise DraftRejected(Rejection.MISSES_CAPABILITY, f"asked {draft.capability}; shows {', '.join(derived) or 'none'}")
    try:
        again = run_steps(draft.domain, draft.actor, reference, world=world)
    except ReferenceFailed as exc:
        raise DraftRejected(Rejection.NOT_REPRODUCIBLE, str(exc)) from None
    if not grade(diff, again.diff, schema).passed:
        raise DraftRejected(Rejection.NOT_REPRODUCIBLE)
    for family, _, shortcut in reference_shortcuts(draft.domain, world, draft.actor, reference):
        if grade(diff, shortcut, schema).passed:
            raise DraftRejected(Rejection.SHORTCUT, family)
    for variant in reference_variants(draft.domain, world, draft.actor, reference):
        if variant.diff is not None and not grade(diff, variant.diff, schema).passed:
            raise DraftRejected(Rejection.CAREFUL_FAILS, variant.label)
    return task
