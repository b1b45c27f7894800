"""Running a task's reference solution on a fresh copy of its world, and checking a task.

The same runner serves the generator (record the diff a solution makes), `ebench tasks
validate` (the solution reproduces the expected diff; an empty trial fails), and the oracle
solver.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..domains import get_domain
from ..domains.engine.tools import ToolError
from ..domains.engine.world import ensure_world, scratch_copy
from .diff import ChangeTracker, Diff
from .grading import Grade, grade
from .spec import Step, Task, resolve_args


class ReferenceFailed(RuntimeError):
    """A reference step was refused by its tool: the task (or the world) is inconsistent."""


@dataclass
class ReferenceRun:
    diff: Diff
    results: list[Any] = field(default_factory=list)


def run_steps(
    domain_name: str,
    actor: int,
    steps: list[Step],
    conn: sqlite3.Connection | None = None,
    *,
    world: Path | None = None,
    tolerant: bool = False,
    tracked: bool = False,
) -> ReferenceRun:
    """Apply `steps` in order on a fresh copy of the world (`world`, or the domain's default; or
    on `conn`, which with `tracked` already has the change tracker: a trial's copy). A refused
    step raises ReferenceFailed, unless `tolerant` (a shortcut solver that moves on): then its
    result is None and a later step that needs it is skipped too."""
    domain = get_domain(domain_name)
    own = conn is None
    if conn is None:
        conn = scratch_copy(world or ensure_world(domain))
    try:
        tracker = ChangeTracker(conn, domain.schema, install=own or not tracked)
        try:
            env = domain.env(conn, actor)
        except ToolError as exc:
            raise ReferenceFailed(f"the task's actor cannot act: {exc.message}") from None
        results: list[Any] = []
        for i, step in enumerate(steps):
            try:
                args = resolve_args(step.args, results)
            except (TypeError, KeyError, IndexError, ValueError):
                if not tolerant:
                    raise ReferenceFailed(f"step {i} ({step.tool}) refers to a result it cannot use") from None
                results.append(None)
                continue
            result = domain.tools.call(env, step.tool, args)
            if not result.ok:
                if not tolerant:
                    raise ReferenceFailed(f"step {i} ({step.tool}) was refused: {result.error_code}: {result.error_message}")
                results.append(None)
                continue
            results.append(result.value)
        return ReferenceRun(tracker.diff(), results)
    finally:
        if own:
            conn.close()


# Numbers a query may state without leaking anything: small counts of things the user chose, years.
_NUMBER = re.compile(r"(?<![\w.-])\d+(?![\w.-]*\d)")


@dataclass
class TaskCheck:
    task_id: str
    problems: list[str]
    reference: Grade | None = None
    empty: Grade | None = None
    certified: bool = False  # the task's public solver was re-run (template tasks)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_task(task: Task) -> TaskCheck:
    """The task's world is the one this ebench builds; the reference solution passes on a fresh
    copy within the task's budget; the public solver (for template tasks) reaches the expected
    diff again; an empty trial fails; the query leaks no id of a changed row."""
    from .worlds import WorldMismatch, task_world

    schema = get_domain(task.domain).schema
    problems: list[str] = []
    reference = empty = None
    try:
        world = task_world(task)
    except WorldMismatch as exc:
        return TaskCheck(task.id, [f"world: {exc}"])
    try:
        run = run_steps(task.domain, task.actor, task.reference_solution, world=world)
    except ReferenceFailed as exc:
        problems.append(f"reference solution: {exc}")
    else:
        reference = grade(task.expected_diff, run.diff, schema)
        if not reference.passed:
            problems.append(f"reference solution does not reproduce the expected diff: {reference.summary()}")
    limit = max(task.budget.get("max_tool_calls", 0), DEFAULT_LIMITS["max_tool_calls"])
    if len(task.reference_solution) > limit:
        problems.append(f"the reference solution needs {len(task.reference_solution)} calls, over the task's limit of {limit}")
    certified, public_problem = _rerun_public(task, world)
    if public_problem:
        problems.append(public_problem)
    empty = grade(task.expected_diff, Diff(), schema)
    if empty.passed:
        problems.append("an empty trial passes")
    problems.extend(leaks(task))
    return TaskCheck(task.id, problems, reference, empty, certified)


# The run defaults a task's budget never goes below (the same as `ebench run`'s).
DEFAULT_LIMITS = {"max_tool_calls": 100, "max_turns": 30}


def _rerun_public(task: Task, world: Path) -> tuple[bool, str | None]:
    """(whether the task has a public solver, the problem if re-running it fails)."""
    from .certify import run_public
    from .generation import template_named
    from .public import NotCertifiable, PublicSolverFailed

    name = task.generator.get("template")
    stated = task.generator.get("stated")
    if not name or not isinstance(stated, dict):
        return False, None
    template = template_named(task.domain, str(name))
    if template is None:
        return False, f"public solution: no template {name!r} in this ebench"
    try:
        run = run_public(template, task.domain, world, task.actor, stated)
    except (PublicSolverFailed, NotCertifiable) as exc:
        return True, f"public solution: {exc}"
    result = grade(task.expected_diff, run.diff, get_domain(task.domain).schema)
    if not result.passed:
        return True, f"public solution does not reach the expected diff: {result.summary()}"
    return True, None


def leaks(task: Task) -> list[str]:
    """Hidden values a query must not state: ids of changed rows (>= 3 digits, to spare "top 5")."""
    stated = {int(m) for m in _NUMBER.findall(task.query) if len(m) >= 3 and not 1900 <= int(m) <= 2100}
    hidden = {v for c in task.expected_diff for v in c.key.values() if isinstance(v, int) and not isinstance(v, bool)}
    return [f"the query states {n}, an id of a changed row" for n in sorted(stated & hidden)]
